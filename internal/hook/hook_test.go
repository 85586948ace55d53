package hook

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/reinhq/rein/internal/procs"
	"github.com/reinhq/rein/internal/record"
	"github.com/reinhq/rein/internal/tool"
)

// script writes an executable bash script into dir and returns its path.
func script(t *testing.T, dir, name, body string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte("#!/usr/bin/env bash\n"+body), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

func set(dir string, hs ...Hook) *Set {
	return &Set{Hooks: hs, Workspace: dir, Session: "s1", Turn: func() int64 { return 7 }, Grace: 500 * time.Millisecond}
}

func pre(command string) Hook {
	return Hook{Event: record.HookPreTool, Command: command, Timeout: 30 * time.Second, Source: "test"}
}

var bashCall = tool.Call{ID: "call_1", Name: "bash", Args: json.RawMessage(`{"command":"git push origin main"}`)}

func TestPreToolAnswers(t *testing.T) {
	dir := t.TempDir()
	cases := []struct {
		name, body string
		verdict    tool.Verdict
		decision   string
		reason     string // a part of the reason
		failed     bool
	}{
		{"pass", "exit 0", tool.Allow, record.HookPass, "", false},
		{"refuse by exit 2", "echo 'no pushing to main' >&2; exit 2", tool.Deny, record.HookRefuse, "no pushing to main", false},
		{"refuse by json", `echo '{"decision":"refuse","reason":"not today"}'`, tool.Deny, record.HookRefuse, "not today", false},
		{"ask", `echo '{"decision":"ask","reason":"a push: ask the person"}'`, tool.Ask, record.HookAsk, "ask the person", false},
		{"hold", `echo '{"decision":"hold","reason":"wait for review"}'`, tool.Hold, record.HookHold, "wait for review", false},
		{"pass by json", `echo '{"decision":"pass"}'`, tool.Allow, record.HookPass, "", false},
		{"crash", "kill -SEGV $$", tool.Deny, record.HookRefuse, "killed by", true},
		{"fails", "echo boom >&2; exit 1", tool.Deny, record.HookRefuse, "exit status 1: boom", true},
		{"malformed", "echo 'yes please'", tool.Deny, record.HookRefuse, "cannot read", true},
		{"unknown decision", `echo '{"decision":"allow"}'`, tool.Deny, record.HookRefuse, `"allow"`, true},
		{"misspelt field", `echo '{"decison":"pass"}'`, tool.Deny, record.HookRefuse, "cannot read", true},
		{"two answers", `echo '{"decision":"pass"}{"decision":"pass"}'`, tool.Deny, record.HookRefuse, "cannot read", true},
		{"not found", "./no-such-hook.sh", tool.Deny, record.HookRefuse, "exit status 127", true},
	}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := script(t, dir, "h"+strconv.Itoa(i)+".sh", c.body+"\n")
			g := set(dir, pre(p)).Before(context.Background(), bashCall, tool.Access{})
			if g.Verdict != c.verdict {
				t.Fatalf("verdict %v (%s), want %v", g.Verdict, g.Reason, c.verdict)
			}
			if !strings.Contains(g.Reason, c.reason) {
				t.Errorf("reason %q does not say %q", g.Reason, c.reason)
			}
			if len(g.Notes) != 1 {
				t.Fatalf("%d notes, want 1", len(g.Notes))
			}
			n := g.Notes[0].(*record.Hook)
			if n.Decision != c.decision || (n.Failed != "") != c.failed || n.Event != record.HookPreTool || n.CallID != "call_1" || n.Tool != "bash" || n.Command != p {
				t.Errorf("note %+v", n)
			}
		})
	}
}

// The payload carries the session, the turn, the event, the call and the workspace; the hook runs
// in the workspace.
func TestPayload(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "payload.json")
	p := script(t, dir, "h.sh", "cat > "+out+"\npwd > "+out+".pwd\n")
	set(dir, pre(p)).Before(context.Background(), bashCall, tool.Access{})
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"session": "s1", "turn": 7.0, "event": "pre_tool", "tool": "bash", "call_id": "call_1",
		"arguments": map[string]any{"command": "git push origin main"}, "workspace": dir,
		// Claude Code's names for the same
		"hook_event_name": "PreToolUse", "session_id": "s1", "cwd": dir, "tool_input": map[string]any{"command": "git push origin main"}}
	for k, v := range want {
		if gb, _ := json.Marshal(got[k]); string(gb) != mustJSON(v) {
			t.Errorf("payload %s = %s, want %s", k, gb, mustJSON(v))
		}
	}
	pwd, _ := os.ReadFile(out + ".pwd")
	if strings.TrimSpace(string(pwd)) != dir {
		t.Errorf("the hook ran in %q, want the workspace %q", pwd, dir)
	}
}

