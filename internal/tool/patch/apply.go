package patch

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"sort"
	"strings"
)

// Files is the directory a patch is applied in. Its implementation confines every path (the
// workspace's does, through os.Root) and refuses what is not a regular text file.
type Files interface {
	// Resolve turns a path as the patch spells it into the one name of that file (so that
	// "a.txt" and "./a.txt" are one file), or refuses it (a path outside the directory).
	Resolve(path string) (string, error)
	// Read returns a file's text; an absent file is an error wrapping fs.ErrNotExist.
	Read(name string) (string, error)
	// Write makes content the file's whole text, creating it and its parent directories.
	Write(name, content string) error
	// Remove deletes a file.
	Remove(name string) error
}

// ApplyError says which file section and which hunk of a patch did not apply, and why.
type ApplyError struct {
	File File
	Hunk int // 1-based; 0 when the section as a whole failed
	Msg  string
	Err  error
}

func (e *ApplyError) Error() string {
	where := fmt.Sprintf("%s %s (patch line %d)", e.File.Op, e.File.Path, e.File.Line)
	if e.Hunk > 0 {
		where = fmt.Sprintf("hunk %d of %s %s (patch line %d)", e.Hunk, e.File.Op, e.File.Path, e.File.Hunks[e.Hunk-1].Line)
	}
	return where + ": " + e.Msg
}

func (e *ApplyError) Unwrap() error { return e.Err }

// ErrStopped is wrapped by the error of an Apply that ctx ended; nothing was left changed.
var ErrStopped = errors.New("stopped before the patch was applied; no file was changed")

// Change is one file as a patch leaves it.
type Change struct {
	Name    string
	Op      Op     // Add (created or replaced), Delete, or Update (which may have moved it)
	From    string // for a move, the file it came from
	Content string // the new text (not for Delete)
}

// entry is a file as the patch sees it while the patch is placed: its text before and now.
type entry struct {
	existed bool
	orig    string
	exists  bool
	text    string
}

// plan places every section and hunk of p against files without writing: the changes it would
// make, in the order files are first touched, or the first error. It reads each file once.
func plan(ctx context.Context, files Files, p *Patch) ([]Change, map[string]entry, error) {
	state := map[string]*entry{}
	var order []string
	load := func(name string) (*entry, error) {
		if e, ok := state[name]; ok {
			return e, nil
		}
		text, err := files.Read(name)
		e := &entry{}
		switch {
		case err == nil:
			e.existed, e.orig, e.exists, e.text = true, text, true, text
		case errors.Is(err, fs.ErrNotExist):
		default:
			return nil, err
		}
		state[name] = e
		order = append(order, name)
		return e, nil
	}
	var changes []Change
	for _, f := range p.Files {
		if err := ctx.Err(); err != nil {
			return nil, nil, fmt.Errorf("%w (%v)", ErrStopped, err)
		}
		fail := func(hunk int, err error, format string, a ...any) error {
			return &ApplyError{File: f, Hunk: hunk, Msg: fmt.Sprintf(format, a...), Err: err}
		}
		name, err := files.Resolve(f.Path)
		if err != nil {
			return nil, nil, fail(0, err, "%v", err)
		}
		e, err := load(name)
		if err != nil {
			return nil, nil, fail(0, err, "%v", err)
		}
		switch f.Op {
		case Add:
			e.exists, e.text = true, f.Content
			changes = append(changes, Change{Name: name, Op: Add, Content: f.Content})
		case Delete:
			if !e.exists {
				return nil, nil, fail(0, fs.ErrNotExist, "%s does not exist, so it cannot be deleted", f.Path)
			}
			e.exists, e.text = false, ""
			changes = append(changes, Change{Name: name, Op: Delete})
		case Update:
			if !e.exists {
				return nil, nil, fail(0, fs.ErrNotExist, "%s does not exist, so it cannot be updated; to create it use '*** Add File: %s'", f.Path, f.Path)
			}
			text, hunk, msg := applyHunks(e.text, f.Hunks)
			if hunk > 0 {
				return nil, nil, fail(hunk, nil, "%s", msg)
			}
			c := Change{Name: name, Op: Update, Content: text}
			if f.MoveTo != "" {
				to, err := files.Resolve(f.MoveTo)
				if err != nil {
					return nil, nil, fail(0, err, "%v", err)
				}
				dst, err := load(to)
				if err != nil {
					return nil, nil, fail(0, err, "%v", err)
				}
				if to != name {
					e.exists, e.text = false, ""
					c.Name, c.From = to, name
				}
				e = dst
			}
			e.exists, e.text = true, text
			changes = append(changes, c)
		}
	}
	final := make(map[string]entry, len(order))
	for _, name := range order {
		final[name] = *state[name]
	}
	return changes, final, nil
}

