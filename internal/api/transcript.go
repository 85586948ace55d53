package api

import "github.com/reinhq/rein/internal/record"

// CapTranscriptPages: GET .../transcript?index_from=N answers the index a page at a time, from
// turn N on (IndexNext says where the next page starts), and ?index=none answers it empty, for a
// client that shows only the context. Without either, the whole index, as before.
const CapTranscriptPages = "transcript-pages.v1"

// IndexPageBytes is the most bytes of rows one page of the index holds (one row at least).
const IndexPageBytes = 64 << 10

// Transcript is what GET /api/conversations/{id}/transcript answers: the context as the next
// request would send it, its survey, every recorded turn with where it is held (or a page of
// them), and the residues.
type Transcript struct {
	System   string           `json:"system"`
	Messages []record.Message `json:"messages"`
	Survey   Survey           `json:"survey"`
	Index    []Row            `json:"index"`
	// IndexNext is the turn the next page of the index starts at, when a page was asked for
	// (index_from) and did not reach the last turn; absent otherwise.
	IndexNext int64     `json:"index_next,omitempty"`
	Residues  []Residue `json:"residues"`
}

// IndexPage says which of the index a transcript answers: From is the first turn of a page (with
// Paged), None that the index is left out; the zero value is all of it.
type IndexPage struct {
	Paged bool
	From  int64
	None  bool
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
