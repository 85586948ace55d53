package record

import "encoding/json"

// Class separates what acts on the fold (protocol) from durable evidence that never reaches the
// model (event).
type Class string

// The two classes of record.
const (
	Protocol Class = "protocol"
	Event    Class = "event"
)

// Kind names a record's payload. Kinds are append-only: a kind once written is never renamed,
// removed or given a different meaning.
type Kind string

// Protocol kinds (DESIGN §3.5).
const (
	KindSystem           Kind = "system"
	KindUserPrompt       Kind = "user_prompt"
	KindSteering         Kind = "steering"
	KindImport           Kind = "import"
	KindAssistantMessage Kind = "assistant_message"
	KindToolResults      Kind = "tool_results"
	KindEvicted          Kind = "evicted"
	KindRewound          Kind = "rewound"
	KindCleared          Kind = "cleared"
	KindInherited        Kind = "inherited"
)

// Event kinds (DESIGN §3.6 and the host's submission lifecycle, §12.2).
const (
	KindSessionStarted Kind = "session_started"
	KindSessionResumed Kind = "session_resumed"
	KindTurnStarted    Kind = "turn_started"
	KindUsage          Kind = "usage"
	KindProviderError  Kind = "provider_error"
	KindRetryScheduled Kind = "retry_scheduled"
	KindToolStarted    Kind = "tool_started"
	KindToolFinished   Kind = "tool_finished"
	KindCancelled      Kind = "cancelled"
	KindQuiesced       Kind = "quiesced"
	KindRepaired       Kind = "repaired"
	KindNudge          Kind = "nudge"
	KindHold           Kind = "hold"
	KindReleased       Kind = "released"
	KindModelChanged   Kind = "model_changed"
	KindPressure       Kind = "pressure"
	KindFailure        Kind = "failure"
	KindSubmission     Kind = "submission"
	KindStop           Kind = "stop"
	KindRenamed        Kind = "renamed"
	KindClosed         Kind = "closed"
	KindApproval       Kind = "approval"
)

// Payload is the body of a record. Each payload type answers its own kind.
type Payload interface {
	Kind() Kind
}

// kinds maps every known kind to its class and a constructor of an empty payload. Decoding refuses
// any kind not listed here.
var kinds = map[Kind]struct {
	class Class
	new   func() Payload
}{
	KindSystem:           {Protocol, func() Payload { return new(System) }},
	KindUserPrompt:       {Protocol, func() Payload { return new(UserPrompt) }},
	KindSteering:         {Protocol, func() Payload { return new(Steering) }},
	KindImport:           {Protocol, func() Payload { return new(Import) }},
	KindAssistantMessage: {Protocol, func() Payload { return new(AssistantMessage) }},
	KindToolResults:      {Protocol, func() Payload { return new(ToolResults) }},
	KindEvicted:          {Protocol, func() Payload { return new(Evicted) }},
	KindRewound:          {Protocol, func() Payload { return new(Rewound) }},
	KindCleared:          {Protocol, func() Payload { return new(Cleared) }},
	KindInherited:        {Protocol, func() Payload { return new(Inherited) }},

	KindSessionStarted: {Event, func() Payload { return new(SessionStarted) }},
	KindSessionResumed: {Event, func() Payload { return new(SessionResumed) }},
	KindTurnStarted:    {Event, func() Payload { return new(TurnStarted) }},
	KindUsage:          {Event, func() Payload { return new(UsageReported) }},
	KindProviderError:  {Event, func() Payload { return new(ProviderError) }},
	KindRetryScheduled: {Event, func() Payload { return new(RetryScheduled) }},
	KindToolStarted:    {Event, func() Payload { return new(ToolStarted) }},
	KindToolFinished:   {Event, func() Payload { return new(ToolFinished) }},
	KindCancelled:      {Event, func() Payload { return new(Cancelled) }},
	KindQuiesced:       {Event, func() Payload { return new(Quiesced) }},
	KindRepaired:       {Event, func() Payload { return new(Repaired) }},
	KindNudge:          {Event, func() Payload { return new(Nudge) }},
	KindHold:           {Event, func() Payload { return new(Hold) }},
	KindReleased:       {Event, func() Payload { return new(Released) }},
	KindModelChanged:   {Event, func() Payload { return new(ModelChanged) }},
	KindPressure:       {Event, func() Payload { return new(Pressure) }},
	KindFailure:        {Event, func() Payload { return new(Failure) }},
	KindSubmission:     {Event, func() Payload { return new(Submission) }},
	KindStop:           {Event, func() Payload { return new(Stop) }},
	KindRenamed:        {Event, func() Payload { return new(Renamed) }},
	KindClosed:         {Event, func() Payload { return new(Closed) }},
	KindApproval:       {Event, func() Payload { return new(Approval) }},
	KindMCPServer:      {Event, func() Payload { return new(MCPServer) }},

	KindCheckpoint:          {Event, func() Payload { return new(Checkpoint) }},
	KindFilesRestoreStarted: {Event, func() Payload { return new(FilesRestoreStarted) }},
	KindFilesRestored:       {Event, func() Payload { return new(FilesRestored) }},
	KindHook:                {Event, func() Payload { return new(Hook) }},

	KindBackend:         {Event, func() Payload { return new(Backend) }},
	KindExternalSession: {Event, func() Payload { return new(ExternalSession) }},
	KindExternalItem:    {Event, func() Payload { return new(ExternalItem) }},
}

