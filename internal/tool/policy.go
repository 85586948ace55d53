package tool

import (
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"
)

// Effect is what a call can do to the world, as far as permissions are concerned.
type Effect int

// The effects a tool declares through Accessor. A tool that declares nothing is EffectUnknown and
// treated as able to act beyond the workspace: asked in mode workspace, refused in read-only.
const (
	EffectUnknown Effect = iota // not declared
	EffectRead                  // reads the workspace or the session, changes nothing outside rein
	EffectWrite                 // changes files inside the workspace
	EffectExec                  // runs commands (which can do anything the user can)
)

func (e Effect) phrase() string {
	switch e {
	case EffectRead:
		return "it only reads"
	case EffectWrite:
		return "it changes files"
	case EffectExec:
		return "it runs commands"
	}
	return "it is not known to only read"
}

// Access is what a call would touch: its effect, and the subjects (a path, each simple command of
// a shell line) that the patterns of allow, ask and deny rules are matched against.
type Access struct {
	Effect   Effect
	Subjects []string
	// Opaque says the subjects may not tell all the call would do (a shell line with command
	// substitution, say). Pattern allow rules then do not apply; deny and ask rules still do.
	Opaque bool
}

// Accessor is implemented by tools that tell the policy what a call would do. It must not fail:
// arguments have already passed the schema, and a tool that cannot tell returns what it knows.
type Accessor interface {
	Access(args json.RawMessage) Access
}

// Mode is a session's permission mode: the default answer for calls no rule decides.
type Mode string

// The permission modes, from most to least guarded. The zero Mode means ModeWorkspace.
const (
	// ModeReadOnly lets only reading tools run. It is a ceiling: allow rules do not lift it.
	ModeReadOnly Mode = "read-only"
	// ModeAsk runs reading tools and asks the person about everything else.
	ModeAsk Mode = "ask"
	// ModeWorkspace runs reading, file-writing (confined to the workspace) and command tools, and
	// asks about tools that do not declare their effect.
	ModeWorkspace Mode = "workspace"
	// ModeFull runs everything no rule refuses or routes to the person.
	ModeFull Mode = "full"
)

// ParseMode reads a mode as configuration spells it.
func ParseMode(s string) (Mode, error) {
	switch m := Mode(s); m {
	case ModeReadOnly, ModeAsk, ModeWorkspace, ModeFull:
		return m, nil
	}
	return "", fmt.Errorf("unknown permission mode %q (the modes are read-only, ask, workspace, full)", s)
}

// Rule names the calls it applies to: a tool name (or a glob over names, "*" for all) and an
// optional glob over the call's subjects, written tool(pattern). In a pattern, * matches any run of
// characters (slashes and spaces included), ? one character, and \ quotes the next one.
//
// Rules match the text of arguments, not what a command or a symbolic link will do: they keep
// honest mistakes from happening, and are no defence against a shell line built to evade them.
type Rule struct {
	Tool    string
	Pattern string // empty: every call of the tool
}

// ParseRule reads a rule such as "bash(git push*)", "write_file(*.md)" or "grep".
func ParseRule(s string) (Rule, error) {
	s = strings.TrimSpace(s)
	name, pattern, hasPattern := strings.Cut(s, "(")
	name = strings.TrimSpace(name)
	if name == "" {
		return Rule{}, fmt.Errorf("rule %q names no tool", s)
	}
	if !hasPattern {
		if strings.ContainsAny(name, ") ") {
			return Rule{}, fmt.Errorf("rule %q is not of the form tool or tool(pattern)", s)
		}
		return Rule{Tool: name}, nil
	}
	if !strings.HasSuffix(pattern, ")") {
		return Rule{}, fmt.Errorf("rule %q lacks the closing parenthesis of tool(pattern)", s)
	}
	pattern = strings.TrimSuffix(pattern, ")")
	if pattern == "" {
		return Rule{}, fmt.Errorf("rule %q has an empty pattern; write %s to mean every call", s, name)
	}
	return Rule{Tool: name, Pattern: pattern}, nil
}

// String writes r as ParseRule reads it.
func (r Rule) String() string {
	if r.Pattern == "" {
		return r.Tool
	}
	return r.Tool + "(" + r.Pattern + ")"
}

// matches reports whether r applies to a call of tool with a, and the subject that matched.
func (r Rule) matches(tool string, a Access) (string, bool) {
	if !Glob(r.Tool, tool) {
		return "", false
	}
	if r.Pattern == "" {
		return "", true
	}
	for _, s := range a.Subjects {
		if Glob(r.Pattern, s) {
			return s, true
		}
	}
	return "", false
}

