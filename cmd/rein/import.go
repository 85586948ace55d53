package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/reinhq/rein/internal/agent"
	"github.com/reinhq/rein/internal/importer"
	"github.com/reinhq/rein/internal/record"
	"github.com/reinhq/rein/internal/session"
	"github.com/spf13/cobra"
)

const importHelp = `import brings a Claude Code or Codex session into rein, to continue it on any
provider. It reads the foreign file leniently and writes a rein session through
rein's normal strict path, repairing what wedges such sessions, each repair
recorded with the original:

  - a call with no result (the source was killed mid-tool) is answered
    interrupted: "the source session ended before this call's result was
    recorded; its effects are unknown";
  - a tool input that is not a JSON object becomes {}; a free-form (custom tool)
    input becomes {"input": text};
  - missing or duplicate call ids are minted anew;
  - an assistant line the source wrote to carry a provider's error is dropped;
  - split assistant lines are merged; unsigned thinking, encrypted reasoning
    and developer or environment messages are dropped;
  - interruption markers and compaction summaries are kept as the text the
    model saw, in the harness's voice (never the person's).

It follows the live branch: Claude Code's from the last message back to the
root, side chains left out; Codex's last compaction's history and what came
after. --with-history also brings the turns before a compaction, evicted with
a note (the transcript tool reads them).

With no session named, it lists the sessions of this workspace that it can
import, newest first. Sessions are looked for in ~/.claude/projects and
~/.codex/sessions (or $CLAUDE_CONFIG_DIR and $CODEX_HOME).`

func newImportCmd() *cobra.Command {
	var withHistory bool
	var cwd, provider, model string
	cmd := &cobra.Command{
		Use:   "import claude|codex [<session-id> | <path>]",
		Short: "Bring a Claude Code or Codex session into rein and continue it",
		Long:  importHelp,
		Args:  cobra.RangeArgs(1, 2),
		RunE: func(cmd *cobra.Command, args []string) error {
			kind := args[0]
			if kind != "claude" && kind != "codex" {
				return exitf(exitUsage, "rein import takes claude or codex, not %q", kind)
			}
			ws, err := workspace(cwd)
			if err != nil {
				return exitf(exitUsage, "%v", err)
			}
			if len(args) == 1 {
				return listImportable(cmd.OutOrStdout(), kind, ws)
			}
			path, err := findForeign(kind, args[1])
			if err != nil {
				return exitf(exitUsage, "%v", err)
			}
			return runImport(cmd.OutOrStdout(), kind, path, ws, provider, model, importer.Options{WithHistory: withHistory})
		},
	}
	cmd.Flags().BoolVar(&withHistory, "with-history", false, "also bring the turns before a compaction, evicted with a note")
	cmd.Flags().StringVar(&cwd, "cwd", "", "the workspace (default: the current directory)")
	cmd.Flags().StringVar(&provider, "provider", "", "the provider the session continues on (default: the config's, else anthropic for Claude Code and openai-responses for Codex)")
	cmd.Flags().StringVar(&model, "model", "", "the model it continues with (default: the config's, else the source's)")
	return cmd
}

func claudeRoot() string {
	if d := os.Getenv("CLAUDE_CONFIG_DIR"); d != "" {
		return filepath.Join(d, "projects")
	}
	home, _ := os.UserHomeDir()
	return filepath.Join(home, ".claude", "projects")
}

func codexRoot() string {
	if d := os.Getenv("CODEX_HOME"); d != "" {
		return filepath.Join(d, "sessions")
	}
	home, _ := os.UserHomeDir()
	return filepath.Join(home, ".codex", "sessions")
}

// claudeDir is the directory Claude Code keeps a workspace's sessions in: its path with every
// byte but letters and digits made '-'.
func claudeDir(ws string) string {
	return strings.Map(func(r rune) rune {
		if r < 128 && (r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') {
			return r
		}
		return '-'
	}, ws)
}

// findForeign resolves a session id or a path to a file.
func findForeign(kind, ref string) (string, error) {
	if strings.ContainsRune(ref, os.PathSeparator) || strings.HasSuffix(ref, ".jsonl") {
		if _, err := os.Stat(ref); err != nil {
			return "", fmt.Errorf("cannot read %s: %v", ref, err)
		}
		return ref, nil
	}
	var matches []string
	switch kind {
	case "claude":
		matches, _ = filepath.Glob(filepath.Join(claudeRoot(), "*", ref+".jsonl"))
	case "codex":
		_ = filepath.WalkDir(codexRoot(), func(p string, d fs.DirEntry, err error) error {
			if err == nil && !d.IsDir() && strings.HasPrefix(d.Name(), "rollout-") && strings.HasSuffix(d.Name(), ref+".jsonl") {
				matches = append(matches, p)
			}
			return nil
		})
	}
	switch len(matches) {
	case 0:
		return "", fmt.Errorf("no %s session %s was found (rein import %s lists this workspace's)", kind, ref, kind)
	case 1:
		return matches[0], nil
	}
	return "", fmt.Errorf("%d %s sessions match %s: give the path", len(matches), kind, ref)
}

type foreign struct {
	id, path, title string
	when            time.Time
}

