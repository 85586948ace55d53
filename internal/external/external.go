// Package external runs a conversation's turns in another agent program — Claude Code or Codex —
// behind rein's submissions, op ids and Stop. A Backend drives one program's protocol; the agent
// (internal/agent) records what the Backend reports, so the record stays the one truth and
// everything above the agent (the host's submissions, withdrawals, Stop) is unchanged.
//
// The contract a Backend keeps, whatever its program:
//   - Turn returns only once the turn is over and, when the program was killed, once its whole
//     process tree is gone. No process of the program outlives a Turn that ended by a Stop, a
//     crash or an error; a program kept between turns is killed, tree and all, by Close.
//   - A Stop is ctx ending. Before the program has initialised, it is killed at once. While a turn
//     runs, it is interrupted through the program's own protocol, given at most InterruptGrace to
//     end the turn, then its process group is ended. The Result is StatusInterrupted either way,
//     and its Session still names the external session, so the next Turn resumes it.
//   - A request of the program's for permission goes to Sink.Approve; one still waiting when the
//     turn ends is answered deny.
//   - Errors are reported as the program states them (Claude Code's is_error, Codex's turn status),
//     and a program that dies mid-turn gives StatusFailed with its exit status and the end of its
//     standard error, never a made-up reply.
//   - A program that no longer has the session Turn.Resume names (its files deleted, another
//     machine) refuses it before the turn begins: the Result is StatusFailed with an Err wrapping
//     ErrSessionGone, and nothing of the turn was played.
package external

import (
	"context"
	"encoding/json"
	"errors"
	"time"
)

// ErrSessionGone is wrapped by a Turn's error when the program refused to resume the session
// Turn.Resume names because it no longer has it (see the package doc).
var ErrSessionGone = errors.New("the program no longer has the session to resume")

// InterruptGrace is how long a running turn is given to end after the program is asked to
// interrupt it, before its process group is ended.
const InterruptGrace = 2 * time.Second

// The back-ends rein knows.
const (
	KindClaude = "claude" // Claude Code: claude -p --input-format stream-json --output-format stream-json
	KindCodex  = "codex"  // Codex: codex app-server (JSON-RPC over stdio)
)

// Backend drives one external agent program.
type Backend interface {
	// Kind names the back-end: KindClaude or KindCodex.
	Kind() string
	// Check runs the installed program to learn its version, and refuses, saying why and what to
	// install, a program whose protocol the back-end does not know.
	Check(ctx context.Context) (version string, err error)
	// Turn runs one turn of the conversation: the program takes t.Prompt, continuing t.Resume when
	// it is set. It reports what happens through sink as it happens and returns when the turn has
	// ended (see the package doc for a Stop).
	Turn(ctx context.Context, t Turn, sink Sink) Result
	// Close ends whatever the back-end keeps between turns, process tree and all.
	Close() error
}

// Turn is one turn put to a program.
type Turn struct {
	Prompt string
	Resume string // the external session (Claude Code) or thread (Codex) to continue; "" starts one
	Cwd    string // the workspace the program works in
	Model  string // the model the program is asked to use; "" leaves the program's default
	// Mode is rein's permission mode (ask, workspace, full, read-only), mapped onto the program's
	// own: in ask the program's permission requests come to Sink.Approve.
	Mode string
	// Env is the program's environment (the caller's, with what the program needs: its own
	// configuration home, the provider's address and key). Nil means the caller's environment.
	Env []string
}

// Sink receives what a program does during a Turn. Its methods are called from the Turn's
// goroutine, in the order things happened.
type Sink interface {
	// Started reports the external session's id and the program's version, as soon as the
	// program has said them (before any Item of the turn).
	Started(session, version string) error
	// Item reports one thing the program did.
	Item(it Item) error
	// Approve puts a permission request of the program's to the person and waits for the answer;
	// it answers false when ctx ends first.
	Approve(ctx context.Context, a Approval) bool
}

// The kinds of Item.
const (
	ItemText       = "text"        // assistant text (a part of the reply, or an interim message)
	ItemThinking   = "thinking"    // reasoning the program shows
	ItemToolCall   = "tool_call"   // the program calls one of its tools (Name; Text says what)
	ItemToolResult = "tool_result" // a tool call's result (ID is the call's)
	ItemCommand    = "command"     // a shell command the program runs (Codex's command execution)
	ItemFileChange = "file_change" // files the program changed
	ItemRetry      = "retry"       // the program waits to retry its provider (a 429, a 5xx)
	ItemError      = "error"       // an error the program reports without ending the turn
)

// Item is one thing a program did, as a person reads it.
type Item struct {
	ID     string          `json:"id,omitempty"` // the program's id for it, when it has one
	Kind   string          `json:"kind"`
	Name   string          `json:"name,omitempty"`   // the tool's or command's name
	Text   string          `json:"text,omitempty"`   // what it said or did, for a person
	Status string          `json:"status,omitempty"` // for calls: started, completed, failed, declined
	Raw    json.RawMessage `json:"raw,omitempty"`    // the program's own item, as it sent it
}

// Approval is a program's request for permission.
type Approval struct {
	ID      string          // the program's id for the request
	Tool    string          // the tool or command it wants to run
	Summary string          // what a person reads: the command line, the file and the change
	Input   json.RawMessage // the request's input, as the program sent it
}

// The ends of a Turn.
const (
	StatusCompleted   = "completed"
	StatusInterrupted = "interrupted"
	StatusFailed      = "failed"
)

// Result is how a Turn ended.
type Result struct {
	Status  string
	Reply   string // the turn's final assistant text (empty when there was none)
	Session string // the external session or thread, to resume in the next Turn
	Err     error  // for StatusFailed: what the program said, or how it died
}