// ClassOf returns the class of a known kind, and false for an unknown one.
func ClassOf(k Kind) (Class, bool) {
	e, ok := kinds[k]
	return e.class, ok
}

// New returns an empty payload of a known kind, to decode its JSON into (a client of the host's
// events stream does), and false for an unknown kind.
func New(k Kind) (Payload, bool) {
	e, ok := kinds[k]
	if !ok {
		return nil, false
	}
	return e.new(), true
}

// Kinds returns every known kind, protocol kinds first, in declaration order of the tables above.
func Kinds() []Kind {
	return []Kind{
		KindSystem, KindUserPrompt, KindSteering, KindImport, KindAssistantMessage, KindToolResults,
		KindEvicted, KindRewound, KindCleared, KindInherited,
		KindSessionStarted, KindSessionResumed, KindTurnStarted, KindUsage, KindProviderError,
		KindRetryScheduled, KindToolStarted, KindToolFinished, KindCancelled, KindQuiesced,
		KindRepaired, KindNudge, KindHold, KindReleased, KindModelChanged, KindPressure, KindFailure,
		KindSubmission, KindStop, KindRenamed, KindClosed, KindApproval, KindMCPServer,
		KindCheckpoint, KindFilesRestoreStarted, KindFilesRestored, KindHook,
		KindBackend, KindExternalSession, KindExternalItem,
	}
}

// ---- protocol payloads --------------------------------------------------------------------------

// System sets the prompt every later request goes out under. It is sequencing-neutral and never a
// transcript message.
type System struct {
	Text string `json:"text"`
}

// UserPrompt opens a user turn.
type UserPrompt struct {
	Turn        int64        `json:"turn"`
	Text        string       `json:"text"`
	Attachments []Attachment `json:"attachments,omitempty"`
	// Submission is the host's submission id this prompt delivers, when it came through the host.
	Submission string `json:"submission,omitempty"`
}

// Steering extends the newest turn with a user-voice line: a message typed while the agent worked,
// delivered at a turn boundary, or a harness nudge or pressure reminder (Source says which).
type Steering struct {
	Text       string `json:"text"`
	Source     string `json:"source,omitempty"` // "user" (default), "nudge", "pressure"
	Submission string `json:"submission,omitempty"`
}

// Import is a harness-authored or imported turn under a fresh id: a resume note, a message brought
// from another product's session, a child agent's reply (Source "child"). It is never the person's
// voice, though it renders as a user-role message.
type Import struct {
	Turn    int64   `json:"turn"`
	Message Message `json:"message"`
	Source  string  `json:"source"`
	// Child is the session id of the child agent whose reply this is, for Source "child".
	Child string `json:"child,omitempty"`
	// External is the external program's session whose reply this is, for Source "claude" or
	// "codex" (package external).
	External string `json:"external,omitempty"`
}

