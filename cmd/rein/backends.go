package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/reinhq/rein/internal/agent"
	"github.com/reinhq/rein/internal/api"
	"github.com/reinhq/rein/internal/external"
	"github.com/reinhq/rein/internal/external/claude"
	"github.com/reinhq/rein/internal/session"
	"github.com/reinhq/rein/internal/tool"
	"github.com/spf13/cobra"
)

// backendFlags choose the agent programs a host runs conversations in: rein's own loop, Claude
// Code or Codex (package external). --backend is the default for new conversations; a client may
// name another offered one when it creates a conversation (capability backends.v1).
type backendFlags struct {
	def    string   // --backend
	offer  []string // --backends
	claude string   // --claude-path
	codex  string   // --codex-path
}

func (b *backendFlags) register(cmd *cobra.Command) {
	fl := cmd.Flags()
	fl.StringVar(&b.def, "backend", api.BackendRein, "the agent new conversations run in: rein, claude (Claude Code) or codex (Codex)")
	fl.StringSliceVar(&b.offer, "backends", nil, "the other agent programs a conversation may be created on (claude, codex); --backend's is offered too")
	fl.StringVar(&b.claude, "claude-path", "", "the claude executable (default: claude on PATH)")
	fl.StringVar(&b.codex, "codex-path", "", "the codex executable (default: codex on PATH)")
}

// offered is what the flags resolve to: the default and the external back-ends, each checked.
type offered struct {
	def      string
	backends map[string]external.Backend
}

// resolve builds and checks each external back-end named: its program must be found and speak a
// protocol rein knows, or rein refuses to start, saying why.
func (b backendFlags) resolve(stderr io.Writer) (offered, error) {
	o := offered{def: b.def, backends: map[string]external.Backend{}}
	names := slices.Clone(b.offer)
	if b.def != api.BackendRein {
		names = append(names, b.def)
	}
	for _, n := range names {
		n = strings.TrimSpace(n)
		if _, done := o.backends[n]; done || n == api.BackendRein || n == "" {
			continue
		}
		var be external.Backend
		switch n {
		case api.BackendClaude:
			be = claude.New(claude.Options{Path: b.claude})
		case api.BackendCodex:
			var err error
			if be, err = newCodex(b.codex); err != nil {
				return o, exitf(exitUsage, "--backend %s: %v", n, err)
			}
		default:
			return o, exitf(exitUsage, "unknown back-end %q: give rein, claude or codex", n)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		v, err := be.Check(ctx)
		cancel()
		if err != nil {
			return o, exitf(exitUsage, "back-end %s: %v", n, err)
		}
		fmt.Fprintf(stderr, "rein: conversations may run in %s %s\n", n, v)
		o.backends[n] = be
	}
	if b.def != api.BackendRein && b.def != "" && o.backends[b.def] == nil {
		return o, exitf(exitUsage, "unknown back-end %q: give rein, claude or codex", b.def)
	}
	return o, nil
}

// close ends what the back-ends keep between turns (Codex's app-server), process trees and all.
func (o offered) close() {
	for _, be := range o.backends {
		_ = be.Close()
	}
}

// names lists the external back-ends offered.
func (o offered) names() []string {
	var out []string
	for n := range o.backends {
		out = append(out, n)
	}
	slices.Sort(out)
	return out
}

// hostDefault is the host's default back-end as host.Config takes it ("" for rein's own).
func (o offered) hostDefault() string {
	if o.def == api.BackendRein {
		return ""
	}
	return o.def
}

// externalAgent builds the agent of a conversation whose turns run in an external program: in the
// workspace, under the person's permission mode (its permission requests put to them through the
// host), with rein's own environment (the program reads its key and configuration there).
func externalAgent(sess *session.Session, ws string, be external.Backend, mode string, approver tool.Approver) *agent.Agent {
	if mode == "" {
		mode = "workspace"
	}
	return agent.New(agent.Config{Session: sess, Provider: be.Kind(), PermissionMode: mode,
		External: &agent.External{Backend: be, Approver: approver, Turn: external.Turn{Cwd: ws, Mode: mode, Env: programEnv(be.Kind())}}})
}

// programEnv is an external program's environment: rein's, which no longer holds the provider
// keys (takeSecrets), with the one key the program reads given back to it alone.
func programEnv(kind string) []string {
	env := os.Environ()
	name := map[string]string{api.BackendClaude: "ANTHROPIC_API_KEY", api.BackendCodex: "OPENAI_API_KEY"}[kind]
	if v := environ(name); name != "" && v != "" {
		env = append(env, name+"="+v)
	}
	return env
}
