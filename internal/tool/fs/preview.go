package fstool

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"strings"

	"github.com/reinhq/rein/internal/diff"
)

// maxPreview bounds the diff a preview shows; a longer one is cut at a line, saying so.
const maxPreview = 64 << 10

// Preview is the unified diff write_file would make: the file as it is now against the content
// given (from /dev/null for a file it would create).
func (t writeFile) Preview(args json.RawMessage) string {
	var a struct {
		Path    string `json:"path"`
		Content string `json:"content"`
	}
	if err := json.Unmarshal(args, &a); err != nil {
		return fmt.Sprintf("(no preview: the arguments do not read: %v)", err)
	}
	before, exists, err := t.w.current(a.Path)
	if err != nil {
		return fmt.Sprintf("(no preview: %v)", err)
	}
	from := "a/" + a.Path
	if !exists {
		from = "/dev/null"
	}
	d := diff.Unified(from, "b/"+a.Path, before, a.Content)
	if d == "" {
		return fmt.Sprintf("(write_file would leave %s as it is: the content is the same)", a.Path)
	}
	return clipPreview(d)
}

// Preview is the unified diff edit_file would make to the file as it is now, or why it would
// fail.
func (t editFile) Preview(args json.RawMessage) string {
	var a struct {
		Path       string `json:"path"`
		Old        string `json:"old"`
		New        string `json:"new"`
		ReplaceAll bool   `json:"replace_all"`
	}
	if err := json.Unmarshal(args, &a); err != nil {
		return fmt.Sprintf("(no preview: the arguments do not read: %v)", err)
	}
	before, exists, err := t.w.current(a.Path)
	switch {
	case err != nil:
		return fmt.Sprintf("(no preview: %v)", err)
	case !exists:
		return fmt.Sprintf("(edit_file would fail: %s does not exist)", a.Path)
	case a.Old == "":
		return "(edit_file would fail: old is empty)"
	}
	n := strings.Count(before, a.Old)
	var after string
	switch {
	case n == 0:
		return fmt.Sprintf("(edit_file would fail: old is not in %s as it is now)", a.Path)
	case n > 1 && !a.ReplaceAll:
		return fmt.Sprintf("(edit_file would fail: old matches %d places in %s)", n, a.Path)
	case a.ReplaceAll:
		after = strings.ReplaceAll(before, a.Old, a.New)
	default:
		after = strings.Replace(before, a.Old, a.New, 1)
	}
	return clipPreview(diff.Unified("a/"+a.Path, "b/"+a.Path, before, after))
}

// current reads the file at p as it is now, confined to the workspace; exists is false for a file
// that is not there.
func (w *Workspace) current(p string) (text string, exists bool, err error) {
	rel, err := w.rel(p)
	if err != nil {
		return "", false, err
	}
	fi, err := w.root.Stat(rel)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "", false, nil
	case err != nil:
		return "", false, unwrapPath(err)
	case !fi.Mode().IsRegular():
		return "", true, fmt.Errorf("%s is not a regular file", p)
	case fi.Size() > maxEditFile:
		return "", true, fmt.Errorf("%s is larger than %d MiB", p, maxEditFile>>20)
	}
	data, err := w.root.ReadFile(rel)
	if err != nil {
		return "", true, unwrapPath(err)
	}
	if isBinary(data) {
		return "", true, fmt.Errorf("%s is a binary file", p)
	}
	return string(data), true, nil
}

func clipPreview(d string) string {
	if len(d) <= maxPreview {
		return d
	}
	cut := strings.LastIndexByte(d[:maxPreview], '\n') + 1
	return d[:cut] + fmt.Sprintf("… (%d more bytes of the diff not shown)\n", len(d)-cut)
}
