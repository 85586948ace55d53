package checkpoint

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"
)

// DefaultMaxFileSize is the size cap when Options.MaxFileSize is zero: larger files are skipped.
const DefaultMaxFileSize = 10 << 20

// Errors callers branch on.
var (
	// ErrBroadWorkspace: the workspace is / or the home directory and Options.AllowBroad is unset.
	ErrBroadWorkspace = errors.New("workspace too broad to checkpoint")
	// ErrBusy: another process holds the session's checkpoints, or GC holds the repository.
	ErrBusy = errors.New("checkpoints busy")
	// ErrNotFound: no such checkpoint (an unknown commit, or no checkpoint at or before a turn).
	ErrNotFound = errors.New("no such checkpoint")
	// ErrBadSession: a session id that cannot name refs and files.
	ErrBadSession = errors.New("bad session id")
	// ErrRestoreOwed: a restore of the session was begun and not finished.
	ErrRestoreOwed = errors.New("a restore is owed")
	// ErrForeign: the shadow repository names another workspace.
	ErrForeign = errors.New("shadow repository belongs to another workspace")
	// ErrGit: git failed; a *GitError says which command and what it printed.
	ErrGit = errors.New("git failed")
)

// GitError is a git command that failed.
type GitError struct {
	Args   []string // the arguments after "git" and the -c settings
	Stderr string   // what git printed on its error stream, trimmed
	Err    error    // how the process ended
}

func (e *GitError) Error() string {
	msg := strings.TrimSpace(e.Stderr)
	if msg == "" {
		msg = e.Err.Error()
	}
	return fmt.Sprintf("git %s: %s", strings.Join(e.Args, " "), msg)
}

// Is makes a *GitError match ErrGit.
func (e *GitError) Is(target error) bool { return target == ErrGit }

func (e *GitError) Unwrap() error { return e.Err }

// Options are a Repo's settings; the zero value is the default for each.
type Options struct {
	// MaxFileSize is the size cap in bytes: larger files are skipped and named. 0 means
	// DefaultMaxFileSize; a negative value means no cap.
	MaxFileSize int64
	// Home is the user's home directory, refused as a workspace (as / always is) unless
	// AllowBroad. cmd passes $HOME; empty means only / is refused.
	Home string
	// AllowBroad allows / and Home as workspaces.
	AllowBroad bool
	// Git is the git binary; empty means "git" found on PATH.
	Git string
	// Now is the clock that dates commits; nil means time.Now.
	Now func() time.Time
}

// Repo is the shadow repository of one workspace. Its methods are safe for concurrent use; calls
// for one session wait for each other.
type Repo struct {
	gitBin    string
	gitDir    string // the shadow repository
	workspace string // absolute, symlinks resolved
	maxSize   int64
	now       func() time.Time
	env       []string // the environment of every git command, before GIT_WORK_TREE and GIT_INDEX_FILE

	mu       sync.Mutex
	sessions map[string]*sess
}

// sess is one session's in-process state.
type sess struct {
	id  string
	dir string        // rein/sessions/<id>
	sem chan struct{} // one operation at a time within the process
	// excludeSeen is the workspace's info/exclude as this process last looked at it when staging
	// this session, and staged whether it has staged at all: either changing means the ignore
	// rules may have changed, and entries now ignored must leave the index.
	excludeSeen fileStamp
	staged      bool
	// tree is the tree write-tree last gave for the session's index, and treeStamp the index
	// file as it was then; empty when unknown.
	tree      string
	treeStamp indexStamp
	// watch is what the last snapshot saw of the workspace, when it could keep it: the next
	// snapshot that finds it all as it was runs no git (see watch). walkAfter counts down the
	// snapshots that take no watch after a walk found too many entries.
	watch     *watch
	walkAfter int
}

// Open opens (creating it if need be) the shadow repository of workspace under stateDir,
// rein's state directory.
func Open(stateDir, workspace string, opt Options) (*Repo, error) {
	ws, err := resolveDir(workspace)
	if err != nil {
		return nil, fmt.Errorf("open checkpoints: workspace: %w", err)
	}
	if !opt.AllowBroad {
		if err := refuseBroad(ws, opt.Home); err != nil {
			return nil, err
		}
	}
	if stateDir == "" {
		return nil, errors.New("open checkpoints: no state directory given")
	}
	state, err := filepath.Abs(stateDir)
	if err != nil {
		return nil, fmt.Errorf("open checkpoints: state directory: %w", err)
	}
	bin := opt.Git
	if bin == "" {
		bin = "git"
	}
	if bin, err = exec.LookPath(bin); err != nil {
		return nil, fmt.Errorf("open checkpoints: checkpoints need git installed: %w", err)
	}
	r := &Repo{
		gitBin:    bin,
		workspace: ws,
		gitDir:    filepath.Join(state, "checkpoints", slug(ws)+".git"),
		maxSize:   opt.MaxFileSize,
		now:       opt.Now,
		sessions:  map[string]*sess{},
	}
	if r.maxSize == 0 {
		r.maxSize = DefaultMaxFileSize
	}
	if r.now == nil {
		r.now = time.Now
	}
	r.env = r.baseEnv()
	if err := r.create(); err != nil {
		return nil, fmt.Errorf("open checkpoints of %s: %w", ws, err)
	}
	if err := r.writeOwnExcludes(state); err != nil {
		return nil, fmt.Errorf("open checkpoints of %s: %w", ws, err)
	}
	return r, nil
}

