package sim

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
)

// stepWords are the words that make a prompt ask for steps.
var stepWords = map[string]bool{
	"list": true, "run": true, "files": true, "file": true, "step": true, "steps": true,
	"ls": true, "show": true,
}

var backticked = regexp.MustCompile("`([^`\n]+)`")

// commands are the shell commands a prompt asks for, or nil if it asks for none: the commands in
// backticks, else one command derived from its words.
func commands(prompt string) []string {
	var cmds []string
	for _, m := range backticked.FindAllStringSubmatch(prompt, -1) {
		if c := strings.TrimSpace(m[1]); c != "" {
			cmds = append(cmds, c)
		}
	}
	if len(cmds) > 0 {
		return cmds
	}
	asks, git := false, false
	for _, w := range strings.FieldsFunc(strings.ToLower(prompt), func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9')
	}) {
		asks = asks || stepWords[w]
		git = git || w == "git"
	}
	switch {
	case asks && git:
		return []string{"git status --short"}
	case asks:
		return []string{"ls -la"}
	}
	return nil
}

// policy plays the simulator's deterministic behaviour for a request that has no script step.
func policy(v view, model string, maxRounds int) Step {
	var st Step
	shell := v.offers("bash", "shell")
	cmds := commands(v.prompt)
	switch {
	case shell != "" && v.rounds < len(cmds) && v.rounds < maxRounds:
		cmd := cmds[v.rounds]
		args, _ := json.Marshal(map[string]string{"command": cmd})
		st.Text = fmt.Sprintf("Running `%s`.", cmd)
		st.ToolCalls = []ToolCall{{Name: shell, Arguments: args}}
	case len(v.results) > 0:
		st.Text = summary(v.results)
	default:
		st.Text = echo(v, model, shell, cmds)
	}
	if v.thinking {
		decision := "answer in text"
		if len(st.ToolCalls) > 0 {
			decision = "call the " + shell + " tool"
		}
		text := "The rein simulator follows a fixed policy; here it will " + decision + "."
		st.Thinking = &Thinking{Text: text}
		if v.signs {
			sum := sha256.Sum256([]byte(text))
			st.Thinking.Signature = "sim_sig_" + hex.EncodeToString(sum[:12])
		}
	}
	return st
}

// summary reports the tool results that arrived: how many, and the first lines of the last.
func summary(results []result) string {
	last := results[len(results)-1]
	lines := strings.Split(strings.TrimRight(last.text, "\n"), "\n")
	if len(lines) > 5 {
		lines = append(lines[:5], "…")
	}
	head := "The last command's output begins:"
	if last.isError {
		head = "The last command failed:"
	}
	body := strings.Join(lines, "\n")
	if strings.TrimSpace(last.text) == "" {
		body = "(no output)"
	}
	return fmt.Sprintf("The rein simulator received %d tool result(s). %s\n\n%s\n\nThat is all the simulator does: it does not read or judge the output.",
		len(results), head, body)
}

// echo is the simulator's plain answer: what it is and what it understood.
func echo(v view, model, shell string, cmds []string) string {
	p := strings.TrimSpace(v.prompt)
	if r := []rune(p); len(r) > 200 {
		p = string(r[:200]) + "…"
	}
	s := fmt.Sprintf("This is the rein simulator (%s), not a model. I read your message as: %q.", model, p)
	switch {
	case len(cmds) > 0 && shell == "":
		s += " It asks for commands, but no bash tool was offered, so I only answer in text."
	case len(cmds) > 0:
		s += " I have run the tool rounds I allow myself for one exchange."
	default:
		s += " Ask me to list files or to run a `command` and I will call the bash tool."
	}
	return s
}
