package hook

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/reinhq/rein/internal/record"
	"github.com/reinhq/rein/internal/tool"
	"github.com/reinhq/rein/internal/tool/shell"
)

// hookEnv is rein's environment without the secrets no command is given (shell.SecretEnv): a
// hook, a project's too, never sees a provider's key.
func hookEnv(env []string) []string {
	out := make([]string, 0, len(env))
	for _, kv := range env {
		k, _, _ := strings.Cut(kv, "=")
		if !slices.Contains(shell.SecretEnv, k) {
			out = append(out, kv)
		}
	}
	return out
}

// Set is the hooks one session runs, with what their payloads say about the session. A Set is a
// value: the agent makes its own copy with the session's id and turn (Bind).
type Set struct {
	Hooks     []Hook
	Workspace string
	// Session and Turn name the session and its newest turn in each payload.
	Session string
	Turn    func() int64
	// Bash is the shell commands run under ("bash" when empty); Grace is how long a hook is given
	// to end after SIGTERM (a Stop, a timeout) before SIGKILL (2s when zero).
	Bash  string
	Grace time.Duration
	Now   func() time.Time
}

// Bind returns a copy of s for the session id, its newest turn read by turn.
func (s *Set) Bind(session string, turn func() int64) *Set {
	c := *s
	c.Session, c.Turn = session, turn
	return &c
}

// Has reports whether s has a hook for event.
func (s *Set) Has(event string) bool {
	if s == nil {
		return false
	}
	for _, h := range s.Hooks {
		if h.Event == event {
			return true
		}
	}
	return false
}

// payload is what a hook reads on its standard input.
type payload struct {
	Session   string          `json:"session"`
	Turn      int64           `json:"turn"`
	Event     string          `json:"event"`
	Tool      string          `json:"tool,omitempty"`
	CallID    string          `json:"call_id,omitempty"`
	Arguments json.RawMessage `json:"arguments,omitempty"`
	Workspace string          `json:"workspace"`
	Prompt    string          `json:"prompt,omitempty"`
	Result    *resultView     `json:"result,omitempty"`
	// Continuations is, for a stop hook, how many times stop hooks already had the agent go on in
	// this exchange.
	Continuations int `json:"continuations,omitempty"`
	// The names Claude Code's hooks read, so that a hook written for it (rein hooks import-claude)
	// finds the event, the session, the workspace and the arguments where it looks for them.
	HookEventName string          `json:"hook_event_name,omitempty"`
	SessionID     string          `json:"session_id,omitempty"`
	Cwd           string          `json:"cwd,omitempty"`
	ToolInput     json.RawMessage `json:"tool_input,omitempty"`
}

type resultView struct {
	Content string `json:"content"`
	IsError bool   `json:"is_error"`
	Outcome string `json:"outcome"`
}

// reply is a hook's JSON answer. Unknown fields are refused: a misspelt decision must not pass.
type reply struct {
	Decision string `json:"decision"`
	Reason   string `json:"reason"`
	Context  string `json:"context"`
	Error    bool   `json:"error"`
}

// answer is what rein made of one hook's run.
type answer struct {
	decision string
	reason   string
	context  string
	isError  bool
	failed   string // why the hook failed, if it did
	stopped  bool   // a Stop ended it: its answer does not count
	note     *record.Hook
}

// allowed lists the decisions each event takes.
var allowed = map[string][]string{
	record.HookPreTool:  {record.HookPass, record.HookRefuse, record.HookAsk, record.HookHold},
	record.HookPostTool: {record.HookPass, record.HookRefuse},
	record.HookPrompt:   {record.HookPass, record.HookRefuse},
	record.HookStop:     {record.HookPass, record.HookContinue},
}

// refusal is the decision a hook's failure or exit 2 stands for: for a stop hook, exit 2 asks the
// agent to go on (as Claude Code's does); everywhere else it refuses.
func refusal(event string) string {
	if event == record.HookStop {
		return record.HookContinue
	}
	return record.HookRefuse
}