// Workspace is the workspace's absolute path, symlinks resolved.
func (r *Repo) Workspace() string { return r.workspace }

// Dir is the shadow repository's directory.
func (r *Repo) Dir() string { return r.gitDir }

func resolveDir(p string) (string, error) {
	abs, err := filepath.Abs(p)
	if err != nil {
		return "", err
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return "", err
	}
	fi, err := os.Stat(real)
	if err != nil {
		return "", err
	}
	if !fi.IsDir() {
		return "", fmt.Errorf("%s is not a directory", p)
	}
	return real, nil
}

func refuseBroad(ws, home string) error {
	if ws == string(filepath.Separator) {
		return fmt.Errorf("%w: %s is the root directory; run rein in a project directory, or allow it explicitly", ErrBroadWorkspace, ws)
	}
	if home == "" {
		return nil
	}
	h, err := filepath.Abs(home)
	if err != nil {
		return nil
	}
	if real, err := filepath.EvalSymlinks(h); err == nil {
		h = real
	}
	if ws == h {
		return fmt.Errorf("%w: %s is your home directory; run rein in a project directory, or allow it explicitly", ErrBroadWorkspace, ws)
	}
	return nil
}

// slug names a workspace's shadow repository: its path with separators as dashes, and a hash of
// the path so that /a/b-c and /a-b/c do not share one.
func slug(ws string) string {
	s := strings.Trim(strings.ReplaceAll(ws, string(filepath.Separator), "-"), "-")
	if s == "" {
		s = "root"
	}
	if len(s) > 100 {
		s = s[len(s)-100:]
	}
	sum := sha256.Sum256([]byte(ws))
	return s + "-" + hex.EncodeToString(sum[:4])
}

// attributes is the shadow repository's info/attributes: it outranks every .gitattributes in the
// workspace and turns off everything that would make a blob differ from the file's bytes.
const attributes = "* -text -eol -crlf -ident -filter -working-tree-encoding\n"

// create makes the shadow repository if it does not exist: initialised in a directory of its own
// and renamed into place, so a second process opening the workspace at the same moment finds
// either nothing or a whole repository.
func (r *Repo) create() error {
	if err := os.MkdirAll(filepath.Dir(r.gitDir), 0o700); err != nil {
		return err
	}
	if _, err := os.Stat(filepath.Join(r.gitDir, "rein", "workspace")); err != nil {
		tmp, err := os.MkdirTemp(filepath.Dir(r.gitDir), ".init-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(tmp)
		if err := r.initAt(tmp); err != nil {
			return err
		}
		// Another process that got there first makes the rename fail: its repository stands.
		if err := os.Rename(tmp, r.gitDir); err != nil && !errors.Is(err, fs.ErrExist) && !errors.Is(err, syscall.ENOTEMPTY) {
			return fmt.Errorf("create shadow repository: %w", err)
		}
	}
	got, err := os.ReadFile(filepath.Join(r.gitDir, "rein", "workspace"))
	if err != nil {
		return fmt.Errorf("%w: %s has no rein/workspace: %v; remove it to start afresh", ErrForeign, r.gitDir, err)
	}
	if string(got) != r.workspace+"\n" {
		return fmt.Errorf("%w: %s holds the checkpoints of %s", ErrForeign, r.gitDir, strings.TrimSpace(string(got)))
	}
	// An older repository gets today's attributes: the file is ours, and they only ever get
	// stricter.
	if err := writeIfDifferent(filepath.Join(r.gitDir, "info", "attributes"), []byte(attributes)); err != nil {
		return err
	}
	return os.MkdirAll(filepath.Join(r.gitDir, "rein", "sessions"), 0o700)
}

func (r *Repo) initAt(dir string) error {
	cmd := exec.Command(r.gitBin, "init", "-q", "--bare", "--template=", dir)
	cmd.Env = r.env
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		return &GitError{Args: []string{"init", "--bare", dir}, Stderr: stderr.String(), Err: err}
	}
	for _, d := range []string{"info", "rein/sessions"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o700); err != nil {
			return err
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "info", "attributes"), []byte(attributes), 0o600); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "info", "exclude"), nil, 0o600); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "rein", "lock"), nil, 0o600); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "rein", "workspace"), []byte(r.workspace+"\n"), 0o600)
}

