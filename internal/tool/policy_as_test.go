package tool

import "testing"

// A call of a tool that stands in for rein's own (Access.As) is judged by the rules written for
// them: deny and ask rules naming any of them apply; an allow rule applies only when it names
// them all; rules naming the tool itself apply as ever.
func TestPolicyAs(t *testing.T) {
	edit := Access{Effect: EffectWrite, Subjects: []string{"src/a.go"}, As: []string{"edit_file"}}
	both := Access{Effect: EffectWrite, Subjects: []string{"src/a.go", "docs/b.md"}, As: []string{"write_file", "edit_file"}}
	view := Access{Effect: EffectRead, Subjects: []string{"secrets/k"}, As: []string{"read_file"}}
	rule := func(s string) Rule {
		r, err := ParseRule(s)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	tests := []struct {
		name string
		pol  Policy
		tool string
		a    Access
		want Verdict
	}{
		{"deny by the stood-in name", Policy{Deny: []Rule{rule("edit_file(src/*)")}}, "str_replace_based_edit_tool", edit, Deny},
		{"deny by another path", Policy{Deny: []Rule{rule("edit_file(lib/*)")}}, "str_replace_based_edit_tool", edit, Allow},
		{"deny by the tool's own name", Policy{Deny: []Rule{rule("apply_patch")}}, "apply_patch", both, Deny},
		{"deny one of two", Policy{Deny: []Rule{rule("write_file(docs/*)")}}, "apply_patch", both, Deny},
		{"ask by the stood-in name", Policy{Ask: []Rule{rule("edit_file")}}, "apply_patch", both, Ask},
		{"deny reading", Policy{Deny: []Rule{rule("read_file(secrets/*)")}}, "str_replace_based_edit_tool", view, Deny},
		{"read-only lets a view run", Policy{Mode: ModeReadOnly}, "str_replace_based_edit_tool", view, Allow},
		{"read-only refuses an edit", Policy{Mode: ModeReadOnly}, "str_replace_based_edit_tool", edit, Deny},
		{"allow by the stood-in name", Policy{Mode: ModeAsk, Allow: []Rule{rule("edit_file(src/*)")}}, "str_replace_based_edit_tool", edit, Allow},
		{"allow naming one of two", Policy{Mode: ModeAsk, Allow: []Rule{rule("edit_file(*)")}}, "apply_patch", both, Ask},
		{"allow naming both", Policy{Mode: ModeAsk, Allow: []Rule{rule("*_file(*)")}}, "apply_patch", both, Allow},
		{"allow by the tool's own name", Policy{Mode: ModeAsk, Allow: []Rule{rule("apply_patch(*)")}}, "apply_patch", both, Allow},
		{"a rule for another tool", Policy{Deny: []Rule{rule("bash")}}, "apply_patch", both, Allow},
	}
	for _, tt := range tests {
		if d := tt.pol.Decide(tt.tool, tt.a); d.Verdict != tt.want {
			t.Errorf("%s: %v (%s), want %v", tt.name, d.Verdict, d.Reason, tt.want)
		}
	}
}