// AssistantMessage opens an assistant turn with one admitted message; its tool calls are what the
// log owes next.
type AssistantMessage struct {
	Turn       int64  `json:"turn"`
	Parts      []Part `json:"parts"`
	StopReason string `json:"stop_reason"`
	Model      string `json:"model,omitempty"`
	Usage      Usage  `json:"usage"`
}

// ToolResult answers one owed tool call. Images, added later (see the package doc), are the
// pictures the result carries after its text, each an image part (PartImage).
type ToolResult struct {
	CallID  string  `json:"call_id"`
	Content string  `json:"content"`
	IsError bool    `json:"is_error,omitempty"`
	Outcome Outcome `json:"outcome"`
	Images  []Part  `json:"images,omitempty"`
}

// ToolResults answers every owed call at once, exactly.
type ToolResults struct {
	Results []ToolResult `json:"results"`
}

// Authority says who made an eviction.
type Authority string

// The authorities of an eviction.
const (
	ByModel   Authority = "model"
	ByHarness Authority = "harness"
	ByUser    Authority = "user"
)

// Evicted leaves a residue over the frontier run [From, To].
type Evicted struct {
	From int64     `json:"from"`
	To   int64     `json:"to"`
	Note string    `json:"note"`
	By   Authority `json:"by"`
	Op   string    `json:"op,omitempty"` // the host operation that asked for it, if any
}

// Rewound withdraws every turn from Anchor on.
type Rewound struct {
	Anchor int64  `json:"anchor"`
	Op     string `json:"op,omitempty"` // the host operation that asked for it, if any
}

// Cleared withdraws every turn.
type Cleared struct {
	Op string `json:"op,omitempty"` // the host operation that asked for it, if any
}

// InheritedRow is one row of a parent's table as a child inherits it.
type InheritedRow struct {
	Turn      int64   `json:"turn"`
	Role      Role    `json:"role"`
	Label     string  `json:"label"`
	Bytes     int64   `json:"bytes"`
	Withdrawn bool    `json:"withdrawn,omitempty"`
	Pointer   Pointer `json:"pointer"`
	// Messages is the turn's admissible prefix (the longest run owing no tool result), inline, for
	// a row resident in the parent's context; empty for withdrawn and evicted rows.
	Messages []Message `json:"messages,omitempty"`
}

// Span is a residue as a parent hands it to a child.
type Span struct {
	From int64     `json:"from"`
	To   int64     `json:"to"`
	Note string    `json:"note"`
	By   Authority `json:"by"`
}

// Inherited links a child's context to its parent's. It is admissible only as the first protocol
// record of a session.
type Inherited struct {
	Parent   string         `json:"parent"`
	At       int64          `json:"at"`   // the newest parent turn inherited
	High     int64          `json:"high"` // the highest turn id of the parent's lineage
	Rows     []InheritedRow `json:"rows"`
	Residues []Span         `json:"residues,omitempty"`
}

func (*System) Kind() Kind           { return KindSystem }
func (*UserPrompt) Kind() Kind       { return KindUserPrompt }
func (*Steering) Kind() Kind         { return KindSteering }
func (*Import) Kind() Kind           { return KindImport }
func (*AssistantMessage) Kind() Kind { return KindAssistantMessage }
func (*ToolResults) Kind() Kind      { return KindToolResults }
func (*Evicted) Kind() Kind          { return KindEvicted }
func (*Rewound) Kind() Kind          { return KindRewound }
func (*Cleared) Kind() Kind          { return KindCleared }
func (*Inherited) Kind() Kind        { return KindInherited }

// ---- events -------------------------------------------------------------------------------------

