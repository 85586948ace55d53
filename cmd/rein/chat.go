package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"io"
	"log"
	"net"
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

// pickSession is --resume given without an id: open the session picker.
const pickSession = "\x00pick"

func newChatCmd() *cobra.Command {
	var f runFlags
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
  rein chat --connect 'http://127.0.0.1:8080/#token=...'`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 1 {
				if resume != pickSession {
					return exitf(exitUsage, "rein chat takes no prompt: start it, then type (or --resume <id> to open a conversation)")
				}
				resume = args[0]
			}
			return chat(cmd, f, connect, token, resume)
		},
	}
	f.register(cmd)
	cmd.Flags().StringVar(&connect, "connect", "", "talk to a running rein serve at this URL instead of an in-process host")
	cmd.Flags().StringVar(&token, "token", "", "the bearer token of --connect (default: the URL's #token=, or $REIN_TOKEN)")
	cmd.Flags().StringVar(&resume, "resume", "", "open this conversation (an id or a unique prefix); alone, pick one")
	cmd.Flags().Lookup("resume").NoOptDefVal = pickSession
	return cmd
}

func chat(cmd *cobra.Command, f runFlags, connect, token, resume string) error {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGHUP)
	defer stop()
	opt := tui.Options{Resume: resume}
	if resume == pickSession {
		opt = tui.Options{Pick: true}
	}
	base := connect
	if connect == "" {
		b, tok, info, closeHost, err := chatHost(cmd, f)
		if err != nil {
			return err
		}
		defer closeHost()
		base, token = b, tok
		opt.Provider, opt.Model, opt.Window = info.name, info.model, info.window
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
	if err := tui.Run(ctx, h, opt); err != nil {
		return exitf(exitFailed, "chat: %v", err)
	}
	return nil
}

// chatHost starts the in-process host: rein serve's host on a loopback port with a fresh token,
// so the chat talks to it exactly as to a remote one. closeHost stops what runs (each exchange
// quiesces, so every record is left settled) and closes the records.
func chatHost(cmd *cobra.Command, f runFlags) (base, token string, info *wiring, closeHost func(), err error) {
	var undo []func()
	closeHost = func() {
		for i := len(undo) - 1; i >= 0; i-- {
			undo[i]()
		}
	}
	fail := func(err error) (string, string, *wiring, func(), error) {
		closeHost()
		return "", "", nil, nil, err
	}
	ws, err := workspace(f.cwd)
	if err != nil {
		return fail(exitf(exitUsage, "%v", err))
	}
	root, err := stateRoot()
	if err != nil {
		return fail(exitf(exitUsage, "%v", err))
	}
	wired, err := f.resolve(cmd.ErrOrStderr())
	if err != nil {
		return fail(err)
	}
	undo = append(undo, wired.close)
	if _, err := buildRunner(ws, f.permission, f.allow, f.deny); err != nil {
		return fail(exitf(exitUsage, "%v", err))
	}
	// The terminal belongs to the chat: what the host and its HTTP server would print (a record
	// skipped, a handler's panic) goes to a log beside the sessions instead of across the screen.
	var logw io.Writer = io.Discard
	if err := os.MkdirAll(root, 0o700); err == nil {
		if lf, err := os.OpenFile(filepath.Join(root, "chat.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600); err == nil {
			logw = redactingWriter{lf}
			undo = append(undo, func() { lf.Close() })
		}
	}
	h, err := host.Open(host.Config{
		Root: root, Cwd: ws, Provider: wired.name, Model: wired.model, Window: wired.window, Version: version,
		Session: session.Options{Redact: redactText}, Log: logw,
		NewAgentFor: hostAgent(ws, wired, f),
	})
	if err != nil {
		return fail(exitf(exitFailed, "cannot open the host: %v", err))
	}
	undo = append(undo, func() { h.Close() })
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return fail(exitf(exitFailed, "cannot listen on loopback: %v", err))
	}
	var b [24]byte
	_, _ = rand.Read(b[:])
	token = hex.EncodeToString(b[:])
	secrets.Add("REIN_TOKEN", token)
	srv := &http.Server{Handler: redactResponses(host.NewServer(h, token, ln.Addr().String(), nil)), ReadHeaderTimeout: 10 * time.Second,
		ErrorLog: log.New(logw, "rein chat: ", log.LstdFlags)}
	go srv.Serve(ln)
	undo = append(undo, func() { srv.Close() }) // first: it ends the event streams
	return "http://" + ln.Addr().String(), token, wired, closeHost, nil
}
