package fold

import (
	"encoding/binary"
	"fmt"
	"hash/maphash"
	"iter"
	"slices"
	"strings"

	"github.com/reinhq/rein/internal/record"
)

// A host submission's life (DESIGN §12.2) is fold data: every step is a record, judged against the
// table below like any other, so a record can never say that a message was delivered after it
// was withdrawn, or withdrawn after it was delivered. The host decides nothing on the side: it
// reads this state and writes what the plans here return (plan.go).

// Submission is the folded lifecycle of one host submission.
type Submission struct {
	ID    string
	Op    string
	State record.SubmissionState
	// Text and Attachments are the message as it was sent, until it was delivered and ended
	// (answered or cancelled): the prompt or steering that delivered it carries them from then
	// on, and the state keeps only their key (Carries), not a second copy of every message and
	// picture of a long conversation.
	Text        string
	Attachments []record.Attachment
	Queue       bool
	Reason      string
	Detail      string
	Seq         int64 // the record that made its current state
	sent        sentKey
	let         bool // Text and Attachments were let go; sent stands for them
}

// Carries reports whether the submission was sent with this text and these attachments.
func (v Submission) Carries(text string, atts []record.Attachment) bool {
	if v.let {
		return v.sent == keyOfSent(text, atts)
	}
	return v.Text == text && slices.Equal(v.Attachments, atts)
}

// sentKey stands for a message's text and attachments: 128 bits of keyed hash, as callKey.
type sentKey [2]uint64

func keyOfSent(text string, atts []record.Attachment) sentKey {
	var k sentKey
	for i := range k {
		var h maphash.Hash
		h.SetSeed(callSeeds[i])
		field := func(s string) {
			var n [8]byte
			binary.LittleEndian.PutUint64(n[:], uint64(len(s)))
			h.Write(n[:])
			h.WriteString(s)
		}
		field(text)
		for _, a := range atts {
			field(a.Name)
			field(a.MediaType)
			field(a.Text)
			field(a.Data)
		}
		k[i] = h.Sum64()
	}
	return k
}

// letGo keeps only the key of the submission's message: it was delivered and has ended.
func (v *Submission) letGo() {
	if !v.let {
		v.sent, v.let = keyOfSent(v.Text, v.Attachments), true
		v.Text, v.Attachments = "", nil
	}
}

// Waiting reports whether the submission is waiting to be delivered: accepted, or handed to the
// running exchange and not yet delivered.
func (v Submission) Waiting() bool {
	return v.State == record.SubmissionAccepted || v.State == record.SubmissionHanded
}

// Open reports whether the submission has not ended: waiting or delivered.
func (v Submission) Open() bool { return v.Waiting() || v.State == record.SubmissionDelivered }

// SteeringText is the text a submission is delivered as when it steers a running exchange: its
// text, then each text attachment under its name.
func (v Submission) SteeringText() string {
	t := v.Text
	for _, a := range v.Attachments {
		if a.Text != "" {
			t += "\n\nAttached " + a.Name + ":\n" + a.Text
		}
	}
	return t
}

// Transition is one step of a submission's life the fold admits: from state From to state To,
// made by a record of kind By. From is empty for the step that first records a submission.
type Transition struct {
	From, To record.SubmissionState
	By       record.Kind
}

// transitions is the submission lifecycle: every step the fold admits. Any other step is refused,
// naming the record, the submission, the state it is in and what may follow it.
//
// Handing is the host's: a message given to the running exchange, which the exchange delivers as
// steering at its next turn boundary (DeliveryPlan). An exchange that ends without delivering it
// hands it back (the quiesced event): it is accepted again, and waits for the next exchange.
// Steering that delivers a message straight from accepted is what records written before handing
// was recorded hold; they keep loading.
var transitions = []Transition{
	{"", record.SubmissionAccepted, record.KindSubmission},
	{record.SubmissionAccepted, record.SubmissionHanded, record.KindSubmission},
	{record.SubmissionAccepted, record.SubmissionDelivered, record.KindUserPrompt},
	{record.SubmissionAccepted, record.SubmissionDelivered, record.KindSteering},
	{record.SubmissionHanded, record.SubmissionDelivered, record.KindSteering},
	{record.SubmissionHanded, record.SubmissionAccepted, record.KindQuiesced},
	{record.SubmissionAccepted, record.SubmissionWithdrawn, record.KindSubmission},
	{record.SubmissionHanded, record.SubmissionWithdrawn, record.KindSubmission},
	{record.SubmissionAccepted, record.SubmissionRejected, record.KindSubmission},
	{record.SubmissionHanded, record.SubmissionRejected, record.KindSubmission},
	{record.SubmissionDelivered, record.SubmissionAnswered, record.KindSubmission},
	{record.SubmissionDelivered, record.SubmissionCancelled, record.KindSubmission},
}

// Transitions returns the submission lifecycle table: every step the fold admits.
func Transitions() []Transition { return append([]Transition(nil), transitions...) }

// admits reports whether the table has the step.
func admits(from, to record.SubmissionState, by record.Kind) bool {
	for _, t := range transitions {
		if t.From == from && t.To == to && t.By == by {
			return true
		}
	}
	return false
}