// Policy decides whether a call runs, is refused, or is put to the person. The zero Policy is mode
// workspace with no rules.
type Policy struct {
	Mode  Mode
	Allow []Rule
	Ask   []Rule
	Deny  []Rule
}

// Verdict is a policy's answer for one call.
type Verdict int

// The verdicts.
const (
	Allow Verdict = iota + 1
	Ask
	Deny
)

func (v Verdict) String() string {
	switch v {
	case Allow:
		return "allow"
	case Ask:
		return "ask"
	case Deny:
		return "deny"
	}
	return fmt.Sprintf("Verdict(%d)", int(v))
}

// Decision is a verdict and its reason, written for the person and the model.
type Decision struct {
	Verdict Verdict
	Reason  string
}

// Decide judges a call of tool that would do a. It is a pure function of its inputs. The order:
// a deny rule refuses; then mode read-only refuses anything but reading; then an ask rule asks;
// then allow rules allow (a pattern rule only if every subject matches one and the access is not
// opaque); then the mode decides.
func (p Policy) Decide(tool string, a Access) Decision {
	for _, r := range p.Deny {
		if s, ok := r.matches(tool, a); ok {
			return Decision{Deny, fmt.Sprintf("%s is denied by the rule %s", callText(tool, s), r)}
		}
	}
	mode := p.Mode
	if mode == "" {
		mode = ModeWorkspace
	}
	if mode == ModeReadOnly && a.Effect != EffectRead {
		return Decision{Deny, fmt.Sprintf("%s is not allowed in read-only mode: %s", tool, a.Effect.phrase())}
	}
	for _, r := range p.Ask {
		if s, ok := r.matches(tool, a); ok {
			return Decision{Ask, fmt.Sprintf("%s matches the ask rule %s", callText(tool, s), r)}
		}
	}
	if p.allowed(tool, a) {
		return Decision{Allow, "allowed by a rule"}
	}
	switch {
	case a.Effect == EffectRead:
		return Decision{Allow, "reading is allowed in every mode"}
	case mode == ModeFull:
		return Decision{Allow, "mode full allows it"}
	case mode == ModeAsk:
		return Decision{Ask, fmt.Sprintf("mode ask puts %s to the person: %s", tool, a.Effect.phrase())}
	case mode == ModeWorkspace && a.Effect != EffectUnknown:
		return Decision{Allow, "mode workspace allows it"}
	case mode == ModeWorkspace:
		return Decision{Ask, fmt.Sprintf("mode workspace puts %s to the person: %s", tool, a.Effect.phrase())}
	}
	return Decision{Deny, fmt.Sprintf("unknown permission mode %q", mode)}
}

// allowed reports whether allow rules cover the whole call: a rule with no pattern, or every
// subject matched by some pattern rule.
func (p Policy) allowed(tool string, a Access) bool {
	for _, r := range p.Allow {
		if r.Pattern == "" && Glob(r.Tool, tool) {
			return true
		}
	}
	if a.Opaque || len(a.Subjects) == 0 {
		return false
	}
	for _, s := range a.Subjects {
		one := Access{Subjects: []string{s}}
		covered := false
		for _, r := range p.Allow {
			if _, ok := r.matches(tool, one); ok && r.Pattern != "" {
				covered = true
				break
			}
		}
		if !covered {
			return false
		}
	}
	return true
}

func callText(tool, subject string) string {
	if subject == "" {
		return tool
	}
	const max = 120
	if len(subject) > max {
		subject = subject[:max] + "…"
	}
	return tool + "(" + subject + ")"
}

// Glob reports whether s matches pattern in full: * matches any run of characters (including
// slashes and spaces), ? matches one character, and \ makes the next character literal.
func Glob(pattern, s string) bool {
	// The classic one-star backtracking: on a mismatch, retry from the last star consuming one
	// more character. Linear in practice, quadratic at worst; patterns are short.
	var px, sx int
	starP, starS := -1, -1
	for sx < len(s) || px < len(pattern) {
		if px < len(pattern) {
			switch c := pattern[px]; c {
			case '*':
				starP, starS = px, sx
				px++
				continue
			case '?':
				if sx < len(s) {
					_, n := utf8.DecodeRuneInString(s[sx:])
					px++
					sx += n
					continue
				}
			default:
				lit := c
				next := px + 1
				if c == '\\' && px+1 < len(pattern) {
					lit = pattern[px+1]
					next = px + 2
				}
				if sx < len(s) && s[sx] == lit {
					px = next
					sx++
					continue
				}
			}
		}
		if starP >= 0 && starS < len(s) {
			starS++
			px, sx = starP+1, starS
			continue
		}
		return false
	}
	return true
}
