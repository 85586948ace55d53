// Package fold is rein's pure core: it reads a session's records one by one, judges each against
// the state so far, and applies it. Live appends and replay go through the same Step, so what a
// running session accepts and what a replayed record admits cannot drift.
//
// The fold owns the four phases and their admissibility table (DESIGN §4.1), the turn table with
// lineage-monotone ids (§4.3), spans, laminar residues, the frontier and withdrawals (§4.4),
// inheritance (§4.5), rendering the frontier to neutral messages (§5), the survey and the
// transcript index (§9), the quiesce plan and the admission of provider replies (§6), and the host's
// submission lifecycle — its transition table, and the plans by which a host hands, delivers,
// withdraws and ends messages and answers Stops and approvals (§12.2, §12.3; submissions.go,
// plan.go).
//
// It imports only the standard library and internal/record: no I/O, no clock, no randomness, no
// goroutines. Time and ids arrive inside records. A test enforces this with `go list -deps`.
package fold

import (
	"errors"
	"fmt"
	"iter"
	"slices"

	"github.com/reinhq/rein/internal/record"
)

// Phase is the sequencing state of the fold.
type Phase int

// The four phases (DESIGN §4.1).
const (
	ReadyForUser Phase = iota
	AwaitingAssistantAfterUser
	AwaitingToolResults
	AwaitingAssistantAfterToolResults
)

func (p Phase) String() string {
	switch p {
	case ReadyForUser:
		return "ready_for_user"
	case AwaitingAssistantAfterUser:
		return "awaiting_assistant_after_user"
	case AwaitingToolResults:
		return "awaiting_tool_results"
	case AwaitingAssistantAfterToolResults:
		return "awaiting_assistant_after_tool_results"
	}
	return fmt.Sprintf("phase(%d)", int(p))
}

// awaitingAssistant reports whether a reply is due.
func (p Phase) awaitingAssistant() bool {
	return p == AwaitingAssistantAfterUser || p == AwaitingAssistantAfterToolResults
}

// TurnKind says where a turn came from.
type TurnKind string

// The kinds of a row. Residue is the kind of a survey row standing for a residue.
const (
	Own       TurnKind = "own"
	Imported  TurnKind = "import"
	Inherited TurnKind = "inherited"
	Residual  TurnKind = "residue"
)

// Turn is one row of the turn table.
type Turn struct {
	ID    int64
	Role  record.Role
	Kind  TurnKind
	Label string
	Bytes int64
	// Discount is what the pictures among Bytes weigh less than their bytes when the context is
	// measured in tokens (images.go): a picture costs its provider a fixed-ish number of tokens,
	// not a quarter of its base64.
	Discount int64
	// Messages are the turn's messages exactly as recorded (an inherited row: its admissible
	// prefix). They are released when the turn leaves the context; read-back then goes through
	// the record (Seqs, or Pointer for an inherited row).
	Messages []record.Message
	// Seqs are the sequence numbers of the protocol records that made this turn, in order.
	Seqs []int64
	// Pointer is where an inherited row was first recorded.
	Pointer *record.Pointer
	// Withdrawn is set by a rewind or a clear.
	Withdrawn bool
	// Under is the index in State.Residues of the innermost residue covering the turn, or -1.
	// The outermost, the item that stands for it in the frontier, is found through the residues'
	// parents; the frontier itself is kept as records land and never walks them.
	Under int
}

// Residue is what an eviction left in place of a span.
type Residue struct {
	From, To int64
	Note     string
	By       record.Authority
	// Parent is the index of the residue directly containing this one, or -1 if it is outermost.
	Parent int
	// Withdrawn is set when a rewind or a clear takes the residue's turns.
	Withdrawn bool
	// Seq is the record that made it (0 for an inherited residue).
	Seq int64
}

