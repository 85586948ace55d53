// Package claude runs a conversation's turns in Claude Code (external.Backend, kind "claude").
//
// Each turn is one run of
//
//	claude -p --input-format stream-json --output-format stream-json --verbose [--resume <id>]
//
// in a process group of its own: the prompt goes in as one user message on standard input, which
// stays open for control messages, and the program's stream-json lines (decode.go) come back on
// standard output until its result line. The first line of a turn is system/init, which names the
// session; the next turn passes it to --resume.
//
// Stop (ctx ending): before system/init the program is killed at once; after it, rein sends the
// control_request interrupt and waits at most external.InterruptGrace for the result line, then
// ends the program. However a turn ends, rein then ends what is left of the program's process
// tree — not only its group: Claude Code starts its shell commands in sessions of their own —
// and returns only once all of it is gone.
//
// Permission: rein's mode is mapped onto Claude Code's (permissionArgs). In ask mode Claude Code
// is started with --permission-prompt-tool stdio, so each permission prompt arrives as a
// control_request can_use_tool; it is put to Sink.Approve and answered allow or deny, and deny
// when the turn ends first.
//
// Errors: the result line's is_error is read whatever its subtype says (Claude Code reports some
// failures with subtype success). A program that ends without a result line failed; the turn says
// its exit status and the end of its standard error.
package claude

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"regexp"
	"strconv"
	"strings"

	"github.com/reinhq/rein/internal/external"
)

// Options configure the back-end.
type Options struct {
	// Path is the claude executable; "" finds claude on PATH.
	Path string
}

// Backend runs turns in Claude Code. It keeps no program between turns.
type Backend struct {
	path string
}

// New returns the Claude Code back-end.
func New(o Options) *Backend {
	p := o.Path
	if p == "" {
		p = "claude"
	}
	return &Backend{path: p}
}

// Kind answers external.KindClaude.
func (b *Backend) Kind() string { return external.KindClaude }

// Close ends nothing: every turn's program is gone, tree and all, when its Turn returns.
func (b *Backend) Close() error { return nil }

// The versions whose protocol rein knows: Claude Code 2.1, from Known on (the stream-json lines,
// control_request interrupt and can_use_tool, is_error on the result line as read here).
const (
	Known        = "2.1.328"
	knownMajor   = 2
	knownMinor   = 1
	knownPatch   = 328
	installHint  = "install it with: npm install -g @anthropic-ai/claude-code@" + Known
	versionWords = "Claude Code"
)

var versionRE = regexp.MustCompile(`^(\d+)\.(\d+)\.(\d+)`)

// Check runs claude --version and refuses a version whose protocol rein does not know.
func (b *Backend) Check(ctx context.Context) (string, error) {
	cmd := exec.CommandContext(ctx, b.path, "--version")
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("run %s --version: %v %s; is Claude Code installed? %s", b.path, err, strings.TrimSpace(errb.String()), installHint)
	}
	return checkVersion(out.String())
}

// checkVersion reads claude --version's answer ("2.1.328 (Claude Code)") and judges it.
func checkVersion(said string) (string, error) {
	said = strings.TrimSpace(said)
	m := versionRE.FindStringSubmatch(said)
	if m == nil || !strings.Contains(said, versionWords) {
		return "", fmt.Errorf("claude --version answered %q, which is not a Claude Code version; %s", clip(said, 80), installHint)
	}
	major, _ := strconv.Atoi(m[1])
	minor, _ := strconv.Atoi(m[2])
	patch, _ := strconv.Atoi(m[3])
	v := m[0]
	if major != knownMajor || minor != knownMinor || patch < knownPatch {
		return v, fmt.Errorf("Claude Code %s speaks a stream-json protocol rein does not know (rein knows %d.%d from %s: its control_request interrupt, can_use_tool prompts and result lines); %s",
			v, knownMajor, knownMinor, Known, installHint)
	}
	return v, nil
}

// permissionArgs maps rein's permission mode onto Claude Code's flags.
//
//	ask        default mode; every prompt comes to rein (--permission-prompt-tool stdio)
//	workspace  acceptEdits (edits in the workspace) and Bash allowed; anything else that would
//	           prompt is denied, nobody being asked
//	read-only  plan mode: nothing is changed
//	full       bypassPermissions
func permissionArgs(mode string) ([]string, error) {
	switch mode {
	case "ask":
		return []string{"--permission-mode", "default", "--permission-prompt-tool", "stdio"}, nil
	case "", "workspace":
		return []string{"--permission-mode", "acceptEdits", "--allowedTools", "Bash", "--permission-prompts", "none"}, nil
	case "read-only":
		return []string{"--permission-mode", "plan", "--permission-prompts", "none"}, nil
	case "full":
		return []string{"--permission-mode", "bypassPermissions"}, nil
	}
	return nil, fmt.Errorf("unknown permission mode %q: give ask, workspace, read-only or full", mode)
}

// args returns the command line of a turn.
func args(t external.Turn) ([]string, error) {
	perm, err := permissionArgs(t.Mode)
	if err != nil {
		return nil, err
	}
	a := []string{"-p", "--input-format", "stream-json", "--output-format", "stream-json", "--verbose"}
	if t.Resume != "" {
		a = append(a, "--resume", t.Resume)
	}
	if t.Model != "" {
		a = append(a, "--model", t.Model)
	}
	return append(a, perm...), nil
}
