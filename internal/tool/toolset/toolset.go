// Package toolset chooses the tools a session's model is offered. Models do their best work with
// the tools they were trained on, so the set follows the model:
//
//   - Claude models on Anthropic's API get Anthropic's client tool types, the text editor
//     (str_replace_based_edit_tool) and bash, carried out by rein's file tools and shell;
//   - OpenAI's models get apply_patch, Codex's patch tool (a free-form custom tool on the
//     Responses API for the models that take custom tools, a function elsewhere), beside rein's
//     bash and read_file;
//   - every other model gets rein's own function tools.
//
// glob and grep are in every set. Every set's tools are rein's one tool layer underneath: the
// same workspace confinement (os.Root), the same permission rules (a call of a stand-in tool is
// judged as the rein tool whose work it does, tool.Access.As), the same outcomes and the same
// Stop. The set chosen is recorded with the session (session_started, session_resumed); a fork
// or resume onto another model chooses again, and the history's calls, made with the old set,
// stay valid on every wire: they are ordinary tool calls with object arguments.
package toolset

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/reinhq/rein/internal/provider"
	"github.com/reinhq/rein/internal/provider/anthropic"
	"github.com/reinhq/rein/internal/record"
	"github.com/reinhq/rein/internal/tool"
	fstool "github.com/reinhq/rein/internal/tool/fs"
	"github.com/reinhq/rein/internal/tool/shell"
)

// Wire is the API format a session's requests are sent in.
type Wire string

// The wires.
const (
	Anthropic Wire = "anthropic"
	Chat      Wire = "chat"
	Responses Wire = "responses"
)

// Set is a tool set, as the record names it.
type Set string

// The tool sets.
const (
	// Rein is rein's own function tools: bash, read_file, write_file, edit_file, glob, grep.
	Rein Set = "rein"
	// Claude is Anthropic's text editor (text_editor_20250728) and bash (bash_20250124) tool
	// types, glob and grep.
	Claude Set = "claude"
	// Claude37 is Claude Sonnet 3.7's versions: text_editor_20250124 (str_replace_editor) and
	// bash_20250124.
	Claude37 Set = "claude-3.7"
	// Codex is bash, apply_patch as a free-form custom tool, read_file, glob, grep.
	Codex Set = "codex"
	// CodexFunction is Codex with apply_patch as a function (Chat, or a model without custom
	// tools).
	CodexFunction Set = "codex-function"
)

// For chooses the set for model on wire.
func For(wire Wire, model string) Set {
	m := strings.ToLower(model)
	if i := strings.LastIndexByte(m, '/'); i >= 0 {
		m = m[i+1:] // anthropic/claude-sonnet-4.5, openai/gpt-5 as a router names them
	}
	switch {
	case strings.Contains(m, "claude"):
		if wire != Anthropic {
			return Rein // the tool types are Anthropic's API's own
		}
		switch {
		case strings.Contains(m, "3-7") || strings.Contains(m, "3.7"):
			return Claude37
		case strings.Contains(m, "claude-2") || strings.Contains(m, "claude-instant") || strings.Contains(m, "claude-3"):
			return Rein // before the text editor tool
		}
		return Claude
	case openAIModel(m):
		if wire == Responses && customTools(m) {
			return Codex
		}
		return CodexFunction
	}
	return Rein
}

// openAIModel reports whether m is one of OpenAI's models (GPT-4.1 and later, the o-series,
// codex), which Codex's apply_patch was made for.
func openAIModel(m string) bool {
	switch {
	case strings.HasPrefix(m, "gpt-4.1"), strings.HasPrefix(m, "gpt-5"), strings.HasPrefix(m, "codex"),
		strings.Contains(m, "-codex"):
		return true
	case len(m) >= 2 && m[0] == 'o' && '1' <= m[1] && m[1] <= '9':
		return true
	}
	return false
}

