// Package redact replaces secrets in text with placeholders before the text is written to a
// record or printed. Redact replaces well-known secret patterns with [REDACTED:<kind>]: API keys
// of the model providers, cloud and chat tokens, private key blocks, and bearer tokens in headers.
//
// It is one hand-written scanner rather than a regular expression per pattern because it runs on
// every tool output: a single pass looks only at the bytes that can start a secret, and text with
// no secret is returned as is, without a copy. The patterns are:
//
//	anthropic    sk-ant-…          openrouter  sk-or-…            openai  sk-…, sk-proj-…
//	aws          AKIA…, ASIA…      github      ghp_ gho_ ghu_ ghs_ ghr_ …, github_pat_…
//	slack        xoxb- xoxp- xoxa- xoxo- xoxr- xoxs-…                 google  AIza…
//	private_key  -----BEGIN … PRIVATE KEY----- through its END line (or the end of the text)
//	bearer       Bearer <token> (any case), the word kept
//
// A token must start at a word boundary and be long enough to be a real key (a bare sk- token must
// also hold a digit), so that prose such as "task-runner" or "sk-learn-extensions" is left alone.
// Recognising a key by its shape means a key of another shape passes: the redactor is a net under
// the rule that keys never enter a record, not the rule itself. Secrets (secrets.go) is the net
// for the keys a process actually holds: it finds their exact values, encoded or not, and then
// applies these shapes. Writer and Handler (io.go) put a Secrets between a process and what it
// prints or serves.
package redact

import "strings"

// kind names a secret in its placeholder.
type kind string

const (
	anthropic  kind = "anthropic"
	openrouter kind = "openrouter"
	openai     kind = "openai"
	aws        kind = "aws"
	github     kind = "github"
	slack      kind = "slack"
	google     kind = "google"
	privateKey kind = "private_key"
	bearer     kind = "bearer"
)

// starts marks the bytes a secret can begin with.
var starts = func() (t [256]bool) {
	for _, c := range "sAgx-Bb" {
		t[c] = true
	}
	return t
}()

// Redact returns s with every secret it recognises replaced by [REDACTED:<kind>]. It is pure and
// idempotent: Redact(Redact(s)) == Redact(s).
func Redact(s string) string {
	// Replacing can only join text that was apart (a placeholder ends at a word boundary), so a
	// second pass finds nothing new in practice; passes repeat until one changes nothing, which
	// makes idempotence hold by construction.
	for range 8 {
		out, changed := pass(s)
		if !changed {
			return out
		}
		s = out
	}
	return s
}

func pass(s string) (string, bool) {
	var b strings.Builder
	last := 0 // s[last:] has not been copied to b yet
	for i := 0; i < len(s); i++ {
		if !starts[s[i]] {
			continue
		}
		end, k, keep := match(s, i)
		if end < 0 {
			continue
		}
		if b.Len() == 0 && last == 0 {
			b.Grow(len(s))
		}
		b.WriteString(s[last : i+keep])
		b.WriteString("[REDACTED:")
		b.WriteString(string(k))
		b.WriteByte(']')
		last = end
		i = end - 1
	}
	if last == 0 {
		return s, false
	}
	b.WriteString(s[last:])
	return b.String(), true
}

