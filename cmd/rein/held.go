package main

import (
	"errors"
	"fmt"
	"strings"

	"github.com/reinhq/rein/internal/journal"
)

// heldRefusal turns the refusal of a session another process is writing into rein's answer: what
// could not be done, who holds the session, and what to do about it. ok is false for any other
// error.
func heldRefusal(what string, err error) (error, bool) {
	var he *journal.HeldError
	if !errors.As(err, &he) {
		return nil, false
	}
	msg := what + ": " + he.Error()
	switch holderCommand(he.Holder.Command) {
	case "serve":
		msg += "\n  it is a rein serve: talk to the conversation there (rein chat --connect <the URL it printed>)"
	case "chat":
		msg += "\n  it is a rein chat: carry on in that chat, or quit it first"
	case "run", "resume":
		msg += fmt.Sprintf("\n  to stop it: kill -INT %d (a Stop, as Ctrl-C: its exchange settles and the session stays resumable)", he.Holder.PID)
	}
	msg += "\n  rein show and rein doctor read the session meanwhile; they need no lock"
	return exitf(exitHeld, "%s", msg), true
}

// holderCommand is the rein subcommand a holder's command line runs ("run", "serve", ...), or "".
func holderCommand(cmdline string) string {
	fields := strings.Fields(cmdline)
	if len(fields) < 2 || !strings.HasPrefix(fields[0], "rein") {
		return ""
	}
	for _, f := range fields[1:] {
		if !strings.HasPrefix(f, "-") {
			return f
		}
	}
	return ""
}
