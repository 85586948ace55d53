package tool

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/reinhq/rein/internal/provider"
	"github.com/reinhq/rein/internal/record"
)

// fakeTool is a working tool for tests: it records its calls and answers with a fixed result.
type fakeTool struct {
	name   string
	effect Effect
	result Result
	ran    []Call
	panic  bool
}

func (f *fakeTool) Spec() provider.Tool {
	return provider.Tool{Name: f.name, Schema: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}},"required":["path"],"additionalProperties":false}`)}
}

func (f *fakeTool) Run(ctx context.Context, call Call) Result {
	f.ran = append(f.ran, call)
	if f.panic {
		panic("boom")
	}
	return f.result
}

func (f *fakeTool) Access(args json.RawMessage) Access {
	var a struct{ Path string }
	json.Unmarshal(args, &a)
	return Access{Effect: f.effect, Subjects: []string{a.Path}}
}

// fakeApprover answers from a fixed reply, or, when waiting is set, closes it and waits for ctx.
type fakeApprover struct {
	yes     bool
	err     error
	waiting chan struct{}
}

func (a *fakeApprover) Approve(ctx context.Context, call Call) (bool, error) {
	if a.waiting != nil {
		close(a.waiting)
		<-ctx.Done()
		return false, ctx.Err()
	}
	return a.yes, a.err
}

func newRunner(t *testing.T, p Policy, ap Approver, tools ...Tool) *Runner {
	t.Helper()
	reg, err := NewRegistry(tools...)
	if err != nil {
		t.Fatal(err)
	}
	return &Runner{Tools: reg, Policy: p, Approver: ap}
}

func TestRunner(t *testing.T) {
	ok := Result{Content: "done"}
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	tests := []struct {
		name     string
		policy   Policy
		approver Approver
		ctx      context.Context
		call     Call
		outcome  record.Outcome
		content  string
		ran      bool
	}{
		{"runs", Policy{}, nil, nil, Call{Name: "write", Args: json.RawMessage(`{"path":"a"}`)}, record.OK, "done", true},
		{"unknown tool", Policy{}, nil, nil, Call{Name: "nope", Args: json.RawMessage(`{}`)}, record.Failed,
			`there is no tool named "nope"; the tools are write`, false},
		{"bad arguments", Policy{}, nil, nil, Call{Name: "write", Args: json.RawMessage(`{"path":1}`)}, record.Failed,
			`invalid arguments for write: argument "path" must be a string, not the number 1`, false},
		{"empty arguments", Policy{}, nil, nil, Call{Name: "write"}, record.Failed,
			`invalid arguments for write: missing required argument "path"`, false},
		{"denied", Policy{Deny: []Rule{{Tool: "write", Pattern: "*.go"}}}, nil, nil, Call{Name: "write", Args: json.RawMessage(`{"path":"a.go"}`)},
			record.Denied, "refused: write(a.go) is denied by the rule write(*.go)", false},
		{"read-only", Policy{Mode: ModeReadOnly}, nil, nil, Call{Name: "write", Args: json.RawMessage(`{"path":"a"}`)},
			record.Denied, "refused: write is not allowed in read-only mode: it changes files", false},
		{"ask with no one to ask", Policy{Mode: ModeAsk}, nil, nil, Call{Name: "write", Args: json.RawMessage(`{"path":"a"}`)},
			record.Denied, "refused: this call needs the person's approval (mode ask puts write to the person: it changes files), and no one can be asked in this session", false},
		{"ask approved", Policy{Mode: ModeAsk}, &fakeApprover{yes: true}, nil, Call{Name: "write", Args: json.RawMessage(`{"path":"a"}`)}, record.OK, "done", true},
		{"ask declined", Policy{Mode: ModeAsk}, &fakeApprover{}, nil, Call{Name: "write", Args: json.RawMessage(`{"path":"a"}`)},
			record.Denied, "refused: the person declined this call (mode ask puts write to the person: it changes files)", false},
		{"ask failed", Policy{Mode: ModeAsk}, &fakeApprover{err: errors.New("no client connected")}, nil, Call{Name: "write", Args: json.RawMessage(`{"path":"a"}`)},
			record.Denied, "refused: asking for approval failed: no client connected", false},
		{"stopped before", Policy{}, nil, cancelled, Call{Name: "write", Args: json.RawMessage(`{"path":"a"}`)},
			record.NotExecuted, "not run: the session was stopped before it started", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ft := &fakeTool{name: "write", effect: EffectWrite, result: ok}
			r := newRunner(t, tt.policy, tt.approver, ft)
			ctx := tt.ctx
			if ctx == nil {
				ctx = context.Background()
			}
			res := r.Run(ctx, tt.call)
			if res.Outcome != tt.outcome || res.Content != tt.content || res.IsError != (tt.outcome != record.OK) {
				t.Errorf("got %s %v %q\nwant %s %q", res.Outcome, res.IsError, res.Content, tt.outcome, tt.content)
			}
			if (len(ft.ran) > 0) != tt.ran {
				t.Errorf("ran %d times", len(ft.ran))
			}
		})
	}
}

func TestRunnerStopEndsTheApprovalWait(t *testing.T) {
	ft := &fakeTool{name: "write", effect: EffectWrite}
	ap := &fakeApprover{waiting: make(chan struct{})}
	r := newRunner(t, Policy{Mode: ModeAsk}, ap, ft)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan Result)
	go func() { done <- r.Run(ctx, Call{Name: "write", Args: json.RawMessage(`{"path":"a"}`)}) }()
	<-ap.waiting
	cancel()
	res := <-done
	if res.Outcome != record.NotExecuted || !strings.Contains(res.Content, "stopped while the call waited for approval") {
		t.Errorf("got %s %q", res.Outcome, res.Content)
	}
	if len(ft.ran) != 0 {
		t.Error("the tool ran")
	}
}

func TestRunnerPanicsAndOutcomes(t *testing.T) {
	ft := &fakeTool{name: "write", effect: EffectWrite, panic: true}
	r := newRunner(t, Policy{}, nil, ft)
	res := r.Run(context.Background(), Call{Name: "write", Args: json.RawMessage(`{"path":"a"}`)})
	if res.Outcome != record.Failed || res.Content != "the tool write failed unexpectedly: boom" {
		t.Errorf("panic: %s %q", res.Outcome, res.Content)
	}
	ft = &fakeTool{name: "write", effect: EffectWrite, result: Result{Content: "bad", IsError: true}}
	r = newRunner(t, Policy{}, nil, ft)
	if res := r.Run(context.Background(), Call{Name: "write", Args: json.RawMessage(`{"path":"a"}`)}); res.Outcome != record.Failed {
		t.Errorf("an error without an outcome became %s", res.Outcome)
	}
}

func TestRegistry(t *testing.T) {
	a, b := &fakeTool{name: "a"}, &fakeTool{name: "b"}
	reg, err := NewRegistry(b, a)
	if err != nil {
		t.Fatal(err)
	}
	specs := reg.Specs()
	if len(specs) != 2 || specs[0].Name != "b" || specs[1].Name != "a" {
		t.Errorf("specs out of order: %v", specs)
	}
	if got, ok := reg.Get("a"); !ok || got != Tool(a) {
		t.Error("Get(a) failed")
	}
	if _, ok := reg.Get("c"); ok {
		t.Error("Get(c) found something")
	}
	if _, err := NewRegistry(a, &fakeTool{name: "a"}); err == nil || !strings.Contains(err.Error(), "register tool a: the name is already taken") {
		t.Errorf("duplicate: %v", err)
	}
	bad := &badSchema{}
	if _, err := NewRegistry(bad); err == nil || !strings.Contains(err.Error(), `register tool bad: schema at x: pattern`) {
		t.Errorf("bad schema: %v", err)
	}
}

type badSchema struct{ fakeTool }

func (badSchema) Spec() provider.Tool {
	return provider.Tool{Name: "bad", Schema: json.RawMessage(`{"type":"object","properties":{"x":{"type":"string","pattern":"^a"}}}`)}
}