// writeOwnExcludes keeps rein's state directory out of the snapshots when it lies inside the
// workspace: capturing it would copy the shadow repository into itself, and restoring it would
// rewind the sessions' records.
func (r *Repo) writeOwnExcludes(state string) error {
	var body []byte
	if real, err := filepath.EvalSymlinks(state); err == nil {
		state = real
	}
	if rel, err := filepath.Rel(r.workspace, state); err == nil && rel != "." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && rel != ".." {
		body = []byte("/" + escapeGlob(filepath.ToSlash(rel)) + "/\n")
	}
	return writeIfDifferent(filepath.Join(r.gitDir, "info", "exclude"), body)
}

func escapeGlob(s string) string {
	var b strings.Builder
	for _, c := range s {
		if strings.ContainsRune(`\*?[!# `, c) {
			b.WriteByte('\\')
		}
		b.WriteRune(c)
	}
	return b.String()
}

// writeIfDifferent replaces path with body, through a temporary file and a rename, unless it
// already holds exactly that.
func writeIfDifferent(path string, body []byte) error {
	if got, err := os.ReadFile(path); err == nil && bytes.Equal(got, body) {
		return nil
	}
	return writeAtomic(path, body, false)
}

// writeAtomic writes path whole through a temporary file and a rename; with durable, the file and
// its directory are synced, so after a crash path holds either its old content or body.
func writeAtomic(path string, body []byte, durable bool) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-")
	if err != nil {
		return err
	}
	defer os.Remove(f.Name())
	if _, err := f.Write(body); err != nil {
		f.Close()
		return err
	}
	if durable {
		if err := f.Sync(); err != nil {
			f.Close()
			return err
		}
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := os.Rename(f.Name(), path); err != nil {
		return err
	}
	if durable {
		return syncDir(filepath.Dir(path))
	}
	return nil
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

// settings are given on every git command line, so that no configuration file — not even the
// shadow repository's, should someone edit it — can turn on hooks, filters, signing or anything
// else that runs code or changes bytes.
var settings = []string{
	"core.hooksPath=/dev/null",
	"core.fsmonitor=false",
	"core.attributesFile=/dev/null",
	"core.autocrlf=false",
	"core.safecrlf=false",
	"core.eol=lf",
	"core.symlinks=true",
	"core.fileMode=true",
	"core.ignoreCase=false",
	"core.precomposeUnicode=false",
	"core.protectNTFS=false",
	"core.protectHFS=false",
	"core.untrackedCache=false",
	"core.splitIndex=false",
	"core.sparseCheckout=false",
	"core.quotePath=false",
	"core.logAllRefUpdates=false",
	"core.bare=true",
	"commit.gpgSign=false",
	"tag.gpgSign=false",
	"gc.auto=0",
	"gc.reflogExpire=now",
	"maintenance.auto=false",
	"protocol.allow=never",
	"submodule.recurse=false",
	"safe.directory=*",
	"index.threads=true",
	"checkout.workers=0",
	"advice.detachedHead=false",
}

func (r *Repo) baseEnv() []string {
	nohome := filepath.Join(r.gitDir, "rein", "no-home") // never created
	return []string{
		"PATH=" + filepath.Dir(r.gitBin) + string(filepath.ListSeparator) + "/usr/bin:/bin",
		"HOME=" + nohome,
		"XDG_CONFIG_HOME=" + nohome,
		"GIT_CONFIG_NOSYSTEM=1",
		"GIT_CONFIG_GLOBAL=/dev/null",
		"GIT_ATTR_NOSYSTEM=1",
		"GIT_TERMINAL_PROMPT=0",
		"GIT_NO_REPLACE_OBJECTS=1",
		"GIT_LITERAL_PATHSPECS=1",
		"GIT_AUTHOR_NAME=rein",
		"GIT_AUTHOR_EMAIL=rein@localhost",
		"GIT_COMMITTER_NAME=rein",
		"GIT_COMMITTER_EMAIL=rein@localhost",
		"LC_ALL=C",
		"LANG=C",
		"TZ=UTC",
	}
}

// run is one git command.
type run struct {
	args     []string
	index    string    // GIT_INDEX_FILE; empty: none set (commands that read no index)
	worktree string    // GIT_WORK_TREE and the command's directory; empty: none
	stdin    io.Reader // nil: empty
	stdout   io.Writer // nil: collected and returned
	stderr   io.Writer // nil: kept only to explain a failure
	env      []string  // more variables
}

// git runs one git command against the shadow repository and returns its output.
func (r *Repo) git(ctx context.Context, c run) ([]byte, error) {
	args := make([]string, 0, 2*len(settings)+len(c.args)+2)
	for _, s := range settings {
		args = append(args, "-c", s)
	}
	args = append(args, "-c", "core.excludesFile="+r.workspaceExcludes())
	args = append(args, c.args...)
	cmd := exec.CommandContext(ctx, r.gitBin, args...)
	env := append(append([]string{}, r.env...), "GIT_DIR="+r.gitDir)
	cmd.Dir = r.gitDir
	if c.worktree != "" {
		env = append(env, "GIT_WORK_TREE="+c.worktree)
		cmd.Dir = c.worktree
	}
	if c.index != "" {
		env = append(env, "GIT_INDEX_FILE="+c.index)
	}
	cmd.Env = append(env, c.env...)
	cmd.Stdin = c.stdin
	var out, stderr bytes.Buffer
	cmd.Stdout = &out
	if c.stdout != nil {
		cmd.Stdout = c.stdout
	}
	cmd.Stderr = &limitedBuffer{buf: &stderr, max: 64 << 10}
	if c.stderr != nil {
		cmd.Stderr = io.MultiWriter(cmd.Stderr, c.stderr)
	}
	cmd.WaitDelay = 5 * time.Second
	if err := cmd.Run(); err != nil {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("git %s: %w", c.args[0], ctx.Err())
		}
		return nil, &GitError{Args: c.args, Stderr: stderr.String(), Err: err}
	}
	return out.Bytes(), nil
}

