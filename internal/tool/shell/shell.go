// Package shell provides the bash tool: a command line run by bash in the workspace, with a
// working directory that persists across calls, output capped to its head and tail, a timeout,
// and a Stop that ends the command's whole process group.
//
// No process a call starts outlives rein, even a rein killed with SIGKILL. A command's shell is
// rein's child and leads a fresh session and process group; it runs nothing before the group is
// held on the lifeline, a pipe whose write end only rein holds, read by a small bash keeper that
// rein starts once and that SIGKILLs every group still held at end of file, however rein died. No
// signal is involved, so no interleaving of a Stop, a timeout and rein's death can get past it.
// rein kills the group itself when the command ends (so a call's background jobs end with it) and
// when a stop's grace period is over. The one way out is to leave the process group (setsid, or a
// shell with job control on): such a process is neither signalled nor waited for, unless the
// sandbox holds the command in a PID namespace of its own (Options.Sandbox; Linux, where the
// machine allows it), whose end ends it too; such a command runs under a supervisor of its own
// instead. See directScript, keeperScript and the supervisor script for the details. The command
// has no controlling terminal and its stdin is /dev/null.
//
// A command usually finds its shell already started: each call starts the next call's shell
// beside its command, held and confined as any (its sandbox helper and namespaces included),
// parked before running anything until it is given its command (spare.go), so a call does not
// wait for bash, or rein's sandbox helper, to start.
//
// Under a sandbox (package sandbox) a command cannot write outside the workspace and the
// sandbox's temporary directory, nor reach the network; one the machine cannot confine as asked
// is refused, never run unconfined.
//
// It runs on Linux and macOS, with the same guarantees. What differs is in sys_linux.go and
// sys_darwin.go (how the control file is made and reached, the parent-death signal Linux adds
// behind the lifeline) and in package procs (how a process group is read and an exit awaited);
// the rest, the scripts included, is one code for both. The scripts run under bash 3.2, macOS's
// /bin/bash, as well as under bash 5.
//
// The environment is inherited minus well-known secret variables, so that an API key rein holds is
// not handed to every command the model writes.
package shell

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/reinhq/rein/internal/provider"
	"github.com/reinhq/rein/internal/record"
	"github.com/reinhq/rein/internal/sandbox"
	"github.com/reinhq/rein/internal/tool"
)

// Options tune the bash tool. The zero value of each field means its default.
type Options struct {
	// Bash is the bash executable. Default: "bash" looked up on PATH.
	Bash string
	// Env is the commands' environment. Default: rein's own. SecretEnv names are always removed.
	Env []string
	// Grace is how long a stopped or timed-out command has between SIGTERM and SIGKILL. Default 2 s.
	Grace time.Duration
	// Timeout is a call's timeout when it names none (default 2 min); MaxTimeout the most a call
	// may ask for (default 10 min).
	Timeout    time.Duration
	MaxTimeout time.Duration
	// HeadBytes and TailBytes are how much of the start and the end of the output a result keeps.
	// Default 16 KiB each.
	HeadBytes int
	TailBytes int
	// Sandbox confines every command (see package sandbox); nil runs them unconfined. A command
	// it cannot confine is refused (Outcome Denied), never run without it. The Tool does not own
	// it: whoever made it closes it.
	Sandbox *sandbox.Sandbox
	// Started, when set, is called as each command's process has started, so that a benchmark
	// can tell a command's start from its run (rein bench turns).
	Started func()
}

// SecretEnv lists the environment variables never passed to a command.
var SecretEnv = []string{"ANTHROPIC_API_KEY", "OPENAI_API_KEY", "OPENROUTER_API_KEY", "REIN_TOKEN"}

// Tool is the bash tool. It is safe for concurrent calls; each starts in the working directory the
// last finished call left.
type Tool struct {
	root string
	bash string
	env  []string
	opts Options
	ctl  control // how a call's control file is made and reached: the platform's default

	mu  sync.Mutex
	dir string

	// The spare shell (spare.go), for commands that start directly (direct).
	spareMu    sync.Mutex // held while a spare is started, so a call waits for it rather than start another
	spare      *proc
	spareTimer *time.Timer
	closed     bool
}

