package fold

import (
	"slices"
	"testing"

	"github.com/reinhq/rein/internal/record"
)

// asking is a log with call c1 of bash asked about, with the rules rules to grant.
func asking(t *testing.T, rules ...string) *log {
	l := newLog(t)
	l.add(&record.SessionStarted{Session: "s"})
	l.prompt("go")
	l.reply(call("c1", "bash", `{"command":"make test"}`))
	l.add(&record.ToolStarted{CallID: "c1", Name: "bash"})
	l.add(&record.Approval{CallID: "c1", Name: "bash", State: record.ApprovalAsked, Diff: "", Rules: rules})
	return l
}

func TestAnswerScopes(t *testing.T) {
	conv := record.ScopeConversation
	for _, tc := range []struct {
		name   string
		offer  []string
		answer *record.Approval
		refuse string // "" admits
	}{
		{"once", []string{"bash(make test)"}, &record.Approval{CallID: "c1", State: record.ApprovalAllowed}, ""},
		{"for the conversation", []string{"bash(make test)"}, &record.Approval{CallID: "c1", State: record.ApprovalAllowed, Scope: conv, Rules: []string{"bash(make test)"}}, ""},
		{"a denial for the conversation", []string{"bash(make test)"}, &record.Approval{CallID: "c1", State: record.ApprovalDenied, Scope: conv, Rules: []string{"bash(make test)"}}, "only an allowance"},
		{"no rule offered", nil, &record.Approval{CallID: "c1", State: record.ApprovalAllowed, Scope: conv}, "no rule to grant"},
		{"another rule than offered", []string{"bash(make test)"}, &record.Approval{CallID: "c1", State: record.ApprovalAllowed, Scope: conv, Rules: []string{"bash"}}, "which was asked with"},
		{"rules for one call", []string{"bash(make test)"}, &record.Approval{CallID: "c1", State: record.ApprovalAllowed, Rules: []string{"bash(make test)"}}, "names rules"},
		{"an unknown scope", []string{"bash(make test)"}, &record.Approval{CallID: "c1", State: record.ApprovalAllowed, Scope: "forever"}, `scope "forever"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l := asking(t, tc.offer...)
			err := l.try(tc.answer)
			if tc.refuse == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			mustContain(t, err, tc.refuse)
		})
	}
}

// A grant is kept by the record: the state after a replay holds it, and a plan for the
// conversation copies the rules the call was asked with.
func TestGrantsAreRecorded(t *testing.T) {
	l := asking(t, "bash(make test)", "bash(make lint)")
	plan := l.s.ScopedAnswerPlan("op-1", "c1", true, record.ScopeConversation)
	if plan.Record == nil || !slices.Equal(plan.Record.Rules, []string{"bash(make test)", "bash(make lint)"}) {
		t.Fatalf("plan %+v", plan)
	}
	l.addLine(plan.Record)
	if g := l.s.Grants(); !slices.Equal(g, []string{"bash(make test)", "bash(make lint)"}) {
		t.Fatalf("grants %q", g)
	}
	if g := replay(t, l.recs).Grants(); !slices.Equal(g, l.s.Grants()) {
		t.Fatalf("replayed grants %q", g)
	}
	if p := l.s.ScopedAnswerPlan("op-1", "c1", true, ""); p.Replay == nil || !p.Conflict {
		t.Fatalf("the same op for the call alone: %+v, want a conflicting replay", p)
	}
}
