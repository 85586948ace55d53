package sim

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

func TestPolicy(t *testing.T) {
	user := func(s string) msg { return msg{role: "user", text: s} }
	callMsg := func(id, cmd string) msg {
		return msg{role: "assistant", callID: id, args: string(mustJSON(map[string]string{"command": cmd}))}
	}
	res := func(id, out string) msg { return msg{role: "tool", callID: id, text: out} }
	cases := []struct {
		name   string
		bash   bool
		msgs   []msg
		opts   Options
		cmd    string // the command called, "" for a text reply
		says   []string
		silent []string
	}{
		{name: "asks for files", bash: true, msgs: []msg{user("Please list the files here")}, cmd: "ls -la", says: []string{"Running `ls -la`."}},
		{name: "mentions git", bash: true, msgs: []msg{user("show me the git state")}, cmd: "git status --short"},
		{name: "backticks", bash: true, msgs: []msg{user("run `pwd` and then `date`")}, cmd: "pwd"},
		{name: "second backtick", bash: true, msgs: []msg{user("run `pwd` and then `date`"), callMsg("c1", "pwd"), res("c1", "/work")}, cmd: "date"},
		{name: "summary", bash: true,
			msgs: []msg{user("list files"), callMsg("c1", "ls -la"), res("c1", "a.txt\nb.txt\nc\nd\ne\nf\ng\n")},
			says: []string{"1 tool result", "a.txt\nb.txt", "…"}, silent: []string{"\ng"}},
		{name: "round limit", bash: true, opts: Options{MaxToolRounds: 1},
			msgs: []msg{user("run `pwd` and then `date`"), callMsg("c1", "pwd"), res("c1", "/work")}, says: []string{"/work"}},
		{name: "no bash offered", msgs: []msg{user("list the files")}, says: []string{"no bash tool was offered"}},
		{name: "plain prompt", bash: true, msgs: []msg{user("hello, who are you?")},
			says: []string{"rein simulator (sim-1), not a model", `"hello, who are you?"`}},
		{name: "a new prompt opens a new exchange", bash: true,
			msgs: []msg{user("list files"), callMsg("c1", "ls -la"), res("c1", "a"), msg{role: "assistant", text: "done"}, user("show them again")},
			cmd:  "ls -la"},
	}
	for _, f := range formats {
		for _, c := range cases {
			t.Run(string(f)+"/"+c.name, func(t *testing.T) {
				_, url := sim(t, c.opts)
				g := stream(t, url, f, body(f, c.bash, c.msgs...))
				if c.cmd == "" {
					if len(g.calls) != 0 || g.stop != stopWords[f][stopEnd] {
						t.Errorf("calls %+v stop %q", g.calls, g.stop)
					}
				} else {
					var args struct{ Command string }
					if len(g.calls) != 1 || g.calls[0].name != "bash" || json.Unmarshal([]byte(g.calls[0].args), &args) != nil || args.Command != c.cmd {
						t.Fatalf("calls %+v, want bash %q", g.calls, c.cmd)
					}
					if g.stop != stopWords[f][stopTool] {
						t.Errorf("stop %q", g.stop)
					}
				}
				for _, s := range c.says {
					if !strings.Contains(g.text, s) {
						t.Errorf("text %q does not say %q", g.text, s)
					}
				}
				for _, s := range c.silent {
					if strings.Contains(g.text, s) {
						t.Errorf("text %q says %q", g.text, s)
					}
				}
			})
		}
	}
}

func TestPolicyThinking(t *testing.T) {
	_, url := sim(t, Options{})
	var req map[string]any
	if err := json.Unmarshal(prompt(Anthropic, "list files"), &req); err != nil {
		t.Fatal(err)
	}
	req["thinking"] = map[string]any{"type": "enabled", "budget_tokens": 1024}
	req["max_tokens"] = 4096
	b, _ := json.Marshal(req)
	g := stream(t, url, Anthropic, b)
	if !strings.Contains(g.thinking, "call the bash tool") || !strings.HasPrefix(g.signature, "sim_sig_") || len(g.calls) != 1 {
		t.Errorf("thinking %q signature %q calls %+v", g.thinking, g.signature, g.calls)
	}
}

// TestPolicyDeterministic: the same request gets the same bytes from a fresh simulator with the
// same clock (call ids carry an epoch from the clock, so simulators started at different times
// never repeat each other's ids).
func TestPolicyDeterministic(t *testing.T) {
	now := func() time.Time { return time.Unix(1764400000, 0) }
	for _, f := range formats {
		var texts []string
		for range 2 {
			_, url := sim(t, Options{Now: now})
			g := stream(t, url, f, prompt(f, "list the files"))
			texts = append(texts, g.text+g.calls[0].id+g.calls[0].args)
		}
		if texts[0] != texts[1] {
			t.Errorf("%s: %q != %q", f, texts[0], texts[1])
		}
	}
}

// FuzzRead: reading any body, in any format, never panics (the validator runs first, but the
// readers must not rely on it).
func FuzzRead(f *testing.F) {
	for _, fm := range formats {
		f.Add(body(fm, true, msg{role: "user", text: "run `ls`"}, msg{role: "assistant", callID: "c", args: `{"command":"ls"}`}, msg{role: "tool", callID: "c", text: "x"}))
	}
	f.Add([]byte(`{"input":"list files","messages":"x","tools":[{"function":null}]}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		for _, v := range []view{readAnthropic(b, nil), readChat(b), readResponses(b)} {
			st := policy(v, DefaultModel, 3)
			fromStep(st, func() string { return "id" }).measure(v)
		}
	})
}
