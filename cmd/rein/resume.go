package main

import (
	"fmt"
	"io"
	"net/url"
	"strconv"

	"github.com/reinhq/rein/internal/fold"
)

// keepSettings fills the flags the person did not give from the settings a resumed session was
// last run under (was): provider, base URL, model, context window, permission mode, and, with its
// provider, thinking budget, reasoning effort and web search. A flag given
// changes its setting; the change is recorded by the resume and said (sayChanges). A session
// belongs to its workspace: resuming it from another directory is refused unless --cwd moves it.
func (f *runFlags) keepSettings(was fold.Meta, here string) error {
	if was.Cwd != "" && !f.set("cwd") && here != was.Cwd {
		return exitf(exitUsage, "session %s belongs to the workspace %s, not %s: resume it from there, or move it here with --cwd %s", was.Session, was.Cwd, here, here)
	}
	if !f.set("provider") && !f.set("base-url") && was.Provider != "" {
		f.provider, f.baseURL, f.recorded = was.Provider, was.BaseURL, true
		if !f.set("model") {
			f.model = was.Model
		}
	}
	if !f.set("context-window") && f.provider == was.Provider && (f.model == "" || f.model == was.Model) && was.ContextWindow > 0 {
		f.window = was.ContextWindow
	}
	if !f.set("permission-mode") && was.PermissionMode != "" {
		f.permission = was.PermissionMode
	}
	if f.provider == was.Provider { // a budget or an effort means something only to its provider
		if !f.set("thinking") && was.Thinking > 0 {
			f.thinking = strconv.Itoa(was.Thinking)
		}
		if !f.set("effort") && was.Effort != "" {
			f.effort = was.Effort
		}
		if !f.set("web-search") && was.WebSearch {
			f.web.search = true
		}
	}
	return nil
}

// sayChanges tells the person which of a resumed session's settings this run changes (each is
// recorded by the session_resumed record the resume writes).
func sayChanges(w io.Writer, was fold.Meta, ws string, wired *wiring, mode string, web bool) {
	change := func(what, from, to string) {
		if from != to && from != "" {
			fmt.Fprintf(w, "rein: this session's %s changes from %s to %s (recorded)\n", what, from, to)
		}
	}
	change("workspace", was.Cwd, ws)
	change("provider", was.Provider, wired.name)
	change("base URL", orPublic(was.BaseURL), orPublic(recordedURL(wired.baseURL)))
	change("model", was.Model, wired.model)
	if was.ContextWindow > 0 && was.ContextWindow != wired.window {
		change("context window", fmt.Sprint(was.ContextWindow), fmt.Sprint(wired.window))
	}
	change("permission mode", was.PermissionMode, mode)
	budget := func(n int) string {
		if n == 0 {
			return "off"
		}
		return fmt.Sprint(n)
	}
	if was.Thinking > 0 || wired.thinking > 0 {
		change("thinking budget", budget(was.Thinking), budget(wired.thinking))
	}
	change("reasoning effort", was.Effort, wired.effort)
	if was.WebSearch != web {
		change("web search", onOff(was.WebSearch), onOff(web))
	}
}

func onOff(b bool) string {
	if b {
		return "on"
	}
	return "off"
}

func orPublic(u string) string {
	if u == "" {
		return "the provider's public endpoint"
	}
	return u
}

// recordedURL is a base URL as a record may hold it: without the credentials a URL can carry.
func recordedURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.User == nil {
		return raw
	}
	u.User = nil
	return u.String()
}
