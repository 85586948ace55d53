package console

import (
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/reinhq/rein/internal/fsys"
	"github.com/reinhq/rein/internal/journal"
	"github.com/reinhq/rein/internal/record"
)

// ShowExternal prints what the external program a conversation runs in (Claude Code, Codex) did,
// as its record holds it: each session it named, each item (text, tool calls and their results,
// retries, errors) and each turn's failure. It prints nothing for a record without any.
func ShowExternal(out io.Writer, path string) error {
	out = Safe(out)
	blobs := journal.Blobs(fsys.OS{}, path)
	var rows []string
	backend := ""
	_, err := journal.Inspect(fsys.OS{}, path, func(seq int64, line []byte, _ record.Locus) error {
		r, err := record.DecodeWith(line, seq, blobs)
		if err != nil {
			return err
		}
		switch b := r.Body.(type) {
		case *record.Backend:
			backend = b.Name
		case *record.ExternalSession:
			rows = append(rows, fmt.Sprintf("%d\tsession\t%s %s\t%s", seq, b.Program, b.Version, b.ID))
		case *record.ExternalItem:
			what := b.Item
			if b.Name != "" {
				what += " " + b.Name
			}
			if b.Status != "" {
				what += " (" + b.Status + ")"
			}
			rows = append(rows, fmt.Sprintf("%d\t%s\t%s\t%s", seq, what, b.ID, oneLine(b.Text)))
		case *record.UserPrompt:
			if backend != "" {
				rows = append(rows, fmt.Sprintf("%d\tprompt\tturn %d\t%s", seq, b.Turn, oneLine(b.Text)))
			}
		case *record.Failure:
			if backend != "" {
				rows = append(rows, fmt.Sprintf("%d\tfailure\t\t%s", seq, oneLine(b.Message)))
			}
		case *record.Quiesced:
			if backend != "" {
				rows = append(rows, fmt.Sprintf("%d\tended\t\t%s", seq, b.Reason))
			}
		}
		return nil
	})
	if err != nil || len(rows) == 0 {
		return err
	}
	fmt.Fprintf(out, "\n── %s: what the program did ──\n", backend)
	tw := tabwriter.NewWriter(out, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "RECORD\tWHAT\tID\tTEXT")
	for _, r := range rows {
		fmt.Fprintln(tw, r)
	}
	return tw.Flush()
}
