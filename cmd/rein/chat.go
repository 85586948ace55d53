package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/reinhq/rein/internal/client"
	"github.com/reinhq/rein/internal/host"
	"github.com/reinhq/rein/internal/session"
	"github.com/reinhq/rein/internal/tui"
	"github.com/spf13/cobra"
)

// pickSession is --resume given without an id: open the session picker. It is what --help shows
// as the flag's optional value, so it is printable; no session id is a bare word.
const pickSession = "pick"

func newChatCmd() *cobra.Command {
	var f runFlags
	var back backendFlags
	var connect, token, resume string
	cmd := &cobra.Command{
		Use:   "chat [flags]",
		Short: "Chat with the agent in the terminal",
		Long: `chat is rein's terminal UI. It runs a host in-process (the same host as rein serve, on a
loopback port with a fresh token) and talks to it over its HTTP API, or with --connect
talks to a running rein serve.

Enter sends; a message sent while the agent works is steering at its next step
(Alt+Enter: queued until the exchange ends). Esc or Ctrl-C stops whatever runs, and
waiting messages come back to the composer; Ctrl-C twice, with nothing running,
quits. /help lists the commands (/context, /evict, /rewind, /clear, /fork, ...).`,
		Example: `  rein chat --provider sim
  rein chat --resume                 (pick a conversation)
  rein chat --resume 20261129-2001
  rein chat --resume newest          (the most recently updated)
  rein chat --connect 'http://127.0.0.1:8080/#token=...'`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := f.configure(cmd); err != nil {
				return err
			}
			if len(args) == 1 {
				if resume != pickSession {
					return exitf(exitUsage, "rein chat takes no prompt: start it, then type (or --resume <id> to open a conversation)")
				}
				resume = args[0]
			}
			return chat(cmd, f, back, connect, token, resume)
		},
	}
	f.register(cmd)
	back.register(cmd)
	cmd.Flags().StringVar(&connect, "connect", "", "talk to a running rein serve at this URL instead of an in-process host")
	cmd.Flags().StringVar(&token, "token", "", "the bearer token of --connect (default: the URL's #token=, or $REIN_TOKEN)")
	cmd.Flags().StringVar(&resume, "resume", "", "open this conversation (an `id`, a unique prefix, or newest); alone, pick one")
	cmd.Flags().Lookup("resume").NoOptDefVal = pickSession
	return cmd
}

func chat(cmd *cobra.Command, f runFlags, back backendFlags, connect, token, resume string) error {
	oneProcessor()
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGHUP)
	defer stop()
	opt := tui.Options{Resume: resume, Out: cmd.OutOrStdout()}
	if resume == pickSession {
		opt.Resume, opt.Pick = "", true
	}
	// The prompt history is the workspace's, kept under rein's state directory.
	if ws, err := workspace(f.cwd); err == nil {
		if root, err := stateRoot(); err == nil {
			opt.HistoryFile = tui.HistoryPath(root, session.Slug(ws))
		}
		if connect == "" {
			opt.Workspace = ws
		}
	}
	base := connect
	if connect == "" {
		x, err := chatHost(cmd, f, back)
		if err != nil {
			return err
		}
		defer x.close()
		base, token = "http://"+x.addr, x.token
		opt.Provider, opt.Model, opt.Window = x.wired.name, x.wired.model, x.wired.window
	} else {
		u, err := url.Parse(connect)
		if err != nil || u.Host == "" {
			return exitf(exitUsage, "--connect needs a URL like http://127.0.0.1:8080, not %q", connect)
		}
		if t, ok := strings.CutPrefix(u.Fragment, "token="); ok && token == "" {
			token = t
		}
		if token == "" {
			token = environ("REIN_TOKEN")
		}
		u.Fragment, u.Path = "", ""
		base = u.String()
	}
	hc := &http.Client{Transport: &http.Transport{Proxy: nil, MaxIdleConnsPerHost: 8, IdleConnTimeout: 90 * time.Second}}
	h := tui.NewClientHost(client.New(base, token, hc))
	if connect != "" && cmd.Flags().Changed("backend") {
		h.OnBackend(back.def) // the host there offers its own; new conversations ask for this one
	}
	if err := tui.Run(ctx, h, opt); err != nil {
		return exitf(exitFailed, "chat: %v", err)
	}
	return nil
}

// chatHost starts the in-process host, serving: rein serve's host, with serve's limits on
// connections, on a loopback port with a fresh token, so the chat talks to it exactly as to a
// remote one. Its close stops what runs (each exchange quiesces, so every record is left settled)
// and closes the records.
func chatHost(cmd *cobra.Command, f runFlags, back backendFlags) (*hosted, error) {
	ws, err := workspace(f.cwd)
	if err != nil {
		return nil, exitf(exitUsage, "%v", err)
	}
	root, err := stateRoot()
	if err != nil {
		return nil, exitf(exitUsage, "%v", err)
	}
	nofile, err := fileLimit()
	if err != nil {
		return nil, exitf(exitFailed, "%v", err)
	}
	x, err := startHost(f, ws, root, hostSpec{
		addr: "127.0.0.1:0", token: freshToken, lim: host.DefaultLimits(nofile), log: chatLog(root), name: "rein chat", back: back,
	}, cmd.ErrOrStderr())
	if err != nil {
		return nil, err
	}
	go x.srv.Serve(x.gate)
	return x, nil
}

// chatLog opens the chat's log, beside the sessions: the terminal belongs to the chat, so what the
// host and its HTTP server would print (a record skipped, a handler's panic) goes there instead
// of across the screen. A log that cannot be opened is done without.
func chatLog(root string) func() (io.Writer, func()) {
	return func() (io.Writer, func()) {
		if err := os.MkdirAll(root, 0o700); err != nil {
			return io.Discard, func() {}
		}
		lf, err := os.OpenFile(filepath.Join(root, "chat.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
		if err != nil {
			return io.Discard, func() {}
		}
		return redacting(lf), func() { lf.Close() }
	}
}

// freshToken makes a bearer token for one run of an in-process host.
func freshToken() (string, error) {
	var b [24]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", err
	}
	return hex.EncodeToString(b[:]), nil
}
