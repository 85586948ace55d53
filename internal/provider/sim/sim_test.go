package sim

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
)

var stopWords = map[Format]map[stop]string{
	Anthropic: {stopEnd: "end_turn", stopTool: "tool_use", stopMax: "max_tokens"},
	Chat:      {stopEnd: "stop", stopTool: "tool_calls", stopMax: "length"},
	Responses: {stopEnd: "completed", stopTool: "completed", stopMax: "incomplete"},
}

func ptr[T any](v T) *T { return &v }

// TestReplies plays each kind of reply through each format and reads it back with a strict
// standard SSE decoder.
func TestReplies(t *testing.T) {
	cases := []struct {
		name     string
		step     Step
		text     string
		thinking string
		calls    []call // ids are not compared when empty
		stop     stop
	}{
		{name: "text", step: Step{Text: "Hello there, person."}, text: "Hello there, person.", stop: stopEnd},
		{name: "text in chunks", step: Step{Text: "héllo wörld", Chunks: 4}, text: "héllo wörld", stop: stopEnd},
		{name: "tool calls",
			step: Step{Text: "Looking.", ToolCalls: []ToolCall{
				{Name: "bash", Arguments: json.RawMessage(`{"command": "ls -la"}`)},
				{Name: "read_file", Arguments: json.RawMessage(`{"path":"a.txt"}`), ID: ptr("call_given")}}},
			text:  "Looking.",
			calls: []call{{name: "bash", args: `{"command":"ls -la"}`}, {id: "call_given", name: "read_file", args: `{"path":"a.txt"}`}},
			stop:  stopTool},
		{name: "thinking", step: Step{Thinking: &Thinking{Text: "Let me think.", Signature: "c2ln"}, Text: "Done."},
			thinking: "Let me think.", text: "Done.", stop: stopEnd},
		{name: "max tokens in a tool call",
			step:  Step{ToolCalls: []ToolCall{{Name: "write_file", Arguments: json.RawMessage(`{"path":"a","content":"0123456789"}`)}}, MaxTokens: true},
			calls: []call{{name: "write_file", args: `{"path":"a","cont`}}, stop: stopMax},
		{name: "max tokens in text", step: Step{Text: "cut here", MaxTokens: true}, text: "cut here", stop: stopMax},
		{name: "empty", step: Step{Empty: true}, stop: stopEnd},
		{name: "non-object arguments",
			step:  Step{ToolCalls: []ToolCall{{Name: "bash", Arguments: json.RawMessage(`"ls -la"`)}, {Name: "bash", Arguments: json.RawMessage(`[1, 2]`)}}},
			calls: []call{{name: "bash", args: "ls -la"}, {name: "bash", args: "[1,2]"}}, stop: stopTool},
	}
	for _, f := range formats {
		for _, c := range cases {
			t.Run(string(f)+"/"+c.name, func(t *testing.T) {
				s, url := sim(t, Options{Script: script(t, c.step)})
				b := prompt(f, "hello")
				g := stream(t, url, f, b)
				if g.end != io.EOF || !g.terminal {
					t.Fatalf("stream ended with %v, terminal %v: %v", g.end, g.terminal, g.names())
				}
				if g.text != c.text {
					t.Errorf("text %q, want %q", g.text, c.text)
				}
				if g.thinking != c.thinking {
					t.Errorf("thinking %q, want %q", g.thinking, c.thinking)
				}
				if c.thinking != "" && f != Chat && g.signature != "c2ln" {
					t.Errorf("signature %q", g.signature)
				}
				if len(g.calls) != len(c.calls) {
					t.Fatalf("calls %+v, want %+v", g.calls, c.calls)
				}
				for i, want := range c.calls {
					got := g.calls[i]
					if got.name != want.name || got.args != want.args || (want.id != "" && got.id != want.id) || got.id == "" {
						t.Errorf("call %d = %+v, want %+v", i, got, want)
					}
				}
				if want := stopWords[f][c.stop]; g.stop != want {
					t.Errorf("stop %q, want %q", g.stop, want)
				}
				if want := (len(b) + 3) / 4; g.input == 0 || g.input > want {
					t.Errorf("input tokens %d, want a positive estimate ≤ %d", g.input, want)
				}
				r := s.Requests()
				if len(r) != 1 || r[0].Step != 0 || r[0].Outcome != Streamed || r[0].Estimate != g.input || r[0].Format != f {
					t.Errorf("log %+v", r)
				}
			})
		}
	}
}

