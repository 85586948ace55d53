package tool

import (
	"encoding/json"
	"fmt"
	"slices"
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
	EffectNetwork               // reaches the network (a fetch), changing nothing in the workspace
)

func (e Effect) phrase() string {
	switch e {
	case EffectRead:
		return "it only reads"
	case EffectWrite:
		return "it changes files"
	case EffectExec:
		return "it runs commands"
	case EffectNetwork:
		return "it reaches the network"
	}
	return "it is not known to only read"
}

// Access is what a call would touch: its effect, and the subjects (a path, each simple command of
// a shell line) that the patterns of allow, ask and deny rules are matched against.
type Access struct {
	Effect Effect
	// Subjects are matched in full by the patterns of every kind of rule: a path, or each simple
	// command of a shell line as written, its words unquoted and joined by one space.
	Subjects []string
	// Partial are subjects of which only the beginning is known: a command whose later words are
	// made when it runs (from a variable, a glob or a command substitution). A deny or ask pattern
	// applies when some continuation of one would match it; an allow pattern only when every
	// continuation would.
	Partial []string
	// Readings are further readings of the subjects, which deny and ask patterns are matched
	// against too, never allow patterns: a wrapped command unwrapped (env git push → git push), a
	// command named by its path named by its file (/usr/bin/git → git), git's global options left
	// out (git -C . push → git push).
	Readings []Reading
	// Opaque says the subjects may not tell all the call would do (a shell line writing to a file,
	// say); Why says what. Pattern allow rules then do not apply; deny and ask rules still do.
	Opaque bool
	Why    string
	// As names the rein tools whose work the call does, for a tool that stands in for them (the
	// text editor's str_replace does edit_file's; apply_patch writes and edits files): a deny or
	// ask rule naming any of them applies to the call as to a call of that tool with the same
	// subjects, and an allow rule when it names them all. So a rule written for rein's own tools
	// holds whatever tool set the model is offered.
	As []string
	// Unjudged, when set, says part of the call cannot be read at all (eval of a variable, an
	// alias, a variable as a command name, a line that does not parse), and holds the call's text
	// with every word of it unquoted. The call is then also Opaque, and a deny or ask pattern
	// applies to it when the pattern's first word appears anywhere in that text (a pattern that
	// begins with a wildcard applies always): an unreadable line that mentions git is refused by
	// a rule about git.
	Unjudged string
}