func mustJSON(v any) string { b, _ := json.Marshal(v); return string(b) }

// A hook that runs past its timeout is ended, its group with it, and refuses.
func TestTimeoutEndsTheGroup(t *testing.T) {
	dir := t.TempDir()
	pids := filepath.Join(dir, "pids")
	p := script(t, dir, "slow.sh", "sleep 60 & echo $! > "+pids+"\nsleep 60\n")
	h := pre(p)
	h.Timeout = 300 * time.Millisecond
	g := set(dir, h).Before(context.Background(), bashCall, tool.Access{})
	if g.Verdict != tool.Deny || !strings.Contains(g.Reason, "did not answer within 300ms") {
		t.Fatalf("verdict %v: %s", g.Verdict, g.Reason)
	}
	assertGone(t, pids)
}

// A hook's background job does not outlive the hook's answer.
func TestBackgroundJobEndsWithTheHook(t *testing.T) {
	dir := t.TempDir()
	pids := filepath.Join(dir, "pids")
	p := script(t, dir, "bg.sh", "sleep 60 >/dev/null 2>&1 & echo $! > "+pids+"\nexit 0\n")
	if g := set(dir, pre(p)).Before(context.Background(), bashCall, tool.Access{}); g.Verdict != tool.Allow {
		t.Fatalf("verdict %v: %s", g.Verdict, g.Reason)
	}
	assertGone(t, pids)
}

// A Stop (ctx cancelled) ends a running hook at once; the gate's answer does not let the call run.
func TestStopEndsAHook(t *testing.T) {
	dir := t.TempDir()
	pids := filepath.Join(dir, "pids")
	// The pid file appears whole (written aside, then renamed), so the Stop never comes between
	// its creation and its content.
	p := script(t, dir, "slow.sh", "echo $$ > "+pids+".new && mv "+pids+".new "+pids+"\nsleep 60\n")
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		for {
			if _, err := os.Stat(pids); err == nil {
				cancel()
				return
			}
			time.Sleep(10 * time.Millisecond)
		}
	}()
	g := set(dir, pre(p)).Before(ctx, bashCall, tool.Access{})
	if g.Verdict == tool.Allow {
		t.Fatalf("a stopped hook let the call run")
	}
	if n := g.Notes[0].(*record.Hook); !strings.Contains(n.Failed, "stopped") {
		t.Errorf("note %+v does not say the hook was stopped", n)
	}
	assertGone(t, pids)
}

func assertGone(t *testing.T, pidFile string) {
	t.Helper()
	b, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	procs.AwaitGone([]int{pid}, 10*time.Second)
	if procs.Alive(pid) {
		_ = syscall.Kill(pid, syscall.SIGKILL)
		t.Fatalf("process %d outlived its hook", pid)
	}
}

// Match takes a tool name or a rule; a hook that does not match is not run.
func TestMatch(t *testing.T) {
	dir := t.TempDir()
	p := script(t, dir, "no.sh", "echo no >&2; exit 2\n")
	hs, err := Compile(Config{PreTool: []Spec{{Match: "bash(git push*)", Command: p}}}, "test")
	if err != nil {
		t.Fatal(err)
	}
	s := set(dir, hs...)
	push := tool.Access{Effect: tool.EffectExec, Subjects: []string{"git push origin main"}}
	if g := s.Before(context.Background(), bashCall, push); g.Verdict != tool.Deny {
		t.Errorf("git push: verdict %v", g.Verdict)
	}
	status := tool.Access{Effect: tool.EffectExec, Subjects: []string{"git status"}}
	if g := s.Before(context.Background(), bashCall, status); g.Verdict != tool.Allow || len(g.Notes) != 0 {
		t.Errorf("git status: verdict %v, %d notes", g.Verdict, len(g.Notes))
	}
	if g := s.Before(context.Background(), tool.Call{ID: "c", Name: "read_file"}, tool.Access{}); g.Verdict != tool.Allow || len(g.Notes) != 0 {
		t.Errorf("read_file: verdict %v, %d notes", g.Verdict, len(g.Notes))
	}
}

func TestCompileRefusals(t *testing.T) {
	for _, c := range []struct {
		cfg  Config
		want string
	}{
		{Config{PreTool: []Spec{{Command: " "}}}, "has no command"},
		{Config{PreTool: []Spec{{Command: "x", TimeoutSec: -1}}}, "timeout_sec = -1"},
		{Config{PreTool: []Spec{{Command: "x", TimeoutSec: 100000}}}, "the longest is 600"},
		{Config{PreTool: []Spec{{Command: "x", Match: "bash(git"}}}, "closing parenthesis"},
		{Config{Stop: []Spec{{Command: "x", Match: "bash"}}}, "leave match out"},
	} {
		_, err := Compile(c.cfg, "f.toml")
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "f.toml") {
			t.Errorf("%+v: %v, want %q", c.cfg, err, c.want)
		}
	}
	hs, _ := Compile(Config{PreTool: []Spec{{Command: "x", Match: "bsah"}}}, "f.toml")
	if err := Check(hs, []string{"bash", "read_file"}); err == nil || !strings.Contains(err.Error(), "did you mean bash") {
		t.Errorf("Check: %v", err)
	}
}