func TestStatusFaults(t *testing.T) {
	cases := []struct {
		status  int
		anthTyp string
		oaiCode string
	}{
		{429, "rate_limit_error", "rate_limit_exceeded"},
		{529, "overloaded_error", ""},
		{500, "api_error", ""},
		{503, "overloaded_error", ""},
	}
	for _, f := range formats {
		for _, c := range cases {
			t.Run(string(f)+"/"+http.StatusText(c.status), func(t *testing.T) {
				s, url := sim(t, Options{Script: script(t,
					Step{Status: c.status, RetryAfter: "2", RetryAfterMs: 1500, ShouldRetry: ptr(true)},
					Step{Text: "after"})})
				resp := post(t, url, f, prompt(f, "hi"))
				if resp.StatusCode != c.status {
					t.Fatalf("status %d", resp.StatusCode)
				}
				h := resp.Header
				if h.Get("retry-after") != "2" || h.Get("retry-after-ms") != "1500" || h.Get("x-should-retry") != "true" {
					t.Errorf("headers %v", h)
				}
				e := readError(t, resp)
				if f == Anthropic {
					if e.envelope != "error" || e.typ != c.anthTyp || !strings.Contains(e.message, "simulator") {
						t.Errorf("body %+v", e)
					}
				} else if e.envelope != "" || e.code != c.oaiCode || e.message == "" {
					t.Errorf("body %+v", e)
				}
				if g := stream(t, url, f, prompt(f, "hi")); g.text != "after" {
					t.Errorf("the next step played %q", g.text)
				}
				if r := s.Requests(); r[0].Outcome != StatusError || r[0].Status != c.status {
					t.Errorf("log %+v", r[0])
				}
			})
		}
	}
}

func TestStatusOverrides(t *testing.T) {
	_, url := sim(t, Options{Script: script(t, Step{Status: 429, ErrorType: "insufficient_quota", ErrorCode: "insufficient_quota", Message: "You exceeded your current quota."})})
	e := readError(t, post(t, url, Chat, prompt(Chat, "hi")))
	if e.typ != "insufficient_quota" || e.code != "insufficient_quota" || e.message != "You exceeded your current quota." {
		t.Errorf("body %+v", e)
	}
}

func TestErrorEvent(t *testing.T) {
	want := map[Format]string{Anthropic: "overloaded_error", Chat: "server_error", Responses: "server_error"}
	for _, f := range formats {
		t.Run(string(f), func(t *testing.T) {
			s, url := sim(t, Options{Script: script(t, Step{Text: "one two three", ErrorEvent: &ErrorEvent{AfterDeltas: 2}})})
			g := stream(t, url, f, prompt(f, "hi"))
			if g.text != "one two " || g.errType != want[f] || g.end != io.EOF {
				t.Errorf("text %q, error %q, end %v: %v", g.text, g.errType, g.end, g.names())
			}
			if g.stop == stopWords[f][stopEnd] && f != Responses {
				t.Errorf("a stop reason arrived: %q", g.stop)
			}
			if o := s.Requests()[0].Outcome; o != Errored {
				t.Errorf("outcome %q", o)
			}
		})
	}
}