func (s *Set) run(ctx context.Context, h Hook, p payload) answer {
	p.Session, p.Event, p.Workspace = s.Session, h.Event, s.Workspace
	p.HookEventName, p.SessionID, p.Cwd, p.ToolInput = claudeEventName(h.Event), s.Session, s.Workspace, p.Arguments
	if s.Turn != nil {
		p.Turn = s.Turn()
	}
	in, _ := json.Marshal(p)
	bash, grace, now := s.Bash, s.Grace, s.Now
	if bash == "" {
		bash = "bash"
	}
	if grace <= 0 {
		grace = 2 * time.Second
	}
	if now == nil {
		now = time.Now
	}
	env := append(hookEnv(os.Environ()), "REIN_HOOK_EVENT="+h.Event, "REIN_SESSION="+s.Session, "REIN_WORKSPACE="+s.Workspace)
	r := execute(ctx, bash, s.Workspace, h.Command, env, in, h.Timeout, grace, now)
	a := judge(h, r)
	a.note = &record.Hook{Event: h.Event, Command: h.Command, Source: h.Source, CallID: p.CallID, Tool: p.Tool,
		Decision: a.decision, Reason: a.reason, Context: a.context, Error: a.isError, Failed: a.failed, DurationMs: r.duration.Milliseconds()}
	if r.exit >= 0 {
		code := r.exit
		a.note.ExitCode = &code
	}
	if a.stopped {
		a.note.Failed = "the session was stopped while the hook ran"
	}
	return a
}

// judge reads a hook's run as its answer. Anything but a clean pass or a readable answer refuses,
// saying why.
func judge(h Hook, r ran) answer {
	name := fmt.Sprintf("the %s hook %q", h.Event, clip(h.Command, 80))
	fail := func(format string, args ...any) answer {
		why := fmt.Sprintf(format, args...)
		d := refusal(h.Event)
		if h.Event == record.HookStop {
			d = record.HookPass // a stop hook that fails lets the exchange end, saying so
		}
		return answer{decision: d, reason: name + " " + why, failed: why, isError: h.Event == record.HookPostTool}
	}
	stderr := strings.TrimSpace(r.stderr)
	said := ""
	if stderr != "" {
		said = ": " + clip(stderr, 2000)
	}
	switch {
	case r.stopped:
		return answer{decision: refusal(h.Event), reason: name + " was stopped", stopped: true}
	case r.startErr != nil:
		return fail("could not start: %v", r.startErr)
	case r.timedOut:
		return fail("did not answer within %s, so it was ended%s", h.Timeout, said)
	case r.signal != "":
		return fail("was killed by %s%s", r.signal, said)
	case r.exit == 2:
		reason := clip(stderr, 2000)
		if reason == "" {
			reason = name + " refused (exit 2) without saying why on standard error"
		}
		return answer{decision: refusal(h.Event), reason: reason, isError: h.Event == record.HookPostTool}
	case r.exit != 0:
		return fail("failed with exit status %d%s", r.exit, said)
	}
	out := bytes.TrimSpace([]byte(r.stdout))
	if len(out) == 0 {
		return answer{decision: record.HookPass}
	}
	var rep reply
	dec := json.NewDecoder(bytes.NewReader(out))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&rep); err != nil || dec.More() {
		if err == nil {
			err = fmt.Errorf("more than one JSON value")
		}
		return fail("answered what rein cannot read (%v): %s — a hook answers nothing, or one JSON object such as {\"decision\": \"refuse\", \"reason\": \"...\"}", err, clip(string(out), 200))
	}
	if rep.Decision == "" {
		rep.Decision = record.HookPass
		if rep.Error {
			rep.Decision = record.HookRefuse
		}
	}
	ok := false
	for _, d := range allowed[h.Event] {
		ok = ok || d == rep.Decision
	}
	if !ok {
		return fail("answered the decision %q, which a %s hook cannot give (it gives %s)", rep.Decision, h.Event, strings.Join(allowed[h.Event], ", "))
	}
	if rep.Decision != record.HookPass && strings.TrimSpace(rep.Reason) == "" {
		rep.Reason = fmt.Sprintf("%s answered %s without a reason", name, rep.Decision)
	}
	return answer{decision: rep.Decision, reason: strings.TrimSpace(rep.Reason), context: strings.TrimSpace(rep.Context),
		isError: rep.Error || (h.Event == record.HookPostTool && rep.Decision == record.HookRefuse)}
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// Before runs the pre_tool hooks that match call, in order, as tool.Gate: the first that refuses
// or holds decides and the rest do not run; one that asks has the person decide unless a later
// one refuses or holds. Every hook asked leaves a record.Hook note.
func (s *Set) Before(ctx context.Context, call tool.Call, a tool.Access) tool.GateAnswer {
	g := tool.GateAnswer{Verdict: tool.Allow}
	var asks []string
	for _, h := range s.Hooks {
		if h.Event != record.HookPreTool || !h.applies(call, a) {
			continue
		}
		ans := s.run(ctx, h, payload{Tool: call.Name, CallID: call.ID, Arguments: call.Args})
		g.Notes = append(g.Notes, ans.note)
		if ans.stopped {
			g.Verdict, g.Reason = tool.Deny, ans.reason
			return g
		}
		switch ans.decision {
		case record.HookRefuse:
			g.Verdict, g.Reason = tool.Deny, ans.reason
			return g
		case record.HookHold:
			g.Verdict, g.Reason = tool.Hold, ans.reason
			return g
		case record.HookAsk:
			asks = append(asks, ans.reason)
		}
	}
	if len(asks) > 0 {
		g.Verdict, g.Reason = tool.Ask, strings.Join(asks, "; ")
	}
	return g
}

