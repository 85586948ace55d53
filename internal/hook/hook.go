// Package hook runs the person's hooks: commands rein runs at four points of the loop — before a
// tool call (pre_tool), after it (post_tool), on a submitted prompt (prompt) and when an exchange
// ends (stop) — each given a JSON payload on its standard input and answering as Claude Code's
// hooks answer: exit 0 with no output passes; exit 2 refuses, its standard error the reason; or a
// JSON object on standard output, {"decision": "pass" | "refuse" | "ask" | "hold", "reason": "…"}.
//
// A hook that cannot start, crashes, runs past its timeout or answers what rein cannot read
// refuses, saying so: it never passes silently. Each hook runs in a process group of its own with
// a watchdog in it that kills the group once rein is gone, however rein died; a Stop or a timeout
// ends the group (SIGTERM, then SIGKILL after a grace period), and the group is killed once the
// hook has answered, so nothing a hook started outlives it.
//
// Every answer becomes a record.Hook event: which hook, its answer and reason, how long it took.
// The package decides nothing about the session: its callers (the tool runner through tool.Gate,
// the agent) write the events and act on the answers.
package hook

import (
	"fmt"
	"strings"
	"time"

	"github.com/reinhq/rein/internal/record"
	"github.com/reinhq/rein/internal/tool"
)

// Config is the hooks of one configuration file, as the file spells them:
//
//	[[hooks.pre_tool]]
//	match = "bash(git push*)"
//	command = "./scripts/guard.sh"
//	timeout_sec = 10
type Config struct {
	PreTool  []Spec `toml:"pre_tool,omitempty"`
	PostTool []Spec `toml:"post_tool,omitempty"`
	Prompt   []Spec `toml:"prompt,omitempty"`
	Stop     []Spec `toml:"stop,omitempty"`
}

// Empty reports whether c names no hook.
func (c Config) Empty() bool {
	return len(c.PreTool)+len(c.PostTool)+len(c.Prompt)+len(c.Stop) == 0
}

// Spec is one hook as a file writes it.
type Spec struct {
	// Match is a tool name, or a rule such as "bash(git push*)" matched as a deny rule is (see
	// tool.Rule); empty or "*" matches every call. Only the tool events take it.
	Match      string `toml:"match,omitempty"`
	Command    string `toml:"command"`
	TimeoutSec int    `toml:"timeout_sec,omitzero"`
}

// DefaultTimeout is a hook's timeout when its spec gives none; MaxTimeout is the longest one.
const (
	DefaultTimeout = 60 * time.Second
	MaxTimeout     = 10 * time.Minute
)

// Hook is one compiled hook.
type Hook struct {
	Event   string // record.HookPreTool, ...
	Match   *tool.Rule
	Command string
	Timeout time.Duration
	// Source is the file the hook came from; Dir is where its command runs (the workspace).
	Source string
}

// Compile checks c, read from the file source, and returns its hooks in the order the file gives
// them, each event's in turn. A refusal names the file, the hook and what to write instead.
func Compile(c Config, source string) ([]Hook, error) {
	var out []Hook
	for _, ev := range []struct {
		name  string
		specs []Spec
	}{{record.HookPreTool, c.PreTool}, {record.HookPostTool, c.PostTool}, {record.HookPrompt, c.Prompt}, {record.HookStop, c.Stop}} {
		for i, s := range ev.specs {
			where := fmt.Sprintf("%s: hooks.%s[%d]", source, ev.name, i+1)
			if strings.TrimSpace(s.Command) == "" {
				return nil, fmt.Errorf("%s has no command: give it command = \"...\" (run by bash in the workspace)", where)
			}
			h := Hook{Event: ev.name, Command: s.Command, Timeout: DefaultTimeout, Source: source}
			switch {
			case s.TimeoutSec < 0:
				return nil, fmt.Errorf("%s has timeout_sec = %d: give a number of seconds above 0 (or leave it out for %s)", where, s.TimeoutSec, DefaultTimeout)
			case time.Duration(s.TimeoutSec)*time.Second > MaxTimeout:
				return nil, fmt.Errorf("%s has timeout_sec = %d: the longest is %d", where, s.TimeoutSec, int(MaxTimeout.Seconds()))
			case s.TimeoutSec > 0:
				h.Timeout = time.Duration(s.TimeoutSec) * time.Second
			}
			if m := strings.TrimSpace(s.Match); m != "" && m != "*" {
				if ev.name == record.HookPrompt || ev.name == record.HookStop {
					return nil, fmt.Errorf("%s has match = %q, but %s hooks are not about a tool call: leave match out", where, s.Match, ev.name)
				}
				r, err := tool.ParseRule(m)
				if err != nil {
					return nil, fmt.Errorf("%s: %v", where, err)
				}
				h.Match = &r
			}
			out = append(out, h)
		}
	}
	return out, nil
}

// Check refuses a hook whose match names no tool among names, as a rule naming none is refused.
func Check(hs []Hook, names []string) error {
	for _, h := range hs {
		if h.Match == nil {
			continue
		}
		if err := h.Match.Check(names); err != nil {
			return fmt.Errorf("%s: a %s hook's match: %v", h.Source, h.Event, err)
		}
	}
	return nil
}

func (h Hook) applies(call tool.Call, a tool.Access) bool {
	return h.Match == nil || h.Match.Matches(call.Name, a)
}
