package checkpoint

import "time"

// Reason says why a path is not in a snapshot.
type Reason string

// The reasons a path is skipped or not covered.
const (
	// Oversize: a file larger than the size cap.
	Oversize Reason = "oversize"
	// NestedRepo: a directory holding its own .git, and everything under it.
	NestedRepo Reason = "nested repository"
	// Unreadable: a file or directory rein may not read.
	Unreadable Reason = "unreadable"
	// Special: not a regular file, a directory or a symbolic link (a socket, a FIFO, a device).
	Special Reason = "not a regular file"
	// BadName: a name git will not store (a path component spelt .git in any case).
	BadName Reason = "name git cannot store"
	// Ignored: matched by a .gitignore file or an exclude file (reported by Restore only).
	Ignored Reason = "ignored"
	// InTheWay: a path of the target checkpoint that Restore left out because writing it would
	// replace or write inside something the snapshots do not cover.
	InTheWay Reason = "in the way of files not covered"
)

// Skip is a path left out, and why. A directory's path ends in "/".
type Skip struct {
	Path   string `json:"path"`
	Reason Reason `json:"reason"`
	Size   int64  `json:"size,omitempty"` // the file's size, for Oversize
}

// Checkpoint is what Snapshot took.
type Checkpoint struct {
	Session string
	Turn    int64
	// Commit is the checkpoint's commit: a new one when Changed, else the session's head, whose
	// tree is the workspace's still.
	Commit  string
	Tree    string
	Changed bool
	// Skipped names every path the snapshot left out but ignored ones, sorted by path.
	Skipped []Skip
}

// Restored is what Restore did.
type Restored struct {
	// Target is the commit restored.
	Target string
	// Safety is the checkpoint of the workspace taken before the restore changed anything:
	// restoring it undoes the restore.
	Safety string
	// Resumed is true when the call completed a restore an earlier call began.
	Resumed bool
	// Changed are the paths written (created or changed back), Removed those removed, both
	// relative to the workspace before the restore began and sorted.
	Changed []string
	Removed []string
	// NotCovered are the paths the restore did not touch: those the safety snapshot skipped,
	// ignored ones (a wholly ignored directory as one entry, at most MaxIgnoredListed of them),
	// and paths of the target left out because they are in the way of those.
	NotCovered []Skip
	// MoreIgnored counts the ignored entries beyond those listed.
	MoreIgnored int
}

// MaxIgnoredListed bounds the ignored entries a Restored lists: a tree with an ignored file in
// every directory would otherwise list them all.
const MaxIgnoredListed = 100

// Entry is one checkpoint in a session's list.
type Entry struct {
	Commit string
	Tree   string
	Time   time.Time
	// Turn is the turn the checkpoint was taken at; 0 for a safety checkpoint.
	Turn int64
	// Safety is true for a checkpoint Restore took before a restore.
	Safety bool
}

// Change is one path that differs between two checkpoints.
type Change struct {
	Path string
	// Status is 'A' (added), 'M' (modified, content or mode), 'D' (deleted) or 'T' (type
	// changed: a file became a link or the reverse).
	Status  byte
	OldMode string // "100644", "100755", "120000"; empty when added
	NewMode string // empty when deleted
}

// RestoreStarted is a restore begun: the wiring records it (record.FilesRestoreStarted) after the
// safety snapshot and before any file changes, and a resume that finds it without a
// files_restored after it calls Restore again with Target.
type RestoreStarted struct {
	Target string `json:"target"`
	Safety string `json:"safety"`
	// Turn is the turn the restore rewinds to, when it is part of a rewind.
	Turn int64 `json:"turn,omitempty"`
}
