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
	"github.com/reinhq/rein/internal/tool/patch"
)

// patchGrammar is the apply_patch format in Lark, the grammar a custom tool's input is held to on
// the Responses wire (see package patch for the format in words).
const patchGrammar = `start: begin_patch hunk+ end_patch
begin_patch: "*** Begin Patch" LF
end_patch: "*** End Patch" LF?

hunk: add_hunk | delete_hunk | update_hunk
add_hunk: "*** Add File: " filename LF add_line+
delete_hunk: "*** Delete File: " filename LF
update_hunk: "*** Update File: " filename LF change_move? change?

filename: /(.+)/
add_line: "+" /(.*)/ LF -> line

change_move: "*** Move to: " filename LF
change: (change_context | change_line)+ eof_line?
change_context: ("@@" | "@@ " /(.+)/) LF
change_line: ("+" | "-" | " ") /(.*)/ LF
eof_line: "*** End of File" LF

%import common.LF
`

// patchDescription tells the model the format, in rein's words.
const patchDescription = `Change files of the workspace with a patch: add, delete, update or move files in one call, all or none. The input is the patch text:

*** Begin Patch
*** Add File: path/new.txt
+each line of the new file after a +
*** Update File: path/old.go
*** Move to: path/renamed.go   (optional)
@@ func Example() {            (optional: a line to find first, to place the hunk)
 a context line, after a space
-a line to remove
+a line to add
*** End of File                (optional: the hunk ends the file)
*** Delete File: path/gone.txt
*** End Patch

Paths are relative to the workspace root. Give about three lines of context above and below each change, enough to place it once; start each further hunk of a file with @@. A patch that does not apply changes nothing and says which file, which hunk and which lines were not found.`

type applyPatch struct {
	w        *Workspace
	freeform bool
}

// ApplyPatch returns the apply_patch tool, which applies a patch in the format OpenAI's coding
// models are trained to write (package patch). Freeform offers it as a custom tool whose input is
// the patch text, on the wires that have custom tools (Responses); otherwise, and on every other
// wire, it is a function with one argument, input. Either way a call's arguments are
// {"input": patch}.
func (w *Workspace) ApplyPatch(freeform bool) tool.Tool { return applyPatch{w, freeform} }

func (t applyPatch) Spec() provider.Tool {
	s := provider.Tool{Name: "apply_patch", Description: patchDescription, Schema: provider.FreeformSchema}
	if t.freeform {
		s.Grammar = patchGrammar
	}
	return s
}

// Access declares that a patch changes files, each file it names a subject, judged as write_file
// (adds, deletes, moves) and edit_file (updates) so that rules written for those hold.
func (t applyPatch) Access(args json.RawMessage) tool.Access {
	a := tool.Access{Effect: tool.EffectWrite}
	input, _ := provider.FreeformInput(args)
	p, err := patch.Parse(input)
	if err != nil {
		a.As = []string{"write_file", "edit_file"}
		return a
	}
	as := map[string]bool{}
	subject := func(p string) {
		if r, err := t.w.rel(p); err == nil {
			p = r
		}
		a.Subjects = append(a.Subjects, p)
	}
	for _, f := range p.Files {
		subject(f.Path)
		switch {
		case f.Op == patch.Update && f.MoveTo == "":
			as["edit_file"] = true
		case f.Op == patch.Update:
			subject(f.MoveTo)
			as["edit_file"], as["write_file"] = true, true
		default:
			as["write_file"] = true
		}
	}
	for _, n := range []string{"write_file", "edit_file"} {
		if as[n] {
			a.As = append(a.As, n)
		}
	}
	return a
}

