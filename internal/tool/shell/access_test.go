package shell

import (
	"strings"
	"testing"

	"github.com/reinhq/rein/internal/tool"
)

func policy(t *testing.T, mode tool.Mode, allow, deny []string) tool.Policy {
	t.Helper()
	p := tool.Policy{Mode: mode}
	for _, s := range allow {
		r, err := tool.ParseRule(s)
		if err != nil {
			t.Fatal(err)
		}
		p.Allow = append(p.Allow, r)
	}
	for _, s := range deny {
		r, err := tool.ParseRule(s)
		if err != nil {
			t.Fatal(err)
		}
		p.Deny = append(p.Deny, r)
	}
	return p
}

// TestDenyPush: every spelling of a push is refused by bash(git push*), in mode full (where
// nothing else would stop it). The ones read in full are denied by a subject or a reading; the
// ones that cannot be read are refused because they mention git.
func TestDenyPush(t *testing.T) {
	p := policy(t, tool.ModeFull, nil, []string{"bash(git push*)"})
	tests := []struct {
		line     string
		unjudged bool // refused as unreadable, not read in full
	}{
		{line: "git push"},
		{line: "git  push"},
		{line: "git\tpush origin main"},
		{line: "/usr/bin/git push"},
		{line: "./git push"},
		{line: "env git push"},
		{line: "env FOO=1 git push"},
		{line: "env -i -u HOME FOO=1 git push"},
		{line: "/usr/bin/env git push"},
		{line: "FOO=1 git push"},
		{line: "command git push"},
		{line: "command -p git push"},
		{line: "exec git push"},
		{line: "exec -a name git push"},
		{line: "sh -c 'git push'"},
		{line: `bash -c "git push origin"`},
		{line: "bash -lc 'git push'"},
		{line: "bash -e -c 'cd x && git push'"},
		{line: `sh -c "sh -c 'git push'"`},
		{line: "git -C . push"},
		{line: "git -c x=y push"},
		{line: "git --git-dir=.git push"},
		{line: "git --git-dir .git --work-tree=. push"},
		{line: "git --no-pager -c a=b -C .. push origin"},
		{line: "true && git push"},
		{line: "false || git push"},
		{line: "echo x; git push"},
		{line: "echo x\ngit push"},
		{line: "(git push)"},
		{line: "{ git push; }"},
		{line: "$(git push)", unjudged: true},
		{line: "echo $(git push)"},
		{line: "x=$(git push)"},
		{line: "`git push`", unjudged: true},
		{line: "echo `git push`"},
		{line: "cat <(git push)"},
		{line: "echo | git push"},
		{line: "git push &"},
		{line: "! git push"},
		{line: "nohup git push"},
		{line: "time git push"},
		{line: "time -p git push"},
		{line: "env time -f %e git push"},
		{line: "nice -n 5 git push"},
		{line: "timeout 10 git push"},
		{line: "timeout -s KILL 10s git push"},
		{line: "setsid git push"},
		{line: "stdbuf -o0 git push"},
		{line: "sudo git push"},
		{line: "sudo -u me -E git push"},
		{line: "sudo sh -c 'git push'"},
		{line: "doas git push"},
		{line: "ionice -c 3 git push"},
		{line: "chrt -f 10 git push"},
		{line: "taskset -c 0 git push"},
		{line: "strace -f -o log git push"},
		{line: "flock /tmp/lock git push"},
		{line: "flock -c 'git push' /tmp/lock"},
		{line: "script -q -c 'git push' /dev/null"},
		{line: "watch -n 5 git push"},
		{line: "watch -x git push"},
		{line: "unbuffer git push"},
		{line: "command -- git push"},
		{line: "sudo -- git push"},
		{line: "env -- git push"},
		{line: `"/usr/bin/git" push`},
		{line: `\git push`},
		{line: "git -C. push"},
		{line: "nice -10 git push"},
		{line: "xargs git push"},
		{line: "echo push | xargs git"},
		{line: "xargs -n1 git"},
		{line: "find . -maxdepth 0 -exec git push \\;"},
		{line: "git push --force"},
		{line: "git push origin +main"},
		{line: `eval "git push"`},
		{line: "eval git push"},
		{line: "builtin eval 'git push'"},
		{line: "trap 'git push' EXIT"},
		{line: "env -S 'git push'"},
		{line: "if true; then git push; fi"},
		{line: "for i in 1; do git push; done"},
		{line: "while false; do :; done; until git push; do :; done"},
		{line: "case x in x) git push;; esac"},
		{line: "p() { git push; }; p"},
		{line: "[[ -n $(git push) ]]"},
		{line: "cat <<EOF\n$(git push)\nEOF"},
		{line: `"git" push`},
		{line: "'git' 'push'"},
		{line: `gi\t push`},
		{line: `g"i"t p'u'sh`},
		{line: "$'git' push"},
		{line: `$'\x67it' push`},
		{line: "git \\\n push"},
		{line: "git pu\"sh\""},
		{line: "git $SUB", unjudged: true},    // partial: git followed by anything
		{line: "git pu?h"},                    // a glob: partial
		{line: "git{,} push", unjudged: true}, // brace expansion of the name: partial "git"
		{line: "gi? push", unjudged: true},    // a glob as the name: partial "gi"
		{line: "/usr/bin/gi? push", unjudged: true},
		{line: "alias p='git push'; p", unjudged: true},
		{line: "g=git; $g push", unjudged: true},
		{line: `G=git; "$G" push`, unjudged: true},
		{line: `"$(echo git)" push`, unjudged: true},
		{line: "${GIT:-git} push", unjudged: true},
		{line: `eval "$CMD git push"`, unjudged: true},
		{line: "echo 'git push' | sh", unjudged: true},
		{line: "bash <<EOF\ngit push\nEOF", unjudged: true},
		{line: "source <(echo git push)", unjudged: true},
		{line: "git -c alias.p=push p", unjudged: true},
		{line: `git -C "$HOME" push`, unjudged: true},
		{line: `sh -c "$X"; git push`, unjudged: true},
		{line: "xargs -I{} git {}", unjudged: true},
		{line: "git push 'unbalanced", unjudged: true},
	}
	for _, tt := range tests {
		a := lineAccess(tt.line)
		d := p.Decide("bash", a)
		if d.Verdict != tool.Deny {
			t.Errorf("%q: %s (%s); read as %+v", tt.line, d.Verdict, d.Reason, a)
			continue
		}
		if got := a.Unjudged != ""; got != tt.unjudged {
			t.Errorf("%q: unjudged %v, want %v (%s)", tt.line, got, tt.unjudged, a.Why)
		}
		if !strings.Contains(d.Reason, "bash(git push*)") {
			t.Errorf("%q: the reason %q does not name the rule", tt.line, d.Reason)
		}
	}
	t.Logf("%d spellings of a push, each denied", len(tests))
}

