package api

// CapFiles says a host takes checkpoints of its workspace's files and rewinds them with the
// context on request: files on a rewind (POST .../rewind).
const CapFiles = "rewind-files.v1"

// FilesRestored is what a rewind with files did to the workspace: the paths written and removed,
// the paths it left as they were and why, and the safety checkpoint that holds the files as they
// stood before (restoring it undoes the rewind's restore).
type FilesRestored struct {
	Target      string       `json:"target"`
	Safety      string       `json:"safety"`
	Changed     []string     `json:"changed,omitempty"`
	Removed     []string     `json:"removed,omitempty"`
	NotCovered  []NotCovered `json:"not_covered,omitempty"`
	MoreIgnored int          `json:"more_ignored,omitempty"`
	// Outside says what no restore undoes: effects beyond the workspace.
	Outside string `json:"outside"`
}

// NotCovered is a path a restore left as it was, and why ("ignored", "oversize", "nested
// repository", ...). A directory's path ends in "/".
type NotCovered struct {
	Path   string `json:"path"`
	Reason string `json:"reason"`
}
