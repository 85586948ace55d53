package agent_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reinhq/rein/internal/agent"
	"github.com/reinhq/rein/internal/external"
	"github.com/reinhq/rein/internal/fold"
	"github.com/reinhq/rein/internal/record"
	"github.com/reinhq/rein/internal/session"
	"github.com/reinhq/rein/internal/tool"
)

// fakeProgram is an external.Backend that plays one scripted turn per call: what it reports to
// the sink, and how the turn ends. It is a working fake, not a mock: it keeps the contract (a
// Stop is ctx ending; the session it names is resumed).
type fakeProgram struct {
	turns   []fakeTurn
	resumes []string // the Resume each turn was given
	prompts []string
}

type fakeTurn struct {
	session string
	items   []external.Item
	ask     *external.Approval // put to the sink before the end
	waitCtx bool               // wait for ctx to end (a Stop) before ending
	res     external.Result
}

func (f *fakeProgram) Kind() string                          { return external.KindClaude }
func (f *fakeProgram) Check(context.Context) (string, error) { return "2.1.328", nil }
func (f *fakeProgram) Close() error                          { return nil }
func (f *fakeProgram) Turn(ctx context.Context, t external.Turn, s external.Sink) external.Result {
	f.resumes = append(f.resumes, t.Resume)
	f.prompts = append(f.prompts, t.Prompt)
	ft := f.turns[0]
	f.turns = f.turns[1:]
	if ft.session != "" {
		if err := s.Started(ft.session, "2.1.328"); err != nil {
			return external.Result{Status: external.StatusFailed, Err: err}
		}
	}
	for _, it := range ft.items {
		if err := s.Item(it); err != nil {
			return external.Result{Status: external.StatusFailed, Err: err}
		}
	}
	if ft.ask != nil {
		if s.Approve(ctx, *ft.ask) {
			ft.res.Reply = "allowed"
		} else {
			ft.res.Reply = "denied"
		}
	}
	if ft.waitCtx {
		<-ctx.Done()
	}
	res := ft.res
	if res.Session == "" {
		res.Session = ft.session
		if res.Session == "" {
			res.Session = t.Resume
		}
	}
	return res
}

func newExternal(t *testing.T, prog *fakeProgram, approver tool.Approver) (*agent.Agent, string) {
	dir := filepath.Join(t.TempDir(), "s")
	sess, err := session.Create(dir, session.Options{}, &record.SessionStarted{Session: "s", Provider: "claude"})
	if err != nil {
		t.Fatal(err)
	}
	if err := sess.Commit(&record.Backend{Name: "claude"}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sess.Close() })
	return agent.New(agent.Config{Session: sess, Provider: "claude", External: &agent.External{Backend: prog, Approver: approver,
		Turn: external.Turn{Cwd: t.TempDir(), Mode: "ask"}}}), sess.Path()
}

