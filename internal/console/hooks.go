package console

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/reinhq/rein/internal/fold"
	"github.com/reinhq/rein/internal/fsys"
	"github.com/reinhq/rein/internal/journal"
	"github.com/reinhq/rein/internal/record"
)

// control prints what the hooks decided and the holds, as the exchange goes: a hook that passed
// silently says nothing, everything else is said on standard error.
func (p *Printer) control(b record.Payload) {
	switch b := b.(type) {
	case *record.Hook:
		if line := hookLine(b); line != "" {
			p.line(p.err, "rein: %s\n", line)
		}
	case *record.Hold:
		p.line(p.err, "rein: held %s: %s\n", b.CallID, b.Reason)
	case *record.Released:
		p.line(p.err, "rein: released the held call (by %s); it is asked about again\n", b.By)
	}
}

// hookLine says what a hook decided, or "" for a pass that added nothing.
func hookLine(b *record.Hook) string {
	if b.Decision == record.HookPass && b.Failed == "" && b.Context == "" && !b.Error {
		return ""
	}
	var s strings.Builder
	fmt.Fprintf(&s, "%s hook %s", b.Event, b.Command)
	if b.Tool != "" {
		fmt.Fprintf(&s, " on %s", b.Tool)
	}
	fmt.Fprintf(&s, ": %s", b.Decision)
	if b.Reason != "" {
		fmt.Fprintf(&s, " (%s)", oneLine(b.Reason))
	}
	if b.Context != "" {
		fmt.Fprintf(&s, "; adds: %s", oneLine(b.Context))
	}
	return s.String()
}

func oneLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	if len(s) > 200 {
		s = s[:200] + "…"
	}
	return s
}

// holdLine says where a held session stands, or "" when it is not held.
func holdLine(st *fold.State) string {
	p, ok := st.Parking()
	if !ok {
		return ""
	}
	return fmt.Sprintf("held    call %s: %s (rein resume releases it; rein resume --stop settles it)", p.CallID, p.Reason)
}

// ShowHooks prints every hook decision and hold of the record at path: which hook, its answer,
// its reason and how long it took. It prints nothing for a record without any.
func ShowHooks(out io.Writer, path string) error {
	out = Safe(out)
	blobs := journal.Blobs(fsys.OS{}, path)
	var rows []string
	_, err := journal.Inspect(fsys.OS{}, path, func(seq int64, line []byte, _ record.Locus) error {
		r, err := record.DecodeWith(line, seq, blobs)
		if err != nil {
			return err
		}
		switch b := r.Body.(type) {
		case *record.Hook:
			what := b.Decision
			if b.Failed != "" {
				what += " (the hook failed: " + oneLine(b.Failed) + ")"
			}
			reason := oneLine(b.Reason)
			if b.Context != "" {
				reason += " [adds: " + oneLine(b.Context) + "]"
			}
			rows = append(rows, fmt.Sprintf("%d\t%s\t%s\t%s\t%s\t%dms\t%s", seq, b.Event, b.Command, b.CallID, what, b.DurationMs, reason))
		case *record.Hold:
			rows = append(rows, fmt.Sprintf("%d\thold\t%s\t%s\theld\t\t%s", seq, b.By, b.CallID, oneLine(b.Reason)))
		case *record.Released:
			rows = append(rows, fmt.Sprintf("%d\trelease\t%s\t\treleased\t\t", seq, b.By))
		}
		return nil
	})
	if err != nil || len(rows) == 0 {
		return err
	}
	fmt.Fprintf(out, "\n── hooks and holds ──\n")
	tw := tabwriter.NewWriter(out, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "RECORD\tEVENT\tHOOK\tCALL\tANSWER\tTOOK\tREASON")
	for _, r := range rows {
		fmt.Fprintln(tw, r)
	}
	return tw.Flush()
}