// TestDenyLeavesOthers: the push rule does not refuse what is not a push, even what mentions one.
func TestDenyLeavesOthers(t *testing.T) {
	p := policy(t, tool.ModeFull, nil, []string{"bash(git push*)"})
	for _, line := range []string{
		"git pull",
		"git status && git log -1",
		`echo "git push"`,
		`grep -rn "git push" .`,
		"git commit -m 'before the git push'",
		"env FOO=1 git status",
		"git -C . pull",
		"sh -c 'git fetch'",
		"cat push.txt",
		"source .venv/bin/activate && pytest", // unjudged, but does not mention git
		"$EDITOR notes.txt",
		"git add *.go",
		"",
	} {
		if d := p.Decide("bash", lineAccess(line)); d.Verdict != tool.Allow {
			t.Errorf("%q: %s (%s)", line, d.Verdict, d.Reason)
		}
	}
	// An unjudged line is refused by a rule whose first word it mentions, and only then.
	rm := policy(t, tool.ModeFull, nil, []string{"bash(rm -rf*)"})
	for line, want := range map[string]tool.Verdict{
		"c=rm; $c -rf /":     tool.Deny,
		"$X -rf /":           tool.Allow,
		"eval \"$(cat x)\"":  tool.Allow,
		"eval \"rm $(cat)\"": tool.Deny,
	} {
		if d := rm.Decide("bash", lineAccess(line)); d.Verdict != want {
			t.Errorf("%q under bash(rm -rf*): %s (%s), want %s", line, d.Verdict, d.Reason, want)
		}
	}
	// A pattern beginning with a wildcard names no command: it refuses every unjudged line.
	star := policy(t, tool.ModeFull, nil, []string{"bash(*--force*)"})
	if d := star.Decide("bash", lineAccess("$X push")); d.Verdict != tool.Deny {
		t.Errorf("$X push under bash(*--force*): %s", d.Verdict)
	}
}