// listImportable lists the workspace's foreign sessions, newest first.
func listImportable(out io.Writer, kind, ws string) error {
	var found []foreign
	switch kind {
	case "claude":
		paths, _ := filepath.Glob(filepath.Join(claudeRoot(), claudeDir(ws), "*.jsonl"))
		for _, p := range paths {
			fi, err := os.Stat(p)
			if err != nil {
				continue
			}
			found = append(found, foreign{id: strings.TrimSuffix(filepath.Base(p), ".jsonl"), path: p, when: fi.ModTime(), title: foreignPrompt(p, kind)})
		}
	case "codex":
		_ = filepath.WalkDir(codexRoot(), func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasPrefix(d.Name(), "rollout-") {
				return nil
			}
			id, cwd := codexMeta(p)
			if cwd != ws {
				return nil
			}
			if fi, err := d.Info(); err == nil {
				found = append(found, foreign{id: id, path: p, when: fi.ModTime(), title: foreignPrompt(p, kind)})
			}
			return nil
		})
	}
	if len(found) == 0 {
		fmt.Fprintf(out, "no %s sessions of %s were found (looked in %s)\n", kind, ws, map[string]string{"claude": claudeRoot(), "codex": codexRoot()}[kind])
		return nil
	}
	sort.Slice(found, func(i, j int) bool { return found[i].when.After(found[j].when) })
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tUPDATED\tFIRST PROMPT")
	for _, f := range found {
		fmt.Fprintf(tw, "%s\t%s\t%s\n", f.id, f.when.Local().Format("2006-01-02 15:04"), f.title)
	}
	tw.Flush()
	fmt.Fprintf(out, "\nimport one with: rein import %s <id>\n", kind)
	return nil
}

// codexMeta reads a rollout's id and workspace from its session_meta line.
func codexMeta(path string) (id, cwd string) {
	f, err := os.Open(path)
	if err != nil {
		return "", ""
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	for i := 0; i < 5 && sc.Scan(); i++ {
		var l struct {
			Type    string `json:"type"`
			Payload struct {
				ID  string `json:"id"`
				Cwd string `json:"cwd"`
			} `json:"payload"`
		}
		if json.Unmarshal(sc.Bytes(), &l) == nil && l.Type == "session_meta" {
			return l.Payload.ID, l.Payload.Cwd
		}
	}
	return "", ""
}

// foreignPrompt is the first thing the person typed in a foreign session, on one line.
func foreignPrompt(path, kind string) string {
	data, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	var c *importer.Conversation
	if kind == "claude" {
		c, err = importer.ReadClaude(bytes.NewReader(data), importer.Options{})
	} else {
		c, err = importer.ReadCodex(bytes.NewReader(data), importer.Options{})
	}
	if err != nil {
		return "(" + err.Error() + ")"
	}
	for _, it := range c.Items {
		if it.Kind == importer.Prompt {
			s := strings.Join(strings.Fields(it.Text), " ")
			if len(s) > 60 {
				s = s[:60] + "…"
			}
			return s
		}
	}
	return ""
}

func runImport(out io.Writer, kind, path, ws, provider, model string, opts importer.Options) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return exitf(exitUsage, "cannot read %s: %v", path, err)
	}
	var c *importer.Conversation
	if kind == "claude" {
		c, err = importer.ReadClaude(bytes.NewReader(data), opts)
	} else {
		c, err = importer.ReadCodex(bytes.NewReader(data), opts)
	}
	if err != nil {
		return exitf(exitFailed, "%s: %v", path, err)
	}
	if abs, err := filepath.Abs(path); err == nil {
		c.Origin.Path = abs
	}
	conf, err := loadConfig(os.Getenv)
	if err != nil {
		return exitf(exitUsage, "%v", err)
	}
	if provider == "" {
		provider = conf.Provider
	}
	if provider == "" {
		provider = map[string]string{"claude": "anthropic", "codex": "openai-responses"}[kind]
	}
	if model == "" {
		model = conf.Model
	}
	if model == "" {
		model = c.Model
	}
	root, err := stateRoot()
	if err != nil {
		return exitf(exitUsage, "%v", err)
	}
	origin := c.Origin
	sess, err := session.Start(session.ProjectDir(root, ws), session.Options{Redact: redactText}, record.SessionStarted{
		Provider: provider, Model: model, ContextWindow: contextWindow(model), Cwd: ws, Version: version,
		Title: "imported: " + firstPromptOf(c), Source: &origin,
	})
	if err != nil {
		return exitf(exitFailed, "cannot create the session: %v", err)
	}
	defer sess.Close()
	rep, err := importer.Write(sess, c, agent.SystemPrompt(ws)+importNote(origin))
	if err != nil {
		return exitf(exitFailed, "the import stopped: %v (the partial session %s is left as it is; rein doctor %s says where)", err, sess.ID(), sess.ID())
	}
	fmt.Fprintln(out, rep)
	fmt.Fprintf(out, "continue it with: rein resume %s \"<prompt>\" (or open it in rein chat or the web chat)\n", sess.ID())
	return nil
}

func firstPromptOf(c *importer.Conversation) string {
	for _, it := range c.Items {
		if it.Kind == importer.Prompt {
			s := strings.Join(strings.Fields(it.Text), " ")
			if len(s) > 50 {
				s = s[:50] + "…"
			}
			return s
		}
	}
	return c.Origin.ID
}

// importNote tells the model of an imported session where it came from and that the tool names in
// its history are not rein's.
func importNote(o record.Origin) string {
	name := map[string]string{importer.ClaudeCode: "Claude Code", importer.Codex: "Codex"}[o.Kind]
	return fmt.Sprintf("\n\nThis session was imported from %s (session %s). Its earlier tool calls name %s's tools, which this session does not have: the tools you can call now are the ones offered with this request.", name, o.ID, name)
}