// match tries every pattern that can start at s[i]. It returns the end of the secret, its kind,
// and how many bytes from i to keep before the placeholder (for bearer, the word); end is -1 if
// nothing matches.
func match(s string, i int) (end int, k kind, keep int) {
	rest := s[i:]
	switch s[i] {
	case '-':
		if strings.HasPrefix(rest, "-----BEGIN ") {
			if e := pemBlock(s, i); e > 0 {
				return e, privateKey, 0
			}
		}
		return -1, "", 0
	case 'B', 'b':
		if e, kp := bearerToken(s, i); e > 0 {
			return e, bearer, kp
		}
		return -1, "", 0
	}
	if i > 0 && isWord(s[i-1]) {
		return -1, "", 0
	}
	switch s[i] {
	case 's':
		switch {
		case strings.HasPrefix(rest, "sk-ant-"):
			return token(s, i, len("sk-ant-"), 20, isKeyByte), anthropic, 0
		case strings.HasPrefix(rest, "sk-or-"):
			return token(s, i, len("sk-or-"), 20, isKeyByte), openrouter, 0
		case strings.HasPrefix(rest, "sk-"):
			// The bare prefix also starts kebab-case words (sk-learn-…); a key has a digit.
			e := token(s, i, len("sk-"), 20, isKeyByte)
			if e < 0 || strings.IndexAny(s[i+3:e], "0123456789") < 0 {
				return -1, "", 0
			}
			return e, openai, 0
		}
	case 'A':
		switch {
		case strings.HasPrefix(rest, "AKIA"), strings.HasPrefix(rest, "ASIA"):
			return exact(s, i, 4, 16, isUpperDigit), aws, 0
		case strings.HasPrefix(rest, "AIza"):
			return token(s, i, 4, 35, isKeyByte), google, 0
		}
	case 'g':
		switch {
		case strings.HasPrefix(rest, "github_pat_"):
			return token(s, i, len("github_pat_"), 22, isKeyByte), github, 0
		case len(rest) > 4 && rest[0] == 'g' && rest[1] == 'h' && strings.IndexByte("pousr", rest[2]) >= 0 && rest[3] == '_':
			return token(s, i, 4, 30, isKeyByte), github, 0
		}
	case 'x':
		if len(rest) > 5 && strings.HasPrefix(rest, "xox") && strings.IndexByte("bpaors", rest[3]) >= 0 && rest[4] == '-' {
			return token(s, i, 5, 10, isKeyByte), slack, 0
		}
	}
	return -1, "", 0
}

// token returns the end of a token of prefix bytes then at least least bytes for which ok holds,
// as many as there are, or -1.
func token(s string, i, prefix, least int, ok func(byte) bool) int {
	j := i + prefix
	for j < len(s) && ok(s[j]) {
		j++
	}
	if j-(i+prefix) < least {
		return -1
	}
	return j
}

// exact is token with exactly n bytes after the prefix, then a word boundary.
func exact(s string, i, prefix, n int, ok func(byte) bool) int {
	j := token(s, i, prefix, n, ok)
	if j != i+prefix+n || j < len(s) && isWord(s[j]) {
		return -1
	}
	return j
}

// bearerToken matches "Bearer <token>" at i in any case, keeping the word and the blanks.
func bearerToken(s string, i int) (end, keep int) {
	const word = "bearer"
	if len(s)-i < len(word)+1 || !strings.EqualFold(s[i:i+len(word)], word) || i > 0 && isLetter(s[i-1]) {
		return -1, 0
	}
	j := i + len(word)
	if s[j] != ' ' && s[j] != '\t' {
		return -1, 0
	}
	for j < len(s) && (s[j] == ' ' || s[j] == '\t') {
		j++
	}
	e := token(s, j, 0, 16, isBearerByte)
	if e < 0 {
		return -1, 0
	}
	return e, j - i
}

// pemBlock matches a private key block starting at i: a BEGIN line naming a PRIVATE KEY, through
// the matching END line, or through the end of s if the block was cut off.
func pemBlock(s string, i int) int {
	head := s[i+len("-----BEGIN "):]
	nl := strings.IndexAny(head, "\r\n")
	if nl < 0 {
		nl = len(head)
	}
	label, ok := strings.CutSuffix(head[:nl], "-----")
	if !ok || !strings.HasSuffix(label, "PRIVATE KEY") && !strings.HasSuffix(label, "PRIVATE KEY BLOCK") {
		return -1
	}
	endLine := "-----END " + label + "-----"
	at := strings.Index(head, endLine)
	if at < 0 {
		return len(s)
	}
	return i + len("-----BEGIN ") + at + len(endLine)
}

func isLetter(c byte) bool { return c|0x20 >= 'a' && c|0x20 <= 'z' }

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// isWord holds for bytes that may continue a key, so a key cannot start after one.
func isWord(c byte) bool { return isLetter(c) || isDigit(c) || c == '_' || c == '-' }

func isKeyByte(c byte) bool { return isWord(c) }

func isUpperDigit(c byte) bool { return c >= 'A' && c <= 'Z' || isDigit(c) }

func isBearerByte(c byte) bool {
	return isWord(c) || c == '.' || c == '~' || c == '+' || c == '/' || c == '='
}
