package main

import (
	"bytes"
	"encoding/json"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reinhq/rein/internal/provider/sim"
	"github.com/reinhq/rein/internal/record"
)

// The reasoning flags, through the real binary: against a simulator served by the test, so that
// the requests rein sent can be read back, over each wire rein speaks.

// simServer serves a simulator playing its policy and returns it with its base URL.
func simServer(t *testing.T) (*sim.Server, string) {
	t.Helper()
	s := sim.New(sim.Options{})
	ts := httptest.NewServer(s)
	t.Cleanup(ts.Close)
	return s, ts.URL
}

// recordOf reads the sandbox's only session record.
func recordOf(t *testing.T, sb *sandbox) []record.Record {
	t.Helper()
	paths := sb.records(t)
	if len(paths) != 1 {
		t.Fatalf("want one record, found %v", paths)
	}
	b, err := os.ReadFile(paths[0])
	if err != nil {
		t.Fatal(err)
	}
	recs, _, err := replay(b)
	if err != nil {
		t.Fatalf("the record does not replay: %v", err)
	}
	return recs
}

func payloads[T record.Payload](recs []record.Record) []T {
	var out []T
	for _, r := range recs {
		if p, ok := r.Body.(T); ok {
			out = append(out, p)
		}
	}
	return out
}

// TestReasoningFlagsRefused: budgets and efforts a provider cannot take are usage errors (exit
// 2) that say what was wrong and what to give instead, and start no session.
func TestReasoningFlagsRefused(t *testing.T) {
	sb := newSandbox(t)
	for _, c := range []struct {
		args []string
		say  string
	}{
		{[]string{"--provider", "sim", "--thinking", "500"}, "--thinking 500 is below the least budget Anthropic accepts, 1024 tokens"},
		{[]string{"--provider", "sim", "--thinking", "lots"}, `--thinking takes a budget in tokens (e.g. --thinking 8000) or off, not "lots"`},
		{[]string{"--provider", "sim", "--thinking", "9000"}, "the thinking budget, 9000 tokens, must be below --max-tokens 8192"},
		{[]string{"--provider", "sim", "--thinking", "4000", "--max-tokens", "4000"}, "must be below --max-tokens 4000"},
		{[]string{"--provider", "sim", "--thinking", "3000", "--context-window", "8000"}, "a context window of 8000 tokens holds replies of at most 2000 tokens"},
		{[]string{"--provider", "sim", "--effort", "high"}, "--provider sim takes a thinking budget instead"},
		{[]string{"--provider", "openai-responses", "--base-url", "http://127.0.0.1:9", "--effort", "max"}, `--effort takes low, medium, high, not "max"`},
		{[]string{"--provider", "openai", "--base-url", "http://127.0.0.1:9", "--thinking", "4000"}, "--provider openai takes --effort low|medium|high instead"},
		{[]string{"--provider", "openrouter", "--base-url", "http://127.0.0.1:9", "--thinking", "4000", "--effort", "low"}, "not both"},
	} {
		r := sb.rein(t, append(append([]string{"run"}, c.args...), "hello")...)
		if r.code != exitUsage || !strings.Contains(r.stderr, c.say) {
			t.Errorf("rein run %s: want exit 2 saying %q\n%s", strings.Join(c.args, " "), c.say, r)
		}
	}
	// The hosts take the same flags and refuse them the same way, before they serve anything.
	for _, c := range []struct {
		args []string
		say  string
	}{
		{[]string{"serve", "--addr", "127.0.0.1:0", "--provider", "sim", "--thinking", "500"}, "below the least budget"},
		{[]string{"chat", "--provider", "sim", "--effort", "high"}, "takes a thinking budget instead"},
	} {
		if r := sb.rein(t, c.args...); r.code != exitUsage || !strings.Contains(r.stderr, c.say) {
			t.Errorf("rein %s: want exit 2 saying %q\n%s", strings.Join(c.args, " "), c.say, r)
		}
	}
	if paths := sb.records(t); len(paths) != 0 {
		t.Errorf("a refused run started sessions: %v", paths)
	}
}