// New returns the bash tool for the workspace directory root.
func New(root string, opts Options) (*Tool, error) {
	abs, err := filepath.Abs(root)
	if err != nil {
		return nil, fmt.Errorf("resolve the workspace %s: %w", root, err)
	}
	if fi, err := os.Stat(abs); err != nil || !fi.IsDir() {
		return nil, fmt.Errorf("the workspace %s is not a directory", abs)
	}
	if opts.Bash == "" {
		opts.Bash = "bash"
	}
	bash, err := exec.LookPath(opts.Bash)
	if err != nil {
		return nil, fmt.Errorf("find bash: %w", err)
	}
	if opts.Env == nil {
		opts.Env = os.Environ()
	}
	if opts.Grace <= 0 {
		opts.Grace = 2 * time.Second
	}
	if opts.MaxTimeout <= 0 {
		opts.MaxTimeout = 10 * time.Minute
	}
	if opts.Timeout <= 0 {
		opts.Timeout = min(2*time.Minute, opts.MaxTimeout)
	}
	if opts.HeadBytes <= 0 {
		opts.HeadBytes = 16 << 10
	}
	if opts.TailBytes <= 0 {
		opts.TailBytes = 16 << 10
	}
	return &Tool{root: abs, bash: bash, env: withoutSecrets(opts.Env), opts: opts, ctl: defaultControl, dir: abs}, nil
}

// spares reports whether the Tool's calls may find their shell started ahead (spare.go): always
// but under a sandbox that confines each command as the workspace is when it starts
// (sandbox.Sandbox.Anew).
func (t *Tool) spares() bool { return !t.opts.Sandbox.Anew() }

// supervised reports whether the Tool's commands start under a supervisor of their own (see
// spawn). Asked at a call, not at New: the sandbox learns what this machine grants when a command
// first needs it.
func (t *Tool) supervised() bool { return supervisedBy(t.opts.Sandbox) }

func withoutSecrets(env []string) []string {
	out := make([]string, 0, len(env))
	for _, kv := range env {
		name, _, _ := strings.Cut(kv, "=")
		if !slices.Contains(SecretEnv, name) {
			out = append(out, kv)
		}
	}
	return out
}

// Spec describes the tool to the model.
func (t *Tool) Spec() provider.Tool {
	schema := fmt.Sprintf(`{"type":"object","properties":{`+
		`"command":{"type":"string","description":"The bash command line to run."},`+
		`"timeout_ms":{"type":"integer","minimum":1,"maximum":%d,"description":"Timeout in milliseconds (default %d, at most %d)."},`+
		`"description":{"type":"string","description":"A few words saying what the command does, for the person watching."}},`+
		`"required":["command"],"additionalProperties":false}`,
		t.opts.MaxTimeout.Milliseconds(), t.opts.Timeout.Milliseconds(), t.opts.MaxTimeout.Milliseconds())
	return provider.Tool{
		Name: "bash",
		Description: fmt.Sprintf("Run a bash command line in the workspace and return its combined stdout and stderr "+
			"and its exit code. The working directory persists across calls (a cd holds for the next call). "+
			"Stdin is empty. Processes started in the background end when the command does. Long output keeps "+
			"its first %d and last %d bytes.", t.opts.HeadBytes, t.opts.TailBytes),
		Schema: json.RawMessage(schema),
	}
}

// Access declares that bash runs commands, with each simple command of the parsed line as a
// subject, and the commands its wrappers run as readings (see lineAccess).
func (t *Tool) Access(args json.RawMessage) tool.Access {
	var a struct{ Command string }
	json.Unmarshal(args, &a)
	return lineAccess(a.Command)
}

// Dir is the working directory the next call starts in.
func (t *Tool) Dir() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.dir
}

type args struct {
	Command     string `json:"command"`
	TimeoutMS   *int64 `json:"timeout_ms"`
	Description string `json:"description"`
}