// limitedBuffer keeps the first max bytes written to it: a git that prints a warning per file
// must not fill memory.
type limitedBuffer struct {
	buf *bytes.Buffer
	max int
}

func (l *limitedBuffer) Write(p []byte) (int, error) {
	if room := l.max - l.buf.Len(); room > 0 {
		l.buf.Write(p[:min(room, len(p))])
	}
	return len(p), nil
}

// workspaceExcludes is the workspace repository's info/exclude when the workspace is the top of a
// repository and the file is a regular one, else /dev/null. Read as git reads it: .git is a
// directory, or a file "gitdir: <path>" (a worktree or a submodule); a commondir file in the git
// directory names where info/ lives.
func (r *Repo) workspaceExcludes() string {
	gitDir := filepath.Join(r.workspace, ".git")
	fi, err := os.Lstat(gitDir)
	if err != nil {
		return os.DevNull
	}
	if fi.Mode().IsRegular() {
		b, err := readSmall(gitDir, 4096)
		if err != nil {
			return os.DevNull
		}
		line, ok := strings.CutPrefix(strings.TrimSpace(string(b)), "gitdir:")
		if !ok {
			return os.DevNull
		}
		gitDir = strings.TrimSpace(line)
		if !filepath.IsAbs(gitDir) {
			gitDir = filepath.Join(r.workspace, gitDir)
		}
	} else if !fi.IsDir() {
		return os.DevNull
	}
	common := gitDir
	if b, err := readSmall(filepath.Join(gitDir, "commondir"), 4096); err == nil {
		common = strings.TrimSpace(string(b))
		if !filepath.IsAbs(common) {
			common = filepath.Join(gitDir, common)
		}
	}
	p := filepath.Join(common, "info", "exclude")
	if fi, err := os.Lstat(p); err != nil || !fi.Mode().IsRegular() {
		return os.DevNull
	}
	return p
}

func readSmall(path string, max int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(io.LimitReader(f, max))
}

// session returns the in-process state of a session, validating its id.
func (r *Repo) session(id string) (*sess, error) {
	if err := validSession(id); err != nil {
		return nil, err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	s := r.sessions[id]
	if s == nil {
		s = &sess{id: id, dir: filepath.Join(r.gitDir, "rein", "sessions", id), sem: make(chan struct{}, 1)}
		r.sessions[id] = s
	}
	return s, nil
}

// validSession accepts ids that are safe as a file name and as a ref component: letters, digits,
// '.', '_' and '-', not starting with '.' or '-', no "..", not ending in ".lock".
func validSession(id string) error {
	bad := func(why string) error {
		return fmt.Errorf("%w: %q %s; a session id is letters, digits, '.', '_' and '-'", ErrBadSession, id, why)
	}
	switch {
	case id == "":
		return bad("is empty")
	case len(id) > 200:
		return bad("is too long")
	case id[0] == '.' || id[0] == '-':
		return bad("starts with '" + id[:1] + "'")
	case strings.Contains(id, ".."):
		return bad(`contains ".."`)
	case strings.HasSuffix(id, ".lock"):
		return bad(`ends in ".lock"`)
	}
	for _, c := range id {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-') {
			return bad(fmt.Sprintf("contains %q", c))
		}
	}
	return nil
}

// refPrefix is where a session's refs live.
func refPrefix(session string) string { return "refs/rein/" + session + "/" }

// randomName is a name for a temporary file nobody else will choose.
func randomName(prefix string) string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return prefix + hex.EncodeToString(b[:])
}
