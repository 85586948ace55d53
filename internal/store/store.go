// Package store holds what the host and the places its conversations can be kept agree on, when
// several hosts share one set of conversations (DESIGN §12.1): the conversation index's row, and
// the refusals of ownership — a conversation another host owns (OwnedError), an append whose
// owner was fenced off (ErrFenced). The records themselves go through package session's Journal;
// the one implementation kept in a database is package pgstore.
package store

import (
	"errors"
	"fmt"
	"time"
)

// Row is one conversation as the conversation index holds it.
type Row struct {
	ID      string
	Title   string
	Closed  bool
	Created int64 // unix ms
	Updated int64 // unix ms
	Working bool
	Phase   string
	Seq     int64
	Path    string
	Size    int64
	Op      string
	OpTitle string
	// Backend is the agent program the conversation runs in ("" for rein's own loop).
	Backend string
}

// ErrFenced is wrapped by the refusal of an append by a host whose lease on the conversation was
// taken over (its epoch moved): nothing was written, and the host must stop the conversation's
// agent and drop it; the new owner carries on from the rows.
var ErrFenced = errors.New("another host has taken this conversation over: its lease's epoch moved, and this host may no longer append to it")

// ErrNoConversation is wrapped when the store has no conversation by the id given.
var ErrNoConversation = errors.New("no such conversation in the store")

// OwnedError refuses to acquire a conversation another host holds a live lease on.
type OwnedError struct {
	Conversation string
	Owner        string    // the owning host's name
	URL          string    // where the owning host is reached by other hosts ("" if it gave none)
	Until        time.Time // when its lease ends unless renewed (the database's clock)
}

// Owner is who holds a conversation's lease, as the store says now.
type Owner struct {
	Name  string    // the host's name; "" when the lease was released
	URL   string    // where other hosts reach it ("" if it gave none)
	Until time.Time // when the lease ends unless renewed
	Live  bool      // the lease is held and has not ended, by the database's clock
}

// OpTakenError refuses to create a conversation under an operation id that another create (on
// this host or another) has already claimed: the conversation it made answers the operation.
type OpTakenError struct {
	Op           string
	Conversation string // the conversation the operation created
	Title        string // the title it was created with
}

func (e *OpTakenError) Error() string {
	return fmt.Sprintf("operation %s already created conversation %s", e.Op, e.Conversation)
}

func (e *OwnedError) Error() string {
	return fmt.Sprintf("conversation %s is owned by host %s (its lease runs to %s unless renewed)", e.Conversation, e.Owner,
		e.Until.UTC().Format(time.RFC3339Nano))
}