// SessionStarted opens a session's record.
type SessionStarted struct {
	Session       string `json:"session"`
	Provider      string `json:"provider"`
	Model         string `json:"model"`
	ContextWindow int64  `json:"context_window"`
	Cwd           string `json:"cwd"`
	Version       string `json:"version"`
	Parent        string `json:"parent,omitempty"`
	Title         string `json:"title,omitempty"`
	Op            string `json:"op,omitempty"` // the host operation that created it
	// BaseURL is the API base URL the provider was reached at, when not its public endpoint
	// (a local server, a proxy), without any credentials it held; a resume goes back to it.
	BaseURL string `json:"base_url,omitempty"`
	// PermissionMode is the permission mode the session runs under; a resume keeps it.
	PermissionMode string `json:"permission_mode,omitempty"`
	// Thinking is the extended-thinking budget in tokens the session was started with (0: off).
	Thinking int `json:"thinking,omitempty"`
	// Effort is the reasoning effort the session was started with ("": the model's default).
	Effort string `json:"effort,omitempty"`
	// Sandbox is the OS sandbox the session's commands run under, as rein says it
	// ("workspace-write, no network", "off"); "" in records from before there was one.
	Sandbox string `json:"sandbox,omitempty"`
	// Tools is the tool set the model is offered (package toolset: "claude", "codex", "rein");
	// "" in records from before there were tool sets, which offered rein's own.
	Tools string `json:"tools,omitempty"`
	// WebSearch says the provider's own web search tool was offered (--web-search); a resume on
	// the same provider keeps it.
	WebSearch bool `json:"web_search,omitempty"`
	// Source is the foreign session an imported session was made from (rein import).
	Source *Origin `json:"source,omitempty"`
}

// Origin names the foreign session an imported session was made from: its product
// ("claude-code" or "codex"), its id there, the file it was read from and the version that wrote
// it.
type Origin struct {
	Kind    string `json:"kind"`
	ID      string `json:"id,omitempty"`
	Path    string `json:"path,omitempty"`
	Version string `json:"version,omitempty"`
}

// SessionResumed marks a process taking a session up again.
type SessionResumed struct {
	Provider      string `json:"provider"`
	Model         string `json:"model"`
	ContextWindow int64  `json:"context_window"`
	Cwd           string `json:"cwd"`
	Version       string `json:"version"`
	// BaseURL and PermissionMode are the settings in force from here on, as in SessionStarted.
	BaseURL        string `json:"base_url,omitempty"`
	PermissionMode string `json:"permission_mode,omitempty"`
	// Thinking and Effort are the reasoning settings in force from here on, as in SessionStarted.
	Thinking int    `json:"thinking,omitempty"`
	Effort   string `json:"effort,omitempty"`
	// Sandbox is the OS sandbox in force from here on, as in SessionStarted: chosen by each run,
	// not kept from the last.
	Sandbox string `json:"sandbox,omitempty"`
	// Tools is the tool set in force from here on, as in SessionStarted: chosen for the model
	// each run, so a resume on another model offers that model's set.
	Tools string `json:"tools,omitempty"`
	// WebSearch says whether the provider's web search is offered from here on, as in
	// SessionStarted.
	WebSearch bool `json:"web_search,omitempty"`
}

// TurnStarted marks a request going out (Attempt counts from 1 within one turn).
type TurnStarted struct {
	Attempt int `json:"attempt"`
}

// UsageReported carries a request's usage when it is not already inside an assistant message.
type UsageReported struct {
	Usage Usage `json:"usage"`
}

// ProviderError is a classified provider failure.
type ProviderError struct {
	Class   string `json:"class"`
	Status  int    `json:"status,omitempty"`
	Type    string `json:"type,omitempty"`
	Message string `json:"message"`
	Attempt int    `json:"attempt,omitempty"`
}

// RetryScheduled is one retry wait.
type RetryScheduled struct {
	Attempt int    `json:"attempt"`
	DelayMs int64  `json:"delay_ms"`
	Class   string `json:"class"`
}

// ToolStarted is written, and synced, before a tool call runs: it is what lets quiesce tell an
// interrupted call from one never executed.
type ToolStarted struct {
	CallID string `json:"call_id"`
	Name   string `json:"name"`
}