// State is the folded state of one session. The zero value is not ready; use New.
//
// A State is a value: Clone and Snapshot copy it in time that grows with the turn table by one
// slice header per 64 turns (persist.go), and what a copy holds never changes when the other
// goes on. Every field is a scalar, a persistent container, or a slice replaced whole.
type State struct {
	phase    Phase
	seq      int64 // the last record applied
	last     int64 // its time, unix ms
	protocol int   // protocol records applied
	system   string
	turns    rows  // in id order: ids only grow, so a turn is found by binary search
	high     int64 // the highest turn id ever recorded in this lineage
	residues flat[Residue]

	// The rendered closed part of the frontier (see Context).
	rendered      flat[record.Message]
	renderedItems int        // frontier items rendered into the closed part
	tailStart     int        // where the newest turn's messages begin in rendered
	front         flat[Item] // the frontier, kept as records land

	owed     []string                         // call ids the newest assistant turn still owes, in call order; replaced whole
	started  table[string, bool]              // owed calls with a tool_started event
	finished table[string, record.ToolResult] // owed calls whose tool_finished kept the result
	calls    keySet                           // every tool call id ever recorded in this session, as a key

	parent   string // the parent session of an inherited record
	inFlight bool   // an exchange was taken up and not yet quiesced
	parked   bool
	parking  Parking // the held window, while parked
	meta     Meta
	subs     vec[Submission]                    // in the order they were accepted
	subAt    table[string, int]                 // submission id → position in subs
	subByOp  table[string, int]                 // operation id → position in subs
	open     []int                              // positions in subs of those not ended, ascending; replaced, never written in place
	stops    table[string, record.Stop]         // host Stop presses by operation id
	stopped  int64                              // the Stop that interrupted the newest exchange, or 0
	edits    table[string, int64]               // host context edits (evict, rewind, clear) by operation id → seq
	asked    []Approval                         // approvals asked of the person and not yet answered, in order; replaced whole
	answers  table[string, record.Approval]     // answers to approvals by operation id
	replies  table[string, record.Approval]     // answers to approvals by call id
	grants   []string                           // rules the person allowed for the conversation; replaced whole
	models   table[string, record.ModelChanged] // model switches by operation id

	frozen bool // a snapshot: shared by its readers, so Step refuses it
}

// Approval is a tool call waiting for the person's answer (permission mode ask).
type Approval struct {
	CallID string
	Name   string
	Args   string
	Diff   string   // what the call would change, as the person is shown it
	Rules  []string // the rules the person may grant for the conversation instead
	Seq    int64    // the record that asked
}

// Meta is what the events say about the session's setup.
type Meta struct {
	Session       string
	Provider      string
	Model         string
	ContextWindow int64
	Cwd           string
	Resumes       int
	LastUsage     record.Usage
	UsageStale    bool // an edit landed since LastUsage was reported
	Title         string
	Closed        bool
	Op            string // the host operation that created the session
	Parent        string // the session this one was forked or started from
	Created       int64  // unix ms
	// Chosen: a model_changed event chose Provider and Model (a person switched models), so a
	// session reopened keeps them rather than its host's defaults.
	Chosen bool
	// BaseURL and PermissionMode are the settings the session last ran under (session_started,
	// then each session_resumed).
	BaseURL        string
	PermissionMode string
	// Limit is the smallest context limit a provider's refusal taught this session (a pressure
	// event's limit), in tokens, or 0. A model change forgets it: it was that model's.
	Limit int64
	// Thinking and Effort are the reasoning settings the session was last started or resumed
	// with (an extended-thinking budget in tokens, a reasoning effort), so a resume keeps them.
	Thinking int
	Effort   string
	// WebSearch says the provider's web search was last offered (--web-search), kept by a resume
	// on the same provider.
	WebSearch bool
	// Sandbox is the OS sandbox the session's commands last ran under (session_started, then each
	// session_resumed), as rein says it; "" when the record does not say.
	Sandbox string
	// Source is the foreign session an imported session was made from (zero, Kind "", for any
	// other).
	Source record.Origin
	// Tools is the tool set the model was last offered (session_started, then each
	// session_resumed); "" when the record does not say (rein's own tools).
	Tools string
	// Backend is the back-end the conversation's turns run in (a backend event): "" or "rein" for
	// rein's own loop, else an external program's kind ("claude", "codex"). External is the
	// program's session the record last named (external_session), which the next turn resumes.
	Backend  string
	External External
}

// New returns the state of an empty session.
func New() *State { return &State{} }

// Clone returns a copy of s to which records may be applied without touching s, nor s changed
// without touching the copy. It shares what it can (persist.go): its cost grows with the turn
// table by one slice header per 64 turns, not with what the turns hold. Clone writes s's
// bookkeeping, so only s's owner may call it, unless s is a snapshot: cloning a snapshot only
// reads it.
func (s *State) Clone() *State {
	c := *s
	c.frozen = false
	c.turns = s.turns.share()
	c.residues = s.residues.share()
	c.rendered = s.rendered.share()
	c.front = s.front.share()
	c.started = s.started.share()
	c.finished = s.finished.share()
	c.calls = s.calls.share()
	c.subs = s.subs.share()
	c.subAt = s.subAt.share()
	c.subByOp = s.subByOp.share()
	c.stops = s.stops.share()
	c.edits = s.edits.share()
	c.answers = s.answers.share()
	c.replies = s.replies.share()
	c.models = s.models.share()
	return &c
}

