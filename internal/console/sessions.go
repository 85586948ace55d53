package console

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/reinhq/rein/internal/fold"
	"github.com/reinhq/rein/internal/fsys"
	"github.com/reinhq/rein/internal/journal"
	"github.com/reinhq/rein/internal/record"
	"github.com/reinhq/rein/internal/session"
)

// sessionRow is one session as rein sessions lists it.
type sessionRow struct {
	ID       string `json:"id"`
	Record   string `json:"record"`
	Updated  string `json:"updated"`
	Title    string `json:"title"`
	Turns    int    `json:"turns"`
	Phase    string `json:"phase"`
	InFlight bool   `json:"in_flight"`
	Parent   string `json:"parent,omitempty"`
	Model    string `json:"model"`
	// Held names the process writing the session now, if one is.
	Held  *fsys.Holder `json:"held,omitempty"`
	Error string       `json:"error,omitempty"`
	// Parked says the session is parked on a held tool call, HoldReason why.
	Parked     bool   `json:"parked,omitempty"`
	HoldReason string `json:"hold_reason,omitempty"`
}

// Sessions lists a workspace's sessions (newest first, as session.List gives them): each one's
// state (ready, in flight, refused, or live: written now by another process), turns and title,
// in a table, or asJSON one object a session.
func Sessions(out io.Writer, entries []session.Entry, asJSON bool) error {
	if !asJSON {
		out = Safe(out)
	}
	var rows []sessionRow
	for _, e := range entries {
		row := sessionRow{ID: e.ID, Record: e.Path, Updated: e.ModTime.Format(time.DateTime)}
		if h, held, err := journal.Live(fsys.OS{}, e.Path); err == nil && held {
			row.Held = &h
		}
		st, _, err := session.Replay(nil, e.Path)
		if errors.Is(err, fs.ErrNotExist) {
			continue // removed since it was listed (a run whose prompt was refused discards its new session)
		}
		if err != nil {
			row.Error = err.Error()
		} else {
			row.Turns, row.Phase, row.InFlight, row.Parent, row.Model = st.NumTurns(), st.Phase().String(), st.InFlight(), st.Meta().Parent, st.Meta().Model
			if row.Parent == "" {
				row.Parent = st.Parent()
			}
			if p, ok := st.Parking(); ok {
				row.Parked, row.HoldReason = true, p.Reason
			}
			row.Title = st.Meta().Title
			if row.Title == "" {
				for _, t := range st.Turns() {
					if t.Role == record.User && t.Kind != fold.Inherited {
						row.Title = t.Label
						break
					}
				}
			}
			if row.Title == "" {
				for _, t := range st.Turns() {
					if t.Role == record.User {
						row.Title = "fork: " + t.Label
						break
					}
				}
			}
		}
		rows = append(rows, row)
	}
	if asJSON {
		enc := json.NewEncoder(out)
		for _, r := range rows {
			if err := enc.Encode(r); err != nil {
				return err
			}
		}
		return nil
	}
	if len(rows) == 0 {
		fmt.Fprintln(out, "no sessions in this workspace yet; start one with: rein run \"<prompt>\"")
		return nil
	}
	tw := tabwriter.NewWriter(out, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tUPDATED\tTURNS\tSTATE\tTITLE")
	for _, r := range rows {
		state := "ready"
		switch {
		case r.Held != nil:
			state = fmt.Sprintf("live (pid %d)", r.Held.PID)
		case r.Error != "":
			state = "refused"
		case r.Parked:
			state = "held: " + oneLine(r.HoldReason)
		case r.InFlight:
			state = "in flight"
		}
		title := r.Title
		if r.Parent != "" {
			title += "  (child of " + r.Parent + ")"
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\n", r.ID, r.Updated, r.Turns, state, title)
	}
	return tw.Flush()
}

// Show prints a session's context as it would be sent (the system prompt, then each turn and
// residue of the frontier) and its survey, after the sandbox its commands last ran under;
// asJSON, {record, phase, sandbox, system, messages, survey}. torn
// is the length of a torn tail the record has, live the process writing it now, if one is.
func Show(out io.Writer, path string, st *fold.State, torn int64, live *fsys.Holder, asJSON bool) error {
	if asJSON {
		enc := json.NewEncoder(out)
		enc.SetIndent("", "  ")
		return enc.Encode(map[string]any{"record": path, "phase": st.Phase().String(), "sandbox": st.Meta().Sandbox, "system": st.System(), "messages": st.Context(), "survey": st.Survey()})
	}
	out = Safe(out)
	m := st.Meta()
	fmt.Fprintf(out, "session %s  %s/%s  phase %s\n", m.Session, m.Provider, m.Model, st.Phase())
	fmt.Fprintf(out, "record  %s\n", path)
	if m.Sandbox != "" {
		fmt.Fprintf(out, "sandbox %s\n", m.Sandbox)
	}
	if m.Backend != "" && m.Backend != "rein" {
		fmt.Fprintf(out, "runs in %s", m.Backend)
		if x := m.External; x.Session != "" {
			fmt.Fprintf(out, " %s, session %s", x.Version, x.Session)
		}
		fmt.Fprintln(out)
	}
	if line := holdLine(st); line != "" {
		fmt.Fprintln(out, line)
	}
	switch {
	case live != nil:
		fmt.Fprintf(out, "live    held by %s, which is writing it now\n", live)
	case torn > 0:
		fmt.Fprintf(out, "        (a torn tail of %d bytes follows the last complete line; a resume quarantines it)\n", torn)
	}
	if st.System() != "" {
		fmt.Fprintf(out, "\n── system ──\n%s\n", st.System())
	}
	sv := st.Survey()
	msgs := st.Context()
	fmt.Fprintf(out, "\n── context: %d messages, %d bytes ──\n", len(msgs), sv.Bytes)
	for _, it := range st.Frontier() {
		if it.Residue >= 0 {
			r := st.Residues()[it.Residue]
			fmt.Fprintf(out, "\n[residue %d–%d · by %s]\n%s\n", r.From, r.To, r.By, st.ResidueMessage(it.Residue).Parts[0].Text)
			continue
		}
		t := st.TurnAt(it.Turn)
		fmt.Fprintf(out, "\n[turn %d · %s · %s]\n", t.ID, t.Role, t.Kind)
		for _, msg := range t.Messages {
			printMessage(out, msg)
		}
	}
	fmt.Fprintf(out, "\n── survey ──\n")
	tw := tabwriter.NewWriter(out, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "FROM\tTO\tROLE\tKIND\tBYTES\tHELD\tLABEL")
	for _, r := range sv.Rows {
		fmt.Fprintf(tw, "%d\t%d\t%s\t%s\t%d\t%s\t%s\n", r.From, r.To, r.Role, r.Kind, r.Bytes, r.Held, r.Label)
	}
	return tw.Flush()
}

func printMessage(out io.Writer, m record.Message) {
	for _, p := range m.Parts {
		switch p.Type {
		case record.PartText:
			fmt.Fprintf(out, "%s: %s\n", m.Role, p.Text)
		case record.PartThinking:
			if p.Text == "" {
				fmt.Fprintf(out, "%s (reasoning, kept encrypted by the provider)\n", m.Role)
				continue
			}
			fmt.Fprintf(out, "%s (thinking): %s\n", m.Role, p.Text)
		case record.PartRedacted:
			fmt.Fprintf(out, "%s (redacted thinking)\n", m.Role)
		case record.PartToolCall:
			fmt.Fprintf(out, "%s → %s %s  [%s]\n", m.Role, p.Name, p.Args, p.CallID)
		case record.PartToolResult:
			fmt.Fprintf(out, "result [%s] %s:\n%s\n", p.CallID, p.Outcome, indent(p.Text))
		case record.PartImage:
			fmt.Fprintf(out, "%s (image %s, %d bytes base64)\n", m.Role, p.MediaType, len(p.Data))
		}
	}
}

func indent(s string) string {
	return "  " + strings.ReplaceAll(strings.TrimRight(s, "\n"), "\n", "\n  ")
}