// Run runs one command line. A ctx cancelled while it runs stops it (SIGTERM to its group, SIGKILL
// after the grace period) and Run returns at once with Outcome Interrupted and the output so far.
func (t *Tool) Run(ctx context.Context, call tool.Call) tool.Result {
	var a args
	if err := json.Unmarshal(call.Args, &a); err != nil {
		return tool.Failure("invalid arguments for bash: %v", err)
	}
	if strings.TrimSpace(a.Command) == "" {
		return tool.Failure("the command is empty")
	}
	if len(a.Command) > maxArg {
		return tool.Failure("the command is %d bytes long; the most bash takes in one call is %d. Write long scripts to a file and run that.", len(a.Command), maxArg)
	}
	if hasNUL(a.Command) {
		return tool.Failure("the command holds a NUL byte (\\u0000), which no bash command line can; write the byte with printf '\\0' instead")
	}
	timeout := t.opts.Timeout
	if a.TimeoutMS != nil {
		timeout = min(max(time.Duration(*a.TimeoutMS)*time.Millisecond, time.Millisecond), t.opts.MaxTimeout)
	}
	if ctx.Err() != nil {
		return tool.Result{Content: "not run: the session was stopped before it started", IsError: true, Outcome: record.NotExecuted}
	}
	dir, note := t.startDir()
	out := newCapture(t.opts.HeadBytes, t.opts.TailBytes)
	out.live = tool.LiveOutput(ctx)
	p, err := t.start(dir, a.Command, out)
	if t.supervised() {
		// A supervisor's start (rein's helper executed anew, the namespaces made) costs several
		// times what its command does: beside it, it would slow the command; after it, it has
		// the model's time to think.
		defer func() { go t.refill() }()
	} else {
		go t.refill() // beside the command: started as the call returns, it takes the processor from the next request
	}
	var unsupported *sandbox.UnsupportedError
	var launch *sandbox.LaunchError
	if errors.As(err, &unsupported) {
		return tool.Denied("refused: " + unsupported.Error())
	}
	if errors.As(err, &launch) {
		return tool.Denied("refused: " + launch.Error())
	}
	if err != nil {
		return tool.Failure("could not run the command: %v", err)
	}
	if t.opts.Started != nil {
		t.opts.Started()
	}
	if p.refused != nil {
		<-p.done
		return tool.Denied("refused: " + p.refused.Error())
	}
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	timedOut := false
	select {
	case <-p.reported:
		return t.finished(p, note)
	case <-timer.C:
		timedOut = true // what came first decides the outcome, whatever comes next
	case <-ctx.Done():
	}
	select {
	case <-p.ended: // it ended by itself just as it was stopped: that is the truth to tell
		return t.finished(p, note)
	default:
	}
	p.stop()
	if !timedOut {
		// Return promptly; the group's end continues in the background. The output of the
		// processes the SIGTERM ends is worth the moment they take.
		p.settle(settle)
		return t.result(note, out, record.Interrupted, nil,
			"[interrupted: cut short when the session was stopped; any side effects it already had stand]")
	}
	// Timed out: wait for the group's end, unless a Stop comes first.
	select {
	case <-p.done:
	case <-ctx.Done():
		p.settle(settle)
	}
	return t.result(note, out, record.TimedOut, nil,
		fmt.Sprintf("[timed out after %v; the command and its processes were killed]", timeout))
}

// start runs command in dir: in the Tool's spare shell if it has one, else in a shell started
// now. (Run starts the next spare beside the command.)
func (t *Tool) start(dir, command string, out *capture) (*proc, error) {
	if p := t.take(); p != nil {
		if err := p.begin(dir, command, out); err == nil {
			return p, nil
		}
		// It died at its gate, having run nothing: start another.
	}
	return start(t.bash, dir, t.env, t.opts.Grace, command, out, t.ctl, t.opts.Sandbox)
}

// settle is the most an interrupted Run waits for the processes its SIGTERM ends to end, so that
// their last output is kept. Processes that ignore SIGTERM are not waited for, and those that die
// of it take well under a millisecond; only a process that handles SIGTERM can use it all.
const settle = 10 * time.Millisecond

// finished reports a command that ended by itself.
func (t *Tool) finished(p *proc, note string) tool.Result {
	<-p.reported
	rep := p.rep
	if rep.hasCwd {
		t.mu.Lock()
		t.dir = rep.cwd
		t.mu.Unlock()
	}
	if !rep.hasSt {
		return t.result(note, p.out, record.Failed, nil,
			fmt.Sprintf("[the command ended without reporting an exit status: %v]", p.waitErr))
	}
	code := rep.status
	if code != 0 {
		return t.result(note, p.out, record.Failed, &code, fmt.Sprintf("[exit code %d]", code))
	}
	return t.result(note, p.out, record.OK, &code, "")
}

func (t *Tool) result(note string, out *capture, o record.Outcome, code *int, footer string) tool.Result {
	var b strings.Builder
	if note != "" {
		b.WriteString(note)
		b.WriteString("\n")
	}
	text := out.String()
	switch {
	case text != "":
		b.WriteString(text)
	case footer == "":
		b.WriteString("(no output)")
	}
	if footer != "" {
		if text != "" {
			if !strings.HasSuffix(text, "\n") {
				b.WriteString("\n")
			}
			b.WriteString("\n")
		}
		b.WriteString(footer)
	}
	return tool.Result{Content: b.String(), IsError: o != record.OK, Outcome: o, ExitCode: code}
}

// startDir is the directory the next command starts in, falling back to the workspace root (and
// saying so) if it no longer exists.
func (t *Tool) startDir() (dir, note string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if fi, err := os.Stat(t.dir); err == nil && fi.IsDir() {
		return t.dir, ""
	}
	note = fmt.Sprintf("[the working directory %s no longer exists; this command ran in the workspace root %s]", t.dir, t.root)
	t.dir = t.root
	return t.root, note
}
