package main

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/reinhq/rein/internal/record"
)

// reinIn runs the binary with stdin as its standard input.
func (sb *sandbox) reinIn(t *testing.T, stdin string, args ...string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, reinBin(t), args...)
	cmd.Dir, cmd.Env = sb.ws, sb.env
	cmd.Stdin = strings.NewReader(stdin)
	var out, errb strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	r := result{stdout: out.String(), stderr: errb.String()}
	if ee, ok := err.(*exec.ExitError); ok {
		r.code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return r
}

// lastPrompt is the text of the newest session's first user_prompt (ids sort by start).
func (sb *sandbox) lastPrompt(t *testing.T) string {
	t.Helper()
	paths := sb.records(t)
	if len(paths) == 0 {
		t.Fatal("no session")
	}
	newest := paths[0]
	for _, p := range paths {
		if filepath.Base(filepath.Dir(p)) > filepath.Base(filepath.Dir(newest)) {
			newest = p
		}
	}
	b, err := os.ReadFile(newest)
	if err != nil {
		t.Fatal(err)
	}
	recs, _, err := replay(b)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range recs {
		if up, ok := r.Body.(*record.UserPrompt); ok {
			return up.Text
		}
	}
	return ""
}

// Prompts the way people pass them: `rein "<prompt>"`, -p, words without quotes, "-" and a pipe
// on standard input (as the prompt, or appended to one as context), and `rein version`; a
// mistyped command is not sent to the model.
func TestPromptsFromAnywhere(t *testing.T) {
	sb := newSandbox(t)
	sim := []string{"--provider", "sim", "--sim-delay", "0"}
	for _, c := range []struct {
		name  string
		stdin string
		args  []string
		want  string
	}{
		{"bare prompt", "", []string{"fix it"}, "fix it"},
		{"-p", "", []string{"-p", "fix it now"}, "fix it now"},
		{"words unquoted", "", []string{"run", "list", "the", "files"}, "list the files"},
		{"words unquoted at the root", "", []string{"list", "the", "files"}, "list the files"},
		{"stdin as the prompt", "the task from a pipe\n", []string{"run"}, "the task from a pipe\n"},
		{"dash", "the task from a dash\n", []string{"run", "-"}, "the task from a dash\n"},
		{"stdin as context", "line 1 of the log\n", []string{"why did it fail"}, "why did it fail\n\nline 1 of the log\n"},
	} {
		t.Run(c.name, func(t *testing.T) {
			res := sb.reinIn(t, c.stdin, append(append([]string{}, c.args...), sim...)...)
			if res.code != 0 {
				t.Fatalf("%s", res)
			}
			if got := sb.lastPrompt(t); got != c.want {
				t.Fatalf("the prompt recorded is %q, want %q", got, c.want)
			}
		})
	}
	t.Run("version", func(t *testing.T) {
		if res := sb.rein(t, "version"); res.code != 0 || !strings.HasPrefix(res.stdout, "rein "+version) {
			t.Fatalf("%s", res)
		}
	})
	t.Run("typo", func(t *testing.T) {
		n := len(sb.records(t))
		res := sb.rein(t, append([]string{"sesions"}, sim...)...)
		if res.code != exitUsage || !strings.Contains(res.stderr, "did you mean `rein sessions`") || len(sb.records(t)) != n {
			t.Fatalf("a mistyped command was not refused, or started a session:\n%s", res)
		}
	})
	t.Run("empty stdin", func(t *testing.T) {
		if res := sb.reinIn(t, "", append([]string{"run", "-"}, sim...)...); res.code != exitUsage || !strings.Contains(res.stderr, "standard input was empty") {
			t.Fatalf("%s", res)
		}
	})
	t.Run("a pipe left open", func(t *testing.T) {
		// A parent that leaves standard input open and never writes: rein goes on without it.
		cmd := exec.Command(reinBin(t), append([]string{"hello"}, sim...)...)
		cmd.Dir, cmd.Env = sb.ws, sb.env
		w, err := cmd.StdinPipe()
		if err != nil {
			t.Fatal(err)
		}
		defer w.Close()
		start := time.Now()
		out, err := cmd.CombinedOutput()
		if err != nil || time.Since(start) > 20*time.Second {
			t.Fatalf("%v after %s:\n%s", err, time.Since(start), out)
		}
		if got := sb.lastPrompt(t); got != "hello" {
			t.Fatalf("prompt %q", got)
		}
	})
}

