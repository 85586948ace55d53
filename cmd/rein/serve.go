package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"log"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/reinhq/rein/internal/agent"
	"github.com/reinhq/rein/internal/host"
	"github.com/reinhq/rein/internal/session"
	"github.com/reinhq/rein/internal/web"
	"github.com/spf13/cobra"
)

func newServeCmd() *cobra.Command {
	var f runFlags
	var addr string
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Host conversations for web and terminal clients",
		Long: `serve runs rein's host: many conversations for many clients, over a JSON/HTTP API with
a server-sent-events stream per conversation (docs/api.md), and the web chat at /.

It listens on loopback by default. Every request needs the bearer token created on
first start (kept with mode 0600 in $REIN_HOME/serve.token); the URL printed at
startup carries it for the web chat. Stop works from the moment a message is sent.`,
		Example: `  rein serve --provider sim
  rein serve --addr 127.0.0.1:8080`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return serve(cmd, f, addr)
		},
	}
	f.register(cmd)
	cmd.Flags().StringVar(&addr, "addr", "127.0.0.1:0", "the address to listen on (port 0 picks one)")
	return cmd
}

// serveToken returns the host's bearer token, creating it (mode 0600) on first start.
func serveToken(root string) (string, error) {
	path := filepath.Join(root, "serve.token")
	if b, err := os.ReadFile(path); err == nil && len(strings.TrimSpace(string(b))) >= 32 {
		return strings.TrimSpace(string(b)), nil
	} else if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return "", err
	}
	if err := os.MkdirAll(root, 0o700); err != nil {
		return "", err
	}
	var b [24]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", err
	}
	tok := hex.EncodeToString(b[:])
	if err := os.WriteFile(path, []byte(tok+"\n"), 0o600); err != nil {
		return "", err
	}
	return tok, nil
}

// hostAgent builds each conversation's agent for a host (rein serve, rein chat): its own tools
// (its own shell and working directory), the conversation's model, and the host's approver, which
// puts the calls the policy asks about (--permission-mode ask) to the person.
func hostAgent(ws string, wired *wiring, f runFlags) func(sess *session.Session, s host.Setup) (*agent.Agent, error) {
	return func(sess *session.Session, s host.Setup) (*agent.Agent, error) {
		if s.Provider != "" && s.Provider != wired.name {
			return nil, fmt.Errorf("this host talks to provider %s; it cannot switch a conversation to %s", wired.name, s.Provider)
		}
		runner, err := buildRunner(ws, f.permission, f.allow, f.deny)
		if err != nil {
			return nil, err
		}
		runner.Approver = s.Approver
		model := s.Model
		if model == "" {
			model = wired.model
		}
		return agent.New(agent.Config{
			Session: sess, Wire: wired.wire, Provider: wired.name, Model: model, MaxTokens: f.maxTokens,
			Thinking: wired.thinking, Effort: wired.effort, System: systemPrompt(ws), Runner: runner, Doors: doors(ws, wired, f), MaxTurns: f.maxTurns, Window: wired.window,
		}), nil
	}
}

func serve(cmd *cobra.Command, f runFlags, addr string) error {
	ws, err := workspace(f.cwd)
	if err != nil {
		return exitf(exitUsage, "%v", err)
	}
	root, err := stateRoot()
	if err != nil {
		return exitf(exitUsage, "%v", err)
	}
	wired, err := f.resolve(cmd.ErrOrStderr())
	if err != nil {
		return err
	}
	defer wired.close()
	if _, err := buildRunner(ws, f.permission, f.allow, f.deny); err != nil {
		return exitf(exitUsage, "%v", err)
	}
	token, err := serveToken(root)
	if err != nil {
		return exitf(exitFailed, "cannot create the token: %v", err)
	}
	h, err := host.Open(host.Config{
		Root: root, Cwd: ws, Provider: wired.name, Model: wired.model, Window: wired.window, Version: version,
		Session:     session.Options{Redact: redactText},
		NewAgentFor: hostAgent(ws, wired, f), Log: cmd.ErrOrStderr(),
	})
	if err != nil {
		return exitf(exitFailed, "cannot open the host: %v", err)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		h.Close()
		return exitf(exitUsage, "cannot listen on %s: %v", addr, err)
	}
	bound := ln.Addr().String()
	api := host.NewServer(h, token, bound, web.Files())
	srv := &http.Server{Handler: redactResponses(api), ReadHeaderTimeout: 10 * time.Second,
		ErrorLog: log.New(cmd.ErrOrStderr(), "rein serve: ", log.LstdFlags)}
	// The one line that shows the token; from here on it is redacted like any key.
	fmt.Fprintf(unredacted(cmd.OutOrStdout()), "rein serve: http://%s/#token=%s\n", bound, token)
	secrets.Add("REIN_TOKEN", token)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		h.Close()
		return exitf(exitFailed, "serve: %v", err)
	case <-ctx.Done():
	}
	shut, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	_ = srv.Shutdown(shut)
	return h.Close()
}