func TestExternalTurns(t *testing.T) {
	prog := &fakeProgram{turns: []fakeTurn{
		{session: "cc-1", items: []external.Item{{Kind: external.ItemText, Text: "Looking."}, {Kind: external.ItemToolCall, ID: "t1", Name: "Bash", Text: "ls"},
			{Kind: external.ItemToolResult, ID: "t1", Status: "completed", Text: "a.txt"}}, res: external.Result{Status: external.StatusCompleted, Reply: "One file."}},
		{session: "cc-1", items: []external.Item{{Kind: external.ItemText, Text: "Working on it"}}, waitCtx: true,
			res: external.Result{Status: external.StatusInterrupted, Reply: "Working on it"}},
		{res: external.Result{Status: external.StatusFailed, Reply: "API Error: 400", Err: errors.New("Claude Code reported an error (is_error, subtype success): API Error: 400")}},
		{session: "cc-2", res: external.Result{Status: external.StatusCompleted, Reply: "A fresh session."}},
	}}
	ag, path := newExternal(t, prog, nil)
	ctx := context.Background()
	if out := ag.TakeUp(ctx, agent.Prompt{Text: "list the files"}); out.Reason != fold.Replied || out.Err != nil {
		t.Fatalf("first: %+v", out)
	}
	stopped, stop := context.WithCancel(ctx)
	done := make(chan agent.Outcome)
	go func() { done <- ag.TakeUp(stopped, agent.Prompt{Text: "do the long thing"}) }()
	stop()
	if out := <-done; out.Reason != fold.Cancelled || out.Err != nil {
		t.Fatalf("stopped: %+v", out)
	}
	if out := ag.TakeUp(ctx, agent.Prompt{Text: "again"}); out.Reason != fold.Aborted || out.Err == nil || !strings.Contains(out.Err.Error(), "is_error") {
		t.Fatalf("failed: %+v", out)
	}
	if out := ag.TakeUp(ctx, agent.Prompt{Text: "once more"}); out.Reason != fold.Replied {
		t.Fatalf("fourth: %+v", out)
	}
	if got, want := strings.Join(prog.resumes, ","), ",cc-1,cc-1,cc-1"; got != want {
		t.Errorf("resumed %q, want %q: each turn resumes the session the record names", got, want)
	}
	if got := strings.Join(prog.prompts, "|"); got != "list the files|do the long thing|again|once more" {
		t.Errorf("prompts %q", got)
	}
	rs := readRecords(t, path)
	want := "session_started backend user_prompt external_session external_item external_item external_item import quiesced " +
		"user_prompt external_item import quiesced " +
		"user_prompt failure quiesced " +
		"user_prompt external_session import quiesced"
	if got := strings.Join(kinds(rs), " "); got != want {
		t.Errorf("records\n got %s\nwant %s", got, want)
	}
	var imports []string
	for _, im := range all[*record.Import](rs) {
		if im.Source != "claude" || im.Message.Role != record.Assistant {
			t.Errorf("import %+v", im)
		}
		imports = append(imports, im.External+":"+im.Message.Parts[0].Text)
	}
	if got := strings.Join(imports, "|"); got != "cc-1:One file.|cc-1:Working on it|cc-2:A fresh session." {
		t.Errorf("imports %s", got)
	}
	var reasons []string
	for _, q := range all[*record.Quiesced](rs) {
		reasons = append(reasons, q.Reason)
	}
	if got := strings.Join(reasons, ","); got != "replied,cancelled,aborted,replied" {
		t.Errorf("quiesced %s", got)
	}
	st, _, err := session.Replay(nil, path)
	if err != nil {
		t.Fatal(err)
	}
	if m := st.Meta(); m.Backend != "claude" || m.External.Session != "cc-2" || !st.IsReady() || st.InFlight() {
		t.Errorf("replayed: backend %q, external %+v, ready %v, in flight %v", m.Backend, m.External, st.IsReady(), st.InFlight())
	}
	// The context a native model would be sent is coherent: prompts and the program's replies, in turn.
	var roles []string
	for _, m := range st.Context() {
		roles = append(roles, string(m.Role))
	}
	if got := strings.Join(roles, ","); got != "user,assistant,user,assistant,user,user,assistant" { // the failed turn left its prompt alone, as a native one does
		t.Errorf("context roles %s", got)
	}
}