// TestAllowRules: in mode ask, an allow rule lets a call run unasked only when every simple
// command of the line matches an allow rule, nothing writes to a file, and the line can be read.
func TestAllowRules(t *testing.T) {
	p := policy(t, tool.ModeAsk, []string{"bash(ls*)", "bash(git status*)"}, nil)
	tests := []struct {
		line string
		want tool.Verdict
		why  string // in the reason, when asked
	}{
		{"ls", tool.Allow, ""},
		{"ls -la src", tool.Allow, ""},
		{"ls 2>/dev/null", tool.Allow, ""},
		{"ls 2>&1 | git status", tool.Allow, ""},
		{"ls >&2", tool.Allow, ""},
		{"ls < list", tool.Allow, ""},
		{"ls <<EOF\nx\nEOF", tool.Allow, ""},
		{"ls *.go", tool.Allow, ""},
		{`ls "$HOME"`, tool.Allow, ""},
		{"ls && git status", tool.Allow, ""},
		{"ls > ~/.file", tool.Ask, "it writes to a file (> ~/.file)"},
		{"ls >> out", tool.Ask, "writes to a file"},
		{"ls &> out", tool.Ask, "writes to a file"},
		{"ls >&out", tool.Ask, "writes to a file"},
		{"ls 2> err.log", tool.Ask, "writes to a file"},
		{"ls <> f", tool.Ask, "writes to a file"},
		{"cat <<EOF > f\nx\nEOF", tool.Ask, ""},
		{"ls; rm -rf x", tool.Ask, "bash(rm -rf x) matches no allow rule"},
		{"ls && curl example.com", tool.Ask, "curl"},
		{"ls $(rm x)", tool.Ask, "bash(rm x) matches no allow rule"},
		{"ls `rm x`", tool.Ask, "rm x"},
		{"ls <(rm x)", tool.Ask, "rm x"},
		{"ls | sh", tool.Ask, "sh reads its commands from its input"},
		{"env ls", tool.Ask, "env ls"},
		{"sudo ls", tool.Ask, "sudo ls"},
		{"/tmp/x/ls", tool.Ask, "/tmp/x/ls"},
		{"X=1 ls", tool.Ask, "X=1 ls"},
		{"eval ls", tool.Ask, "eval ls"},
		{"alias l=ls; l", tool.Ask, "alias"},
		{"$L -la", tool.Ask, "made when it runs"},
		{"git status", tool.Allow, ""},
		{"git $OP", tool.Ask, "made when it runs"},
		{"git status $X", tool.Allow, ""},
		{"git stat?s", tool.Ask, "not known in full"},
		{"git status; git push", tool.Ask, "git push"},
		{"ls 'unbalanced", tool.Ask, "does not parse"},
	}
	for _, tt := range tests {
		d := p.Decide("bash", lineAccess(tt.line))
		if d.Verdict != tt.want || tt.why != "" && !strings.Contains(d.Reason, tt.why) {
			t.Errorf("%q: %s (%s), want %s (%s)", tt.line, d.Verdict, d.Reason, tt.want, tt.why)
		}
	}
}