// Snapshot returns a copy of s that never changes, for readers on other goroutines while s goes
// on: any number of them may read it (and Clone it) at once. Step refuses a snapshot.
func (s *State) Snapshot() *State {
	c := s.Clone()
	c.frozen = true
	return c
}

// ErrSnapshot is Step's answer on a snapshot.
var ErrSnapshot = errors.New("a snapshot of a session's state is read-only: Clone it to apply records")

// Refusal is the fold's judgement that a record may not be applied. Seq is the record's number.
type Refusal struct {
	Seq    int64
	Reason string
}

func (r *Refusal) Error() string { return fmt.Sprintf("record %d %s", r.Seq, r.Reason) }

func refuse(seq int64, format string, args ...any) error {
	return &Refusal{Seq: seq, Reason: fmt.Sprintf(format, args...)}
}

// Step judges r against the state and, if it is admissible, applies it. On a refusal the state is
// unchanged: every check runs before the first change.
func (s *State) Step(r record.Record) error {
	if s.frozen {
		return ErrSnapshot
	}
	if r.Seq != s.seq+1 {
		return refuse(r.Seq, "arrives after record %d: sequence numbers must follow one another", s.seq)
	}
	if r.Body == nil {
		return refuse(r.Seq, "has no payload")
	}
	if err := s.judge(r); err != nil {
		return err
	}
	s.apply(r)
	s.turns.settle()
	s.seq = r.Seq
	s.last = r.Time
	if r.Class() == record.Protocol {
		s.refresh()
	}
	return nil
}

// Judge reports whether r would be admitted, without applying it.
func (s *State) Judge(r record.Record) error {
	if r.Seq != s.seq+1 {
		return refuse(r.Seq, "arrives after record %d: sequence numbers must follow one another", s.seq)
	}
	return s.judge(r)
}

func (s *State) judge(r record.Record) error {
	switch b := r.Body.(type) {
	case *record.System:
		return nil
	case *record.UserPrompt:
		return s.judgeUserPrompt(r.Seq, b)
	case *record.Steering:
		return s.judgeSteering(r.Seq, b)
	case *record.Import:
		return s.judgeImport(r.Seq, b)
	case *record.AssistantMessage:
		return s.judgeAssistant(r.Seq, b)
	case *record.ToolResults:
		return s.judgeToolResults(r.Seq, b)
	case *record.Evicted:
		_, err := s.resolveEviction(r.Seq, b)
		return err
	case *record.Rewound:
		return s.judgeRewound(r.Seq, b)
	case *record.Cleared:
		if s.phase == AwaitingToolResults {
			return refuse(r.Seq, "clears the context while tool results are owed for turn %d: a clear waits for the tool batch to be answered", s.newest())
		}
		return nil
	case *record.Inherited:
		return s.judgeInherited(r.Seq, b)
	case *record.ToolStarted:
		return s.judgeWhileParked(r.Seq, b.CallID)
	case *record.Hold:
		return s.judgeHold(r.Seq, b)
	case *record.Released:
		return s.judgeReleased(r.Seq)
	case *record.Submission:
		return s.judgeSubmission(r.Seq, b)
	case *record.Stop:
		return s.judgeStop(r.Seq, b)
	case *record.Approval:
		return s.judgeApproval(r.Seq, b)
	case *record.ToolFinished:
		if err := s.judgeWhileParked(r.Seq, b.CallID); err != nil {
			return err
		}
		return judgeToolFinished(r.Seq, b)
	}
	if c, ok := record.ClassOf(r.Kind()); !ok || c != record.Event {
		return refuse(r.Seq, "has kind %q, which the fold does not know", r.Kind())
	}
	return nil
}

func (s *State) apply(r record.Record) {
	switch b := r.Body.(type) {
	case *record.System:
		s.protocol++
		s.system = b.Text
	case *record.UserPrompt:
		s.protocol++
		s.applyUserPrompt(r.Seq, b)
	case *record.Steering:
		s.protocol++
		s.applySteering(r.Seq, b)
	case *record.Import:
		s.protocol++
		s.applyImport(r.Seq, b)
	case *record.AssistantMessage:
		s.protocol++
		s.applyAssistant(r.Seq, b)
	case *record.ToolResults:
		s.protocol++
		s.applyToolResults(r.Seq, b)
	case *record.Evicted:
		s.protocol++
		s.applyEviction(r.Seq, b)
		s.noteEdit(b.Op, r.Seq)
	case *record.Rewound:
		s.protocol++
		s.withdrawFrom(b.Anchor)
		s.noteEdit(b.Op, r.Seq)
	case *record.Cleared:
		s.protocol++
		s.withdrawFrom(0)
		s.noteEdit(b.Op, r.Seq)
	case *record.Inherited:
		s.protocol++
		s.applyInherited(b)
	default:
		s.applyEvent(r)
	}
}

