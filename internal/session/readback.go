package session

import (
	"fmt"

	"github.com/reinhq/rein/internal/fold"
	"github.com/reinhq/rein/internal/fsys"
	"github.com/reinhq/rein/internal/journal"
	"github.com/reinhq/rein/internal/record"
)

// pointer returns where turn t of v was first recorded: its own pointer if it was inherited (so a
// grandchild names the grandparent's file directly), else this file's loci of its records.
func (s *Session) pointer(v *view, t fold.Turn) record.Pointer {
	if t.Pointer != nil {
		return *t.Pointer
	}
	p := record.Pointer{File: s.path, Loci: make([]record.Locus, 0, len(t.Seqs))}
	for _, seq := range t.Seqs {
		p.Loci = append(p.Loci, v.loci.at(seq))
	}
	return p
}

// Pointer returns where turn id was first recorded.
func (s *Session) Pointer(id int64) (record.Pointer, bool) {
	v := s.view()
	t, ok := v.st.Turn(id)
	if !ok {
		return record.Pointer{}, false
	}
	return s.pointer(v, t), true
}

// ReadTurn returns a turn's messages exactly as they were sent, as of the latest snapshot: from
// memory while the turn is in the context, else read back from the record through its
// digest-checked pointer.
func (s *Session) ReadTurn(id int64) ([]record.Message, error) {
	v := s.view()
	t, ok := v.st.Turn(id)
	if !ok {
		return nil, fmt.Errorf("turn %d is not recorded: the latest is %d", id, v.st.High())
	}
	var p record.Pointer
	if t.Messages == nil || t.Withdrawn || t.Under >= 0 {
		p = s.pointer(v, t)
	}
	if p.File == "" {
		return t.Messages, nil
	}
	return ReadPointer(s.opts.FS, p)
}

// ReadPointer reads a turn's records back through a pointer and rebuilds its messages.
func ReadPointer(fs fsys.FS, p record.Pointer) ([]record.Message, error) {
	lines, err := journal.ReadPointer(fs, p)
	if err != nil {
		return nil, err
	}
	bodies := make([]record.Payload, 0, len(lines))
	blobs := journal.Blobs(fs, p.File)
	for i, line := range lines {
		r, err := record.DecodeWith(line, p.Loci[i].Seq, blobs)
		if err != nil {
			return nil, fmt.Errorf("read back %s: %w", p.File, err)
		}
		bodies = append(bodies, r.Body)
	}
	return fold.TurnMessages(bodies), nil
}

// Inheritance builds the first record of a child forked from this session at turn at (0: all).
// It reads every inherited row back through its digest-checked pointer first, and refuses to fork
// from a parent it cannot read (DESIGN §4.5).
func (s *Session) Inheritance(at int64) (*record.Inherited, error) {
	v := s.view()
	inh, err := v.st.Inheritance(s.id, at, func(t fold.Turn) record.Pointer { return s.pointer(v, t) })
	if err != nil {
		return nil, err
	}
	for _, row := range inh.Rows {
		if len(row.Pointer.Loci) == 0 {
			continue
		}
		if _, err := journal.ReadPointer(s.opts.FS, row.Pointer); err != nil {
			return nil, fmt.Errorf("turn %d of the parent cannot be read back: %w", row.Turn, err)
		}
	}
	return inh, nil
}

// RecordsAfter reads back every record after sequence number after, from the file, for a client
// catching up (an events stream resumed from Last-Event-ID).
func (s *Session) RecordsAfter(after int64) ([]record.Record, error) {
	v := s.view()
	if after < 0 {
		after = 0
	}
	if after >= int64(v.loci.len()) {
		return nil, nil
	}
	loci := v.loci.after(after)
	lines, err := journal.ReadPointer(s.opts.FS, record.Pointer{File: s.path, Loci: loci})
	if err != nil {
		return nil, err
	}
	out := make([]record.Record, 0, len(lines))
	blobs := journal.Blobs(s.opts.FS, s.path)
	for i, line := range lines {
		r, err := record.DecodeWith(line, loci[i].Seq, blobs)
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, nil
}
