package fstool

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path"
	"strings"

	"github.com/reinhq/rein/internal/provider"
	"github.com/reinhq/rein/internal/tool"
)

type writeFile struct{ w *Workspace }

// WriteFile returns the write_file tool: it writes a whole file, creating parent directories.
func (w *Workspace) WriteFile() tool.Tool { return writeFile{w} }

func (writeFile) Spec() provider.Tool {
	return provider.Tool{
		Name:        "write_file",
		Description: "Write a file of the workspace, replacing what it held. Parent directories are created as needed.",
		Schema: schema(`{"type":"object","properties":{` +
			`"path":{"type":"string","description":"The file, relative to the workspace root or absolute inside it."},` +
			`"content":{"type":"string","description":"The file's new content, in full."}},` +
			`"required":["path","content"],"additionalProperties":false}`),
	}
}

func (t writeFile) Access(args json.RawMessage) tool.Access {
	return t.w.access(tool.EffectWrite, args)
}

func (t writeFile) Run(ctx context.Context, call tool.Call) tool.Result {
	var a struct {
		Path    string `json:"path"`
		Content string `json:"content"`
	}
	if err := json.Unmarshal(call.Args, &a); err != nil {
		return tool.Failure("invalid arguments for write_file: %v", err)
	}
	rel, err := t.w.rel(a.Path)
	if err != nil {
		return t.w.fail(a.Path, err)
	}
	if rel == "." {
		return tool.Failure("%s is the workspace root, not a file", a.Path)
	}
	if dir := path.Dir(rel); dir != "." {
		if err := t.w.root.MkdirAll(dir, 0o755); err != nil {
			return t.w.fail(a.Path, err)
		}
	}
	verb := "created"
	fi, err := t.w.statRegular(rel, a.Path, "write_file writes")
	var irr *IrregularError
	switch {
	case errors.As(err, &irr):
		return t.w.fail(a.Path, err)
	case err == nil && fi.IsDir():
		return tool.Failure("%s is a directory", a.Path)
	case err == nil:
		verb = "overwrote"
	}
	// An existing file keeps its mode; a new one gets 0644 less the umask. The file is truncated
	// only once it is known to be a regular file.
	f, _, err := t.w.openRegular(rel, os.O_WRONLY|os.O_CREATE, 0o644, a.Path, "write_file writes")
	if err != nil {
		return t.w.fail(a.Path, err)
	}
	err = replace(f, []byte(a.Content))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return t.w.fail(a.Path, err)
	}
	return tool.Success(fmt.Sprintf("%s %s (%d bytes, %d lines)", verb, a.Path, len(a.Content), lineCount(a.Content)))
}

// replace makes data the whole content of the open regular file f.
func replace(f *os.File, data []byte) error {
	if err := f.Truncate(0); err != nil {
		return err
	}
	_, err := f.WriteAt(data, 0)
	return err
}

func lineCount(s string) int {
	n := strings.Count(s, "\n")
	if s != "" && !strings.HasSuffix(s, "\n") {
		n++
	}
	return n
}

// maxEditFile bounds the file edit_file reads whole.
const maxEditFile = 16 << 20

type editFile struct{ w *Workspace }

// EditFile returns the edit_file tool: an exact replacement of text in a file.
func (w *Workspace) EditFile() tool.Tool { return editFile{w} }

func (editFile) Spec() provider.Tool {
	return provider.Tool{
		Name: "edit_file",
		Description: "Replace text in a file of the workspace. old must match the file exactly, whitespace and " +
			"indentation included, and only once unless replace_all is true.",
		Schema: schema(`{"type":"object","properties":{` +
			`"path":{"type":"string","description":"The file, relative to the workspace root or absolute inside it."},` +
			`"old":{"type":"string","description":"The exact text to replace."},` +
			`"new":{"type":"string","description":"The text to put in its place."},` +
			`"replace_all":{"type":"boolean","description":"Replace every occurrence of old, not just one."}},` +
			`"required":["path","old","new"],"additionalProperties":false}`),
	}
}

func (t editFile) Access(args json.RawMessage) tool.Access {
	return t.w.access(tool.EffectWrite, args)
}

