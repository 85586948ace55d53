// Package patch parses and applies the patch format of the apply_patch tool, the one OpenAI's
// coding models are trained to write (Codex's format):
//
//	*** Begin Patch
//	*** Add File: path        then the file's lines, each after a +
//	*** Delete File: path
//	*** Update File: path
//	*** Move to: new/path     optional, right after Update File
//	@@ a line to find first   optional; "@@" alone opens a hunk with no such line
//	 context line             (a space, then the line)
//	-removed line
//	+added line
//	*** End of File           optional: the hunk's lines end the file
//	*** End Patch
//
// It is hand-written: the format is small, no Go library reads it, and its error messages are
// written for a model that must mend its patch (which file, which hunk, which lines were not
// found). Parsing is lenient where models are known to stray: markers may carry spaces around
// them, a patch may be wrapped in a heredoc (<<'EOF' … EOF), and hunk lines are found in the file
// exactly, then ignoring trailing whitespace, then ignoring whitespace at both ends.
//
// Apply applies a patch all or nothing: every file is read and every hunk placed before anything
// is written, and a write that fails (or a Stop during the writes) puts back what was written.
package patch

import (
	"fmt"
	"strings"
)

// The markers of the format.
const (
	beginMarker  = "*** Begin Patch"
	endMarker    = "*** End Patch"
	addMarker    = "*** Add File: "
	deleteMarker = "*** Delete File: "
	updateMarker = "*** Update File: "
	moveMarker   = "*** Move to: "
	eofMarker    = "*** End of File"
)

// Op is what a file section of a patch does.
type Op int

// The operations of a patch.
const (
	Add Op = iota + 1
	Delete
	Update
)

func (o Op) String() string {
	switch o {
	case Add:
		return "Add File"
	case Delete:
		return "Delete File"
	case Update:
		return "Update File"
	}
	return fmt.Sprintf("Op(%d)", int(o))
}

// File is one file section of a patch.
type File struct {
	Op   Op
	Path string
	// MoveTo, for an update, is where the file goes ("" if it stays).
	MoveTo string
	// Content, for an add, is the new file's text (each + line and a newline).
	Content string
	// Hunks, for an update, are its changes, in file order.
	Hunks []Hunk
	// Line is the patch line (1-based) of the section's header.
	Line int
}

// Hunk is one change of an updated file: lines to find (Old) and what replaces them (New).
type Hunk struct {
	// Anchor is the line after "@@ ", to be found before Old ("" for none).
	Anchor string
	Old    []string
	New    []string
	// EOF says Old must end the file.
	EOF bool
	// Line is the patch line (1-based) where the hunk begins.
	Line int
}

// Patch is a parsed patch: its file sections in order.
type Patch struct {
	Files []File
}

// ParseError says where a patch breaks the format and how.
type ParseError struct {
	Line int // 1-based; 0 when it concerns the whole patch
	Msg  string
}

func (e *ParseError) Error() string {
	if e.Line == 0 {
		return "invalid patch: " + e.Msg
	}
	return fmt.Sprintf("invalid patch at line %d: %s", e.Line, e.Msg)
}

// Parse reads a patch.
func Parse(text string) (*Patch, error) {
	lines := splitLines(strings.TrimSpace(text))
	lines, offset := unwrapHeredoc(lines)
	if len(lines) == 0 || strings.TrimSpace(lines[0]) != beginMarker {
		return nil, &ParseError{Msg: "the first line of the patch must be '" + beginMarker + "'"}
	}
	if len(lines) < 2 || strings.TrimSpace(lines[len(lines)-1]) != endMarker {
		return nil, &ParseError{Msg: "the last line of the patch must be '" + endMarker + "'"}
	}
	p := &Patch{}
	body := lines[1 : len(lines)-1]
	for i := 0; i < len(body); {
		f, n, err := parseFile(body[i:], i+2+offset)
		if err != nil {
			return nil, err
		}
		p.Files = append(p.Files, f)
		i += n
	}
	if len(p.Files) == 0 {
		return nil, &ParseError{Msg: "the patch changes no file: put '*** Add File: ', '*** Delete File: ' or '*** Update File: ' sections between its first and last lines"}
	}
	return p, nil
}

// splitLines splits text at newlines, dropping a carriage return before each.
func splitLines(text string) []string {
	if text == "" {
		return nil
	}
	lines := strings.Split(text, "\n")
	for i, l := range lines {
		lines[i] = strings.TrimSuffix(l, "\r")
	}
	return lines
}

// unwrapHeredoc strips a heredoc around a patch (<<EOF, <<'EOF' or <<"EOF" … EOF), which models
// used to shell commands sometimes write; offset is how many lines were dropped at the start.
func unwrapHeredoc(lines []string) (_ []string, offset int) {
	if len(lines) >= 4 {
		switch strings.TrimSpace(lines[0]) {
		case "<<EOF", "<<'EOF'", `<<"EOF"`:
			if strings.HasSuffix(strings.TrimSpace(lines[len(lines)-1]), "EOF") {
				return lines[1 : len(lines)-1], 1
			}
		}
	}
	return lines, 0
}

