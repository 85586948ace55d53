package tool

import (
	"strings"
	"testing"
)

func rules(t *testing.T, specs ...string) []Rule {
	t.Helper()
	var rs []Rule
	for _, s := range specs {
		r, err := ParseRule(s)
		if err != nil {
			t.Fatal(err)
		}
		rs = append(rs, r)
	}
	return rs
}

var (
	readCall  = Access{Effect: EffectRead, Subjects: []string{"main.go"}}
	writeCall = Access{Effect: EffectWrite, Subjects: []string{"docs/a.md"}}
	execCall  = Access{Effect: EffectExec, Subjects: []string{"go test ./..."}}
	otherCall = Access{}
)

func TestModes(t *testing.T) {
	// Each mode against each kind of tool, with no rules.
	tests := []struct {
		mode Mode
		want [4]Verdict // read, write, exec, undeclared
	}{
		{ModeReadOnly, [4]Verdict{Allow, Deny, Deny, Deny}},
		{ModeAsk, [4]Verdict{Allow, Ask, Ask, Ask}},
		{ModeWorkspace, [4]Verdict{Allow, Allow, Allow, Ask}},
		{"", [4]Verdict{Allow, Allow, Allow, Ask}},
		{ModeFull, [4]Verdict{Allow, Allow, Allow, Allow}},
	}
	calls := []struct {
		tool string
		a    Access
	}{{"read_file", readCall}, {"write_file", writeCall}, {"bash", execCall}, {"mystery", otherCall}}
	for _, tt := range tests {
		p := Policy{Mode: tt.mode}
		for i, c := range calls {
			if d := p.Decide(c.tool, c.a); d.Verdict != tt.want[i] {
				t.Errorf("mode %q, %s: %s (%s), want %s", tt.mode, c.tool, d.Verdict, d.Reason, tt.want[i])
			}
		}
	}
	d := Policy{Mode: ModeReadOnly}.Decide("bash", execCall)
	if d.Reason != "bash is not allowed in read-only mode: it runs commands" {
		t.Errorf("reason %q", d.Reason)
	}
}

func TestRules(t *testing.T) {
	git := func(cmds ...string) Access { return Access{Effect: EffectExec, Subjects: cmds} }
	tests := []struct {
		name   string
		policy Policy
		tool   string
		a      Access
		want   Verdict
		reason string
	}{
		{"deny by pattern", Policy{Deny: rules(t, "bash(git push*)")}, "bash", git("git push origin main"), Deny,
			"bash(git push origin main) is denied by the rule bash(git push*)"},
		{"deny any segment", Policy{Deny: rules(t, "bash(git push*)")}, "bash", git("git status", "git push"), Deny, ""},
		{"deny pattern not matching", Policy{Deny: rules(t, "bash(git push*)")}, "bash", git("git pull"), Allow, ""},
		{"deny another tool's rule", Policy{Deny: rules(t, "bash(git push*)")}, "write_file", Access{Effect: EffectWrite, Subjects: []string{"git push"}}, Allow, ""},
		{"deny whole tool", Policy{Mode: ModeFull, Deny: rules(t, "bash")}, "bash", git("ls"), Deny, "bash is denied by the rule bash"},
		{"deny every tool", Policy{Deny: rules(t, "*")}, "read_file", readCall, Deny, ""},
		{"deny wins over allow", Policy{Mode: ModeAsk, Allow: rules(t, "bash(git *)"), Deny: rules(t, "bash(git push*)")}, "bash", git("git push"), Deny, ""},
		{"deny wins over ask", Policy{Ask: rules(t, "bash"), Deny: rules(t, "bash(rm *)")}, "bash", git("rm -rf x"), Deny, ""},
		{"allow lifts ask mode", Policy{Mode: ModeAsk, Allow: rules(t, "write_file(*.md)")}, "write_file", writeCall, Allow, ""},
		{"allow not matching", Policy{Mode: ModeAsk, Allow: rules(t, "write_file(*.md)")}, "write_file", Access{Effect: EffectWrite, Subjects: []string{"main.go"}}, Ask, ""},
		{"allow needs every segment", Policy{Mode: ModeAsk, Allow: rules(t, "bash(git status)", "bash(ls*)")}, "bash", git("git status", "rm -rf /"), Ask, ""},
		{"allow every segment covered", Policy{Mode: ModeAsk, Allow: rules(t, "bash(git status)", "bash(ls*)")}, "bash", git("git status", "ls -la"), Allow, ""},
		{"allow ignores opaque calls", Policy{Mode: ModeAsk, Allow: rules(t, "bash(ls*)")}, "bash", Access{Effect: EffectExec, Subjects: []string{"ls $", "rm x"}, Opaque: true}, Ask, ""},
		{"allow whole tool covers opaque", Policy{Mode: ModeAsk, Allow: rules(t, "bash")}, "bash", Access{Effect: EffectExec, Opaque: true}, Allow, ""},
		{"allow cannot lift read-only", Policy{Mode: ModeReadOnly, Allow: rules(t, "write_file(*.md)")}, "write_file", writeCall, Deny, ""},
		{"allow an undeclared tool in workspace", Policy{Allow: rules(t, "mystery")}, "mystery", otherCall, Allow, ""},
		{"ask rule in full mode", Policy{Mode: ModeFull, Ask: rules(t, "bash(git commit*)")}, "bash", git("git commit -m x"), Ask,
			"bash(git commit -m x) matches the ask rule bash(git commit*)"},
		{"ask wins over allow", Policy{Mode: ModeFull, Allow: rules(t, "bash"), Ask: rules(t, "bash(sudo *)")}, "bash", git("sudo ls"), Ask, ""},
		{"ask applies to opaque calls", Policy{Ask: rules(t, "bash(curl*)")}, "bash", Access{Effect: EffectExec, Subjects: []string{"curl $", "id"}, Opaque: true}, Ask, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := tt.policy.Decide(tt.tool, tt.a)
			if d.Verdict != tt.want || tt.reason != "" && d.Reason != tt.reason {
				t.Errorf("got %s %q, want %s %q", d.Verdict, d.Reason, tt.want, tt.reason)
			}
		})
	}
}

