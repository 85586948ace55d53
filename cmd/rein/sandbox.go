package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"

	osbox "github.com/reinhq/rein/internal/sandbox"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// sandboxHelp says what the sandbox modes do, for the help of the commands that take them.
const sandboxHelp = `The OS sandbox (--sandbox) confines every command the bash tool runs:
  workspace-write  writes only to the workspace, $TMPDIR (a directory rein makes
                   and removes), /dev/null and each --sandbox-write directory;
                   reads anywhere; no network (TCP, UDP) unless --allow-network;
                   on Linux, whatever a command starts (a setsid daemon too)
                   ends with its call where rein may make PID namespaces. The
                   default where the kernel supports it (Linux: Landlock ABI 3,
                   6.2 or later; macOS: sandbox-exec).
  read-only        the same, the workspace not writable either.
  off              no sandbox: commands do whatever the user running rein can.
A command the machine cannot confine as asked is refused, never run without
the sandbox; ` + "`rein sandbox`" + ` says what this machine supports. --protect-git
keeps the workspace's .git read-only (a hook planted there would run later,
outside the sandbox). The sandbox is chosen by each run, not kept by a resume.
The file tools are rein's own code, kept to the workspace; the sandbox is for
commands.`

// sandboxFlags choose the OS sandbox commands run under (package sandbox).
type sandboxFlags struct {
	mode       string // "" for the machine's default
	network    bool
	write      []string
	protectGit bool
	// chosen is the policy the flags give, once resolve judged them: what every session of the
	// process runs its commands under, records and tells its model.
	chosen osbox.Policy
}

func (f *sandboxFlags) register(fs *pflag.FlagSet) {
	fs.StringVar(&f.mode, "sandbox", "", "the OS sandbox for commands: workspace-write (the default where the kernel supports it), read-only or off")
	fs.BoolVar(&f.network, "allow-network", false, "let sandboxed commands reach the network")
	fs.StringArrayVar(&f.write, "sandbox-write", nil, "a directory more that sandboxed commands may write (repeatable)")
	fs.BoolVar(&f.protectGit, "protect-git", false, "keep the workspace's .git read-only for sandboxed commands, so none can plant a git hook")
}

// sandboxSupport is what this machine supports, as far as the default mode and the warning need
// (osbox.Quick: not the probe of the namespaces, which a sandbox makes when a command first needs
// it). REIN_SANDBOX_UNSUPPORTED, when set, is a reason to refuse every sandboxed command: the
// tests' switch for a machine that cannot enforce one.
func sandboxSupport() osbox.Support {
	return forced(osbox.Quick())
}

// fullSupport is sandboxSupport with what the probe of the namespaces learns, for the report.
func fullSupport() osbox.Support { return forced(osbox.Check()) }

// forced is s refusing every confined command when REIN_SANDBOX_UNSUPPORTED says why (a test
// switch for the path of a machine that cannot enforce the sandbox).
func forced(s osbox.Support) osbox.Support {
	if why := os.Getenv("REIN_SANDBOX_UNSUPPORTED"); why != "" {
		s.Forced = why
	}
	return s
}

// resolve judges the flags (and the config file's keys) and sets chosen, saying on w when
// commands will run unconfined for want of a sandbox on this machine. A bad mode or directory is
// a usage error.
func (f *sandboxFlags) resolve(w io.Writer) error {
	p, err := f.policy()
	if err != nil {
		return err
	}
	f.chosen = p
	f.warn(w, p)
	return nil
}

// policy is the sandbox policy the flags give: with no mode named, the machine's default, or
// workspace-write when a flag shapes a sandbox.
func (f sandboxFlags) policy() (osbox.Policy, error) {
	mode := f.mode
	if mode == "" {
		mode = string(sandboxSupport().Default())
		if f.network || len(f.write) > 0 || f.protectGit {
			mode = string(osbox.WorkspaceWrite)
		}
	}
	m, err := osbox.ParseMode(mode)
	if err != nil {
		return osbox.Policy{}, exitf(exitUsage, "--sandbox: %v", err)
	}
	p := osbox.Policy{Mode: m, Network: f.network, ProtectGit: f.protectGit}
	for _, d := range f.write {
		abs, err := filepath.Abs(d)
		if err != nil {
			return osbox.Policy{}, exitf(exitUsage, "--sandbox-write %s: %v", d, err)
		}
		p.Write = append(p.Write, abs)
	}
	if err := p.Check(); err != nil {
		return osbox.Policy{}, exitf(exitUsage, "%v", err)
	}
	return p, nil
}

