package api

import "github.com/reinhq/rein/internal/record"

// Transcript is what GET /api/conversations/{id}/transcript answers: the context as the next
// request would send it, its survey, every recorded turn with where it is held, and the residues.
type Transcript struct {
	System   string           `json:"system"`
	Messages []record.Message `json:"messages"`
	Survey   Survey           `json:"survey"`
	Index    []Row            `json:"index"`
	Residues []Residue        `json:"residues"`
}

// Survey is the frontier of the context as rows, and the bytes a request carries.
type Survey struct {
	Rows        []Row `json:"rows"`
	Bytes       int64 `json:"bytes"`        // the messages' bytes
	SystemBytes int64 `json:"system_bytes"` // the system prompt's bytes
}

// Row is one row of the survey or the transcript index: a span of the context (a turn has
// From == To) with its role, kind, label, size and where it is held.
type Row struct {
	From  int64       `json:"from"`
	To    int64       `json:"to"`
	Role  record.Role `json:"role"`
	Kind  RowKind     `json:"kind"`
	Label string      `json:"label"`
	Bytes int64       `json:"bytes"`
	Held  string      `json:"held"` // "resident", "under [a, b]" or "withdrawn"
}

// RowKind says where a row's turn came from, or that the row stands for a residue.
type RowKind string

// The kinds of a row.
const (
	Own       RowKind = "own"       // recorded in this conversation
	Imported  RowKind = "import"    // imported (a resume of another tool's session)
	Inherited RowKind = "inherited" // inherited from the conversation it was forked from
	Residual  RowKind = "residue"   // a residue standing for an evicted span
)

// Residue is what an eviction left in place of a span of turns.
type Residue struct {
	From int64            `json:"from"`
	To   int64            `json:"to"`
	Note string           `json:"note"`
	By   record.Authority `json:"by"`
	// Parent is the index in the residues of the residue directly containing this one, or -1.
	Parent int `json:"parent"`
	// Withdrawn is set when a rewind or a clear took the residue's turns.
	Withdrawn bool `json:"withdrawn"`
	// Seq is the record that made it (0 for an inherited residue).
	Seq int64 `json:"seq"`
}
