package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/reinhq/rein/internal/fold"
	"github.com/reinhq/rein/internal/record"
)

// fileCall is a scripted call of a file tool with a fixed call id.
func fileCall(id, name string, args map[string]any) map[string]any {
	return map[string]any{"id": id, "name": name, "arguments": args}
}

// chain makes a chain of directories d/d/d/… depth deep under dir, each holding files named by
// name(i), i < files.
func chain(t *testing.T, dir string, depth, files int, name func(i int) string) {
	t.Helper()
	p := dir
	for range depth {
		p = filepath.Join(p, "d")
		if err := os.MkdirAll(p, 0o755); err != nil {
			t.Fatal(err)
		}
		for i := range files {
			if err := os.WriteFile(filepath.Join(p, name(i)), nil, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// results returns the outcome and content of every answered call of recs, by call id.
func results(recs []record.Record) map[string]record.ToolResult {
	out := map[string]record.ToolResult{}
	for _, r := range recs {
		if b, ok := r.Body.(*record.ToolResults); ok {
			for _, res := range b.Results {
				out[res.CallID] = res
			}
		}
	}
	return out
}

// TestFileToolsOnAPipeAndADeepTree: a model that points the file tools at a named pipe and globs
// a tree deeper than a search goes with patterns whose matching used to be exponential gets a
// refusal for each pipe call and a bounded, truthful listing, and rein ends the exchange at once.
// Before rein issue 11, read_file on the pipe held rein for ever.
func TestFileToolsOnAPipeAndADeepTree(t *testing.T) {
	sb := newSandbox(t)
	if err := syscall.Mkfifo(filepath.Join(sb.ws, "pipe"), 0o644); err != nil {
		t.Fatal(err)
	}
	chain(t, filepath.Join(sb.ws, "deep"), 80, 1, func(int) string { return "x" })
	manyStars := "**/**/**/**/**/**/**/**/x"
	alternating := "**/*/**/*/**/*/**/*/**/*/**/*/**/*/**/x"
	script := writeScript(t, t.TempDir(),
		map[string]any{"text": "Looking at the pipe and the tree.", "tool_calls": []any{
			fileCall("read", "read_file", map[string]any{"path": "pipe"}),
			fileCall("write", "write_file", map[string]any{"path": "pipe", "content": "hello\n"}),
			fileCall("edit", "edit_file", map[string]any{"path": "pipe", "old": "a", "new": "b"}),
			fileCall("grep", "grep", map[string]any{"pattern": "a", "path": "pipe"}),
			fileCall("stars", "glob", map[string]any{"pattern": manyStars, "path": "deep"}),
			fileCall("alternating", "glob", map[string]any{"pattern": alternating, "path": "deep"}),
		}},
		map[string]any{"text": "The pipe is not a file, and the tree is deep."},
	)
	reinBin(t)
	start := time.Now()
	c := sb.startRun(t, append(append([]string{"run"}, simArgs(script)...), "--json", "look at the pipe and the tree")...)
	c.wait(t, 30*time.Second)
	took := time.Since(start)
	if got := c.status.ExitStatus(); got != 0 {
		t.Fatalf("rein exited %d\n%s", got, c.stderr)
	}
	t.Logf("rein ran the exchange (six file calls) in %s", took.Round(time.Millisecond))

	_, recs, st := theRecord(t, sb)
	if !st.IsReady() || st.InFlight() {
		t.Fatalf("the exchange did not end ready (phase %s)", st.Phase())
	}
	got := results(recs)
	for id, does := range map[string]string{"read": "read_file reads", "write": "write_file writes", "edit": "edit_file edits", "grep": "grep searches"} {
		r := got[id]
		if want := "pipe is a named pipe (FIFO); " + does + " regular files only"; r.Outcome != record.Failed || !strings.HasPrefix(r.Content, want) {
			t.Errorf("%s: %s %q, want failed %q", id, r.Outcome, r.Content, want)
		}
	}
	listing := "deep/" + strings.Repeat("d/", 63) + "x\n"
	// Every x within 64 levels (deep/d/x is 2 levels down, the deepest 64), or for the alternating
	// pattern those with at least seven directories above them.
	for _, g := range []struct {
		id, pattern string
		count       int
	}{{"stars", manyStars, 63}, {"alternating", alternating, 57}} {
		r := got[g.id]
		if r.Outcome != record.OK || !strings.HasPrefix(r.Content, listing) || strings.Count(r.Content, "/x\n") != g.count ||
			!strings.Contains(r.Content, "[1 directory 64 levels below deep was not searched, the deepest a search goes; search under it with path]") {
			t.Errorf("glob %s: %s %.300q", g.pattern, r.Outcome, r.Content)
		}
	}
	// The pipe was not written to: a reader now finds nothing in it.
	f, err := os.OpenFile(filepath.Join(sb.ws, "pipe"), os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if n, _ := syscall.Read(int(f.Fd()), make([]byte, 16)); n > 0 {
		t.Errorf("%d bytes were written into the pipe", n)
	}
}

// cpuTime is the processor time process pid has used so far, from /proc; ok is false where
// there is no /proc.
func cpuTime(pid int) (d time.Duration, ok bool) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, false
	}
	// utime and stime are the 12th and 13th fields after the parenthesised command name, in
	// clock ticks (100 a second on Linux).
	fields := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+2:]))
	utime, _ := strconv.ParseInt(fields[11], 10, 64)
	stime, _ := strconv.ParseInt(fields[12], 10, 64)
	return time.Duration(utime+stime) * 10 * time.Millisecond, true
}