// parseFile reads the file section at the start of lines, whose first line is patch line at; n
// is how many lines it took.
func parseFile(lines []string, at int) (f File, n int, err error) {
	head := strings.TrimSpace(lines[0])
	pathOf := func(marker string) (string, error) {
		p := strings.TrimSpace(strings.TrimPrefix(head, marker))
		if p == "" {
			return "", &ParseError{Line: at, Msg: fmt.Sprintf("'%s' names no file", strings.TrimSpace(marker))}
		}
		return p, nil
	}
	for _, m := range []string{addMarker, deleteMarker, updateMarker} {
		if head == strings.TrimSpace(m) {
			return f, 0, &ParseError{Line: at, Msg: fmt.Sprintf("'%s' names no file", head)}
		}
	}
	switch {
	case strings.HasPrefix(head, addMarker):
		f = File{Op: Add, Line: at}
		if f.Path, err = pathOf(addMarker); err != nil {
			return f, 0, err
		}
		var b strings.Builder
		n = 1
		for ; n < len(lines); n++ {
			l, ok := strings.CutPrefix(lines[n], "+")
			if !ok {
				break
			}
			b.WriteString(l)
			b.WriteByte('\n')
		}
		f.Content = b.String()
		return f, n, nil
	case strings.HasPrefix(head, deleteMarker):
		f = File{Op: Delete, Line: at}
		f.Path, err = pathOf(deleteMarker)
		return f, 1, err
	case strings.HasPrefix(head, updateMarker):
		f = File{Op: Update, Line: at}
		if f.Path, err = pathOf(updateMarker); err != nil {
			return f, 0, err
		}
		n = 1
		if n < len(lines) {
			if to, ok := strings.CutPrefix(strings.TrimSpace(lines[n]), moveMarker); ok {
				if f.MoveTo = strings.TrimSpace(to); f.MoveTo == "" {
					return f, 0, &ParseError{Line: at + n, Msg: "'*** Move to:' names no file"}
				}
				n++
			}
		}
		for n < len(lines) {
			if strings.TrimSpace(lines[n]) == "" {
				n++ // blank lines between hunks
				continue
			}
			if strings.HasPrefix(lines[n], "*") {
				break // the next section
			}
			h, k, err := parseHunk(lines[n:], at+n, len(f.Hunks) == 0)
			if err != nil {
				return f, 0, err
			}
			f.Hunks = append(f.Hunks, h)
			n += k
		}
		if len(f.Hunks) == 0 {
			return f, 0, &ParseError{Line: at, Msg: fmt.Sprintf("the update of %s has no hunk: give its changes as lines starting with ' ', '-' or '+' after '@@'", f.Path)}
		}
		return f, n, nil
	}
	return f, 0, &ParseError{Line: at, Msg: fmt.Sprintf("%q is not a file section header; a section starts with '*** Add File: path', '*** Delete File: path' or '*** Update File: path'", clip(head))}
}

// parseHunk reads one hunk at the start of lines (patch line at). The first hunk of a file may
// leave out its @@ line.
func parseHunk(lines []string, at int, first bool) (h Hunk, n int, err error) {
	h.Line = at
	switch {
	case lines[0] == "@@":
		n = 1
	case strings.HasPrefix(lines[0], "@@ "):
		h.Anchor = strings.TrimPrefix(lines[0], "@@ ")
		n = 1
	case !first:
		return h, 0, &ParseError{Line: at, Msg: fmt.Sprintf("expected a hunk starting with '@@', got %q", clip(lines[0]))}
	}
	body := 0
	for ; n < len(lines); n++ {
		l := lines[n]
		if strings.TrimSpace(l) == eofMarker {
			if body == 0 {
				break
			}
			h.EOF = true
			n++
			break
		}
		if l == "" {
			// An empty line is an empty context line (editors strip the space).
			h.Old = append(h.Old, "")
			h.New = append(h.New, "")
			body++
			continue
		}
		switch l[0] {
		case ' ':
			h.Old = append(h.Old, l[1:])
			h.New = append(h.New, l[1:])
		case '-':
			h.Old = append(h.Old, l[1:])
		case '+':
			h.New = append(h.New, l[1:])
		default:
			if body == 0 {
				return h, 0, &ParseError{Line: at + n, Msg: fmt.Sprintf("unexpected line %q in a hunk: every line of a hunk starts with ' ' (context), '-' (removed) or '+' (added)", clip(l))}
			}
			return h, n, nil // the next hunk or section
		}
		body++
	}
	if body == 0 {
		return h, 0, &ParseError{Line: at, Msg: "the hunk has no lines"}
	}
	return h, n, nil
}

func clip(s string) string {
	if len(s) > 80 {
		return s[:80] + "…"
	}
	return s
}
