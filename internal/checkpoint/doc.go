// Package checkpoint owns rein's workspace checkpoints: snapshots of a workspace's files, tied to
// a session's turns, kept in a shadow git repository apart from the user's own, and the restore
// that puts a workspace back as a snapshot found it.
//
// # The shadow repository
//
// Each workspace has one shadow repository, a bare git directory under rein's state directory:
// <state>/checkpoints/<slug>-<hash>.git, where the slug is the workspace's absolute path with
// separators as dashes and the hash tells apart two paths with one slug. The repository names its
// workspace in rein/workspace, and Open refuses a repository that names another. Each session has
// its own index file (rein/sessions/<session>/index) and its own refs:
//
//	refs/rein/<session>/head          the session's latest checkpoint, parent of the next
//	refs/rein/<session>/turn/<turn>   the latest checkpoint taken at that turn
//	refs/rein/<session>/safety/<hash> a checkpoint Restore took before it changed anything
//
// Objects are shared, so a file that two sessions (or two turns) hold is stored once.
//
// The package drives the git binary, never a library, with an environment built from nothing:
// GIT_DIR set explicitly for every command, and GIT_WORK_TREE and GIT_INDEX_FILE for every
// command that reads the workspace or an index; no system or
// global configuration (GIT_CONFIG_NOSYSTEM, GIT_CONFIG_GLOBAL=/dev/null, HOME and
// XDG_CONFIG_HOME pointing at a directory that does not exist, no inherited GIT_* variable); no
// hooks (core.hooksPath=/dev/null), no fsmonitor, no signing, no reflogs, no automatic gc, no
// network (protocol.allow=never); literal pathspecs; and every setting that could change bytes
// on their way in or out (autocrlf, the attributes file) pinned on the command line.
//
// # Why the user's repository is safe
//
// rein never runs git against the workspace's own repository: every command names the shadow
// repository as GIT_DIR, so the workspace's .git — its config, index, refs, hooks — is neither
// read as a repository nor written. Git itself never treats a path named .git as content, so the
// workspace's .git is never captured and never touched by a restore. Two things are read from the
// workspace's repository, both as plain text: its info/exclude (as core.excludesFile, and only
// when it is a regular file) and, through git's walk, the .gitignore files of the tree.
//
// A workspace's .gitattributes cannot run code or change bytes: filter, diff and merge drivers
// exist only in configuration, and the configuration is rein's own; and the shadow repository's
// info/attributes, which takes precedence over every .gitattributes, unsets text, eol, crlf,
// ident, filter and working-tree-encoding for every path, so a blob holds a file's exact bytes
// and a restore writes them back unchanged.
//
// The shadow repository holds copies of everything it captured, secrets in unignored files
// included, so its directory is made readable by its owner only.
//
// # What is captured
//
// A snapshot captures every file git would track in a fresh repository at the workspace root:
// every path not ignored by the .gitignore files of the tree, the shadow repository's own
// info/exclude (which names rein's state directory when it lies inside the workspace) or the
// workspace repository's info/exclude. Regular files as blobs (binaries too), their executable
// bit, and symbolic links as links (never followed). A file captured earlier and ignored later
// leaves the snapshots.
//
// What is not captured, each named in a snapshot's Skipped with its reason, never silently:
//
//   - files larger than the size cap (Options.MaxFileSize, 10 MiB by default);
//   - nested repositories: a directory holding its own .git (a submodule, a clone, a `git init`),
//     with everything under it (one made inside a directory already captured is found, and its
//     files leave the snapshots, when a file in it next changes);
//   - directories git's walk cannot read;
//   - files that cannot be read, that are not regular files or links (sockets, FIFOs, devices),
//     or whose names git will not store (a component spelt .git in any case).
//
// Not captured, and not named, because they are the user's choice or not files: ignored paths,
// empty directories, permission bits other than the executable bit, owners, times, extended
// attributes. The user's global excludes file (~/.config/git/ignore) is not read: what is
// captured does not depend on who runs rein. A workspace that is a subdirectory of a repository
// reads neither that repository's info/exclude nor the .gitignore files above the workspace.
//
// # Snapshots
//
// Snapshot brings the session's index up to date with the workspace and commits it. It asks git
// for the untracked files (ls-files --others) and for the tracked files whose stat data changed
// (diff-files), side by side; looks at each of those paths (size, kind, a nested repository
// above it); and hands only them to update-index. A snapshot of an unchanged tree therefore costs
// one walk of the directories and one lstat per tracked file, git's stat cache doing the rest, and
// writes nothing: when write-tree gives the tree the session's head already has, no commit is made
// (Checkpoint.Changed is false). A new session's index starts as a copy of the most recently used
// one, so its first snapshot reuses the stat cache too.
//
// Most tool turns change nothing (echo, ls, cat, grep), and their snapshots start no git process
// at all. Before git looks at the workspace, a snapshot walks it and keeps, in the process, the
// stat data (size, mtime, ctime, inode, mode) of every entry of every directory — .git and rein's
// own state directory passed over, ignored entries kept — and, once committed, of the session's
// index, its head ref and the exclude files. The next snapshot of the session lstats them all;
// when every one is as it was, the workspace holds the tree the last snapshot took (a changed
// file has a new ctime even when its size and mtime are put back; an entry added, removed or
// renamed changes its directory's mtime; an ignore rule lives in a watched file), and the
// snapshot answers as git would have: Changed false, Commit the head. Whatever differs sends the
// snapshot to git, which decides as before. No watch is kept, and every snapshot runs git, while
// an entry changed within 50 ms (plus the timestamps' granule) of the walk — racily clean, as git
// says — or when the walk meets an unreadable directory, another filesystem mounted inside the
// workspace, a filesystem not known to date files by this machine's clock (a network one), or
// more than 20,000 entries (a large ignored directory: git's own walk skips it, this one does not).
//
// # Restores
//
// Restore makes the workspace's tree equal a checkpoint's, except for the paths the workspace has
// now that its snapshot does not cover (ignored, oversize, in a nested repository, unreadable):
// those are never written or removed, and a path of the checkpoint that would need one of them
// replaced is left out; all are reported in Restored.NotCovered. In order:
//
//  1. a safety snapshot of the workspace as it stands, kept under a safety ref, so the restore
//     can be undone by restoring it;
//  2. a marker, rein/sessions/<session>/restore, naming the target and the safety commit, written
//     and synced before any file changes;
//  3. the target tree, less the paths left out, checked out over the index of the safety
//     snapshot (read-tree --reset -u): files changed back, files created since removed (and
//     directories they leave empty), files deleted since re-created, modes and links restored;
//  4. the marker removed.
//
// A restore killed at any point is completed by calling Restore again (Pending says whether one is
// owed; Snapshot refuses while one is, with ErrRestoreOwed): with a marker present it keeps the
// marker's safety checkpoint, snapshots whatever the interrupted restore left (under a safety ref
// of its own, so that edits made in between are kept too), and checks out the target again, so
// running it twice is the same as running it once.
//
// Git trusts an index entry's stat data only for files older than the index file. Every index
// this package leaves is dated a second before the operation that wrote it began, so a file
// changed within the clock tick in which git read it is compared by content next time.
//
// # Locks
//
// A session's operations hold an exclusive flock on rein/sessions/<session>/lock for their
// duration (a second process is refused with ErrBusy); operations of one Repo on one session wait
// for each other. Every operation holds a shared flock on rein/lock, which GC takes exclusively,
// so objects a snapshot has written but not yet referenced are never pruned under it. A process
// killed while running git can leave git's own lock files (index.lock, a ref's .lock); they are
// removed by the next holder of the session's lock that runs git, which is the only writer they
// can belong to.
//
// # Refusals
//
// Open refuses / and the user's home directory as workspaces unless Options.AllowBroad is set: a
// snapshot of either is a copy of far more than a project.
package checkpoint