// Phase returns the sequencing phase.
func (s *State) Phase() Phase { return s.phase }

// LastTime returns the time of the last record applied, in unix milliseconds.
func (s *State) LastTime() int64 { return s.last }

// Seq returns the sequence number of the last record applied.
func (s *State) Seq() int64 { return s.seq }

// IsReady reports whether a fresh prompt is admissible: true in every phase but
// AwaitingToolResults (DESIGN §4.1).
func (s *State) IsReady() bool { return s.phase != AwaitingToolResults }

// System returns the system prompt requests go out under.
func (s *State) System() string { return s.system }

// Next returns the id the next turn will take.
func (s *State) Next() int64 { return s.high + 1 }

// High returns the highest turn id ever recorded in this lineage.
func (s *State) High() int64 { return s.high }

// Owed returns the call ids the log owes results for, in call order.
func (s *State) Owed() []string { return append([]string(nil), s.owed...) }

// Started reports whether an owed call had a tool_started event.
func (s *State) Started(callID string) bool {
	v, _ := s.started.get(callID)
	return v
}

// InFlight reports whether an exchange was taken up and not yet quiesced.
func (s *State) InFlight() bool { return s.inFlight }

// Parked reports whether the agent is parked with its tool window open.
func (s *State) Parked() bool { return s.parked }

// Meta returns what the events say about the session.
func (s *State) Meta() Meta { return s.meta }

// Parent returns the parent session id of an inherited record, or "".
func (s *State) Parent() string { return s.parent }

// Protocol returns how many protocol records were applied.
func (s *State) Protocol() int { return s.protocol }

// Turns returns the turn table in id order, with each row's position (the Turn of a frontier
// Item).
func (s *State) Turns() iter.Seq2[int, Turn] {
	return func(yield func(int, Turn) bool) {
		s.turns.each(0, yield)
	}
}

// NumTurns returns the number of rows of the turn table.
func (s *State) NumTurns() int { return s.turns.len() }

// TurnAt returns the row at position i of the turn table (the Turn of a frontier Item).
func (s *State) TurnAt(i int) Turn { return s.turns.at(i) }

// Turn returns the row with the given id.
func (s *State) Turn(id int64) (Turn, bool) {
	i, ok := s.position(id)
	if !ok {
		return Turn{}, false
	}
	return s.turns.at(i), true
}

// position returns where the row with the given id sits in the turn table.
func (s *State) position(id int64) (int, bool) {
	i := s.search(id)
	return i, i < s.turns.len() && s.turns.at(i).ID == id
}

// Residues returns every residue ever left, in the order they were made.
func (s *State) Residues() []Residue { return s.residues.view() }

// Unclosed returns the id of the turn being written — the newest turn while the phase is not
// ReadyForUser — or 0 when there is none.
func (s *State) Unclosed() int64 {
	n := s.turns.len()
	if s.phase == ReadyForUser || n == 0 {
		return 0
	}
	t := s.turns.at(n - 1)
	if t.Withdrawn {
		return 0
	}
	return t.ID
}

func (s *State) newest() int64 {
	n := s.turns.len()
	if n == 0 {
		return 0
	}
	return s.turns.at(n - 1).ID
}

func (s *State) noteEdit(op string, seq int64) {
	if op != "" {
		s.edits.put(op, seq)
	}
}

// EditByOp returns the record number of the context edit a host operation id made.
func (s *State) EditByOp(op string) (int64, bool) { return s.edits.get(op) }

func (s *State) applyApproval(seq int64, b *record.Approval) {
	asked := slices.DeleteFunc(slices.Clone(s.asked), func(a Approval) bool { return a.CallID == b.CallID })
	if b.State == record.ApprovalAsked {
		asked = append(asked, Approval{CallID: b.CallID, Name: b.Name, Args: b.Args, Diff: b.Diff, Rules: b.Rules, Seq: seq})
	}
	if b.State == record.ApprovalAllowed && b.Scope == record.ScopeConversation {
		s.grants = append(slices.Clip(s.grants), b.Rules...)
	}
	s.asked = asked
	if b.Op != "" {
		s.answers.put(b.Op, *b)
	}
	if b.State != record.ApprovalAsked {
		s.replies.put(b.CallID, *b)
	}
}