// known reports whether st is a state of the table.
func known(st record.SubmissionState) bool {
	for _, t := range transitions {
		if t.To == st || t.From == st {
			return true
		}
	}
	return false
}

// step describes a record's step of a submission, for a refusal: "withdraws submission m3".
func step(to record.SubmissionState, by record.Kind, id string) string {
	switch {
	case by == record.KindUserPrompt:
		return "delivers submission " + id + " as a prompt"
	case by == record.KindSteering:
		return "delivers submission " + id + " as steering"
	case to == record.SubmissionAccepted:
		return "accepts submission " + id
	case to == record.SubmissionHanded:
		return "hands submission " + id + " to the running exchange"
	case to == record.SubmissionWithdrawn:
		return "withdraws submission " + id
	case to == record.SubmissionRejected:
		return "rejects submission " + id
	}
	return "marks submission " + id + " " + string(to)
}

// next says what may follow a state, in words: "a delivered submission can only be answered or
// cancelled".
func next(from record.SubmissionState) string {
	var outs []string
	seen := map[record.SubmissionState]bool{}
	for _, t := range transitions {
		if t.From == from && t.By != record.KindQuiesced && !seen[t.To] {
			seen[t.To] = true
			outs = append(outs, string(t.To))
		}
	}
	a := "a"
	if from != "" && strings.ContainsRune("aeiou", rune(from[0])) {
		a = "an"
	}
	switch len(outs) {
	case 0:
		return "it has ended, and nothing may follow"
	case 1:
		return fmt.Sprintf("%s %s submission can only be %s", a, from, outs[0])
	}
	return fmt.Sprintf("%s %s submission can only be %s or %s", a, from, strings.Join(outs[:len(outs)-1], ", "), outs[len(outs)-1])
}

// judgeMove refuses a step of submission id to state to, made by a record of kind by, that the
// table does not admit.
func (s *State) judgeMove(seq int64, id string, to record.SubmissionState, by record.Kind) error {
	v, ok := s.Submission(id)
	switch {
	case to == record.SubmissionDelivered && by == record.KindSubmission:
		return refuse(seq, "marks submission %s delivered: a submission is delivered only by the prompt or the steering that carries it", id)
	case !known(to):
		return refuse(seq, "gives submission %s the state %q, which the fold does not know", id, to)
	case !ok && to == record.SubmissionAccepted:
		return nil
	case !ok:
		return refuse(seq, "%s, which was never accepted: a submission's first record accepts it", step(to, by, id))
	case to == record.SubmissionAccepted:
		return refuse(seq, "accepts submission %s again (it is %s since record %d): a message id is recorded at most once", id, v.State, v.Seq)
	case !admits(v.State, to, by):
		return refuse(seq, "%s, which is %s (record %d): %s", step(to, by, id), v.State, v.Seq, next(v.State))
	}
	return nil
}

// judgeSubmission judges a submission event: its step in the table, and the guards of its state.
func (s *State) judgeSubmission(seq int64, b *record.Submission) error {
	if b.ID == "" {
		return refuse(seq, "records a submission with no id")
	}
	if err := s.judgeMove(seq, b.ID, b.State, record.KindSubmission); err != nil {
		return err
	}
	switch b.State {
	case record.SubmissionAccepted:
		if b.Op != "" {
			if prev, ok := s.SubmissionByOp(b.Op); ok {
				return refuse(seq, "accepts submission %s under operation %s, which already sent submission %s: an operation id makes at most one submission", b.ID, b.Op, prev.ID)
			}
		}
	case record.SubmissionHanded:
		v, _ := s.Submission(b.ID)
		switch {
		case v.Queue:
			return refuse(seq, "hands submission %s to the running exchange, but it was sent queued: it waits for the next exchange", b.ID)
		case !s.inFlight:
			return refuse(seq, "hands submission %s to the running exchange, but no exchange is in flight: it waits, accepted, for the next one", b.ID)
		case s.stopped > 0:
			return refuse(seq, "hands submission %s to the running exchange, which the Stop of record %d interrupted: what is sent after a Stop waits for the next exchange", b.ID, s.stopped)
		}
	}
	return nil
}

// judgeDelivery refuses a prompt or steering that delivers a host submission the table does not
// let it deliver: one never accepted, or one that has already been delivered or has ended.
func (s *State) judgeDelivery(seq int64, id string, by record.Kind) error {
	if id == "" {
		return nil
	}
	return s.judgeMove(seq, id, record.SubmissionDelivered, by)
}