// Apply applies p to files, all or nothing, and returns the changes made. When a write fails,
// or ctx ends while the files are written, the files already written are put back as they were
// and the error says so.
func Apply(ctx context.Context, files Files, p *Patch) ([]Change, error) {
	changes, final, err := plan(ctx, files, p)
	if err != nil {
		return nil, err
	}
	names := make([]string, 0, len(final))
	for name := range final {
		names = append(names, name)
	}
	sort.Strings(names)
	var done []string
	for _, name := range names {
		e := final[name]
		if !e.existed && !e.exists || e.existed && e.exists && e.orig == e.text {
			continue
		}
		if err := ctx.Err(); err != nil {
			return nil, errors.Join(fmt.Errorf("%w (%v)", ErrStopped, err), undo(files, final, done))
		}
		if e.exists {
			err = files.Write(name, e.text)
		} else {
			err = files.Remove(name)
		}
		if err != nil {
			return nil, errors.Join(fmt.Errorf("write %s: %w; no file was left changed", name, err), undo(files, final, done))
		}
		done = append(done, name)
	}
	return changes, nil
}

// undo puts back the files named in done as they were before the patch.
func undo(files Files, final map[string]entry, done []string) error {
	var errs []error
	for i := len(done) - 1; i >= 0; i-- {
		name := done[i]
		e := final[name]
		var err error
		if e.existed {
			err = files.Write(name, e.orig)
		} else {
			err = files.Remove(name)
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("and putting %s back failed: %w", name, err))
		}
	}
	return errors.Join(errs...)
}

// applyHunks applies hunks to text. On failure hunk is the 1-based hunk that did not apply and
// msg says why.
func applyHunks(text string, hunks []Hunk) (_ string, hunk int, msg string) {
	lines := strings.Split(text, "\n")
	if len(lines) > 0 && lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1] // the newline ending the last line
	}
	type replacement struct {
		at, n int
		with  []string
	}
	var reps []replacement
	from := 0
	for i, h := range hunks {
		if h.Anchor != "" {
			j := seek(lines, []string{h.Anchor}, from, false)
			if j < 0 {
				return "", i + 1, fmt.Sprintf("the line after @@ was not found%s:\n%s", after(from), quote([]string{h.Anchor}))
			}
			from = j + 1
		}
		if len(h.Old) == 0 {
			reps = append(reps, replacement{len(lines), 0, h.New})
			continue
		}
		old, with := h.Old, h.New
		j := seek(lines, old, from, h.EOF)
		if j < 0 && old[len(old)-1] == "" {
			// A trailing empty line in a hunk is often the file's final newline.
			old = old[:len(old)-1]
			if len(with) > 0 && with[len(with)-1] == "" {
				with = with[:len(with)-1]
			}
			if len(old) > 0 {
				j = seek(lines, old, from, h.EOF)
			}
		}
		if j < 0 {
			what := "the lines to change were not found"
			if h.EOF {
				what = "the lines to change were not found at the end of the file"
			}
			return "", i + 1, fmt.Sprintf("%s%s (the ' ' and '-' lines must match the file, in order):\n%s", what, after(from), quote(h.Old))
		}
		reps = append(reps, replacement{j, len(old), with})
		from = j + len(old)
	}
	sort.SliceStable(reps, func(a, b int) bool { return reps[a].at < reps[b].at })
	var out []string
	at := 0
	for _, r := range reps {
		out = append(out, lines[at:r.at]...)
		out = append(out, r.with...)
		at = r.at + r.n
	}
	out = append(out, lines[at:]...)
	if len(out) == 0 {
		return "", 0, ""
	}
	return strings.Join(out, "\n") + "\n", 0, ""
}

// seek finds pattern in lines at or after from: exactly, then ignoring trailing whitespace, then
// ignoring whitespace at both ends. With eof it must end the file. It returns the index or -1.
func seek(lines, pattern []string, from int, eof bool) int {
	if len(pattern) > len(lines) {
		return -1
	}
	last := len(lines) - len(pattern)
	for _, eq := range []func(a, b string) bool{
		func(a, b string) bool { return a == b },
		func(a, b string) bool { return strings.TrimRight(a, " \t") == strings.TrimRight(b, " \t") },
		func(a, b string) bool { return strings.TrimSpace(a) == strings.TrimSpace(b) },
	} {
		start := from
		if eof {
			start = max(last, from)
		}
		for i := start; i <= last; i++ {
			ok := true
			for k, p := range pattern {
				if !eq(lines[i+k], p) {
					ok = false
					break
				}
			}
			if ok {
				return i
			}
		}
	}
	return -1
}

func after(from int) string {
	if from == 0 {
		return ""
	}
	return fmt.Sprintf(" after line %d", from)
}

// quote shows lines as a hunk gave them, indented, at most 12.
func quote(lines []string) string {
	var b strings.Builder
	for i, l := range lines {
		if i == 12 {
			fmt.Fprintf(&b, "  … and %d more lines", len(lines)-12)
			break
		}
		b.WriteString("  ")
		b.WriteString(clip(l))
		if i < len(lines)-1 {
			b.WriteByte('\n')
		}
	}
	return b.String()
}