// TestThinkingFlag: --thinking 4000 sends Anthropic's thinking config with every request, and the
// signed thinking of a tool turn goes back, signature and all, in the next request; the session
// records the budget, and a resume keeps it.
func TestThinkingFlag(t *testing.T) {
	s, url := simServer(t)
	sb := newSandbox(t)
	sb.env = append(sb.env, "ANTHROPIC_API_KEY=sim-key")
	r := sb.rein(t, "run", "--provider", "anthropic", "--base-url", url, "--model", "sim-1", "--thinking", "4000", "run `echo one`")
	if r.code != 0 {
		t.Fatalf("rein run --thinking 4000:\n%s", r)
	}
	recs := recordOf(t, sb)
	if st := payloads[*record.SessionStarted](recs); len(st) != 1 || st[0].Thinking != 4000 {
		t.Fatalf("session_started %+v, want thinking 4000", st)
	}
	msgs := payloads[*record.AssistantMessage](recs)
	if len(msgs) != 2 || msgs[0].Parts[0].Type != record.PartThinking || msgs[0].Parts[0].Signature == "" {
		t.Fatalf("assistant messages %+v, want a tool turn opening with signed thinking, then a reply", msgs)
	}
	th := msgs[0].Parts[0]
	reqs := s.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests, want 2", len(reqs))
	}
	for i, q := range reqs {
		if q.Violation != nil || !bytes.Contains(q.Body, []byte(`"thinking":{"type":"enabled","budget_tokens":4000}`)) || !bytes.Contains(q.Body, []byte(`"max_tokens":8192`)) {
			t.Errorf("request %d: violation %v, body %s", i, q.Violation, q.Body)
		}
	}
	text, _ := json.Marshal(th.Text)
	sig, _ := json.Marshal(th.Signature)
	signed := []byte(`{"role":"assistant","content":[{"type":"thinking","thinking":` + string(text) + `,"signature":` + string(sig) + `}`)
	if !bytes.Contains(reqs[1].Body, signed) {
		t.Errorf("the second request does not send back %s:\n%s", signed, reqs[1].Body)
	}
	// A resume with no flags keeps the budget.
	id := filepath.Base(filepath.Dir(sb.records(t)[0]))
	if r := sb.rein(t, "resume", id, "and again"); r.code != 0 {
		t.Fatalf("rein resume:\n%s", r)
	}
	if last := s.Requests()[len(s.Requests())-1]; !bytes.Contains(last.Body, []byte(`"budget_tokens":4000`)) {
		t.Errorf("the resumed session's request lost the budget: %s", last.Body)
	}
	if rs := payloads[*record.SessionResumed](recordOf(t, sb)); len(rs) != 1 || rs[0].Thinking != 4000 {
		t.Errorf("session_resumed %+v, want thinking 4000", rs)
	}
}

// TestEffortFlag: --effort high on the Responses API asks for the reasoning effort and its
// encrypted content, and each later request carries the reasoning items back in place; a resume
// keeps the effort.
func TestEffortFlag(t *testing.T) {
	s, url := simServer(t)
	sb := newSandbox(t)
	r := sb.rein(t, "run", "--provider", "openai-responses", "--base-url", url+"/v1", "--model", "sim-1", "--effort", "high",
		"run `echo one`, then `echo two`")
	if r.code != 0 {
		t.Fatalf("rein run --effort high:\n%s", r)
	}
	recs := recordOf(t, sb)
	if st := payloads[*record.SessionStarted](recs); len(st) != 1 || st[0].Effort != "high" {
		t.Fatalf("session_started %+v, want effort high", st)
	}
	var items []string
	for _, m := range payloads[*record.AssistantMessage](recs) {
		for _, p := range m.Parts {
			if p.Type == record.PartThinking && p.Data != "" {
				items = append(items, p.Data)
			}
		}
	}
	reqs := s.Requests()
	if len(reqs) != 3 || len(items) != 3 {
		t.Fatalf("%d requests and %d reasoning items, want 3 of each", len(reqs), len(items))
	}
	for i, q := range reqs {
		if q.Violation != nil || !bytes.Contains(q.Body, []byte(`"reasoning":{"effort":"high","summary":"auto"},"include":["reasoning.encrypted_content"],"store":false`)) {
			t.Errorf("request %d: violation %v, body %s", i, q.Violation, q.Body)
		}
		for j, it := range items {
			at := bytes.Index(q.Body, []byte(it))
			if (at >= 0) != (j < i) {
				t.Errorf("request %d carries reasoning item %d: %v", i, j, at >= 0)
			}
			// In place: what follows it is what followed it in the reply (the policy's text, then its call).
			if at >= 0 && !bytes.HasPrefix(q.Body[at+len(it):], []byte(`,{"type":"message","role":"assistant"`)) {
				t.Errorf("request %d: reasoning item %d is followed by %.80s", i, j, q.Body[at+len(it):])
			}
		}
	}
	id := filepath.Base(filepath.Dir(sb.records(t)[0]))
	if r := sb.rein(t, "resume", id, "hello again"); r.code != 0 {
		t.Fatalf("rein resume:\n%s", r)
	}
	last := s.Requests()[len(s.Requests())-1]
	if !bytes.Contains(last.Body, []byte(`"reasoning":{"effort":"high"`)) || !bytes.Contains(last.Body, []byte(items[2])) {
		t.Errorf("the resumed session's request lost the effort or the reasoning: %s", last.Body)
	}
	// A flag changes it, says so and records it.
	r = sb.rein(t, "resume", id, "once more", "--effort", "low")
	if r.code != 0 || !strings.Contains(r.stderr, "reasoning effort changes from high to low (recorded)") {
		t.Fatalf("rein resume --effort low:\n%s", r)
	}
	if rs := payloads[*record.SessionResumed](recordOf(t, sb)); len(rs) != 2 || rs[0].Effort != "high" || rs[1].Effort != "low" {
		t.Errorf("session_resumed %+v, want effort high, then low", rs)
	}
}

