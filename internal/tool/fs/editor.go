package fstool

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"regexp"
	"sort"
	"strings"

	"github.com/reinhq/rein/internal/provider"
	"github.com/reinhq/rein/internal/tool"
)

// editorSchema checks the text editor's calls. The model knows the tool's input from its
// training (the definition sent is its type and name); this is what rein holds a call to. It is
// open to further properties: a field a later version adds is not worth refusing a call for.
const editorSchema = `{"type":"object","properties":{` +
	`"command":{"type":"string","enum":["view","create","str_replace","insert","undo_edit"]},` +
	`"path":{"type":"string"},` +
	`"view_range":{"type":"array","items":{"type":"integer"},"minItems":2,"maxItems":2},` +
	`"file_text":{"type":"string"},` +
	`"old_str":{"type":"string"},` +
	`"new_str":{"type":"string"},` +
	`"insert_line":{"type":"integer","minimum":0},` +
	`"insert_text":{"type":"string"}},` +
	`"required":["command","path"]}`

type editor struct {
	w          *Workspace
	name, typ  string
	listDepth  int
	maxListing int
}

// Editor returns Anthropic's text editor tool, of client tool type typ offered as name
// (text_editor_20250728 as str_replace_based_edit_tool, say), carried out by the file tools: view
// is read_file (or, for a directory, a listing two levels deep), create is write_file,
// str_replace is edit_file, and insert puts text after a line. Each is confined, judged and
// answered as that file tool is, so rules written for read_file, write_file and edit_file hold
// for the editor's calls.
func (w *Workspace) Editor(typ, name string) tool.Tool {
	return editor{w: w, name: name, typ: typ, listDepth: 2, maxListing: 1000}
}

func (e editor) Spec() provider.Tool {
	return provider.Tool{
		Name: e.name, Type: e.typ, Schema: schema(editorSchema),
		Description: "View, create and edit text files of the workspace: view (a file's lines numbered, or a directory), " +
			"create (write a whole file), str_replace (replace old_str, which must match once, with new_str), " +
			"insert (insert_text after line insert_line, 0 for the top).",
	}
}

type editorArgs struct {
	Command    string `json:"command"`
	Path       string `json:"path"`
	ViewRange  []int  `json:"view_range"`
	FileText   string `json:"file_text"`
	OldStr     string `json:"old_str"`
	NewStr     string `json:"new_str"`
	InsertLine int    `json:"insert_line"`
	InsertText string `json:"insert_text"`
	newStrSet  bool
}

func (e editor) Access(args json.RawMessage) tool.Access {
	var a editorArgs
	json.Unmarshal(args, &a)
	acc := e.w.access(tool.EffectWrite, args)
	switch a.Command {
	case "view":
		acc.Effect, acc.As = tool.EffectRead, []string{"read_file"}
	case "create":
		acc.As = []string{"write_file"}
	default:
		acc.As = []string{"edit_file"}
	}
	return acc
}

func (e editor) Run(ctx context.Context, call tool.Call) tool.Result {
	var a editorArgs
	if err := json.Unmarshal(call.Args, &a); err != nil {
		return tool.Failure("invalid arguments for %s: %v", e.name, err)
	}
	var raw map[string]json.RawMessage
	json.Unmarshal(call.Args, &raw)
	_, a.newStrSet = raw["new_str"]
	switch a.Command {
	case "view":
		return e.view(ctx, a)
	case "create":
		if _, ok := raw["file_text"]; !ok {
			return tool.Failure("create needs file_text, the file's whole content")
		}
		return e.w.WriteFile().Run(ctx, e.call(call, map[string]any{"path": a.Path, "content": a.FileText}))
	case "str_replace":
		if _, ok := raw["old_str"]; !ok {
			return tool.Failure("str_replace needs old_str, the exact text to replace")
		}
		return inEditorWords(e.w.EditFile().Run(ctx, e.call(call, map[string]any{"path": a.Path, "old": a.OldStr, "new": a.NewStr})))
	case "insert":
		_, hasText := raw["insert_text"]
		if !hasText && a.newStrSet {
			a.InsertText = a.NewStr // the text editor's earlier versions named it new_str
			hasText = true
		}
		if _, ok := raw["insert_line"]; !ok || !hasText {
			return tool.Failure("insert needs insert_line (the line to insert after, 0 for the top) and insert_text")
		}
		return e.insert(ctx, a)
	case "undo_edit":
		return tool.Failure("undo_edit is not available: rein keeps no undo history; make the reverse edit with str_replace")
	}
	return tool.Failure("unknown command %q; the commands are view, create, str_replace and insert", a.Command)
}

func (e editor) call(c tool.Call, args map[string]any) tool.Call {
	c.Args, _ = json.Marshal(args)
	return c
}

// view shows a file through read_file (its lines numbered), or lists a directory.
func (e editor) view(ctx context.Context, a editorArgs) tool.Result {
	rel, err := e.w.rel(a.Path)
	if err != nil {
		return e.w.fail(a.Path, err)
	}
	fi, err := e.w.statRegular(rel, a.Path, "view reads")
	if err != nil {
		return e.w.fail(a.Path, err)
	}
	if fi.IsDir() {
		if len(a.ViewRange) > 0 {
			return tool.Failure("view_range applies to files; %s is a directory", a.Path)
		}
		return e.list(ctx, rel, a.Path)
	}
	args := map[string]any{"path": a.Path}
	if len(a.ViewRange) == 2 {
		from, to := a.ViewRange[0], a.ViewRange[1]
		switch {
		case from < 1:
			return tool.Failure("view_range [%d, %d]: lines are numbered from 1", from, to)
		case to != -1 && to < from:
			return tool.Failure("view_range [%d, %d]: the end is before the start (use -1 for the end of the file)", from, to)
		}
		args["offset"] = from
		if to != -1 {
			args["limit"] = to - from + 1
		}
	}
	return inEditorWords(e.w.ReadFile().Run(ctx, e.call(tool.Call{Name: "read_file"}, args)))
}

