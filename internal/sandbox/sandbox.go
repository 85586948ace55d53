// Package sandbox confines the commands the bash tool runs, with what the operating system
// provides, so that a command cannot do what its text does not say: write outside the workspace,
// reach the network, or leave a process behind. It owns the policy (the modes a person chooses),
// the check of what this machine can enforce, and the launch of a command under it. It promises
// that a command it cannot confine as asked is never run unconfined: Confine refuses it with an
// *UnsupportedError that says why and what to do.
//
// The modes: workspace-write (the workspace, the sandbox's own temporary directory, the
// directories given with Policy.Write and /dev/null are writable; the rest of the filesystem is
// readable), read-only (the same without the workspace) and off (no sandbox). In both confined
// modes the network is off unless Policy.Network: no TCP connect or bind, no socket but a Unix
// one, so UDP cannot leave either.
//
// On Linux a command is confined by Landlock (writes; TCP, from ABI 4; signals and abstract Unix
// sockets scoped to the sandbox, from ABI 6) and a seccomp filter (sockets other than Unix ones,
// io_uring, 32-bit system calls and a few calls that reach into the kernel refused). Both apply
// to the calling thread and all it starts, so they are applied in a helper process: rein
// re-executes itself (Main is the first thing its main does), the helper confines itself and
// executes the command's supervisor, keeping its pid, so the supervisor's process group and its
// lifeline are what they were. Where the machine allows it (root, or a user namespace), the
// helper starts in a new PID namespace, of which the supervisor is the first process: when it
// dies, the kernel kills every process of the namespace, a daemon that left the process group
// (setsid) included, so nothing a command starts outlives its call or rein. The same mount
// namespace lets Policy.ProtectGit bind the workspace's .git read-only.
//
// Landlock is called here through golang.org/x/sys/unix, not through go-landlock: every package
// of that module imports libpsx, which (with cgo) wraps pthread_create for the whole rein binary
// so as to reach every thread of a process. The helper confines the one thread about to execute
// the command, which needs three system calls and none of that.
//
// On macOS a command runs under sandbox-exec with a Seatbelt profile generated from the policy
// (see Seatbelt), which writes the same rules; there is no PID namespace there.
package sandbox

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
)

// Mode is how much a command may change: a sandbox mode as --sandbox names it.
type Mode string

// The sandbox modes.
const (
	WorkspaceWrite Mode = "workspace-write"
	ReadOnly       Mode = "read-only"
	Off            Mode = "off"
)

// Modes lists the modes in the order --help gives them.
var Modes = []Mode{WorkspaceWrite, ReadOnly, Off}

// ParseMode reads a mode as --sandbox takes it.
func ParseMode(s string) (Mode, error) {
	m := Mode(s)
	if slices.Contains(Modes, m) {
		return m, nil
	}
	return "", fmt.Errorf("unknown sandbox mode %q: use workspace-write, read-only or off", s)
}

// Policy is what a person allows commands: a mode and what lifts part of it.
type Policy struct {
	Mode Mode
	// Network lifts the network rule (--allow-network).
	Network bool
	// Write lists more directories a command may write (--sandbox-write), as absolute paths.
	Write []string
	// ProtectGit keeps the workspace's .git read-only in workspace-write mode (--protect-git), so
	// that a command cannot plant a hook that git runs later, outside the sandbox.
	ProtectGit bool
}

// String says the policy in a few words, as rein show and the record give it.
func (p Policy) String() string {
	if p.Mode == Off || p.Mode == "" {
		return string(Off)
	}
	parts := []string{string(p.Mode)}
	if p.Network {
		parts = append(parts, "network allowed")
	} else {
		parts = append(parts, "no network")
	}
	if p.ProtectGit && p.Mode == WorkspaceWrite {
		parts = append(parts, ".git read-only")
	}
	if len(p.Write) > 0 {
		parts = append(parts, "also writes "+strings.Join(p.Write, " "))
	}
	return strings.Join(parts, ", ")
}