// Reading is one further reading of a subject (see Access.Readings).
type Reading struct {
	Text string
	// Of is the subject read.
	Of string
	// Partial says only the beginning of Text is known (see Access.Partial).
	Partial bool
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
// Rules are a convenience that keeps honest mistakes from happening, not a boundary: they are
// matched against what the call's text says (for bash, each simple command of the parsed line,
// wrappers such as env, sh -c and sudo unwrapped), not against what a program, a script or a
// symbolic link will do when it runs. A command built to evade them can. The boundary is the
// operating system's (a sandbox, the user's own permissions).
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

// Check refuses a rule whose tool name is not one of names (the tools a session has), saying
// which name was meant when only the case differs or a letter or two, and listing the names
// otherwise. A glob over names must match at least one.
func (r Rule) Check(names []string) error {
	list := strings.Join(names, ", ")
	if strings.ContainsAny(r.Tool, "*?\\") {
		for _, n := range names {
			if Glob(r.Tool, n) {
				return nil
			}
		}
		return fmt.Errorf("the rule %q matches no tool; the tools are %s", r.String(), list)
	}
	if slices.Contains(names, r.Tool) {
		return nil
	}
	if near := nearest(r.Tool, names); near != "" {
		return fmt.Errorf("the rule %q names no tool rein has: did you mean %s? (the tools are %s)", r.String(), near, list)
	}
	return fmt.Errorf("the rule %q names no tool rein has; the tools are %s", r.String(), list)
}

// nearest is the name in names that s most likely meant: the same but for case, one beginning
// with s (read → read_file), or one within two edits; "" if none is.
func nearest(s string, names []string) string {
	for _, n := range names {
		if strings.EqualFold(n, s) {
			return n
		}
	}
	low := strings.ToLower(s)
	for _, n := range names {
		if len(low) >= 3 && strings.HasPrefix(n, low) {
			return n
		}
	}
	best, bestD := "", 3
	for _, n := range names {
		if d := editDistance(low, n); d < bestD {
			best, bestD = n, d
		}
	}
	return best
}

// editDistance is the Levenshtein distance between a and b, in bytes.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// matches reports whether r applies to a call of tool with a, as a deny or ask rule, and what it
// matched, in words for the reason.
func (r Rule) matches(tool string, a Access) (string, bool) {
	if !Glob(r.Tool, tool) && !slices.ContainsFunc(a.As, func(n string) bool { return Glob(r.Tool, n) }) {
		return "", false
	}
	if r.Pattern == "" {
		return tool, true
	}
	for _, s := range a.Subjects {
		if Glob(r.Pattern, s) {
			return callText(tool, s), true
		}
	}
	for _, s := range a.Partial {
		if globSome(r.Pattern, s) {
			return callText(tool, s+"…"), true
		}
	}
	for _, rd := range a.Readings {
		text := rd.Text
		ok := Glob(r.Pattern, text)
		if rd.Partial {
			ok = globSome(r.Pattern, text)
			text += "…"
		}
		if ok {
			return fmt.Sprintf("%s, read as %s,", callText(tool, rd.Of), clipText(text)), true
		}
	}
	if a.Unjudged != "" {
		if word, ok := mentions(r.Pattern, a.Unjudged); ok {
			what := callText(tool, firstLine(a.Unjudged))
			if word == "" {
				return fmt.Sprintf("%s (which cannot be judged: %s)", what, a.Why), true
			}
			return fmt.Sprintf("%s (which cannot be judged: %s; and it mentions %s)", what, a.Why, word), true
		}
	}
	return "", false
}

// mentions reports whether an unjudged call's text may run what pattern names: the pattern's
// first word appears anywhere in text, or the pattern has no literal first word. It returns that
// word.
func mentions(pattern, text string) (string, bool) {
	first, _, _ := strings.Cut(pattern, " ")
	var word strings.Builder
	for i := 0; i < len(first); i++ {
		switch c := first[i]; c {
		case '*', '?':
			return "", true
		case '\\':
			if i+1 < len(first) {
				i++
				word.WriteByte(first[i])
			}
		default:
			word.WriteByte(c)
		}
	}
	if word.Len() == 0 {
		return "", true
	}
	return word.String(), strings.Contains(text, word.String())
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}

// Policy decides whether a call runs, is refused, or is put to the person. The zero Policy is mode
// workspace with no rules.
type Policy struct {
	Mode  Mode
	Allow []Rule
	Ask   []Rule
	Deny  []Rule
}

// Check refuses a policy with a rule naming no tool among names (see Rule.Check).
func (p Policy) Check(names []string) error {
	for _, rs := range [][]Rule{p.Allow, p.Ask, p.Deny} {
		for _, r := range rs {
			if err := r.Check(names); err != nil {
				return err
			}
		}
	}
	return nil
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
		if what, ok := r.matches(tool, a); ok {
			return Decision{Deny, fmt.Sprintf("%s is denied by the rule %s", what, r)}
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
		if what, ok := r.matches(tool, a); ok {
			return Decision{Ask, fmt.Sprintf("%s matches the ask rule %s", what, r)}
		}
	}
	ok, why := p.allowed(tool, a)
	if ok {
		return Decision{Allow, "allowed by a rule"}
	}
	if why != "" {
		why = "; the allow rules do not cover it: " + why
	}
	switch {
	case a.Effect == EffectRead:
		return Decision{Allow, "reading is allowed in every mode"}
	case mode == ModeFull:
		return Decision{Allow, "mode full allows it"}
	case mode == ModeAsk:
		return Decision{Ask, fmt.Sprintf("mode ask puts %s to the person: %s%s", tool, a.Effect.phrase(), why)}
	case mode == ModeWorkspace && a.Effect != EffectUnknown:
		return Decision{Allow, "mode workspace allows it"}
	case mode == ModeWorkspace:
		return Decision{Ask, fmt.Sprintf("mode workspace puts %s to the person: %s%s", tool, a.Effect.phrase(), why)}
	}
	return Decision{Deny, fmt.Sprintf("unknown permission mode %q", mode)}
}

// allowed reports whether allow rules cover the whole call: a rule with no pattern, or every
// subject matched by some pattern rule (every continuation of a partial one) and nothing opaque.
// When the tool has pattern rules that do not cover the call, why says what they miss.
func (p Policy) allowed(tool string, a Access) (ok bool, why string) {
	var rules []Rule
	for _, r := range p.Allow {
		if !Glob(r.Tool, tool) && (len(a.As) == 0 || !allNames(r.Tool, a.As)) {
			continue
		}
		if r.Pattern == "" {
			return true, ""
		}
		rules = append(rules, r)
	}
	switch {
	case len(rules) == 0:
		return false, ""
	case a.Opaque:
		return false, a.Why
	case len(a.Subjects)+len(a.Partial) == 0:
		return false, "it names nothing to match"
	}
	for _, s := range a.Subjects {
		if !slices.ContainsFunc(rules, func(r Rule) bool { return Glob(r.Pattern, s) }) {
			return false, callText(tool, s) + " matches no allow rule"
		}
	}
	for _, s := range a.Partial {
		if !slices.ContainsFunc(rules, func(r Rule) bool { return globAll(r.Pattern, s) }) {
			return false, callText(tool, s+"…") + " is not known in full and no allow rule covers every way it could go on"
		}
	}
	return true, ""
}

// allNames reports whether the tool glob of a rule names every one of names.
func allNames(glob string, names []string) bool {
	for _, n := range names {
		if !Glob(glob, n) {
			return false
		}
	}
	return true
}

func callText(tool, subject string) string {
	if subject == "" {
		return tool
	}
	return tool + "(" + clipText(subject) + ")"
}

func clipText(s string) string {
	const max = 120
	if len(s) > max {
		s = s[:max] + "…"
	}
	return s
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

// globSome reports whether some string beginning with prefix matches pattern: prefix matches the
// start of pattern up to its end or up to a *, which can take the rest.
func globSome(pattern, prefix string) bool {
	px, sx := 0, 0
	for sx < len(prefix) {
		if px >= len(pattern) {
			return false
		}
		switch c := pattern[px]; c {
		case '*':
			return true
		case '?':
			_, n := utf8.DecodeRuneInString(prefix[sx:])
			px++
			sx += n
		default:
			lit, next := c, px+1
			if c == '\\' && px+1 < len(pattern) {
				lit, next = pattern[px+1], px+2
			}
			if prefix[sx] != lit {
				return false
			}
			px, sx = next, sx+1
		}
	}
	return true
}

// globAll reports whether every string beginning with prefix matches pattern. It holds when
// pattern ends in a * and matches prefix itself: that last * can take any continuation. (It is
// sufficient, not necessary; an allow rule that fails it does not allow.)
func globAll(pattern, prefix string) bool {
	if !strings.HasSuffix(pattern, "*") {
		return false
	}
	escapes := 0
	for i := len(pattern) - 2; i >= 0 && pattern[i] == '\\'; i-- {
		escapes++
	}
	return escapes%2 == 0 && Glob(pattern, prefix)
}