// editorWords rewrite what read_file and edit_file answer in the text editor's terms, so that
// the model is told to mend its call with the fields it has.
var (
	editorWords = strings.NewReplacer(
		"old is empty; to write a file from scratch use write_file", "old_str is empty; to write a whole file use create",
		"old and new are the same", "old_str and new_str are the same",
		"old was not found", "old_str was not found",
		"old matches", "old_str matches",
		"read_file shows the current text", "view shows the current text",
	)
	replaceAllHint = regexp.MustCompile(`, or set replace_all to change all \d+`)
	readOnHint     = regexp.MustCompile(`read on with offset (\d+)`)
)

func inEditorWords(r tool.Result) tool.Result {
	r.Content = editorWords.Replace(r.Content)
	r.Content = replaceAllHint.ReplaceAllString(r.Content, "")
	r.Content = readOnHint.ReplaceAllString(r.Content, "view on with view_range [$1, -1]")
	return r
}

// list lists a directory's files and directories up to listDepth levels deep, hidden ones left
// out, directories marked with a trailing slash.
func (e editor) list(ctx context.Context, rel, given string) tool.Result {
	var out []string
	cut := false
	var walk func(dir string, depth int) error
	walk = func(dir string, depth int) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		d, err := e.w.root.Open(dir)
		if err != nil {
			return err
		}
		entries, err := d.ReadDir(-1)
		d.Close()
		if err != nil {
			return err
		}
		sort.Slice(entries, func(i, j int) bool { return entries[i].Name() < entries[j].Name() })
		for _, en := range entries {
			if strings.HasPrefix(en.Name(), ".") {
				continue
			}
			if len(out) >= e.maxListing {
				cut = true
				return nil
			}
			name := path.Join(dir, en.Name())
			if en.IsDir() {
				out = append(out, name+"/")
				if depth < e.listDepth {
					if err := walk(name, depth+1); err != nil && !errors.Is(err, fs.ErrPermission) {
						return err
					}
				}
				continue
			}
			out = append(out, name)
		}
		return nil
	}
	if err := walk(rel, 1); err != nil {
		if ctx.Err() != nil {
			return interrupted("view stopped listing " + given)
		}
		return e.w.fail(given, err)
	}
	head := fmt.Sprintf("The files and directories in %s, up to %d levels deep, hidden ones left out:\n", given, e.listDepth)
	if len(out) == 0 {
		return tool.Success(head + "(none)")
	}
	s := head + strings.Join(out, "\n")
	if cut {
		s += fmt.Sprintf("\n[the listing stops at %d entries; view a subdirectory or use glob]", e.maxListing)
	}
	return tool.Success(s)
}

// insert puts insert_text after line insert_line of the file (0: before the first line).
func (e editor) insert(ctx context.Context, a editorArgs) tool.Result {
	rel, err := e.w.rel(a.Path)
	if err != nil {
		return e.w.fail(a.Path, err)
	}
	fi, err := e.w.statRegular(rel, a.Path, "insert edits")
	if err != nil {
		return e.w.fail(a.Path, err)
	}
	if fi.IsDir() {
		return tool.Failure("%s is a directory", a.Path)
	}
	if fi.Size() > maxEditFile {
		return tool.Failure("%s is larger than %d MiB, the most insert edits", a.Path, maxEditFile>>20)
	}
	f, fi, err := e.w.openRegular(rel, os.O_RDWR, 0, a.Path, "insert edits")
	if err != nil {
		return e.w.fail(a.Path, err)
	}
	defer f.Close()
	data, err := readAll(ctx, f, fi.Size(), maxEditFile)
	switch {
	case ctx.Err() != nil:
		return interrupted(fmt.Sprintf("insert stopped reading %s, which it left unchanged,", a.Path))
	case err != nil:
		return e.w.fail(a.Path, err)
	}
	if isBinary(data) {
		return tool.Failure("%s is a binary file; insert changes only text", a.Path)
	}
	text := string(data)
	lines := lineCount(text)
	if a.InsertLine > lines {
		return tool.Failure("insert_line %d is past the end of %s, which has %d lines", a.InsertLine, a.Path, lines)
	}
	at := 0
	for i := 0; i < a.InsertLine; i++ {
		nl := strings.IndexByte(text[at:], '\n')
		if nl < 0 {
			at = len(text)
			break
		}
		at += nl + 1
	}
	ins := a.InsertText
	if at == len(text) && text != "" && !strings.HasSuffix(text, "\n") {
		ins = "\n" + ins // after a last line with no newline
	}
	if !strings.HasSuffix(ins, "\n") && at < len(text) {
		ins += "\n" // the next line stays a line of its own
	}
	err = replace(f, []byte(text[:at]+ins+text[at:]))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return e.w.fail(a.Path, err)
	}
	return tool.Success(fmt.Sprintf("inserted %d lines into %s after line %d", lineCount(a.InsertText), a.Path, a.InsertLine))
}