func TestParseRule(t *testing.T) {
	tests := []struct{ in, tool, pattern, err string }{
		{"bash", "bash", "", ""},
		{"bash(git push*)", "bash", "git push*", ""},
		{" write_file(*.md) ", "write_file", "*.md", ""},
		{"bash(echo (x))", "bash", "echo (x)", ""},
		{"bash()", "", "", "empty pattern"},
		{"bash(ls", "", "", "closing parenthesis"},
		{"(ls)", "", "", "names no tool"},
		{"bash ls", "", "", "not of the form"},
	}
	for _, tt := range tests {
		r, err := ParseRule(tt.in)
		switch {
		case tt.err != "" && (err == nil || !strings.Contains(err.Error(), tt.err)):
			t.Errorf("ParseRule(%q) error %v, want %q", tt.in, err, tt.err)
		case tt.err == "" && (err != nil || r.Tool != tt.tool || r.Pattern != tt.pattern):
			t.Errorf("ParseRule(%q) = %+v, %v", tt.in, r, err)
		case tt.err == "" && r.String() != strings.TrimSpace(tt.in):
			t.Errorf("String() = %q", r.String())
		}
	}
	if _, err := ParseMode("yolo"); err == nil || !strings.Contains(err.Error(), "read-only, ask, workspace, full") {
		t.Errorf("ParseMode: %v", err)
	}
}

func TestGlob(t *testing.T) {
	tests := []struct {
		pattern, s string
		want       bool
	}{
		{"git push*", "git push origin feature/x", true},
		{"git push*", "git pushy", true},
		{"git push*", "git pull", false},
		{"*.md", "docs/deep/a.md", true},
		{"*.md", "a.md.bak", false},
		{"docs/*", "docs/a/b.md", true},
		{"a?c", "abc", true},
		{"a?c", "aéc", true},
		{"a?c", "ac", false},
		{`a\*`, "a*", true},
		{`a\*`, "ab", false},
		{"*a*b*c*", "xxaxxbxxcxx", true},
		{"*a*b*c*", "xxaxxcxxbxx", false},
		{"", "", true},
		{"*", "", true},
		{"", "x", false},
	}
	for _, tt := range tests {
		if got := Glob(tt.pattern, tt.s); got != tt.want {
			t.Errorf("Glob(%q, %q) = %v", tt.pattern, tt.s, got)
		}
	}
}

func TestRuleCheck(t *testing.T) {
	names := []string{"bash", "read_file", "write_file", "edit_file", "glob", "grep", "context", "transcript", "agents"}
	list := strings.Join(names, ", ")
	tests := []struct{ rule, err string }{
		{"bash", ""},
		{"bash(git push*)", ""},
		{"transcript", ""},
		{"agents(start)", ""},
		{"*", ""},
		{"*_file", ""},
		{"Bash", `the rule "Bash" names no tool rein has: did you mean bash? (the tools are ` + list + ")"},
		{"BASH(ls*)", "did you mean bash?"},
		{"Transcript", "did you mean transcript?"},
		{"read", "did you mean read_file?"},
		{"grpe", "did you mean grep?"},
		{"nosuch", `the rule "nosuch" names no tool rein has; the tools are ` + list},
		{"shell(ls)", "the tools are " + list},
		{"zz*", `the rule "zz*" matches no tool; the tools are ` + list},
	}
	for _, tt := range tests {
		r, err := ParseRule(tt.rule)
		if err != nil {
			t.Fatal(err)
		}
		err = r.Check(names)
		switch {
		case tt.err == "" && err != nil:
			t.Errorf("%s: %v", tt.rule, err)
		case tt.err != "" && (err == nil || !strings.Contains(err.Error(), tt.err)):
			t.Errorf("%s: %v, want %q", tt.rule, err, tt.err)
		}
	}
	p := Policy{Allow: rules(t, "bash(ls*)"), Deny: rules(t, "grep", "Context")}
	if err := p.Check(names); err == nil || !strings.Contains(err.Error(), "did you mean context?") {
		t.Errorf("Policy.Check: %v", err)
	}
}