// TestSIGINTStopsABusySearch: Ctrl-C while grep or glob is busy (burning processor time on a
// costly pattern) is Stop: rein exits 130 within moments, the call is answered interrupted, the
// exchange quiesced{cancelled}, and the session goes on.
func TestSIGINTStopsABusySearch(t *testing.T) {
	for _, c := range []struct {
		name  string
		setup func(t *testing.T, ws string)
		call  map[string]any
	}{
		{"grep", func(t *testing.T, ws string) {
			if err := os.WriteFile(filepath.Join(ws, "text"), []byte(strings.Repeat("abcdefghij", 100_000)), 0o644); err != nil {
				t.Fatal(err)
			}
		}, fileCall("busy", "grep", map[string]any{"pattern": `(?:[a-j]{1,20}){1,20}x`})},
		{"glob", func(t *testing.T, ws string) {
			// Long names costly to match, sorted after the directory d, so that the walk goes
			// down first: deep paths are where backtracking was exponential.
			chain(t, filepath.Join(ws, "tree"), 64, 10, func(i int) string { return "e" + strings.Repeat("a", 249) + strconv.Itoa(i) })
		}, fileCall("busy", "glob", map[string]any{"pattern": "**/*/**/*/**/*/**/*/**/*/**/*" + strings.Repeat("a", 200) +
			"{b,c,d,e,f,g,h,i,j,k,l,m,n,o,p,q,r,s,t,u,v,w,x,y,z,B,C,D,E,F,G,H}"})},
	} {
		t.Run(c.name, func(t *testing.T) {
			sb := newSandbox(t)
			c.setup(t, sb.ws)
			script := writeScript(t, t.TempDir(),
				map[string]any{"text": "Searching.", "tool_calls": []any{c.call}},
				map[string]any{"text": "The search ended."},
			)
			ch := sb.startRun(t, append(append([]string{"run"}, simArgs(script)...), "--json", "search the workspace")...)
			// The call is durable as started before the tool runs; then the tool is busy once
			// rein has burnt a good deal more processor time.
			deadline := time.After(30 * time.Second)
		started:
			for {
				select {
				case m, ok := <-ch.lines:
					if !ok {
						t.Fatalf("rein ended before the tool started\n%s", ch.stderr)
					}
					if m["type"] == "record" && m["kind"] == "tool_started" {
						break started
					}
				case <-deadline:
					t.Fatalf("the tool did not start within 30s\n%s", ch.stderr)
				}
			}
			pid := ch.cmd.Process.Pid
			base, ok := cpuTime(pid)
			if !ok {
				t.Skip("no /proc here to see the search busy")
			}
			for used, _ := cpuTime(pid); used-base < time.Second; used, _ = cpuTime(pid) {
				select {
				case <-ch.done:
					t.Fatalf("rein ended while the search should be busy\n%s", ch.stderr)
				case <-deadline:
					t.Fatalf("rein did not get busy within 30s\n%s", ch.stderr)
				case <-time.After(20 * time.Millisecond): // polling the processor time
				}
			}
			sent := time.Now()
			ch.cmd.Process.Signal(os.Interrupt)
			ch.wait(t, 10*time.Second)
			exited := time.Since(sent)
			if got := ch.status.ExitStatus(); got != exitStopped {
				t.Fatalf("rein exited %d after SIGINT, want %d\n%s", got, exitStopped, ch.stderr)
			}
			if exited > time.Second {
				t.Errorf("rein took %s to exit after SIGINT during a busy %s", exited, c.name)
			}
			t.Logf("SIGINT during a busy %s: rein exited 130 %s after the signal", c.name, exited.Round(100*time.Microsecond))

			path, recs, st := theRecord(t, sb)
			if st.InFlight() || !st.IsReady() {
				t.Fatalf("after Stop the session is in flight (phase %s)", st.Phase())
			}
			q, _ := lastQuiesced(recs)
			if q == nil || q.Reason != fold.Cancelled {
				t.Fatalf("the exchange ended %+v, want quiesced{cancelled}", q)
			}
			if r := results(recs)["busy"]; r.Outcome != record.Interrupted || !strings.HasPrefix(r.Content, "[interrupted: the search was cut short when the session was stopped]") {
				t.Errorf("the busy %s was answered %s %.200q, want interrupted", c.name, r.Outcome, r.Content)
			}
			res := sb.rein(t, append([]string{"resume", filepath.Base(filepath.Dir(path)), "continue"}, simArgs("")...)...)
			if res.code != 0 {
				t.Fatalf("resume after Stop:\n%s", res)
			}
			theRecord(t, sb)
		})
	}
}