// ToolFinished records how a tool call ended, as soon as it ends (DESIGN §3.3). Content and
// IsError are the call's result exactly as the batch's tool_results will carry it (redacted, its
// TURN trailer included), so that a crash before the batch is answered keeps it: a resume answers
// the call with this outcome and content instead of calling it interrupted.
//
// Content is optional. An empty one says the result was not kept here: a record written before
// the field existed, or a result that rests on records written only with the batch's results (a
// context eviction, say), or one too large for a line. A resume answers such a call interrupted.
type ToolFinished struct {
	CallID     string  `json:"call_id"`
	DurationMs int64   `json:"duration_ms"`
	ExitCode   *int    `json:"exit_code,omitempty"`
	Outcome    Outcome `json:"outcome"`
	Content    string  `json:"content,omitempty"`
	IsError    bool    `json:"is_error,omitempty"`
}

// Cancelled records a Stop reaching the exchange.
type Cancelled struct {
	Reason string `json:"reason"`
}

// Quiesced records that the log was settled: what was owed was answered, for Reason.
type Quiesced struct {
	Reason   string   `json:"reason"` // replied, cancelled, aborted, limit, crashed
	Answered []string `json:"answered,omitempty"`
}

// Quiesce reasons (Quiesced.Reason), also the reason of the submissions an exchange answered or
// cancelled. The fold names them too (fold.Replied, ...), as these same values.
const (
	QuiescedReplied   = "replied"
	QuiescedCancelled = "cancelled"
	QuiescedAborted   = "aborted"
	QuiescedLimit     = "limit"
	QuiescedCrashed   = "crashed"
	QuiescedImported  = "imported" // an exchange brought from another product's session (rein import)
)

// Repaired records what admission changed in a provider's reply, with the original.
type Repaired struct {
	Turn     int64           `json:"turn"`
	What     string          `json:"what"`
	Original json.RawMessage `json:"original,omitempty"`
}

// Nudge records a harness nudge after an empty or truncated reply.
type Nudge struct {
	Reason string `json:"reason"`
	Count  int    `json:"count"`
}

// Hold parks the agent with its tool window open: the call CallID was not run, nor any after it in
// its batch, and the calls before it keep the results their tool_finished events kept. Reason says
// why, By who held it ("hook", or "approval" for a person's approval nobody answered). A record
// written before these fields existed says none of them.
type Hold struct {
	CallID string `json:"call_id,omitempty"`
	Reason string `json:"reason,omitempty"`
	By     string `json:"by,omitempty"`
}

// Released ends a hold: the held window is entered again, its calls put to the hooks and the
// person again, then run or refused. By says who released it (a resume, a message, a person in a
// UI); Op is the host operation that asked.
type Released struct {
	By string `json:"by,omitempty"`
	Op string `json:"op,omitempty"`
}

// ModelChanged records a switch of provider or model; Op is the host operation that asked for
// it, when a person did.
type ModelChanged struct {
	Provider      string `json:"provider"`
	Model         string `json:"model"`
	ContextWindow int64  `json:"context_window,omitempty"`
	Op            string `json:"op,omitempty"`
}

// Pressure records a context-pressure decision: a soft-line reminder, a hard-line eviction, or an
// eviction after the provider refused a request as too long (line context_length).
type Pressure struct {
	Line   string `json:"line"` // soft, hard or context_length
	Used   int64  `json:"used"`
	Window int64  `json:"window"`
	// Limit is what a provider's prompt-too-long refusal taught of the real context limit, in
	// tokens: the window the session keeps to from then on (0: nothing learned).
	Limit int64 `json:"limit,omitempty"`
}

// Failure records why an exchange or session ended in error, in words for a person.
type Failure struct {
	Message string `json:"message"`
}

// SubmissionState is where a host submission is in its life (DESIGN §12.2). The fold holds the
// table of which step may follow which (fold.Transitions).
type SubmissionState string

// The states of a submission. Delivered is never recorded by a submission event: the prompt or the
// steering that carries a message delivers it. Handed is the host's own step, never shown to
// clients as a state of its own: a message given to the running exchange, to be delivered as
// steering at its next turn boundary. A record written before handing was recorded has none.
const (
	SubmissionAccepted  SubmissionState = "accepted"
	SubmissionHanded    SubmissionState = "handed"
	SubmissionDelivered SubmissionState = "delivered"
	SubmissionAnswered  SubmissionState = "answered"
	SubmissionCancelled SubmissionState = "cancelled"
	SubmissionWithdrawn SubmissionState = "withdrawn"
	SubmissionRejected  SubmissionState = "rejected"
)

