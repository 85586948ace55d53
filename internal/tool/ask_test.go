package tool

import (
	"slices"
	"testing"
)

// An offered rule allows, as an allow rule of the policy, the call it was offered for and no
// other; a call whose subjects do not tell all it does is offered none.
func TestOfferCoversTheCallOnly(t *testing.T) {
	exec := func(subjects ...string) Access { return Access{Effect: EffectExec, Subjects: subjects} }
	for _, tc := range []struct {
		name  string
		tool  string
		a     Access
		want  []string
		other Access // a call the offer must not allow
	}{
		{"a command", "bash", exec("go test ./..."), []string{"bash(go test ./...)"}, exec("go test ./... -run X")},
		{"wildcards in a command", "bash", exec("rm *.tmp"), []string{`bash(rm \*.tmp)`}, exec("rm a.go")},
		{"a list", "bash", exec("make", "make install"), []string{"bash(make)", "bash(make install)"}, exec("make", "rm -rf /")},
		{"a file tool", "edit_file", Access{Effect: EffectWrite, Subjects: []string{"a.go"}}, []string{"edit_file"}, Access{Effect: EffectExec, Subjects: []string{"ls"}}},
		{"an opaque command", "bash", Access{Effect: EffectExec, Subjects: []string{"echo hi"}, Opaque: true}, nil, Access{}},
		{"a partial command", "bash", Access{Effect: EffectExec, Partial: []string{"git"}}, nil, Access{}},
		{"an unjudged command", "bash", Access{Effect: EffectExec, Unjudged: "eval $x", Opaque: true}, nil, Access{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			offer := Offer(tc.tool, tc.a)
			var got []string
			for _, r := range offer {
				got = append(got, r.String())
				if _, err := ParseRule(r.String()); err != nil {
					t.Fatalf("the offered rule %s does not read back: %v", r, err)
				}
			}
			if !slices.Equal(got, tc.want) {
				t.Fatalf("offer %q, want %q", got, tc.want)
			}
			if len(offer) == 0 {
				return
			}
			p := Policy{Mode: ModeAsk, Allow: offer}
			if d := p.Decide(tc.tool, tc.a); d.Verdict != Allow {
				t.Fatalf("the offer does not allow its own call: %+v", d)
			}
			other := "bash"
			if d := p.Decide(other, tc.other); d.Verdict == Allow {
				t.Fatalf("the offer allows another call %+v: %+v", tc.other, d)
			}
		})
	}
}
