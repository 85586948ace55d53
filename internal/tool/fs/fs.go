// Package fstool provides the file tools: read_file, write_file, edit_file, glob and grep, and the
// two that stand in for them for the models trained on others: Anthropic's text editor
// (editor.go) and apply_patch (applypatch.go, the format in package patch). All of them are
// confined to the workspace through an os.Root: a path that leaves the workspace through
// "..", an absolute path elsewhere, or a symbolic link that leads out is refused by name, with the
// outcome denied. Absolute paths inside the workspace are accepted; relative paths are relative to
// the workspace root.
//
// Only regular files are read, written or edited (and searched): a named pipe, a device or a
// socket is refused by name. Every file is opened with O_NONBLOCK and judged by its own mode once
// open (fstat), so that no call waits on a named pipe for ever, even one swapped in after a check.
//
// glob and grep skip .git and what the workspace root's .gitignore ignores. The .gitignore reader
// is hand-written and small (rooted and unrooted patterns, *, ?, [...], **, trailing / for
// directories, ! to re-include); nested .gitignore files and git's global excludes are not read.
// Every wait and every long piece of work answers a Stop (the call's ctx) within milliseconds, and
// each search is bounded in the entries it visits, its depth, its answer's size and its time; the
// answer says which bound cut it short. Glob patterns match in time linear in their size and the
// path's depth (match.go), and grep hands Go's linear-time regexp bounded pieces of text.
package fstool

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"unicode/utf8"

	"github.com/reinhq/rein/internal/tool"
)

// Workspace is the directory the file tools work in, opened once.
type Workspace struct {
	dir  string // absolute and clean
	real string // dir with symbolic links resolved, also accepted in absolute paths
	root *os.Root
	// limits bound each glob and grep call (tests lower them).
	limits limits
	// images: read_file answers an image file with the picture (SetImages).
	images bool
}

// SetImages says whether the session's model takes images: read_file then answers an image file
// with the picture, else with a line saying what it is. Set it before the tools are used.
func (w *Workspace) SetImages(on bool) { w.images = on }

// Open opens the workspace directory dir.
func Open(dir string) (*Workspace, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("open the workspace %s: %w", dir, err)
	}
	root, err := os.OpenRoot(abs)
	if err != nil {
		return nil, fmt.Errorf("open the workspace: %w", err)
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		real = abs
	}
	return &Workspace{dir: abs, real: real, root: root, limits: defaultLimits}, nil
}

// Close releases the workspace's directory handle.
func (w *Workspace) Close() error { return w.root.Close() }

// Dir is the workspace's absolute path.
func (w *Workspace) Dir() string { return w.dir }

// Tools returns the five file tools, in the order they are best offered.
func (w *Workspace) Tools() []tool.Tool {
	return []tool.Tool{w.ReadFile(), w.WriteFile(), w.EditFile(), w.Glob(), w.Grep()}
}

// OutsideError refuses a path that leaves the workspace.
type OutsideError struct {
	Path      string // as the call gave it
	Workspace string
	Link      bool // it left through a symbolic link
}

func (e *OutsideError) Error() string {
	if e.Link {
		return fmt.Sprintf("path %s is outside the workspace %s: a symbolic link on its way leads out of it (or is absolute)", e.Path, e.Workspace)
	}
	return fmt.Sprintf("path %s is outside the workspace %s", e.Path, e.Workspace)
}

// rel turns a path as a call gives it into a clean, slash-separated path relative to the
// workspace root ("." for the root itself), or refuses it lexically. Symbolic links are judged
// later, by os.Root, when the path is used.
func (w *Workspace) rel(p string) (string, error) {
	if p == "" {
		return ".", nil
	}
	if filepath.IsAbs(p) {
		c := filepath.Clean(p)
		for _, base := range []string{w.dir, w.real} {
			if c == base {
				return ".", nil
			}
			if r, ok := strings.CutPrefix(c, strings.TrimSuffix(base, "/")+"/"); ok {
				return filepath.ToSlash(r), nil
			}
		}
		return "", &OutsideError{Path: p, Workspace: w.dir}
	}
	c := path.Clean(filepath.ToSlash(p))
	if c == ".." || strings.HasPrefix(c, "../") {
		return "", &OutsideError{Path: p, Workspace: w.dir}
	}
	return c, nil
}

// fail turns an error from using path p into the Result the model reads.
func (w *Workspace) fail(p string, err error) tool.Result {
	var out *OutsideError
	var irr *IrregularError
	switch {
	case errors.As(err, &irr):
		return tool.Failure("%s", irr.Error())
	case errors.As(err, &out):
		return tool.Denied("refused: " + out.Error())
	case escapes(err):
		return tool.Denied("refused: " + (&OutsideError{Path: p, Workspace: w.dir, Link: true}).Error())
	case errors.Is(err, fs.ErrNotExist):
		return tool.Failure("%s does not exist in the workspace %s", p, w.dir)
	case errors.Is(err, fs.ErrPermission):
		return tool.Failure("permission denied: %s", p)
	}
	return tool.Failure("%s: %v", p, unwrapPath(err))
}

// escapes reports whether err is os.Root's refusal of a path leading out of it. The standard
// library does not export that error, so it is recognised by its text (a test pins it).
func escapes(err error) bool {
	for err != nil {
		if err.Error() == "path escapes from parent" {
			return true
		}
		err = errors.Unwrap(err)
	}
	return false
}

func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// access declares the effect of a call of a file tool and its path as the subject, made
// workspace-relative where it can be so that rules such as write_file(docs/*) match however the
// path was spelled.
func (w *Workspace) access(effect tool.Effect, args json.RawMessage) tool.Access {
	var a struct{ Path string }
	json.Unmarshal(args, &a)
	subject := a.Path
	if r, err := w.rel(a.Path); err == nil {
		subject = r
	}
	return tool.Access{Effect: effect, Subjects: []string{subject}}
}

func schema(s string) json.RawMessage { return json.RawMessage(s) }

// isBinary reports whether a file's first bytes look like anything but text: a NUL byte, or more
// than a few percent of bytes that are not valid UTF-8.
func isBinary(head []byte) bool {
	if len(head) > sniffLen {
		head = head[:sniffLen]
	}
	bad := 0
	for i := 0; i < len(head); {
		c := head[i]
		if c == 0 {
			return true
		}
		if c < 0x80 {
			i++
			continue
		}
		r, n := utf8.DecodeRune(head[i:])
		// A sequence cut by the end of the sample is not counted against it.
		if r == utf8.RuneError && n == 1 && len(head)-i >= utf8.UTFMax {
			bad++
		}
		i += n
	}
	return bad*20 > len(head)
}

const sniffLen = 8000