// After runs the post_tool hooks that match call on its result: each may add a line for the
// model and mark the result an error (a hook that fails marks it, saying why). It returns the
// result as the model will read it, and the notes.
func (s *Set) After(ctx context.Context, call tool.Call, a tool.Access, res tool.Result) (tool.Result, []record.Payload) {
	var notes []record.Payload
	for _, h := range s.Hooks {
		if h.Event != record.HookPostTool || !h.applies(call, a) || ctx.Err() != nil {
			continue
		}
		ans := s.run(ctx, h, payload{Tool: call.Name, CallID: call.ID, Arguments: call.Args,
			Result: &resultView{Content: res.Content, IsError: res.IsError, Outcome: string(res.Outcome)}})
		notes = append(notes, ans.note)
		if ans.stopped {
			break
		}
		if ans.isError {
			res.IsError = true
			if res.Outcome == record.OK || res.Outcome == "" {
				res.Outcome = record.Failed
			}
			res.Content += "\n[rein: a hook marked this result an error: " + ans.reason + "]"
		}
		if ans.context != "" {
			res.Content += "\n[rein: a hook adds: " + ans.context + "]"
		}
	}
	return res, notes
}

// PromptAnswer is what the prompt hooks made of a prompt.
type PromptAnswer struct {
	Refused string   // why the prompt is refused, or ""
	Context []string // lines the hooks add for the model
	Notes   []record.Payload
}

// Prompt runs the prompt hooks on a submitted prompt: the first that refuses (or fails) decides;
// each may add a line of context.
func (s *Set) Prompt(ctx context.Context, text string) PromptAnswer {
	var pa PromptAnswer
	for _, h := range s.Hooks {
		if h.Event != record.HookPrompt {
			continue
		}
		ans := s.run(ctx, h, payload{Prompt: text})
		pa.Notes = append(pa.Notes, ans.note)
		if ans.decision == record.HookRefuse {
			pa.Refused = ans.reason
			return pa
		}
		if ans.context != "" {
			pa.Context = append(pa.Context, ans.context)
		}
	}
	return pa
}

// StopAnswer is what the stop hooks made of an exchange's end.
type StopAnswer struct {
	GoOn   string // why the agent should go on, or "" to let the exchange end
	Failed string // a stop hook that failed: the exchange ends, and this says why
	Notes  []record.Payload
}

// Stop runs the stop hooks when an exchange would end; continuations is how many times they have
// had it go on already. The first that answers continue decides. A stop hook that fails does not
// keep the agent going: the exchange ends, with the failure said.
func (s *Set) Stop(ctx context.Context, continuations int) StopAnswer {
	var sa StopAnswer
	for _, h := range s.Hooks {
		if h.Event != record.HookStop {
			continue
		}
		ans := s.run(ctx, h, payload{Continuations: continuations})
		sa.Notes = append(sa.Notes, ans.note)
		switch {
		case ans.stopped:
			return sa
		case ans.failed != "":
			sa.Failed = ans.reason
			return sa
		case ans.decision == record.HookContinue:
			sa.GoOn = ans.reason
			return sa
		}
	}
	return sa
}
