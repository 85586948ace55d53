package fold

import "github.com/reinhq/rein/internal/record"

// External is what the record says of the external program a conversation's turns run in.
type External struct {
	Program string // "claude", "codex"
	Session string // the program's session or thread, to resume
	Version string
}

// applyExternal applies the events of a conversation run by an external program: the back-end
// chosen, and the session the program last said.
func (s *State) applyExternal(r record.Record) {
	switch b := r.Body.(type) {
	case *record.Backend:
		s.meta.Backend = b.Name
	case *record.ExternalSession:
		s.meta.External = External{Program: b.Program, Session: b.ID, Version: b.Version}
	}
}