// TestRefusedPromptKeepsNoSession: a new session's prompt refused before anything was sent — too
// large for the window, or refused by a prompt hook — leaves no session behind, so the
// workspace's newest session (what rein resume and rein show take up) is still the one that
// was worked in.
func TestRefusedPromptKeepsNoSession(t *testing.T) {
	sb := newSandbox(t)
	if res := sb.rein(t, "run", "--provider", "sim", "--sim-delay", "0", "--no-checkpoints", "the real work"); res.code != 0 {
		t.Fatalf("rein run:\n%s", res)
	}
	kept := sessionIDs(t, sb)
	if len(kept) != 1 {
		t.Fatalf("want one session, have %v", kept)
	}
	huge := strings.Repeat("word ", 40000)
	res := sb.reinIn(t, huge, "run", "--provider", "sim", "--sim-delay", "0", "--no-checkpoints", "--context-window", "8000", "-")
	if res.code != exitFailed || !strings.Contains(res.stderr, "nothing was sent") || !strings.Contains(res.stderr, "no session was kept") {
		t.Errorf("a prompt larger than the window: want exit %d saying nothing was sent and no session was kept\n%s", exitFailed, res)
	}
	sb.writeUserConfig(t, "[[hooks.prompt]]\ncommand = \"echo 'no prompts on Fridays' >&2; exit 2\"\n")
	res = sb.rein(t, "run", "--provider", "sim", "--sim-delay", "0", "--no-checkpoints", "more work")
	if res.code != exitFailed || !strings.Contains(res.stderr, "no prompts on Fridays") || !strings.Contains(res.stderr, "no session was kept") {
		t.Errorf("a prompt a hook refused: want exit %d with the hook's reason, and no session kept\n%s", exitFailed, res)
	}
	// In JSON, the result says the session it names was not kept.
	res = sb.rein(t, "run", "--provider", "sim", "--sim-delay", "0", "--no-checkpoints", "--json", "yet more")
	if res.code != exitFailed || !strings.Contains(res.stdout, `"type":"result"`) || !strings.Contains(res.stdout, `"kept":false`) {
		t.Errorf("a refused prompt with --json: want a result saying the session was not kept\n%s", res)
	}
	if now := sessionIDs(t, sb); len(now) != 1 || now[0] != kept[0] {
		t.Fatalf("the refused prompts left sessions: had %v, have %v", kept, now)
	}
	// A resumed session's refused prompt leaves the session as it was: it is not removed.
	res = sb.rein(t, "resume", "--provider", "sim", "--sim-delay", "0", "--no-checkpoints", kept[0], "still more")
	if res.code != exitFailed || !strings.Contains(res.stderr, "no prompts on Fridays") || strings.Contains(res.stderr, "no session was kept") {
		t.Errorf("a resumed session's refused prompt:\n%s", res)
	}
	if now := sessionIDs(t, sb); len(now) != 1 || now[0] != kept[0] {
		t.Fatalf("a resumed session's refused prompt removed it: had %v, have %v", kept, now)
	}
}

// sessionIDs lists the workspace's sessions, newest first, as rein sessions --json does.
func sessionIDs(t *testing.T, sb *sandbox) []string {
	t.Helper()
	res := sb.rein(t, "sessions", "--json")
	if res.code != 0 {
		t.Fatalf("rein sessions:\n%s", res)
	}
	var ids []string
	for line := range strings.Lines(res.stdout) {
		var row struct{ ID string }
		if err := json.Unmarshal([]byte(line), &row); err != nil {
			t.Fatalf("rein sessions --json: %v in %q", err, line)
		}
		ids = append(ids, row.ID)
	}
	return ids
}
