package record

// Workspace checkpoints (package checkpoint keeps them; the agent and the rewind record them).
// These are events: the fold learns of them only as data, and a checkpoint never reaches the
// model.

// Checkpoint kinds.
const (
	KindCheckpoint          Kind = "checkpoint"
	KindFilesRestoreStarted Kind = "files_restore_started"
	KindFilesRestored       Kind = "files_restored"
)

// SkippedPath is a path a snapshot left out, or a restore did not touch, and why ("oversize",
// "nested repository", "unreadable", "not a regular file", "name git cannot store", "ignored",
// "in the way of files not covered"). A directory's path ends in "/".
type SkippedPath struct {
	Path   string `json:"path"`
	Reason string `json:"reason"`
	Size   int64  `json:"size,omitempty"` // the file's size, for "oversize"
}

// Checkpoint says a snapshot of the workspace was taken at a turn: a user turn's when it was
// taken up (the person's own edits), an assistant turn's after its tool batch ran. It is recorded
// only when the snapshot made a commit (the tree changed) or failed (Error, with no Commit).
type Checkpoint struct {
	Turn    int64         `json:"turn"`
	Commit  string        `json:"commit,omitempty"`
	Skipped []SkippedPath `json:"skipped,omitempty"`
	Error   string        `json:"error,omitempty"`
}

// FilesRestoreStarted says a restore of the workspace to Target began: Safety is the checkpoint of
// the workspace taken before any file changed (restoring it undoes the restore). Without a
// FilesRestored after it, the restore is owed, and a resume completes it.
type FilesRestoreStarted struct {
	Target string `json:"target"`
	Safety string `json:"safety"`
	// Turn is the turn a rewind withdrew from, when the restore is part of one.
	Turn int64 `json:"turn,omitempty"`
}

// FilesRestored says a restore finished: the paths written and removed, and those it did not
// touch (at most 100 ignored entries listed, MoreIgnored counting the rest).
type FilesRestored struct {
	Target      string        `json:"target"`
	Safety      string        `json:"safety"`
	Changed     []string      `json:"changed,omitempty"`
	Removed     []string      `json:"removed,omitempty"`
	NotCovered  []SkippedPath `json:"not_covered,omitempty"`
	MoreIgnored int           `json:"more_ignored,omitempty"`
	// Resumed says a resume completed a restore a crash had interrupted.
	Resumed bool `json:"resumed,omitempty"`
}

func (*Checkpoint) Kind() Kind          { return KindCheckpoint }
func (*FilesRestoreStarted) Kind() Kind { return KindFilesRestoreStarted }
func (*FilesRestored) Kind() Kind       { return KindFilesRestored }

func (p *SkippedPath) members() (f fields) {
	f.add("path", &p.Path)
	f.add("reason", &p.Reason)
	f.add("size", &p.Size)
	return f
}

func (p *Checkpoint) members() (f fields) {
	f.add("turn", &p.Turn)
	f.add("commit", &p.Commit)
	f.add("skipped", &p.Skipped)
	f.add("error", &p.Error)
	return f
}

func (p *FilesRestoreStarted) members() (f fields) {
	f.add("target", &p.Target)
	f.add("safety", &p.Safety)
	f.add("turn", &p.Turn)
	return f
}

func (p *FilesRestored) members() (f fields) {
	f.add("target", &p.Target)
	f.add("safety", &p.Safety)
	f.add("changed", &p.Changed)
	f.add("removed", &p.Removed)
	f.add("not_covered", &p.NotCovered)
	f.add("more_ignored", &p.MoreIgnored)
	f.add("resumed", &p.Resumed)
	return f
}