// TestPartialAndReadings: a partial subject is denied when some continuation matches and allowed
// only when every one does; readings are denied but never allowed; an unjudged call is denied by
// a rule whose first word it mentions, and never allowed by a pattern.
func TestPartialAndReadings(t *testing.T) {
	deny := Policy{Mode: ModeFull, Deny: rules(t, "bash(git push*)")}
	allow := Policy{Mode: ModeAsk, Allow: rules(t, "bash(git *)", "bash(ls)")}
	tests := []struct {
		name   string
		policy Policy
		a      Access
		want   Verdict
		reason string
	}{
		{"partial could be a push", deny, Access{Effect: EffectExec, Partial: []string{"git "}}, Deny,
			"bash(git …) is denied by the rule bash(git push*)"},
		{"partial within the pattern", deny, Access{Effect: EffectExec, Partial: []string{"git pu"}}, Deny, ""},
		{"partial that cannot be a push", deny, Access{Effect: EffectExec, Partial: []string{"git pull "}}, Allow, ""},
		{"reading", deny, Access{Effect: EffectExec, Subjects: []string{"env git push"},
			Readings: []Reading{{Text: "git push", Of: "env git push"}}}, Deny,
			"bash(env git push), read as git push, is denied by the rule bash(git push*)"},
		{"partial reading", deny, Access{Effect: EffectExec, Subjects: []string{"xargs git"},
			Readings: []Reading{{Text: "git ", Of: "xargs git", Partial: true}}}, Deny, ""},
		{"unjudged mentioning git", deny, Access{Effect: EffectExec, Opaque: true, Why: "it defines an alias",
			Unjudged: "alias p='git push'; p\np=git push"}, Deny,
			"bash(alias p='git push'; p) (which cannot be judged: it defines an alias; and it mentions git) is denied by the rule bash(git push*)"},
		{"unjudged not mentioning git", deny, Access{Effect: EffectExec, Opaque: true, Unjudged: "source x"}, Allow, ""},
		{"allow covers every continuation", allow, Access{Effect: EffectExec, Partial: []string{"git log "}}, Allow, ""},
		{"allow cannot cover a continuation", allow, Access{Effect: EffectExec, Partial: []string{"ls "}}, Ask, "is not known in full"},
		{"allow ignores readings", allow, Access{Effect: EffectExec, Subjects: []string{"env git log"},
			Readings: []Reading{{Text: "git log", Of: "env git log"}}}, Ask, "bash(env git log) matches no allow rule"},
		{"allow ignores unjudged", allow, Access{Effect: EffectExec, Subjects: []string{"git log"}, Opaque: true,
			Why: "it does not parse", Unjudged: "git log '"}, Ask, "the allow rules do not cover it: it does not parse"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := tt.policy.Decide("bash", tt.a)
			if d.Verdict != tt.want || tt.reason != "" && !strings.Contains(d.Reason, tt.reason) {
				t.Errorf("got %s %q, want %s %q", d.Verdict, d.Reason, tt.want, tt.reason)
			}
		})
	}
}

func TestGlobSomeAll(t *testing.T) {
	tests := []struct {
		pattern, prefix string
		some, all       bool
	}{
		{"git push*", "git ", true, false},
		{"git push*", "git push", true, true},
		{"git push*", "git push --force ", true, true},
		{"git push*", "git pull", false, false},
		{"git push", "git push", true, false},
		{"git push", "git push ", false, false},
		{"*", "", true, true},
		{"*push", "ls ", true, false},
		{"g?t *", "git ", true, true},
		{`git \*`, "git ", true, false},
		{`git \\*`, `git \`, true, true},
		{"", "", true, false},
		{"", "x", false, false},
	}
	for _, tt := range tests {
		if got := globSome(tt.pattern, tt.prefix); got != tt.some {
			t.Errorf("globSome(%q, %q) = %v", tt.pattern, tt.prefix, got)
		}
		if got := globAll(tt.pattern, tt.prefix); got != tt.all {
			t.Errorf("globAll(%q, %q) = %v", tt.pattern, tt.prefix, got)
		}
	}
}
