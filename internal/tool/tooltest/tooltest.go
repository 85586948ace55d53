// Package tooltest is the conformance suite every tool.Tool implementation passes: a spec the
// registry accepts, truthful and consistent results, a prompt return once ctx is cancelled, and an
// Access that never panics.
package tooltest

import (
	"context"
	"encoding/json"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/reinhq/rein/internal/record"
	"github.com/reinhq/rein/internal/tool"
)

// Promptly is how long a tool may take to return once its ctx is cancelled.
const Promptly = 2 * time.Second

// Conformance checks tl against the rules every tool keeps. calls are argument objects the tool's
// schema accepts; each is run once with a live ctx and once with a cancelled one, so they should
// be harmless to repeat.
func Conformance(t *testing.T, tl tool.Tool, calls ...string) {
	t.Helper()
	spec := tl.Spec()
	if spec.Name == "" || spec.Description == "" {
		t.Errorf("spec %+v lacks a name or a description", spec)
	}
	reg, err := tool.NewRegistry(tl)
	if err != nil {
		t.Fatalf("the registry refuses the tool: %v", err)
	}
	if acc, ok := tl.(tool.Accessor); ok {
		for _, junk := range []string{`{}`, `null`, `[]`, `{"path":5,"command":[]}`, ``} {
			acc.Access(json.RawMessage(junk)) // must not panic
		}
	}
	for _, args := range calls {
		call := tool.Call{ID: "conformance", Name: spec.Name, Args: json.RawMessage(args)}
		if err := reg.Check(call); err != nil {
			t.Errorf("the test's own arguments %s fail the schema: %v", args, err)
			continue
		}
		check(t, args, "live", tl.Run(context.Background(), call))

		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		start := time.Now()
		r := tl.Run(ctx, call)
		if d := time.Since(start); d > Promptly {
			t.Errorf("%s with a cancelled ctx took %v", args, d)
		}
		check(t, args, "cancelled", r)
	}
}

func check(t *testing.T, args, how string, r tool.Result) {
	t.Helper()
	if !r.Outcome.Valid() {
		t.Errorf("%s (%s): outcome %q is not one of record's outcomes", args, how, r.Outcome)
	}
	if r.IsError != (r.Outcome != record.OK) {
		t.Errorf("%s (%s): IsError %v with outcome %s", args, how, r.IsError, r.Outcome)
	}
	if r.Content == "" {
		t.Errorf("%s (%s): empty content; a model is always told something", args, how)
	}
	if !utf8.ValidString(r.Content) {
		t.Errorf("%s (%s): content is not valid UTF-8", args, how)
	}
}