// TestChatReasoningKept: on Chat, --effort is reasoning_effort, and the reasoning_content that
// comes back is in the record as thinking (never sent back).
func TestChatReasoningKept(t *testing.T) {
	s, url := simServer(t)
	sb := newSandbox(t)
	r := sb.rein(t, "run", "--provider", "openai", "--base-url", url+"/v1", "--model", "sim-1", "--effort", "low", "hello")
	if r.code != 0 {
		t.Fatalf("rein run:\n%s", r)
	}
	msgs := payloads[*record.AssistantMessage](recordOf(t, sb))
	if len(msgs) != 1 || msgs[0].Parts[0].Type != record.PartThinking || msgs[0].Parts[0].Text == "" || msgs[0].Parts[0].Signature != "" {
		t.Fatalf("assistant messages %+v, want the reasoning kept as unsigned thinking", msgs)
	}
	if q := s.Requests()[0]; !bytes.Contains(q.Body, []byte(`"reasoning_effort":"low"`)) {
		t.Errorf("request: %s", q.Body)
	}
}

// TestReasoningConfig: the config file's thinking and effort apply where the provider takes
// them, are passed over where it does not, and are refused by name when out of range.
func TestReasoningConfig(t *testing.T) {
	sb := newSandbox(t)
	cfg := filepath.Join(t.TempDir(), "cfg")
	if err := os.MkdirAll(filepath.Join(cfg, "rein"), 0o755); err != nil {
		t.Fatal(err)
	}
	write := func(s string) {
		if err := os.WriteFile(filepath.Join(cfg, "rein", "config.toml"), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	sb.env = append(sb.env, "XDG_CONFIG_HOME="+cfg)
	write("provider = \"sim\"\nthinking = 2048\neffort = \"high\"\n")
	if r := sb.rein(t, "run", "hello"); r.code != 0 {
		t.Fatalf("run with thinking and effort in the file:\n%s", r)
	}
	if st := payloads[*record.SessionStarted](recordOf(t, sb)); len(st) != 1 || st[0].Thinking != 2048 || st[0].Effort != "" {
		t.Fatalf("session_started %+v, want the file's budget and not its effort (the simulator speaks Anthropic's wire)", st)
	}
	write("provider = \"sim\"\nthinking = 100\n")
	if r := sb.rein(t, "run", "hello"); r.code != exitUsage || !strings.Contains(r.stderr, "sets thinking = 100: a budget is at least 1024 tokens") {
		t.Errorf("a budget too small in the file:\n%s", r)
	}
	write("provider = \"sim\"\neffort = \"extreme\"\n")
	if r := sb.rein(t, "run", "hello"); r.code != exitUsage || !strings.Contains(r.stderr, `sets effort = "extreme": it takes low, medium, high`) {
		t.Errorf("an unknown effort in the file:\n%s", r)
	}
	// A flag wins over the file: --thinking off.
	write("provider = \"sim\"\nthinking = 2048\n")
	if r := sb.rein(t, "run", "--thinking", "off", "hello"); r.code != 0 {
		t.Fatalf("--thinking off over the file:\n%s", r)
	}
}