// An approval the program asks for goes to the host's approver; with none, or after a Stop, it
// is denied.
func TestExternalApproval(t *testing.T) {
	ask := &external.Approval{ID: "toolu_1", Tool: "Bash", Summary: "touch a", Input: []byte(`{"command":"touch a"}`)}
	var asked []tool.Call
	yes := tool.ApproverFunc(func(ctx context.Context, c tool.Call) (bool, error) { asked = append(asked, c); return true, nil })
	prog := &fakeProgram{turns: []fakeTurn{{session: "cc", ask: ask, res: external.Result{Status: external.StatusCompleted}}}}
	ag, path := newExternal(t, prog, yes)
	if out := ag.TakeUp(context.Background(), agent.Prompt{Text: "make a"}); out.Reason != fold.Replied {
		t.Fatalf("%+v", out)
	}
	if len(asked) != 1 || asked[0].ID != "toolu_1" || asked[0].Name != "Bash" || string(asked[0].Args) != `{"command":"touch a"}` {
		t.Fatalf("asked %+v", asked)
	}
	if im := last[*record.Import](t, readRecords(t, path)); im.Message.Parts[0].Text != "allowed" {
		t.Fatalf("the program was told %q", im.Message.Parts[0].Text)
	}
	prog2 := &fakeProgram{turns: []fakeTurn{{session: "cc", ask: ask, res: external.Result{Status: external.StatusCompleted}}}}
	ag2, path2 := newExternal(t, prog2, nil)
	ag2.TakeUp(context.Background(), agent.Prompt{Text: "make a"})
	if im := last[*record.Import](t, readRecords(t, path2)); im.Message.Parts[0].Text != "denied" {
		t.Fatalf("with no approver the program was told %q", im.Message.Parts[0].Text)
	}
}

// A program that no longer has the conversation's session refuses to resume it: the turn does not
// fail for ever on that, but starts a new session told what was said before, and the record says
// so (an external_item error naming the lost session, then the new session).
func TestExternalSessionGone(t *testing.T) {
	gone := fmt.Errorf("%w: No conversation found with session ID: cc-1", external.ErrSessionGone)
	prog := &fakeProgram{turns: []fakeTurn{
		{session: "cc-1", res: external.Result{Status: external.StatusCompleted, Reply: "The answer is 42."}},
		{res: external.Result{Status: external.StatusFailed, Err: gone}},
		{session: "cc-2", res: external.Result{Status: external.StatusCompleted, Reply: "Still 42."}},
		{session: "cc-2", res: external.Result{Status: external.StatusCompleted, Reply: "Yes."}},
	}}
	ag, path := newExternal(t, prog, nil)
	ctx := context.Background()
	if out := ag.TakeUp(ctx, agent.Prompt{Text: "what is the answer?"}); out.Reason != fold.Replied {
		t.Fatalf("first: %+v", out)
	}
	if out := ag.TakeUp(ctx, agent.Prompt{Text: "remind me"}); out.Reason != fold.Replied || out.Err != nil {
		t.Fatalf("after the session was lost: %+v", out)
	}
	if out := ag.TakeUp(ctx, agent.Prompt{Text: "sure?"}); out.Reason != fold.Replied {
		t.Fatalf("third: %+v", out)
	}
	if got, want := strings.Join(prog.resumes, ","), ",cc-1,,cc-2"; got != want {
		t.Errorf("resumed %q, want %q", got, want)
	}
	retold := prog.prompts[2]
	for _, want := range []string{"could not be resumed", "The person: what is the answer?", "You: The answer is 42.", "remind me"} {
		if !strings.Contains(retold, want) {
			t.Errorf("the new session's first prompt lacks %q:\n%s", want, retold)
		}
	}
	if strings.Count(retold, "remind me") != 1 || !strings.HasSuffix(retold, "remind me") {
		t.Errorf("the prompt in hand is not told once, last:\n%s", retold)
	}
	if prog.prompts[3] != "sure?" {
		t.Errorf("the turn after it carries %q, want only its prompt", prog.prompts[3])
	}
	rs := readRecords(t, path)
	want := "session_started backend user_prompt external_session import quiesced " +
		"user_prompt external_item external_session import quiesced " +
		"user_prompt import quiesced"
	if got := strings.Join(kinds(rs), " "); got != want {
		t.Errorf("records\n got %s\nwant %s", got, want)
	}
	items := all[*record.ExternalItem](rs)
	if len(items) != 1 || items[0].Item != external.ItemError || !strings.Contains(items[0].Text, "could not resume session cc-1") {
		t.Errorf("the lost session is not said: %+v", items)
	}
}