// warn tells the person, once, that commands run unconfined because this machine cannot confine
// them and no mode was named.
func (f sandboxFlags) warn(w io.Writer, p osbox.Policy) {
	if f.mode != "" || p.Mode != osbox.Off {
		return
	}
	if err := sandboxSupport().Enforce(osbox.Policy{Mode: osbox.WorkspaceWrite}); err != nil {
		fmt.Fprintf(w, "rein: commands run without a sandbox: this machine cannot confine them (`rein sandbox` says why); --sandbox off silences this\n")
	}
}

// sandboxes holds this process's sandboxes, one per workspace and policy, whose temporary
// directories live in one directory, removed when rein ends (closeSandboxes).
var sandboxes struct {
	mu   sync.Mutex
	root string
	open map[string]*osbox.Sandbox // by workspace and policy
}

// openSandbox returns the sandbox of the bash tools working in ws under policy p, or nil for off.
// The sessions of one process in one workspace share it, and so its temporary directory: they
// share the workspace, which their commands may all write, so a directory each would keep nothing
// apart, and a host that reopens conversations would make one at every reopening.
func openSandbox(p osbox.Policy, ws string) (*osbox.Sandbox, error) {
	if p.Mode == osbox.Off {
		return nil, nil
	}
	sandboxes.mu.Lock()
	defer sandboxes.mu.Unlock()
	key := ws + "\x00" + p.String()
	if box, ok := sandboxes.open[key]; ok {
		return box, nil
	}
	if sandboxes.root == "" {
		root, err := os.MkdirTemp("", fmt.Sprintf("rein-%d-", os.Getpid()))
		if err != nil {
			return nil, fmt.Errorf("make the sandboxes' temporary directory: %w", err)
		}
		sandboxes.root = root
	}
	cfg := osbox.Config{Workspace: ws, TempRoot: sandboxes.root}
	if sup := sandboxSupport(); sup.Forced != "" {
		cfg.Support = &sup // it refuses every command: what else the machine has does not matter
	}
	box, err := osbox.New(p, cfg)
	if err != nil {
		return nil, err
	}
	if sandboxes.open == nil {
		sandboxes.open = map[string]*osbox.Sandbox{}
	}
	sandboxes.open[key] = box
	return box, nil
}

// closeSandboxes removes the temporary directories of every sandbox this process made.
func closeSandboxes() {
	sandboxes.mu.Lock()
	defer sandboxes.mu.Unlock()
	for _, b := range sandboxes.open {
		b.Close()
	}
	if sandboxes.root != "" {
		os.RemoveAll(sandboxes.root)
	}
	sandboxes.open, sandboxes.root = nil, ""
}

// sandboxNote is what the system prompt says of the sandbox (nothing when there is none).
func sandboxNote(p osbox.Policy) string {
	if s := p.Prompt(); s != "" {
		return "\n\n" + s
	}
	return ""
}

// saySandboxChange tells the person that a resumed session's commands run under another sandbox
// than last time (recorded by the resume).
func saySandboxChange(w io.Writer, was string, p osbox.Policy) {
	if was != "" && was != p.String() {
		fmt.Fprintf(w, "rein: this session's sandbox changes from %s to %s (recorded)\n", was, p)
	}
}

func newSandboxCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "sandbox [check]",
		Short: "Say what OS sandbox this machine can give commands",
		Long: `sandbox says which of the mechanisms rein confines commands with this machine
has (Linux: Landlock and its ABI, seccomp, PID and mount namespaces; macOS:
sandbox-exec), what each confines, and what the default --sandbox mode is here.

` + sandboxHelp,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 1 && args[0] != "check" {
				return exitf(exitUsage, "rein sandbox takes no argument but check, not %q", args[0])
			}
			fullSupport().Report(cmd.OutOrStdout())
			return nil
		},
	}
}
