package hook

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/reinhq/rein/internal/record"
)

// Claude Code's hooks settings (the "hooks" object of its settings.json), as far as rein can
// take them over: each event's matchers and their command hooks. Claude Code names the events
// PreToolUse, PostToolUse, UserPromptSubmit and Stop, and its tools Bash, Read, Write, Edit, …;
// its matcher is a regular expression over tool names, of which rein takes the plain forms: one
// name, names joined by |, and * or nothing for every tool.

type claudeSettings struct {
	Hooks map[string][]claudeMatcher `json:"hooks"`
}

type claudeMatcher struct {
	Matcher string       `json:"matcher"`
	Hooks   []claudeHook `json:"hooks"`
}

type claudeHook struct {
	Type    string `json:"type"`
	Command string `json:"command"`
	Timeout int    `json:"timeout"`
}

// claudeEvents maps Claude Code's event names to rein's.
var claudeEvents = map[string]string{
	"PreToolUse":       record.HookPreTool,
	"PostToolUse":      record.HookPostTool,
	"UserPromptSubmit": record.HookPrompt,
	"Stop":             record.HookStop,
}

// claudeTools maps Claude Code's tool names to rein's.
var claudeTools = map[string]string{
	"Bash": "bash", "Read": "read_file", "Write": "write_file", "Edit": "edit_file", "MultiEdit": "edit_file",
	"Glob": "glob", "Grep": "grep",
}

// ImportClaude reads Claude Code's settings (JSON with a "hooks" object) and returns the hooks
// rein can take over, as a Config, and a line for each thing it could not (an event rein has no
// counterpart of, a matcher naming a tool rein does not have or written as a pattern rein does not
// read, a hook that is not a command).
func ImportClaude(settings []byte) (Config, []string, error) {
	var s claudeSettings
	if err := json.Unmarshal(settings, &s); err != nil {
		return Config{}, nil, fmt.Errorf("the settings do not read as JSON: %w", err)
	}
	if s.Hooks == nil {
		return Config{}, nil, fmt.Errorf("the settings have no \"hooks\" object")
	}
	var c Config
	var skipped []string
	events := make([]string, 0, len(s.Hooks))
	for ev := range s.Hooks {
		events = append(events, ev)
	}
	sort.Strings(events)
	for _, ev := range events {
		to, ok := claudeEvents[ev]
		if !ok {
			skipped = append(skipped, fmt.Sprintf("%s: rein has no such event (it has PreToolUse, PostToolUse, UserPromptSubmit and Stop)", ev))
			continue
		}
		for _, m := range s.Hooks[ev] {
			matches, why := claudeMatch(m.Matcher)
			if why != "" {
				skipped = append(skipped, fmt.Sprintf("%s matcher %q: %s", ev, m.Matcher, why))
				continue
			}
			if to == record.HookPrompt || to == record.HookStop {
				matches = []string{""}
			}
			for _, h := range m.Hooks {
				if h.Type != "command" || strings.TrimSpace(h.Command) == "" {
					skipped = append(skipped, fmt.Sprintf("%s: a hook of type %q, where rein runs commands only", ev, h.Type))
					continue
				}
				timeout := h.Timeout
				if timeout > int(MaxTimeout.Seconds()) {
					timeout = int(MaxTimeout.Seconds())
				}
				for _, match := range matches {
					spec := Spec{Match: match, Command: h.Command, TimeoutSec: timeout}
					switch to {
					case record.HookPreTool:
						c.PreTool = append(c.PreTool, spec)
					case record.HookPostTool:
						c.PostTool = append(c.PostTool, spec)
					case record.HookPrompt:
						c.Prompt = append(c.Prompt, spec)
					case record.HookStop:
						c.Stop = append(c.Stop, spec)
					}
				}
			}
		}
	}
	return c, skipped, nil
}

// claudeMatch reads a Claude Code matcher as rein's matches: one per tool it names ("" for every
// tool), or why it cannot.
func claudeMatch(m string) ([]string, string) {
	m = strings.TrimSpace(m)
	if m == "" || m == "*" || m == ".*" {
		return []string{""}, ""
	}
	var out []string
	for _, name := range strings.Split(m, "|") {
		name = strings.TrimSpace(name)
		if strings.ContainsAny(name, `.*+?()[]{}^$\`) {
			return nil, "a regular expression rein does not read: write the tool names, joined by |"
		}
		to, ok := claudeTools[name]
		if !ok {
			return nil, fmt.Sprintf("rein has no tool like %s (it has %s)", name, strings.Join(claudeToolNames(), ", "))
		}
		if !contains(out, to) {
			out = append(out, to)
		}
	}
	return out, ""
}

func claudeToolNames() []string {
	names := make([]string, 0, len(claudeTools))
	for n := range claudeTools {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

// claudeEventName is Claude Code's name of a rein event, for the payload's hook_event_name.
func claudeEventName(event string) string {
	for k, v := range claudeEvents {
		if v == event {
			return k
		}
	}
	return ""
}