// judgeApproval judges one step of an approval: a call is asked about, then answered while it
// waits (an answer to a call no one asked about would say the person allowed what never ran).
func (s *State) judgeApproval(seq int64, b *record.Approval) error {
	if b.CallID == "" {
		return refuse(seq, "records an approval with no call id")
	}
	switch b.State {
	case record.ApprovalAsked:
		return nil
	case record.ApprovalAllowed, record.ApprovalDenied:
		a, ok := s.Approval(b.CallID)
		if !ok {
			return refuse(seq, "answers the approval of call %s, which is not waiting for one (never asked, answered already, or its exchange ended)", b.CallID)
		}
		return judgeScope(seq, a, b)
	}
	return refuse(seq, "gives the approval of call %s the state %q: an approval is asked, allowed or denied", b.CallID, b.State)
}

// ApprovalAnswer returns the person's answer to call id, once one is recorded.
func (s *State) ApprovalAnswer(callID string) (record.Approval, bool) { return s.replies.get(callID) }

// Approvals returns the tool calls waiting for the person's answer, oldest first.
func (s *State) Approvals() []Approval { return slices.Clone(s.asked) }

// Approval returns the pending approval of call id.
func (s *State) Approval(callID string) (Approval, bool) {
	for _, a := range s.asked {
		if a.CallID == callID {
			return a, true
		}
	}
	return Approval{}, false
}

// ApprovalByOp returns the answer a host operation id recorded.
func (s *State) ApprovalByOp(op string) (record.Approval, bool) { return s.answers.get(op) }

// ModelByOp returns the model switch a host operation id recorded.
func (s *State) ModelByOp(op string) (record.ModelChanged, bool) { return s.models.get(op) }

func (s *State) applyEvent(r record.Record) {
	switch b := r.Body.(type) {
	case *record.SessionStarted:
		s.meta.Session, s.meta.Provider, s.meta.Model = b.Session, b.Provider, b.Model
		s.meta.ContextWindow, s.meta.Cwd = b.ContextWindow, b.Cwd
		s.meta.Title, s.meta.Op, s.meta.Created, s.meta.Parent = b.Title, b.Op, r.Time, b.Parent
		s.meta.BaseURL, s.meta.PermissionMode = b.BaseURL, b.PermissionMode
		s.meta.Thinking, s.meta.Effort, s.meta.Sandbox = b.Thinking, b.Effort, b.Sandbox
		if b.Source != nil {
			s.meta.Source = *b.Source
		}
		s.meta.Tools, s.meta.WebSearch = b.Tools, b.WebSearch
	case *record.SessionResumed:
		s.meta.Provider, s.meta.Model, s.meta.ContextWindow, s.meta.Cwd = b.Provider, b.Model, b.ContextWindow, b.Cwd
		s.meta.BaseURL, s.meta.PermissionMode = b.BaseURL, b.PermissionMode
		s.meta.Thinking, s.meta.Effort, s.meta.Sandbox = b.Thinking, b.Effort, b.Sandbox
		s.meta.Tools, s.meta.WebSearch = b.Tools, b.WebSearch
		s.meta.Resumes++
	case *record.Pressure:
		if b.Limit > 0 && (s.meta.Limit == 0 || b.Limit < s.meta.Limit) {
			s.meta.Limit = b.Limit
		}
	case *record.ModelChanged:
		s.meta.Limit = 0
		s.meta.Provider, s.meta.Model, s.meta.Chosen = b.Provider, b.Model, true
		if b.ContextWindow > 0 {
			s.meta.ContextWindow = b.ContextWindow
		}
		if b.Op != "" {
			s.models.put(b.Op, *b)
		}
	case *record.Approval:
		s.applyApproval(r.Seq, b)
	case *record.ToolStarted:
		if slices.Contains(s.owed, b.CallID) {
			s.started.put(b.CallID, true)
		}
	case *record.ToolFinished:
		s.applyToolFinished(b)
	case *record.Quiesced:
		s.inFlight = false
		s.unpark()
		s.asked = nil // an approval its exchange ended without is no longer asked
		s.handBack(r.Seq)
	case *record.Hold:
		s.applyHold(r.Seq, b)
	case *record.Released:
		s.unpark()
	case *record.UsageReported:
		s.meta.LastUsage, s.meta.UsageStale = b.Usage, false
	case *record.Renamed:
		s.meta.Title = b.Title
	case *record.Closed:
		s.meta.Closed = true
	case *record.Submission:
		s.applySubmission(r.Seq, b)
	case *record.Stop:
		s.applyStop(r.Seq, b)
	case *record.Backend, *record.ExternalSession:
		s.applyExternal(r)
	}
}

// Newest returns the id of the newest turn, or 0.
func (s *State) Newest() int64 { return s.newest() }
