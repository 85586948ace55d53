package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/sys/unix"
)

// maxStdinPrompt bounds what is read from standard input as (part of) a prompt.
const maxStdinPrompt = 8 << 20

// stdinWait is how long a prompt given as an argument waits for a pipe on standard input to show
// data or close before rein goes on without it: a pipe a parent process left open and never writes
// must not hang rein, while `cat log | rein "why"` has its data long before this.
const stdinWait = 300 * time.Millisecond

// promptFrom builds the prompt the way people pass one: the words of the arguments joined (no
// quotes needed), the -p flag's text, "-" for standard input, and standard input itself when it is
// a pipe or a file — as the prompt when no other is given, or appended to it as context, the way
// `cat log | claude -p "why"` works.
func promptFrom(args []string, flagPrompt string, stdin *os.File) (string, error) {
	words := strings.Join(args, " ")
	fromStdin := false
	if words == "-" {
		words, fromStdin = "", true
	}
	if flagPrompt != "" && words != "" {
		return "", exitf(exitUsage, "a prompt was given both with -p and as arguments; give it once")
	}
	prompt := flagPrompt + words
	if stdin != nil && (fromStdin || readable(stdin)) {
		wait := time.Duration(0) // the prompt is standard input: wait for all of it
		if prompt != "" && !fromStdin {
			wait = stdinWait
		}
		in, err := readStdin(stdin, wait)
		if err != nil {
			return "", exitf(exitUsage, "read the prompt from standard input: %v", err)
		}
		switch {
		case prompt == "":
			prompt = in
		case strings.TrimSpace(in) != "":
			prompt += "\n\n" + in
		}
	}
	if strings.TrimSpace(prompt) == "" && fromStdin {
		return "", exitf(exitUsage, "standard input was empty: give the prompt there, or as an argument")
	}
	return prompt, nil
}

// readable reports whether standard input is a pipe or a file that may carry a prompt (not a
// terminal, not /dev/null or another device).
func readable(f *os.File) bool {
	fi, err := f.Stat()
	if err != nil {
		return false
	}
	m := fi.Mode()
	return m&os.ModeNamedPipe != 0 || m.IsRegular() || m&os.ModeSocket != 0
}

// readStdin reads all of f. With wait > 0, a pipe that neither shows data nor closes within wait
// is left unread.
func readStdin(f *os.File, wait time.Duration) (string, error) {
	if wait > 0 {
		fds := []unix.PollFd{{Fd: int32(f.Fd()), Events: unix.POLLIN}}
		for {
			n, err := unix.Poll(fds, int(wait.Milliseconds()))
			if errors.Is(err, unix.EINTR) {
				continue
			}
			if err != nil || n == 0 {
				return "", nil
			}
			break
		}
	}
	b, err := io.ReadAll(io.LimitReader(f, maxStdinPrompt+1))
	if err != nil {
		return "", err
	}
	if len(b) > maxStdinPrompt {
		return "", fmt.Errorf("it holds more than %d MiB; give a file to read instead (e.g. \"read the file at <path>\")", maxStdinPrompt>>20)
	}
	return string(b), nil
}

// typoOf names the command a lone argument was probably meant to be ("sesions" → "sessions"), so
// a mistyped command is not sent to the model as a prompt.
func typoOf(root *cobra.Command, args []string) string {
	if len(args) != 1 || strings.ContainsAny(args[0], " \t\n") {
		return ""
	}
	if s := root.SuggestionsFor(args[0]); len(s) > 0 {
		return s[0]
	}
	return ""
}
