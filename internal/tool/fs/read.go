package fstool

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"unicode/utf8"

	"github.com/reinhq/rein/internal/provider"
	"github.com/reinhq/rein/internal/record"
	"github.com/reinhq/rein/internal/tool"
)

// The limits of one read_file answer.
const (
	defaultLimit = 2000      // lines
	maxLineBytes = 2000      // a longer line is clipped
	maxReadBytes = 256 << 10 // the answer stops before it grows past this
)

type readFile struct{ w *Workspace }

// ReadFile returns the read_file tool: a text file's lines numbered like cat -n.
func (w *Workspace) ReadFile() tool.Tool { return readFile{w} }

func (readFile) Spec() provider.Tool {
	return provider.Tool{
		Name: "read_file",
		Description: fmt.Sprintf("Read a text file of the workspace, its lines numbered like cat -n. Reads %d lines "+
			"from offset (the first line is 1) unless limit says otherwise; lines longer than %d bytes are clipped. "+
			"An image (PNG, JPEG, GIF, WebP) is shown to you as the picture, where the model takes images. "+
			"Other binary files are refused.", defaultLimit, maxLineBytes),
		Schema: schema(`{"type":"object","properties":{` +
			`"path":{"type":"string","description":"The file, relative to the workspace root or absolute inside it."},` +
			`"offset":{"type":"integer","minimum":1,"description":"The first line to read (1-based)."},` +
			`"limit":{"type":"integer","minimum":1,"description":"How many lines to read."}},` +
			`"required":["path"],"additionalProperties":false}`),
	}
}

// SetImages says whether the session's model takes images (Workspace.SetImages).
func (r readFile) SetImages(on bool) { r.w.SetImages(on) }

func (r readFile) Access(args json.RawMessage) tool.Access {
	return r.w.access(tool.EffectRead, args)
}

func (r readFile) Run(ctx context.Context, call tool.Call) tool.Result {
	var a struct {
		Path   string `json:"path"`
		Offset int    `json:"offset"`
		Limit  int    `json:"limit"`
	}
	if err := json.Unmarshal(call.Args, &a); err != nil {
		return tool.Failure("invalid arguments for read_file: %v", err)
	}
	a.Offset = max(a.Offset, 1)
	if a.Limit <= 0 {
		a.Limit = defaultLimit
	}
	rel, err := r.w.rel(a.Path)
	if err != nil {
		return r.w.fail(a.Path, err)
	}
	if fi, err := r.w.statRegular(rel, a.Path, "read_file reads"); err != nil {
		return r.w.fail(a.Path, err)
	} else if fi.IsDir() {
		return tool.Failure("%s is a directory; list it with glob", a.Path)
	}
	f, fi, err := r.w.openRegular(rel, os.O_RDONLY, 0, a.Path, "read_file reads")
	if err != nil {
		return r.w.fail(a.Path, err)
	}
	defer f.Close()
	br := bufio.NewReaderSize(f, 64<<10)
	head, _ := br.Peek(sniffLen)
	if media := imageKind(head); media != "" {
		return r.w.readImage(ctx, br, fi.Size(), a.Path, media) // image.go
	}
	if isBinary(head) {
		return tool.Failure("%s is a binary file (%d bytes); read_file shows only text", a.Path, fi.Size())
	}
	if fi.Size() == 0 {
		return tool.Success(fmt.Sprintf("(%s is empty)", a.Path))
	}
	return readLines(ctx, br, a.Path, a.Offset, a.Limit)
}

// readLines numbers lines offset to offset+limit-1 of br. A file is regular, so the reading ends,
// but a large one can take a while to skip through: a Stop ends it between lines.
func readLines(ctx context.Context, br *bufio.Reader, name string, offset, limit int) tool.Result {
	var b strings.Builder
	n := 0 // lines seen
	for {
		if ctx.Err() != nil {
			return interrupted(fmt.Sprintf("read_file stopped at line %d of %s", n+1, name))
		}
		line, clipped, err := readLine(ctx, br)
		eof := errors.Is(err, io.EOF)
		if err != nil && !eof {
			if ctx.Err() != nil {
				return interrupted(fmt.Sprintf("read_file stopped at line %d of %s", n+1, name))
			}
			return tool.Failure("read %s: %v", name, err)
		}
		if eof && line == "" && clipped == 0 {
			break
		}
		n++
		if n < offset {
			continue
		}
		if n >= offset+limit {
			fmt.Fprintf(&b, "[the file continues past line %d; read on with offset %d]", n-1, n)
			return tool.Success(b.String())
		}
		if b.Len() > maxReadBytes {
			fmt.Fprintf(&b, "[this answer stops at %d KiB, after line %d; read on with offset %d]", maxReadBytes>>10, n-1, n)
			return tool.Success(b.String())
		}
		fmt.Fprintf(&b, "%6d\t%s", n, strings.ToValidUTF8(line, "\uFFFD"))
		if clipped > 0 {
			fmt.Fprintf(&b, " [… line clipped, %d more bytes]", clipped)
		}
		b.WriteByte('\n')
		if eof {
			break
		}
	}
	if n < offset {
		return tool.Failure("%s has %d lines; offset %d is past its end", name, n, offset)
	}
	return tool.Success(b.String())
}

// readLine reads one line without its newline, keeping at most maxLineBytes of it (cut on a
// character boundary) and counting the bytes it clipped.
func readLine(ctx context.Context, br *bufio.Reader) (line string, clipped int, err error) {
	var keep []byte
	for {
		if err := ctx.Err(); err != nil {
			return string(keep), clipped, err
		}
		frag, err := br.ReadSlice('\n')
		if room := maxLineBytes - len(keep); room > 0 {
			keep = append(keep, frag[:min(room, len(frag))]...)
			clipped += len(frag) - min(room, len(frag))
		} else {
			clipped += len(frag)
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if len(keep) > 0 && keep[len(keep)-1] == '\n' {
			keep = keep[:len(keep)-1]
		} else if clipped > 0 && len(frag) > 0 && frag[len(frag)-1] == '\n' {
			clipped--
		}
		if clipped > 0 {
			for len(keep) > 0 && !utf8.FullRune(keep[lastRuneStart(keep):]) {
				cut := lastRuneStart(keep)
				clipped += len(keep) - cut
				keep = keep[:cut]
			}
		}
		return string(keep), clipped, err
	}
}

func lastRuneStart(b []byte) int {
	for i := len(b) - 1; i >= 0 && i >= len(b)-utf8.UTFMax; i-- {
		if utf8.RuneStart(b[i]) {
			return i
		}
	}
	return len(b) - 1
}

// interrupted is the Result of a call a Stop cut short, saying where.
func interrupted(where string) tool.Result {
	return tool.Result{Content: "[interrupted: " + where + " when the session was stopped]", IsError: true, Outcome: record.Interrupted}
}