func (t applyPatch) Run(ctx context.Context, call tool.Call) tool.Result {
	input, ok := provider.FreeformInput(call.Args)
	if !ok {
		return tool.Failure(`invalid arguments for apply_patch: give the patch text as {"input": "*** Begin Patch\n…\n*** End Patch"}`)
	}
	p, err := patch.Parse(input)
	if err != nil {
		return tool.Failure("apply_patch: %v", err)
	}
	changes, err := patch.Apply(ctx, patchFiles{ctx: ctx, w: t.w}, p)
	var out *OutsideError
	switch {
	case errors.Is(err, patch.ErrStopped):
		return interrupted("apply_patch stopped before it changed any file; no file was changed")
	case errors.As(err, &out):
		return tool.Denied("refused: apply_patch: " + err.Error() + "; no file was changed")
	case err != nil:
		return tool.Failure("apply_patch: %v; no file was changed", err)
	}
	var b strings.Builder
	b.WriteString("Applied the patch:")
	for _, c := range changes {
		switch {
		case c.Op == patch.Add:
			fmt.Fprintf(&b, "\nA %s", c.Name)
		case c.Op == patch.Delete:
			fmt.Fprintf(&b, "\nD %s", c.Name)
		case c.From != "":
			fmt.Fprintf(&b, "\nR %s -> %s", c.From, c.Name)
		default:
			fmt.Fprintf(&b, "\nM %s", c.Name)
		}
	}
	return tool.Success(b.String())
}

// patchFiles is the workspace as package patch reads and writes it: confined by os.Root, regular
// text files only.
type patchFiles struct {
	ctx context.Context
	w   *Workspace
}

func (f patchFiles) Resolve(p string) (string, error) {
	rel, err := f.w.rel(p)
	if err != nil {
		return "", err
	}
	if rel == "." {
		return "", fmt.Errorf("%s is the workspace root, not a file", p)
	}
	// os.Root judges symbolic links when the path is used; judge them now, so a patch that
	// leads out is refused before anything is written.
	if dir := path.Dir(rel); dir != "." {
		if _, err := f.w.root.Stat(dir); err != nil && escapes(err) {
			return "", &OutsideError{Path: p, Workspace: f.w.dir, Link: true}
		}
	}
	if _, err := f.w.root.Lstat(rel); err == nil {
		if _, err := f.w.root.Stat(rel); err != nil && escapes(err) {
			return "", &OutsideError{Path: p, Workspace: f.w.dir, Link: true}
		}
	}
	return rel, nil
}

func (f patchFiles) Read(name string) (string, error) {
	fi, err := f.w.statRegular(name, name, "apply_patch changes")
	if err != nil {
		return "", err
	}
	if fi.IsDir() {
		return "", fmt.Errorf("%s is a directory", name)
	}
	if fi.Size() > maxEditFile {
		return "", fmt.Errorf("%s is larger than %d MiB, the most apply_patch changes", name, maxEditFile>>20)
	}
	file, fi, err := f.w.openRegular(name, os.O_RDONLY, 0, name, "apply_patch changes")
	if err != nil {
		return "", err
	}
	defer file.Close()
	data, err := readAll(f.ctx, file, fi.Size(), maxEditFile)
	switch {
	case f.ctx.Err() != nil:
		return "", fmt.Errorf("%w (%v)", patch.ErrStopped, f.ctx.Err())
	case errors.Is(err, errTooLarge):
		return "", fmt.Errorf("%s is larger than %d MiB, the most apply_patch changes", name, maxEditFile>>20)
	case err != nil:
		return "", err
	}
	if isBinary(data) {
		return "", fmt.Errorf("%s is a binary file; apply_patch changes only text", name)
	}
	return string(data), nil
}

func (f patchFiles) Write(name, content string) error {
	if dir := path.Dir(name); dir != "." {
		if err := f.w.root.MkdirAll(dir, 0o755); err != nil {
			return err
		}
	}
	file, _, err := f.w.openRegular(name, os.O_WRONLY|os.O_CREATE, 0o644, name, "apply_patch writes")
	if err != nil {
		return err
	}
	err = replace(file, []byte(content))
	if cerr := file.Close(); err == nil {
		err = cerr
	}
	return err
}

func (f patchFiles) Remove(name string) error {
	fi, err := f.w.root.Lstat(name)
	if err != nil {
		return err
	}
	if fi.IsDir() {
		return fmt.Errorf("%s is a directory; apply_patch deletes only files", name)
	}
	return f.w.root.Remove(name)
}