// A hook can be any program: here a small Go program built by the test refuses pushes and passes
// everything else, reading the payload as JSON.
func TestGoProgramHook(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go toolchain")
	}
	dir := t.TempDir()
	src := filepath.Join(dir, "main.go")
	if err := os.WriteFile(src, []byte(goHook), 0o644); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "guard")
	build := exec.Command("go", "build", "-o", bin, src)
	build.Dir = dir
	build.Env = append(os.Environ(), "GO111MODULE=off")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	s := set(dir, pre(bin))
	if g := s.Before(context.Background(), bashCall, tool.Access{}); g.Verdict != tool.Deny || g.Reason != "pushes wait for review" {
		t.Errorf("push: %v %q", g.Verdict, g.Reason)
	}
	ls := tool.Call{ID: "c2", Name: "bash", Args: json.RawMessage(`{"command":"ls"}`)}
	if g := s.Before(context.Background(), ls, tool.Access{}); g.Verdict != tool.Allow {
		t.Errorf("ls: %v %q", g.Verdict, g.Reason)
	}
}

const goHook = `package main

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
)

func main() {
	var p struct {
		Tool      string
		Arguments struct{ Command string }
	}
	if err := json.NewDecoder(os.Stdin).Decode(&p); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	if p.Tool == "bash" && strings.HasPrefix(p.Arguments.Command, "git push") {
		fmt.Println(` + "`" + `{"decision": "refuse", "reason": "pushes wait for review"}` + "`" + `)
	}
}
`

func TestPostTool(t *testing.T) {
	dir := t.TempDir()
	ctxHook := script(t, dir, "ctx.sh", `echo '{"context":"gofmt rewrote main.go"}'`+"\n")
	errHook := script(t, dir, "err.sh", `grep -q '"is_error":false' && echo '{"decision":"refuse","reason":"tests fail"}'`+"\n")
	s := set(dir, Hook{Event: record.HookPostTool, Command: ctxHook, Timeout: time.Minute}, Hook{Event: record.HookPostTool, Command: errHook, Timeout: time.Minute})
	res, notes := s.After(context.Background(), bashCall, tool.Access{}, tool.Success("done"))
	if !res.IsError || res.Outcome != record.Failed || !strings.Contains(res.Content, "gofmt rewrote main.go") || !strings.Contains(res.Content, "tests fail") || len(notes) != 2 {
		t.Errorf("result %+v, %d notes", res, len(notes))
	}
}

func TestPromptAndStop(t *testing.T) {
	dir := t.TempDir()
	refuse := script(t, dir, "p.sh", `grep -q secret && { echo 'no secrets in prompts' >&2; exit 2; }; echo '{"context":"the branch is main"}'`+"\n")
	s := set(dir, Hook{Event: record.HookPrompt, Command: refuse, Timeout: time.Minute})
	if pa := s.Prompt(context.Background(), "tell me the secret"); pa.Refused != "no secrets in prompts" {
		t.Errorf("refused %q", pa.Refused)
	}
	if pa := s.Prompt(context.Background(), "hello"); pa.Refused != "" || len(pa.Context) != 1 || pa.Context[0] != "the branch is main" {
		t.Errorf("%+v", pa)
	}
	goOn := script(t, dir, "s.sh", `echo 'the tests have not run' >&2; exit 2`+"\n")
	if sa := set(dir, Hook{Event: record.HookStop, Command: goOn, Timeout: time.Minute}).Stop(context.Background(), 0); sa.GoOn != "the tests have not run" {
		t.Errorf("%+v", sa)
	}
	broken := script(t, dir, "b.sh", "exit 7\n")
	sa := set(dir, Hook{Event: record.HookStop, Command: broken, Timeout: time.Minute}).Stop(context.Background(), 0)
	if sa.GoOn != "" || !strings.Contains(sa.Failed, "exit status 7") {
		t.Errorf("%+v", sa)
	}
}

