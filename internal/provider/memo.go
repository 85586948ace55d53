package provider

import (
	"hash/maphash"
	"math/bits"
	"unsafe"

	"github.com/reinhq/rein/internal/record"
)

// Memo keeps what encoding a conversation's last request made of its messages, so that an
// encoder writes again only what changed: a long conversation's request repeats thousands of
// messages the last one sent, and encoding them again was most of the time spent building it.
// One Memo serves one conversation, one request at a time (the agent keeps one and encodes its
// requests in turn); it is not safe for concurrent use. Nil keeps nothing.
//
// It keeps the run of bytes the last request's messages made, and a key for each message: a digest
// of everything its encoding depends on — the encoder, its role and every field of every part,
// images included (TestMemoDigestCoversPart fails when Part gains a field the digest does not
// read) — with its sizes, never where it sits in memory, so a caller that changes a message in
// place gets it encoded again. The next request takes the bytes of the longest run of leading
// messages whose keys match, and encodes the rest. An encoder passes only the messages whose
// encoding depends on nothing else (not the last few, which carry the cache breakpoints).
type Memo struct {
	seed   maphash.Seed
	seeded bool
	keys   []MemoKey // the last request's messages, in order
	ends   []int     // ends[i]: where message i's bytes end in run
	sent   []int     // sent[i]: how many of messages 0..i the encoder sent (it drops some)
	run    []byte
	spare  []byte // a body no one reads any more, for the next request to be written in (Recycle)
}

// Recycle gives the Memo a request body that no one reads any more — not the transport (the
// Model is a BodyReleaser and its Send has returned), not a validator (it has judged a later
// body) — for the next request to be written over (Buffer): at ten thousand turns a body is
// megabytes, and a new one each request is most of what building it allocates. The Memo keeps
// at most one, and never one its own run of messages lives in. Nil drops the one it keeps.
func (m *Memo) Recycle(body []byte) {
	if m == nil {
		return
	}
	if body != nil && overlaps(body, m.run) {
		return
	}
	m.spare = body
}

// Buffer returns an empty buffer with room for n bytes: the body Recycle gave, if it has the
// room, else a new one with room to spare, so that as a conversation grows the body recycled
// after the next request still holds the one after.
func (m *Memo) Buffer(n int) []byte {
	if m == nil {
		return make([]byte, 0, n)
	}
	if cap(m.spare) >= n {
		b := m.spare[:0]
		m.spare = nil
		return b
	}
	return make([]byte, 0, n+n/4)
}

// overlaps reports whether a and b share any byte of their backing arrays (to their capacities).
func overlaps(a, b []byte) bool {
	if cap(a) == 0 || cap(b) == 0 {
		return false
	}
	a0, b0 := uintptr(unsafe.Pointer(unsafe.SliceData(a))), uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	return a0 < b0+uintptr(cap(b)) && b0 < a0+uintptr(cap(a))
}

// MemoKey is a message's key in a Memo: the digest of what its encoding depends on.
type MemoKey struct {
	sum   uint64
	size  int // the bytes of text the message holds, and its parts: checks beside sum
	parts int
}

// MemoRun is one request's use of a Memo, from Start to Finish.
type MemoRun struct {
	m    *Memo
	keys []MemoKey
	same int
	ends []int
	sent []int
}

// Start begins encoding msgs with the encoder named format: Same of them, from the first, are
// what the last request encoded, and Run their bytes.
func (m *Memo) Start(format string, msgs []record.Message) *MemoRun {
	if m == nil {
		return nil
	}
	if !m.seeded {
		m.seed, m.seeded = maphash.MakeSeed(), true
	}
	r := &MemoRun{m: m, keys: make([]MemoKey, len(msgs))}
	for i := range msgs {
		d := digest{seed: m.seed}
		d.str(format)
		d.str(string(msgs[i].Role))
		d.parts(msgs[i].Parts)
		r.keys[i] = MemoKey{sum: d.sum, size: d.size, parts: d.n}
	}
	for r.same < len(r.keys) && r.same < len(m.keys) && r.keys[r.same] == m.keys[r.same] {
		r.same++
	}
	r.ends = append(make([]int, 0, len(msgs)), m.ends[:r.same]...)
	r.sent = append(make([]int, 0, len(msgs)), m.sent[:r.same]...)
	return r
}

// Same is how many of the messages, from the first, the last request encoded the same.
func (r *MemoRun) Same() int {
	if r == nil {
		return 0
	}
	return r.same
}

// Run is the bytes the Same messages made, and how many of them the encoder sent.
func (r *MemoRun) Run() ([]byte, int) {
	if r == nil || r.same == 0 {
		return nil, 0
	}
	return r.m.run[:r.ends[r.same-1]], r.sent[r.same-1]
}

// Mark records that the next message's bytes end at end in the run (the bytes from the first
// message on), and that sent messages were sent through it.
func (r *MemoRun) Mark(end, sent int) {
	if r == nil {
		return
	}
	r.ends = append(r.ends, end)
	r.sent = append(r.sent, sent)
}

// Finish keeps run, the bytes every message made, for the next request; a request that did not
// mark every message keeps nothing. run is kept, not copied: it is part of the body the encoder
// returns, which no one changes (the incremental validator keeps the last body too).
func (r *MemoRun) Finish(run []byte) {
	if r == nil {
		return
	}
	m := r.m
	if len(r.ends) != len(r.keys) {
		m.keys, m.ends, m.sent, m.run = nil, nil, nil, nil
		return
	}
	m.keys, m.ends, m.sent, m.run = r.keys, r.ends, r.sent, run
}

// digest folds a message's fields into one sum: each string's length and, when it has any
// bytes, their hash, so that no two different messages fold the same words.
type digest struct {
	seed maphash.Seed
	sum  uint64
	size int
	n    int
}

func (d *digest) word(x uint64) {
	d.sum = (bits.RotateLeft64(d.sum, 27) ^ x) * 0x9e3779b97f4a7c15
}

func (d *digest) str(s string) {
	d.word(uint64(len(s)))
	if len(s) > 0 {
		d.word(maphash.String(d.seed, s))
		d.size += len(s)
	}
}

func (d *digest) parts(parts []record.Part) {
	d.word(uint64(len(parts)))
	for i := range parts {
		p := &parts[i]
		d.str(string(p.Type))
		d.str(p.Text)
		d.str(p.Signature)
		d.str(p.Data)
		d.str(p.MediaType)
		d.str(p.CallID)
		d.str(p.Name)
		d.word(uint64(len(p.Args)))
		if len(p.Args) > 0 {
			d.word(maphash.Bytes(d.seed, p.Args))
			d.size += len(p.Args)
		}
		if p.IsError {
			d.word(1)
		} else {
			d.word(0)
		}
		d.str(string(p.Outcome))
		d.str(p.Wire)
		d.parts(p.Images)
		d.n++
	}
}