// customTools reports whether m takes free-form custom tools (GPT-5 and later, codex models).
func customTools(m string) bool {
	return strings.HasPrefix(m, "gpt-5") || strings.HasPrefix(m, "codex") || strings.Contains(m, "-codex")
}

// Parse reads a set as the record names it; "" (a record from before tool sets) is Rein.
func Parse(s string) (Set, error) {
	switch set := Set(s); set {
	case "":
		return Rein, nil
	case Rein, Claude, Claude37, Codex, CodexFunction:
		return set, nil
	}
	return "", fmt.Errorf("unknown tool set %q (the sets are rein, claude, claude-3.7, codex, codex-function)", s)
}

// Tools builds the set's tools over the shell sh and the workspace ws, in the order they are
// best offered.
func (s Set) Tools(sh *shell.Tool, ws *fstool.Workspace) []tool.Tool {
	switch s {
	case Claude:
		return []tool.Tool{Bash(sh), ws.Editor(anthropic.TextEditorType, anthropic.TextEditorName), ws.Glob(), ws.Grep()}
	case Claude37:
		return []tool.Tool{Bash(sh), ws.Editor("text_editor_20250124", "str_replace_editor"), ws.Glob(), ws.Grep()}
	case Codex, CodexFunction:
		return []tool.Tool{sh, ws.ApplyPatch(s == Codex), ws.ReadFile(), ws.Glob(), ws.Grep()}
	}
	return append([]tool.Tool{sh}, ws.Tools()...)
}

// Names lists the names of every set's tools and of the rein tools their calls are judged as:
// the names a permission rule may give, whatever set a session gets.
func Names() []string {
	return []string{"bash", "read_file", "write_file", "edit_file", "glob", "grep", "apply_patch",
		anthropic.TextEditorName, "str_replace_editor"}
}

// bashType is Anthropic's bash tool type carried out by rein's bash tool.
type bashType struct{ sh *shell.Tool }

// Bash returns Anthropic's bash tool type (bash_20250124) over rein's bash tool: a command runs
// as bash runs it, with the same rules, sandbox, output caps, timeout and Stop; restart starts the
// shell afresh in the workspace root.
func Bash(sh *shell.Tool) tool.Tool { return bashType{sh} }

const bashSchema = `{"type":"object","properties":{` +
	`"command":{"type":"string","description":"The bash command line to run."},` +
	`"restart":{"type":"boolean","description":"Start the shell afresh."}}}`

func (b bashType) Spec() provider.Tool {
	s := b.sh.Spec()
	return provider.Tool{Name: anthropic.BashName, Type: anthropic.BashType, Description: s.Description, Schema: json.RawMessage(bashSchema)}
}

type bashArgs struct {
	Command *string `json:"command"`
	Restart bool    `json:"restart"`
}

// Access is the bash tool's for a command. A restart alone runs nothing; it is judged as a
// command that names nothing.
func (b bashType) Access(args json.RawMessage) tool.Access {
	var a bashArgs
	json.Unmarshal(args, &a)
	if a.Command == nil {
		return tool.Access{Effect: tool.EffectExec}
	}
	return b.sh.Access(args)
}

func (b bashType) Run(ctx context.Context, call tool.Call) tool.Result {
	var a bashArgs
	if err := json.Unmarshal(call.Args, &a); err != nil {
		return tool.Failure("invalid arguments for bash: %v", err)
	}
	switch {
	case a.Restart && a.Command == nil:
		if ctx.Err() != nil {
			return tool.Result{Content: "not run: the session was stopped before it started", IsError: true, Outcome: record.NotExecuted}
		}
		b.sh.Restart()
		return tool.Success("the shell was restarted: the next command starts in the workspace root " + b.sh.Root())
	case a.Command == nil:
		return tool.Failure("give command, the bash command line to run, or restart: true")
	}
	if a.Restart {
		b.sh.Restart()
	}
	args, _ := json.Marshal(map[string]string{"command": *a.Command})
	call.Args = args
	return b.sh.Run(ctx, call)
}