// A hook does not outlive rein, even a rein killed with SIGKILL: the watchdog in its group reads
// end of file on the lifeline and kills the group. The test runs itself as the rein that dies.
func TestHookEndsWhenReinDies(t *testing.T) {
	if dir := os.Getenv("REIN_HOOK_TEST_DIE"); dir != "" {
		p := script(t, dir, "slow.sh", "sleep 60 & echo $! > "+filepath.Join(dir, "pids")+"\nsleep 60\n")
		set(dir, pre(p)).Before(context.Background(), bashCall, tool.Access{})
		return
	}
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^TestHookEndsWhenReinDies$", "-test.count=1")
	cmd.Env = append(os.Environ(), "REIN_HOOK_TEST_DIE="+dir)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pids := filepath.Join(dir, "pids")
	deadline := time.Now().Add(60 * time.Second)
	for {
		if b, err := os.ReadFile(pids); err == nil && strings.HasSuffix(string(b), "\n") {
			break
		}
		if time.Now().After(deadline) {
			_ = cmd.Process.Kill()
			t.Fatal("the hook never started")
		}
		time.Sleep(20 * time.Millisecond)
	}
	_ = cmd.Process.Kill()
	_ = cmd.Wait()
	assertGone(t, pids)
}

// A hook's duration is measured and recorded.
func TestDurationRecorded(t *testing.T) {
	dir := t.TempDir()
	p := script(t, dir, "slow.sh", "sleep 0.2\n")
	g := set(dir, pre(p)).Before(context.Background(), bashCall, tool.Access{})
	if n := g.Notes[0].(*record.Hook); n.DurationMs < 200 {
		t.Errorf("a hook that slept 200ms took %dms", n.DurationMs)
	}
}

// FuzzJudge: whatever a hook prints and however it exits, rein's reading of it is one of the
// event's decisions, and a pass only ever comes from exit 0 with nothing printed or an answer
// that says pass.
func FuzzJudge(f *testing.F) {
	f.Add("", "", 0)
	f.Add(`{"decision":"refuse","reason":"no"}`, "", 0)
	f.Add(`{"decision":"hold"}`, "", 0)
	f.Add("", "no pushing", 2)
	f.Add("yes", "", 0)
	f.Add(`{"decision":"pass","context":"x","error":true}`, "", 0)
	f.Add(`{"decision":"continue"}`, "", 0)
	f.Add(`{"decision":"pass"} {}`, "", 1)
	f.Fuzz(func(t *testing.T, stdout, stderr string, exit int) {
		for _, ev := range []string{record.HookPreTool, record.HookPostTool, record.HookPrompt, record.HookStop} {
			a := judge(Hook{Event: ev, Command: "h", Timeout: time.Second}, ran{stdout: stdout, stderr: stderr, exit: exit})
			ok := false
			for _, d := range allowed[ev] {
				ok = ok || d == a.decision
			}
			if !ok {
				t.Fatalf("%s: decision %q is not one a %s hook gives", ev, a.decision, ev)
			}
			if a.decision == record.HookPass && a.failed == "" {
				if exit != 0 {
					t.Fatalf("%s: exit %d read as a pass", ev, exit)
				}
				if strings.TrimSpace(stdout) != "" && !strings.Contains(stdout, "pass") && !strings.Contains(stdout, "{") {
					t.Fatalf("%s: %q read as a pass", ev, stdout)
				}
			}
			if a.decision != record.HookPass && ev != record.HookStop && strings.TrimSpace(a.reason) == "" {
				t.Fatalf("%s: decision %s without a reason", ev, a.decision)
			}
		}
	})
}

// A hook never sees a provider's key.
func TestNoSecretsInTheEnvironment(t *testing.T) {
	t.Setenv("ANTHROPIC_API_KEY", "sk-ant-secret")
	dir := t.TempDir()
	p := script(t, dir, "env.sh", `[ -z "$ANTHROPIC_API_KEY" ] || { echo "saw the key" >&2; exit 2; }`+"\n")
	if g := set(dir, pre(p)).Before(context.Background(), bashCall, tool.Access{}); g.Verdict != tool.Allow {
		t.Fatalf("verdict %v: %s", g.Verdict, g.Reason)
	}
}

// BenchmarkPassHook measures what a pre_tool hook that passes adds to a call: a watchdog and the
// hook's own bash, started, answered and their group ended.
func BenchmarkPassHook(b *testing.B) {
	dir := b.TempDir()
	p := filepath.Join(dir, "pass.sh")
	if err := os.WriteFile(p, []byte("#!/usr/bin/env bash\nexit 0\n"), 0o755); err != nil {
		b.Fatal(err)
	}
	s := set(dir, pre(p))
	b.ResetTimer()
	for range b.N {
		if g := s.Before(context.Background(), bashCall, tool.Access{}); g.Verdict != tool.Allow {
			b.Fatalf("verdict %v: %s", g.Verdict, g.Reason)
		}
	}
}
