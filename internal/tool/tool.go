// Package tool owns what every tool has in common: the Tool interface, the registry the agent
// offers the model, argument validation against each tool's schema, the permission policy (modes,
// allow/ask/deny rules, the person's approval), and truthful outcomes. Runner puts a call through
// all of them, in that order. The tools themselves live in one package per family beneath this one.
package tool

import (
	"context"
	"encoding/json"

	"github.com/reinhq/rein/internal/provider"
	"github.com/reinhq/rein/internal/record"
)

// Call is one tool call as the model made it (arguments already admitted as a JSON object).
type Call struct {
	ID   string
	Name string
	Args json.RawMessage
	// Preview and Offer are set by the Runner for its Approver, when a call is put to the person:
	// what the call would change (Previewer), and the rules that would allow calls like it for
	// the rest of the conversation (Offer).
	Preview string
	Offer   []Rule
}

// Result is what running a call produced. Content is the text the model will read (the agent adds
// the TURN trailer); Outcome is truthful (DESIGN §3.5). Images, when set, are pictures the model
// sees after the text (image parts: a read_file of a PNG), for a model that takes images.
type Result struct {
	Content  string
	IsError  bool
	Outcome  record.Outcome
	ExitCode *int
	Images   []record.Part
	// Held, when set, says who held the call ("hook": a gate's Verdict Hold; "approval": an
	// approver's ErrPark): it was not run, Content says why, and the session parks on it instead
	// of answering it.
	Held string
	// Notes are records of what was decided about the call (the hooks' answers), for the agent
	// to write before the call's answer.
	Notes []record.Payload
}

// Tool is one function the model may call. Run must return promptly once ctx is cancelled, with
// Outcome Interrupted if it had started doing anything.
type Tool interface {
	Spec() provider.Tool
	Run(ctx context.Context, call Call) Result
}