func TestCut(t *testing.T) {
	for _, f := range formats {
		t.Run(string(f)+"/after deltas", func(t *testing.T) {
			s, url := sim(t, Options{Script: script(t, Step{Text: "one two three", Cut: &Cut{AfterDeltas: 1}})})
			g := stream(t, url, f, prompt(f, "hi"))
			if g.text != "one " || g.terminal || g.end == io.EOF {
				t.Errorf("text %q, terminal %v, end %v", g.text, g.terminal, g.end)
			}
			r := s.Requests()[0]
			<-r.Done()
			if o := s.Requests()[0].Outcome; o != CutOff {
				t.Errorf("outcome %q", o)
			}
		})
		t.Run(string(f)+"/clean", func(t *testing.T) {
			_, url := sim(t, Options{Script: script(t, Step{Text: "one two three", Cut: &Cut{AfterDeltas: 3, Clean: true}})})
			g := stream(t, url, f, prompt(f, "hi"))
			if g.text != "one two three" || g.terminal || g.end != io.EOF || g.stop == stopWords[f][stopEnd] {
				t.Errorf("text %q, terminal %v, stop %q, end %v", g.text, g.terminal, g.stop, g.end)
			}
		})
		t.Run(string(f)+"/after bytes", func(t *testing.T) {
			_, url := sim(t, Options{Script: script(t, Step{Text: "one two three", Cut: &Cut{AfterBytes: 20}})})
			resp := post(t, url, f, prompt(f, "hi"))
			data, err := io.ReadAll(resp.Body)
			if len(data) != 20 || err == nil {
				t.Errorf("read %d bytes, err %v", len(data), err)
			}
		})
	}
}

// TestSlowStreamCancel: a client that goes away frees the handler at once, even mid-delay.
func TestSlowStreamCancel(t *testing.T) {
	for _, f := range formats {
		t.Run(string(f), func(t *testing.T) {
			s, url := sim(t, Options{Script: script(t, Step{Text: "one two three", DelayMs: int(time.Hour / time.Millisecond)})})
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			req, _ := http.NewRequestWithContext(ctx, "POST", url+paths[f], strings.NewReader(string(prompt(f, "hi"))))
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			if resp.StatusCode != 200 {
				t.Fatalf("status %d", resp.StatusCode)
			}
			start := time.Now()
			cancel()
			r := s.Requests()[0]
			select {
			case <-r.Done():
			case <-time.After(10 * time.Second):
				t.Fatal("the handler is still waiting after its client went away")
			}
			if d := time.Since(start); d > time.Second {
				t.Errorf("the handler took %v to notice", d)
			}
			if o := s.Requests()[0].Outcome; o != Cancelled {
				t.Errorf("outcome %q", o)
			}
		})
	}
}

func TestViolation(t *testing.T) {
	for _, f := range formats {
		t.Run(string(f), func(t *testing.T) {
			s, url := sim(t, Options{Script: script(t, Step{Text: "unused"})})
			bad := []byte(`{"model":"sim-1","stream":true,"max_tokens":10,"messages":[],"input":[]}`)
			resp := post(t, url, f, bad)
			if resp.StatusCode != 400 {
				t.Fatalf("status %d", resp.StatusCode)
			}
			e := readError(t, resp)
			if e.typ != "invalid_request_error" || e.message == "" || (f == Anthropic) != (e.envelope == "error") {
				t.Errorf("body %+v", e)
			}
			r := s.Requests()
			if len(r) != 1 || r[0].Violation == nil || r[0].Outcome != Refused || string(r[0].Body) != string(bad) {
				t.Errorf("log %+v", r)
			}
			if s.Pending() != 1 {
				t.Error("a refused request consumed a step")
			}
		})
	}
}