// Submission records one step of a host submission's lifecycle (DESIGN §12.2).
type Submission struct {
	ID          string          `json:"id"`
	Op          string          `json:"op,omitempty"`
	State       SubmissionState `json:"state"`
	Text        string          `json:"text,omitempty"`
	Attachments []Attachment    `json:"attachments,omitempty"`
	Queue       bool            `json:"queue,omitempty"`
	Reason      string          `json:"reason,omitempty"`
	Detail      string          `json:"detail,omitempty"`
}

// Stop records a Stop press accepted by the host, with its operation id and what it did: the
// submissions it withdrew and whether it interrupted a running exchange.
type Stop struct {
	Op          string   `json:"op"`
	Turn        int64    `json:"turn,omitempty"`
	Withdrawn   []string `json:"withdrawn,omitempty"`
	Interrupted bool     `json:"interrupted,omitempty"`
}

// Renamed records a conversation's new title.
type Renamed struct {
	Title string `json:"title"`
	Op    string `json:"op,omitempty"`
}

// Closed records that a conversation was closed.
type Closed struct {
	Op string `json:"op,omitempty"`
}

// Approval states.
const (
	ApprovalAsked   = "asked"
	ApprovalAllowed = "allowed"
	ApprovalDenied  = "denied"
)

// Approval records one step of a tool call the policy routed to the person (permission mode ask):
// asked (Name and Args, a summary of the arguments, say what), then allowed or denied (By says
// who answered, Op under which operation). An approval still asked when its exchange quiesces was
// never answered: the call was not run.
type Approval struct {
	CallID string `json:"call_id"`
	Name   string `json:"name,omitempty"`
	Args   string `json:"args,omitempty"`
	State  string `json:"state"`
	By     string `json:"by,omitempty"`
	Op     string `json:"op,omitempty"`
	// Diff, when asked, is what the call would change as the person was shown it: a unified diff
	// of the file as it was then (or why the call would fail).
	Diff string `json:"diff,omitempty"`
	// Rules, when asked, are the rules the person may grant for the rest of the conversation
	// instead of allowing the one call (tool.Rule as written); when allowed with Scope
	// ScopeConversation, the rules granted, which allow later calls they cover without asking.
	Rules []string `json:"rules,omitempty"`
	Scope string   `json:"scope,omitempty"`
}

// ScopeConversation is the scope of an answer that allows, beside the call, every later call of
// the conversation its rules cover (an Approval's Rules). An answer with no scope is for the one
// call.
const ScopeConversation = "conversation"

func (*SessionStarted) Kind() Kind { return KindSessionStarted }
func (*SessionResumed) Kind() Kind { return KindSessionResumed }
func (*TurnStarted) Kind() Kind    { return KindTurnStarted }
func (*UsageReported) Kind() Kind  { return KindUsage }
func (*ProviderError) Kind() Kind  { return KindProviderError }
func (*RetryScheduled) Kind() Kind { return KindRetryScheduled }
func (*ToolStarted) Kind() Kind    { return KindToolStarted }
func (*ToolFinished) Kind() Kind   { return KindToolFinished }
func (*Cancelled) Kind() Kind      { return KindCancelled }
func (*Quiesced) Kind() Kind       { return KindQuiesced }
func (*Repaired) Kind() Kind       { return KindRepaired }
func (*Nudge) Kind() Kind          { return KindNudge }
func (*Hold) Kind() Kind           { return KindHold }
func (*Released) Kind() Kind       { return KindReleased }
func (*ModelChanged) Kind() Kind   { return KindModelChanged }
func (*Pressure) Kind() Kind       { return KindPressure }
func (*Failure) Kind() Kind        { return KindFailure }
func (*Submission) Kind() Kind     { return KindSubmission }
func (*Stop) Kind() Kind           { return KindStop }
func (*Renamed) Kind() Kind        { return KindRenamed }
func (*Closed) Kind() Kind         { return KindClosed }
func (*Approval) Kind() Kind       { return KindApproval }
