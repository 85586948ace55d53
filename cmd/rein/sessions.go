package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/reinhq/rein/internal/fold"
	"github.com/reinhq/rein/internal/fsys"
	"github.com/reinhq/rein/internal/journal"
	"github.com/reinhq/rein/internal/record"
	"github.com/reinhq/rein/internal/session"
	"github.com/spf13/cobra"
)

// stateRoot is rein's state directory from the environment.
func stateRoot() (string, error) { return session.Root(os.Getenv) }

func workspace(cwd string) (string, error) {
	if cwd == "" {
		var err error
		if cwd, err = os.Getwd(); err != nil {
			return "", err
		}
	}
	abs, err := filepath.Abs(cwd)
	if err != nil {
		return "", err
	}
	if fi, err := os.Stat(abs); err != nil || !fi.IsDir() {
		return "", fmt.Errorf("the workspace %s is not a directory", abs)
	}
	return abs, nil
}

// resolveRecord turns a session id (or prefix) of this workspace, a session directory or a record
// path into a record path.
func resolveRecord(ref string) (string, error) {
	if fi, err := os.Stat(ref); err == nil {
		if fi.IsDir() {
			return filepath.Join(ref, "record.jsonl"), nil
		}
		return ref, nil
	}
	if strings.ContainsRune(ref, '/') || strings.HasSuffix(ref, ".jsonl") {
		return ref, nil
	}
	root, err := stateRoot()
	if err != nil {
		return "", err
	}
	cwd, err := workspace("")
	if err != nil {
		return "", err
	}
	e, err := session.Find(root, cwd, ref)
	if err != nil {
		return "", err
	}
	return e.Path, nil
}

func newSessionsCmd() *cobra.Command {
	var asJSON bool
	var cwd string
	cmd := &cobra.Command{
		Use:   "sessions",
		Short: "List this workspace's sessions, newest first",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			root, err := stateRoot()
			if err != nil {
				return exitf(exitUsage, "%v", err)
			}
			ws, err := workspace(cwd)
			if err != nil {
				return exitf(exitUsage, "%v", err)
			}
			entries, err := session.List(root, ws)
			if err != nil {
				return exitf(exitFailed, "%v", err)
			}
			return listSessions(cmd.OutOrStdout(), entries, asJSON)
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "one JSON object per session")
	cmd.Flags().StringVar(&cwd, "cwd", "", "the workspace (default: the current directory)")
	return cmd
}

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
}

func listSessions(out io.Writer, entries []session.Entry, asJSON bool) error {
	var rows []sessionRow
	for _, e := range entries {
		row := sessionRow{ID: e.ID, Record: e.Path, Updated: e.ModTime.Format(time.DateTime)}
		if h, held, err := journal.Live(fsys.OS{}, e.Path); err == nil && held {
			row.Held = &h
		}
		st, _, err := session.Replay(nil, e.Path)
		if err != nil {
			row.Error = err.Error()
		} else {
			row.Turns, row.Phase, row.InFlight, row.Parent, row.Model = st.NumTurns(), st.Phase().String(), st.InFlight(), st.Meta().Parent, st.Meta().Model
			if row.Parent == "" {
				row.Parent = st.Parent()
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

func newShowCmd() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "show <session-id | record.jsonl>",
		Short: "Print the context as it would be sent, and the survey",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			path, err := resolveRecord(args[0])
			if err != nil {
				return exitf(exitUsage, "%v", err)
			}
			st, rep, err := session.Replay(nil, path)
			if err != nil {
				return exitf(exitFailed, "%v", err)
			}
			var live *fsys.Holder
			if h, held, err := journal.Live(fsys.OS{}, path); err == nil && held {
				live = &h
			}
			return show(cmd.OutOrStdout(), path, st, rep.Torn, live, asJSON)
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print {system, messages, survey} as JSON")
	return cmd
}

func show(out io.Writer, path string, st *fold.State, torn int64, live *fsys.Holder, asJSON bool) error {
	if asJSON {
		enc := json.NewEncoder(out)
		enc.SetIndent("", "  ")
		return enc.Encode(map[string]any{"record": path, "phase": st.Phase().String(), "system": st.System(), "messages": st.Context(), "survey": st.Survey()})
	}
	m := st.Meta()
	fmt.Fprintf(out, "session %s  %s/%s  phase %s\n", m.Session, m.Provider, m.Model, st.Phase())
	fmt.Fprintf(out, "record  %s\n", path)
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