// Check judges a policy as a person gave it: a known mode, extra writable directories that are
// absolute and exist.
func (p Policy) Check() error {
	if _, err := ParseMode(string(p.Mode)); err != nil {
		return err
	}
	for _, d := range p.Write {
		if !filepath.IsAbs(d) {
			return fmt.Errorf("--sandbox-write %s: give an absolute path", d)
		}
		fi, err := os.Stat(d)
		if err != nil {
			return fmt.Errorf("--sandbox-write %s: %w", d, err)
		}
		if !fi.IsDir() {
			return fmt.Errorf("--sandbox-write %s: not a directory", d)
		}
	}
	if p.Mode == Off && (p.Network || len(p.Write) > 0 || p.ProtectGit) {
		return errors.New("--allow-network, --sandbox-write and --protect-git shape a sandbox, and --sandbox off turns it off: drop one")
	}
	return nil
}

// Prompt is what the system prompt says of the sandbox, so that the model knows why a write or a
// connection fails, and where it may write instead.
func (p Policy) Prompt() string {
	if p.Mode == Off || p.Mode == "" {
		return ""
	}
	var b strings.Builder
	b.WriteString("Commands run in an OS sandbox (" + p.String() + "): ")
	switch p.Mode {
	case WorkspaceWrite:
		b.WriteString("they may write only in the workspace")
	case ReadOnly:
		b.WriteString("they may not write in the workspace, only")
	}
	b.WriteString(" and in $TMPDIR")
	if len(p.Write) > 0 {
		b.WriteString(" and " + strings.Join(p.Write, ", "))
	}
	b.WriteString("; anywhere else a write fails with \"Permission denied\" (point a tool's cache into $TMPDIR, e.g. GOCACHE=$TMPDIR/go-build)")
	if p.ProtectGit && p.Mode == WorkspaceWrite {
		b.WriteString("; .git is read-only (git status and git diff work, git commit does not)")
	}
	if !p.Network {
		b.WriteString("; the network is off (no TCP or UDP, only Unix sockets)")
	}
	b.WriteString(". Processes a command leaves in the background end with it. The file tools are not sandboxed.")
	return b.String()
}

// UnsupportedError is the refusal of a command this machine cannot confine as the policy asks:
// it is not run.
type UnsupportedError struct {
	Policy Policy
	Reason string // what the machine lacks
}

func (e *UnsupportedError) Error() string {
	return fmt.Sprintf("the command was not run: the sandbox (%s) cannot be enforced on this machine: %s. "+
		"To run commands without a sandbox, restart rein with --sandbox off; `rein sandbox` says what this machine supports",
		e.Policy.Mode, e.Reason)
}

// LaunchError is the refusal of a command whose sandbox failed to apply in the helper: it was not
// run either.
type LaunchError struct {
	Msg string
}

func (e *LaunchError) Error() string {
	return "the command was not run: the sandbox could not be applied: " + e.Msg
}

// helperArg is the argument by which a rein process knows it is the sandbox helper (see Main).
const helperArg = "__rein_sandbox"

// Main runs the sandbox helper and never returns if this process is one; otherwise it returns at
// once. rein's main calls it first thing, as does the TestMain of every package whose tests start
// confined commands.
func Main() {
	if len(os.Args) < 2 || os.Args[1] != helperArg {
		return
	}
	os.Exit(helper(os.Args[2:]))
}

// Sandbox confines the commands of one workspace under a policy; it is safe for concurrent use.
// Its temporary directory is its own, made by New and removed by Close.
type Sandbox struct {
	policy    Policy
	workspace string   // resolved
	temp      string   // this sandbox's temporary directory, resolved
	write     []string // the writable directories, resolved
	exe       string   // the helper's executable (Linux)
	launch    launcher

	// sup is what this machine supports: Config.Support, or Check's answer, asked for when a
	// command first needs it (support) — Check's probe of the namespaces starts a helper, which
	// need not delay a session's start.
	supOnce sync.Once
	sup     Support
}