// TestLineAccess: how a line is read: its subjects, partial subjects and readings.
func TestLineAccess(t *testing.T) {
	tests := []struct {
		line     string
		subjects []string
		partial  []string
		readings []string // partial ones end in "…"
		opaque   bool
	}{
		{line: "git status", subjects: []string{"git status"}},
		{line: "  git   push\torigin  ", subjects: []string{"git push origin"}},
		{line: "a && b || c; d | e & f\ng", subjects: []string{"a", "b", "c", "d", "e", "f", "g"}},
		{line: `echo 'a; b' "c && d"`, subjects: []string{"echo a; b c && d"}},
		{line: `echo a\;b`, subjects: []string{"echo a;b"}},
		{line: "(cd x && make)", subjects: []string{"cd x", "make"}},
		{line: "if git push; then echo ok; fi", subjects: []string{"git push", "echo ok"}},
		{line: "echo '$(not run)'", subjects: []string{"echo $(not run)"}},
		{line: `echo "a\$b\q"`, subjects: []string{`echo a$b\q`}},
		{line: "ls $(rm -rf x)", subjects: []string{"rm -rf x"}, partial: []string{"ls "}},
		{line: "diff <(a) <(b)", subjects: []string{"a", "b"}, partial: []string{"diff "}},
		{line: "env A=1 /usr/bin/git -C x push", subjects: []string{"env A=1 /usr/bin/git -C x push"},
			readings: []string{"/usr/bin/git -C x push", "git -C x push", "git push"}},
		{line: "echo x | xargs -0 rm", subjects: []string{"echo x", "xargs -0 rm"}, readings: []string{"rm …"}},
		{line: "sh -c 'a; b'", subjects: []string{"sh -c a; b", "a", "b"}},
		{line: "ls > out", subjects: []string{"ls"}, opaque: true},
		{line: "X=1", subjects: nil},
		{line: "", subjects: nil},
	}
	for _, tt := range tests {
		a := lineAccess(tt.line)
		var rs []string
		for _, r := range a.Readings {
			if r.Partial {
				rs = append(rs, r.Text+"…")
			} else {
				rs = append(rs, r.Text)
			}
		}
		if strings.Join(a.Subjects, "|") != strings.Join(tt.subjects, "|") || strings.Join(a.Partial, "|") != strings.Join(tt.partial, "|") ||
			strings.Join(rs, "|") != strings.Join(tt.readings, "|") || a.Opaque != tt.opaque || a.Effect != tool.EffectExec {
			t.Errorf("%q read as subjects %q, partial %q, readings %q, opaque %v (%s); want %q, %q, %q, %v",
				tt.line, a.Subjects, a.Partial, rs, a.Opaque, a.Why, tt.subjects, tt.partial, tt.readings, tt.opaque)
		}
	}
}

// TestNesting: scripts within scripts are read to maxNest, and deeper ones are unjudged.
func TestNesting(t *testing.T) {
	line := "git push"
	for i := 0; i < maxNest; i++ {
		line = "sh -c " + quote(line)
	}
	if a := lineAccess(line); a.Unjudged != "" || !contains(a.Subjects, "git push") {
		t.Errorf("%d levels: %+v", maxNest, a)
	}
	line = "sh -c " + quote(line)
	if a := lineAccess(line); a.Unjudged == "" {
		t.Errorf("%d levels were read: %+v", maxNest+1, a)
	}
}

func quote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// FuzzLineAccess: reading any line terminates without panicking, and a line it cannot read is
// opaque.
func FuzzLineAccess(f *testing.F) {
	for _, s := range []string{"git push", "sh -c 'a'", "$(x) y", "a <<E\nb\nE", "env -S", "xargs", "find -exec ;", "git -c", "trap", `$'\x'`, "eval"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, line string) {
		a := lineAccess(line)
		if a.Unjudged != "" && !a.Opaque {
			t.Fatalf("%q is unjudged but not opaque", line)
		}
	})
}

// BenchmarkLineAccess: reading a typical line for the rules, once per bash call.
func BenchmarkLineAccess(b *testing.B) {
	for b.Loop() {
		lineAccess(`cd src && go test ./... 2>&1 | tail -20; git status --short || echo "no git"`)
	}
}
