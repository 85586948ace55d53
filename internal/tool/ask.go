package tool

import (
	"encoding/json"
	"strings"
)

// What a person asked to approve a call reads, and what they can allow beyond it.

// Previewer is implemented by tools that can say what a call would change before it runs (a
// file's unified diff, read from the file as it is now), so that a person approves a change, not
// the arguments that make it. Preview must not change anything, and says why the call would fail
// when it would.
type Previewer interface {
	Preview(args json.RawMessage) string
}

// RuleSource is implemented by an Approver that holds rules the person granted for the rest of a
// conversation (an answer "allow for this conversation"): the Runner adds them to its policy's
// allow rules, after its deny and ask rules, as any allow rule.
type RuleSource interface {
	Rules() []Rule
}

// Offer is the rules that would allow calls like one of tool that does a, for the person to grant
// for the rest of a conversation instead of allowing the one call: for a command line, each of its
// simple commands exactly as written; for a file tool or any other, the tool. It is empty when no
// rule can be trusted to cover the call: a command line that is opaque (it writes to a file, say)
// or only partly known when it runs, whose pattern rules would not apply.
func Offer(tool string, a Access) []Rule {
	if a.Effect != EffectExec {
		return []Rule{{Tool: tool}}
	}
	if a.Opaque || a.Unjudged != "" || len(a.Partial) > 0 || len(a.Subjects) == 0 {
		return nil
	}
	rules := make([]Rule, 0, len(a.Subjects))
	for _, s := range a.Subjects {
		rules = append(rules, Rule{Tool: tool, Pattern: QuoteGlob(s)})
	}
	return rules
}

// QuoteGlob writes s as a rule pattern that matches s only.
func QuoteGlob(s string) string {
	var b strings.Builder
	for _, r := range s {
		if r == '*' || r == '?' || r == '\\' {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}