func (s *State) applySubmission(seq int64, b *record.Submission) {
	i, ok := s.subAt.get(b.ID)
	if !ok {
		i = s.subs.len()
		s.subs.push(Submission{ID: b.ID})
		s.subAt.put(b.ID, i)
	}
	v := s.subs.ptr(i)
	v.State, v.Seq = b.State, seq
	// The operation is the one that sent the message: the first record to name one (the host
	// names it on the accepting record alone), and the first submission to claim an operation
	// keeps it (judgeSubmission refuses a second acceptance under it).
	if b.Op != "" && v.Op == "" {
		v.Op = b.Op
		if !s.subByOp.has(b.Op) {
			s.subByOp.put(b.Op, i)
		}
	}
	if b.Text != "" || len(b.Attachments) > 0 {
		v.Text, v.Attachments = b.Text, b.Attachments
	}
	v.Queue = v.Queue || b.Queue
	v.Reason, v.Detail = b.Reason, b.Detail
	if v.State == record.SubmissionAnswered || v.State == record.SubmissionCancelled {
		v.letGo()
	}
	s.markOpen(i, v.Open())
}

// markOpen notes whether the submission at position i of subs is open, replacing s.open (which
// copies of the state may share) when that changes it.
func (s *State) markOpen(i int, open bool) {
	at, was := slices.BinarySearch(s.open, i)
	switch {
	case open && !was:
		s.open = slices.Insert(slices.Clip(s.open), at, i)
	case !open && was:
		s.open = slices.Delete(slices.Clone(s.open), at, at+1)
	}
}

// deliver marks a host submission delivered by the prompt or steering that carries it.
func (s *State) deliver(id string, seq int64) {
	if i, ok := s.subAt.get(id); ok && id != "" {
		v := s.subs.ptr(i)
		v.State, v.Seq = record.SubmissionDelivered, seq
	}
}

// takeUp notes that a new exchange is taken up: a Stop that interrupted the one before no longer
// speaks for the exchange in flight. Called before the record that takes it up is applied.
func (s *State) takeUp() { s.stopped = 0 }

// handBack ends the exchange's hold on the submissions handed to it and not delivered: they are
// accepted again and wait for the next exchange (the quiesced event of seq).
func (s *State) handBack(seq int64) {
	for _, i := range s.open {
		if s.subs.at(i).State == record.SubmissionHanded {
			v := s.subs.ptr(i)
			v.State, v.Seq = record.SubmissionAccepted, seq
		}
	}
}

// judgeStop judges a host Stop: a press is recorded once, and what it names withdrawn was
// withdrawn (by the submission events of the same write, just before it).
func (s *State) judgeStop(seq int64, b *record.Stop) error {
	if prev, ok := s.stops.get(b.Op); ok && b.Op != "" {
		return refuse(seq, "records a second Stop under operation %s (the first withdrew %d and interrupted %v): every press has its own operation id", b.Op, len(prev.Withdrawn), prev.Interrupted)
	}
	for _, id := range b.Withdrawn {
		v, ok := s.Submission(id)
		switch {
		case !ok:
			return refuse(seq, "is a Stop naming submission %s withdrawn, which was never accepted", id)
		case v.State != record.SubmissionWithdrawn:
			return refuse(seq, "is a Stop naming submission %s withdrawn, which is %s (record %d): a Stop's withdrawals are recorded just before it", id, v.State, v.Seq)
		}
	}
	return nil
}

func (s *State) applyStop(seq int64, b *record.Stop) {
	s.stops.put(b.Op, *b)
	if b.Interrupted {
		s.stopped = seq
	}
}

// Stopped reports whether a Stop interrupted the newest exchange (taken up by the latest prompt
// or by an import while idle): what is sent after it waits for the next exchange, and a child's
// reply that arrives after it is recorded without waking the agent.
func (s *State) Stopped() bool { return s.stopped > 0 }

// allSubs yields the host submissions in the order they were accepted.
func (s *State) allSubs() iter.Seq[Submission] {
	return func(yield func(Submission) bool) {
		for i := range s.subs.len() {
			if !yield(s.subs.at(i)) {
				return
			}
		}
	}
}

// openSubs yields the host submissions not ended (Open), in the order they were accepted.
func (s *State) openSubs() iter.Seq[Submission] {
	return func(yield func(Submission) bool) {
		for _, i := range s.open {
			if !yield(s.subs.at(i)) {
				return
			}
		}
	}
}

// OpenSubmissions returns the host submissions not ended (waiting or delivered), in the order
// they were accepted: what a conversation's state shows, a handful however long it is.
func (s *State) OpenSubmissions() []Submission { return slices.Collect(s.openSubs()) }

// Submissions returns the host submissions in the order they were accepted.
func (s *State) Submissions() []Submission {
	out := make([]Submission, 0, s.subs.len())
	for v := range s.allSubs() {
		out = append(out, v)
	}
	return out
}

// Submission returns one host submission by id.
func (s *State) Submission(id string) (Submission, bool) {
	i, ok := s.subAt.get(id)
	if !ok {
		return Submission{}, false
	}
	return s.subs.at(i), true
}

// SubmissionByOp returns the submission a host operation id created.
func (s *State) SubmissionByOp(op string) (Submission, bool) {
	i, ok := s.subByOp.get(op)
	if !ok {
		return Submission{}, false
	}
	return s.subs.at(i), true
}

// StopByOp returns the Stop recorded under a host operation id.
func (s *State) StopByOp(op string) (record.Stop, bool) {
	return s.stops.get(op)
}