// support is what this machine supports, as s was given it or Check says.
func (s *Sandbox) support() *Support {
	s.supOnce.Do(func() { s.sup = Check() })
	return &s.sup
}

// Config says what New needs besides the policy.
type Config struct {
	Workspace string
	// TempRoot is where the sandbox makes its temporary directory (default: os.TempDir()).
	TempRoot string
	// Support is what this machine supports; the zero value means Check's answer, asked for when
	// a command first needs it. Tests pass a Support of their own to force the unsupported path.
	Support *Support
}

// New returns the sandbox of a workspace under policy p, which Check accepted. Off needs none:
// New returns nil for it.
func New(p Policy, cfg Config) (*Sandbox, error) {
	if p.Mode == Off || p.Mode == "" {
		return nil, nil
	}
	if err := p.Check(); err != nil {
		return nil, err
	}
	ws, err := filepath.EvalSymlinks(cfg.Workspace)
	if err != nil {
		return nil, fmt.Errorf("resolve the workspace: %w", err)
	}
	root := cfg.TempRoot
	if root == "" {
		root = os.TempDir()
	}
	temp, err := os.MkdirTemp(root, "rein-sandbox-")
	if err != nil {
		return nil, fmt.Errorf("make the sandbox's temporary directory: %w", err)
	}
	if temp, err = filepath.EvalSymlinks(temp); err != nil {
		return nil, fmt.Errorf("resolve the sandbox's temporary directory: %w", err)
	}
	s := &Sandbox{policy: p, workspace: ws, temp: temp, exe: selfExe}
	if p.Mode == WorkspaceWrite {
		s.write = append(s.write, ws)
	}
	s.write = append(s.write, temp)
	for _, d := range p.Write {
		r, err := filepath.EvalSymlinks(d)
		if err != nil {
			os.RemoveAll(temp)
			return nil, fmt.Errorf("resolve --sandbox-write %s: %w", d, err)
		}
		s.write = append(s.write, r)
	}
	if cfg.Support != nil {
		s.supOnce.Do(func() { s.sup = *cfg.Support })
	}
	return s, nil
}

// Policy is the sandbox's policy.
func (s *Sandbox) Policy() Policy { return s.policy }

// Contains reports whether each command starts as the first process of a PID namespace of its
// own (Linux, where the machine allows it), whose end ends every process the command started.
func (s *Sandbox) Contains() bool { return s != nil && s.support().Contain != "" }

// Anew reports whether each command must be confined as the workspace is when it starts, not
// ahead of it: with .git kept read-only (--protect-git), the helper binds the .git there is then,
// and a command may make one for the next. A nil Sandbox confines nothing, ahead or not.
func (s *Sandbox) Anew() bool {
	return s != nil && s.policy.ProtectGit && s.policy.Mode == WorkspaceWrite
}

// TempDir is the sandbox's temporary directory: writable by its commands, which find it as
// $TMPDIR.
func (s *Sandbox) TempDir() string { return s.temp }

// Writable lists the directories a command may write, resolved.
func (s *Sandbox) Writable() []string { return slices.Clone(s.write) }

// Close removes the sandbox's temporary directory and all it holds, once the cgroups of its
// commands are removed.
func (s *Sandbox) Close() error {
	if s == nil {
		return nil
	}
	s.closeLauncher()
	AwaitRemovals(removeWait)
	return os.RemoveAll(s.temp)
}

// withEnv returns env with name set to value, replacing any earlier setting.
func withEnv(env []string, name, value string) []string {
	out := make([]string, 0, len(env)+1)
	for _, kv := range env {
		if k, _, _ := strings.Cut(kv, "="); k != name {
			out = append(out, kv)
		}
	}
	return append(out, name+"="+value)
}