func TestContextLimit(t *testing.T) {
	for _, f := range formats {
		t.Run(string(f), func(t *testing.T) {
			b := prompt(f, strings.Repeat("word ", 400))
			s, url := sim(t, Options{Script: script(t, Step{ContextLimit: 100, Text: "unused"}, Step{ContextLimit: 100000, Text: "fits"})})
			resp := post(t, url, f, b)
			if resp.StatusCode != 400 {
				t.Fatalf("status %d", resp.StatusCode)
			}
			e := readError(t, resp)
			est := s.Requests()[0].Estimate
			switch f {
			case Anthropic:
				if want := "prompt is too long: " + itoa(est) + " tokens > 100 maximum"; e.message != want || e.typ != "invalid_request_error" {
					t.Errorf("body %+v, want %q", e, want)
				}
			case Chat:
				if e.code != "context_length_exceeded" || !strings.HasPrefix(e.message, "This model's maximum context length is 100 tokens. However, your messages resulted in "+itoa(est)+" tokens") {
					t.Errorf("body %+v", e)
				}
			case Responses:
				if e.code != "context_length_exceeded" || e.param != "input" {
					t.Errorf("body %+v", e)
				}
			}
			if g := stream(t, url, f, b); g.text != "fits" || g.input != est {
				t.Errorf("text %q input %d, want %d", g.text, g.input, est)
			}
		})
	}
	t.Run("global", func(t *testing.T) {
		s, url := sim(t, Options{ContextLimit: 50, Script: script(t, Step{Text: "unused"})})
		resp := post(t, url, Anthropic, prompt(Anthropic, strings.Repeat("word ", 100)))
		if e := readError(t, resp); resp.StatusCode != 400 || !strings.HasPrefix(e.message, "prompt is too long") {
			t.Errorf("status %d body %+v", resp.StatusCode, e)
		}
		if s.Pending() != 1 || s.Requests()[0].Outcome != OverLimit {
			t.Error("the global limit consumed a step or was not logged")
		}
	})
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

func TestConversations(t *testing.T) {
	_, url := sim(t, Options{Script: script(t,
		Step{Conversation: "b", Text: "for b"},
		Step{Conversation: "a", Text: "for a"},
		Step{Text: "for anyone"},
		Step{Conversation: "first words", Text: "by first message"},
	)})
	if g := stream(t, url, Chat, prompt(Chat, "x"), ConversationHeader, "a"); g.text != "for a" {
		t.Errorf("a got %q", g.text)
	}
	if g := stream(t, url, Chat, prompt(Chat, "first words")); g.text != "for anyone" {
		t.Errorf("unkeyed got %q", g.text)
	}
	if g := stream(t, url, Chat, prompt(Chat, "first words")); g.text != "by first message" {
		t.Errorf("first message got %q", g.text)
	}
	if g := stream(t, url, Chat, prompt(Chat, "x"), ConversationHeader, "b"); g.text != "for b" {
		t.Errorf("b got %q", g.text)
	}
}

// TestParallelConversations: concurrent sessions each consume only their own steps.
func TestParallelConversations(t *testing.T) {
	var steps []Step
	for i := range 3 {
		for _, c := range []string{"p", "q", "r"} {
			steps = append(steps, Step{Conversation: c, Text: c + itoa(i)})
		}
	}
	s, url := sim(t, Options{Script: script(t, steps...)})
	var wg sync.WaitGroup
	for _, c := range []string{"p", "q", "r"} {
		wg.Go(func() {
			for i := range 3 {
				if g := stream(t, url, Responses, prompt(Responses, "hi"), ConversationHeader, c); g.text != c+itoa(i) {
					t.Errorf("%s round %d got %q", c, i, g.text)
				}
			}
		})
	}
	wg.Wait()
	if s.Pending() != 0 {
		t.Errorf("%d steps left", s.Pending())
	}
}

func TestStrictScript(t *testing.T) {
	_, url := sim(t, Options{Script: &Script{Strict: true}})
	resp := post(t, url, Anthropic, prompt(Anthropic, "hi"))
	if e := readError(t, resp); resp.StatusCode != 400 || !strings.Contains(e.message, "exhausted") {
		t.Errorf("status %d body %+v", resp.StatusCode, e)
	}
}

func TestNotStreamed(t *testing.T) {
	_, url := sim(t, Options{})
	resp := post(t, url, Chat, []byte(`{"model":"sim-1","messages":[{"role":"user","content":"hi"}]}`))
	if e := readError(t, resp); resp.StatusCode != 400 || e.param != "stream" {
		t.Errorf("status %d body %+v", resp.StatusCode, e)
	}
}

func TestParseScript(t *testing.T) {
	s, err := ParseScript([]byte(`[{"text":"a"},{"tool_calls":[{"name":"bash","arguments":"ls"}],"max_tokens":true}]`))
	if err != nil || len(s.Steps) != 2 || s.Steps[1].ToolCalls[0].args() != "ls" {
		t.Fatalf("%+v %v", s, err)
	}
	s, err = ParseScript([]byte(`{"strict":true,"steps":[{"status":429,"retry_after":"1"}]}`))
	if err != nil || !s.Strict || s.Steps[0].Status != 429 {
		t.Fatalf("%+v %v", s, err)
	}
	for _, bad := range []string{
		`[{"txt":"typo"}]`,
		`[{"status":200}]`,
		`[{"tool_calls":[{"arguments":{}}]}]`,
		`[{"cut":{"after_deltas":1},"error_event":{}}]`,
		`{"steps":[]} {}`,
	} {
		if _, err := ParseScript([]byte(bad)); err == nil {
			t.Errorf("%s was accepted", bad)
		}
	}
}

func TestModels(t *testing.T) {
	_, url := sim(t, Options{})
	for _, path := range []string{"/v1/models", "/anthropic/v1/models", "/openai/v1/models"} {
		resp, err := http.Get(url + path)
		if err != nil {
			t.Fatal(err)
		}
		var m struct {
			Data []struct{ ID string }
		}
		err = json.NewDecoder(resp.Body).Decode(&m)
		resp.Body.Close()
		if err != nil || len(m.Data) != 1 || m.Data[0].ID != DefaultModel {
			t.Errorf("%s: %+v %v", path, m, err)
		}
	}
	resp, err := http.Get(url + "/v2/nothing")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 404 {
		t.Errorf("status %d", resp.StatusCode)
	}
}

func TestPrefixes(t *testing.T) {
	_, url := sim(t, Options{})
	for _, c := range []struct {
		path string
		f    Format
	}{{"/anthropic/v1/messages", Anthropic}, {"/openai/v1/chat/completions", Chat}, {"/openai/v1/responses", Responses}} {
		resp, err := http.Post(url+c.path, "application/json", strings.NewReader(string(prompt(c.f, "hi"))))
		if err != nil {
			t.Fatal(err)
		}
		g := read(t, c.f, resp.Body)
		resp.Body.Close()
		if !g.terminal || !strings.Contains(g.text, "rein simulator") {
			t.Errorf("%s: %q", c.path, g.text)
		}
	}
}

func TestListenAndServe(t *testing.T) {
	s := New(Options{})
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	errc := make(chan error, 1)
	go func() { errc <- s.ListenAndServe(ctx, "127.0.0.1:0", pw); pw.Close() }()
	line := make([]byte, 256)
	n, err := pr.Read(line)
	if err != nil {
		t.Fatal(err)
	}
	const lead = "rein simulator listening on "
	first := strings.SplitN(string(line[:n]), "\n", 2)[0]
	if !strings.HasPrefix(first, lead) {
		t.Fatalf("printed %q", first)
	}
	go io.Copy(io.Discard, pr)
	g := stream(t, strings.TrimPrefix(first, lead), Anthropic, prompt(Anthropic, "hi"))
	if !g.terminal {
		t.Error("no reply")
	}
	cancel()
	if err := <-errc; err != nil && !errors.Is(err, context.Canceled) {
		t.Errorf("ListenAndServe: %v", err)
	}
}

func TestRedactsKeys(t *testing.T) {
	s, url := sim(t, Options{})
	stream(t, url, Anthropic, prompt(Anthropic, "hi"), "X-Api-Key", "sk-secret", "Authorization", "Bearer sk-secret")
	h := s.Requests()[0].Header
	if strings.Contains(h.Get("X-Api-Key")+h.Get("Authorization"), "secret") {
		t.Errorf("the log kept a key: %v", h)
	}
}

func TestMaxLogged(t *testing.T) {
	s, url := sim(t, Options{MaxLogged: 2, Script: script(t, Step{Text: "a"}, Step{Text: "b"}, Step{Text: "c"})})
	for range 3 {
		stream(t, url, Chat, prompt(Chat, "hi"))
	}
	if r := s.Requests(); len(r) != 2 || r[0].Step != 1 || r[1].Step != 2 {
		t.Errorf("log %+v", r)
	}
}

// TestReasoning: asked for reasoning, the policy reasons in each format's own way, and a
// Responses reasoning item carries encrypted content (when the request includes it) that the
// simulator verifies when it comes back, as OpenAI does.
func TestReasoning(t *testing.T) {
	_, url := sim(t, Options{})
	bash := `{"type":"function","name":"bash","description":"run a command","parameters":` + bashSchema + `}`
	respReq := func(extra, input string) []byte {
		return []byte(`{"model":"sim-1","stream":true,"store":false` + extra + `,"tools":[` + bash + `],"input":[` + input + `]}`)
	}
	const ask = `,"reasoning":{"effort":"high","summary":"auto"},"include":["reasoning.encrypted_content"]`
	user := `{"role":"user","content":"list the files"}`
	g := stream(t, url, Responses, respReq(ask, user))
	if g.thinking == "" || !strings.HasPrefix(g.signature, sealedPrefix) || len(g.calls) != 1 {
		t.Fatalf("thinking %q, encrypted content %q, calls %+v", g.thinking, g.signature, g.calls)
	}
	var item json.RawMessage
	var id string
	for _, ev := range g.events {
		var e struct {
			Type string
			Item json.RawMessage
		}
		var it struct{ Type, ID string }
		if json.Unmarshal(ev.Data, &e) == nil && e.Type == "response.output_item.done" && json.Unmarshal(e.Item, &it) == nil && it.Type == "reasoning" {
			item, id = e.Item, it.ID
		}
	}
	c := g.calls[0]
	rest := `,{"type":"function_call","call_id":"` + c.id + `","name":"bash","arguments":` + string(mustJSON(c.args)) + `},{"type":"function_call_output","call_id":"` + c.id + `","output":"a.txt"}`
	if g := stream(t, url, Responses, respReq(ask, user+","+string(item)+rest)); g.text == "" || g.thinking == "" {
		t.Errorf("the reasoning sent back was not taken: %+v", g)
	}
	for name, bad := range map[string]string{
		"altered":        strings.Replace(string(item), g.signature, g.signature[:len(g.signature)-1]+"x", 1),
		"another item's": strings.Replace(string(item), id, "rs_other", 1),
	} {
		resp := post(t, url, Responses, respReq(ask, user+","+bad+rest))
		e := readError(t, resp)
		if resp.StatusCode != 400 || e.code != "invalid_encrypted_content" || !strings.Contains(e.message, "could not be verified") {
			t.Errorf("%s encrypted content: status %d, %+v", name, resp.StatusCode, e)
		}
	}
	// Not included: the item has no encrypted content to send back.
	g = stream(t, url, Responses, respReq(`,"reasoning":{"effort":"low","summary":"auto"}`, user))
	if g.thinking == "" || g.signature != "" {
		t.Errorf("without include: thinking %q, encrypted content %q", g.thinking, g.signature)
	}
	// Not asked: no reasoning.
	if g := stream(t, url, Responses, respReq("", user)); g.thinking != "" {
		t.Errorf("reasoning nobody asked for: %q", g.thinking)
	}
	// Chat streams reasoning_content when an effort is asked.
	chat := func(extra string) []byte {
		return []byte(`{"model":"sim-1","stream":true` + extra + `,"messages":[{"role":"user","content":"hello"}]}`)
	}
	if g := stream(t, url, Chat, chat(`,"reasoning_effort":"high"`)); g.thinking == "" || g.text == "" {
		t.Errorf("chat with an effort: thinking %q text %q", g.thinking, g.text)
	}
	if g := stream(t, url, Chat, chat("")); g.thinking != "" {
		t.Errorf("chat reasoning nobody asked for: %q", g.thinking)
	}
	// Anthropic thinking is signed.
	b := []byte(`{"model":"sim-1","max_tokens":2048,"stream":true,"thinking":{"type":"enabled","budget_tokens":1024},"messages":[{"role":"user","content":"hello"}]}`)
	if g := stream(t, url, Anthropic, b); g.thinking == "" || !strings.HasPrefix(g.signature, "sim_sig_") {
		t.Errorf("anthropic thinking %q signed %q", g.thinking, g.signature)
	}
}