func (t editFile) Run(ctx context.Context, call tool.Call) tool.Result {
	var a struct {
		Path       string `json:"path"`
		Old        string `json:"old"`
		New        string `json:"new"`
		ReplaceAll bool   `json:"replace_all"`
	}
	if err := json.Unmarshal(call.Args, &a); err != nil {
		return tool.Failure("invalid arguments for edit_file: %v", err)
	}
	if a.Old == "" {
		return tool.Failure("old is empty; to write a file from scratch use write_file")
	}
	if a.Old == a.New {
		return tool.Failure("old and new are the same; the edit would change nothing")
	}
	rel, err := t.w.rel(a.Path)
	if err != nil {
		return t.w.fail(a.Path, err)
	}
	fi, err := t.w.statRegular(rel, a.Path, "edit_file edits")
	if err != nil {
		return t.w.fail(a.Path, err)
	}
	if fi.IsDir() {
		return tool.Failure("%s is a directory", a.Path)
	}
	tooLarge := tool.Failure("%s is larger than %d MiB, the most edit_file edits; change it with a command in bash (sed, say)", a.Path, maxEditFile>>20)
	if fi.Size() > maxEditFile {
		return tooLarge
	}
	f, fi, err := t.w.openRegular(rel, os.O_RDWR, 0, a.Path, "edit_file edits")
	if err != nil {
		return t.w.fail(a.Path, err)
	}
	defer f.Close()
	data, err := readAll(ctx, f, fi.Size(), maxEditFile)
	switch {
	case ctx.Err() != nil:
		return interrupted(fmt.Sprintf("edit_file stopped reading %s, which it left unchanged,", a.Path))
	case errors.Is(err, errTooLarge):
		return tooLarge
	case err != nil:
		return t.w.fail(a.Path, err)
	}
	if isBinary(data) {
		return tool.Failure("%s is a binary file; edit_file changes only text", a.Path)
	}
	text := string(data)
	n := strings.Count(text, a.Old)
	switch {
	case n == 0:
		return tool.Failure("old was not found in %s. It must match the file exactly, whitespace and indentation included; "+
			"read_file shows the current text%s", a.Path, nearMiss(text, a.Old))
	case n > 1 && !a.ReplaceAll:
		return tool.Failure("old matches %d places in %s (lines %s); include more of the surrounding text to make it unique, "+
			"or set replace_all to change all %d", n, a.Path, matchLines(text, a.Old, 5), n)
	}
	first := strings.Index(text, a.Old)
	if a.ReplaceAll {
		text = strings.ReplaceAll(text, a.Old, a.New)
	} else {
		text = text[:first] + a.New + text[first+len(a.Old):]
		n = 1
	}
	err = replace(f, []byte(text))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return t.w.fail(a.Path, err)
	}
	line := 1 + strings.Count(string(data[:first]), "\n")
	if n == 1 {
		return tool.Success(fmt.Sprintf("replaced 1 occurrence in %s, at line %d", a.Path, line))
	}
	return tool.Success(fmt.Sprintf("replaced %d occurrences in %s, the first at line %d", n, a.Path, line))
}

// matchLines lists the line numbers of the first few occurrences of old in text.
func matchLines(text, old string, most int) string {
	var lines []string
	line, at := 1, 0
	for len(lines) < most {
		i := strings.Index(text[at:], old)
		if i < 0 {
			break
		}
		line += strings.Count(text[at:at+i], "\n")
		lines = append(lines, fmt.Sprint(line))
		line += strings.Count(old, "\n")
		at += i + len(old)
	}
	if strings.Count(text, old) > most {
		lines = append(lines, "…")
	}
	return strings.Join(lines, ", ")
}

// nearMiss says whether old would match if whitespace at line ends and indentation were ignored,
// the commonest reason a model's old text fails to match.
func nearMiss(text, old string) string {
	norm := func(s string) string {
		ls := strings.Split(s, "\n")
		for i, l := range ls {
			ls[i] = strings.TrimSpace(l)
		}
		return strings.Join(ls, "\n")
	}
	if strings.Contains(norm(text), norm(old)) {
		return " (a match exists that differs only in indentation or trailing whitespace)"
	}
	return ""
}
