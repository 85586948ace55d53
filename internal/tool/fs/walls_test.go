package fstool

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/reinhq/rein/internal/record"
	"github.com/reinhq/rein/internal/tool"
	"golang.org/x/sys/unix"
)

// stopBound is how soon a file tool must answer once its call's ctx is cancelled, and how soon it
// must refuse what it would otherwise wait on for ever (rein issue 11: every wait answers Stop).
// The machine running the tests may be busy with others, and a goroutine ready to run can wait
// for a processor longer than this: so a latency is measured several times and the median must
// keep to stopBound (most tries do), and every try to slackBound.
const (
	stopBound  = 25 * time.Millisecond
	slackBound = 40 * stopBound
	tries      = 5
	// timeBound is how far past its time limit a search may answer: the limit is a timer, and on
	// a machine busy with other work a timer fires late by tens of milliseconds where a Stop's
	// cancellation does not; a search that ignored its limit would run for seconds.
	timeBound = 150 * time.Millisecond
)

// prompt runs measure tries times and fails the test unless the median of the durations it
// returns is within stopBound and each within slackBound. It logs them, sorted.
func prompt(t *testing.T, what string, measure func() time.Duration) {
	t.Helper()
	promptWithin(t, stopBound, what, measure)
}

// promptWithin is prompt with the median held to bound instead of stopBound.
func promptWithin(t *testing.T, bound time.Duration, what string, measure func() time.Duration) {
	t.Helper()
	var ds []time.Duration
	for range tries {
		ds = append(ds, measure())
		if t.Failed() {
			return
		}
	}
	slices.Sort(ds)
	if med := ds[len(ds)/2]; med > bound {
		t.Errorf("%s: the median of %d tries is %v, more than %v (%v)", what, tries, med, bound, ds)
	}
	if ds[len(ds)-1] > slackBound {
		t.Errorf("%s: a try took %v, more than %v (%v)", what, ds[len(ds)-1], slackBound, ds)
	}
	t.Logf("%s: %v", what, ds)
}

func mkfifo(t *testing.T, p string) {
	t.Helper()
	if err := syscall.Mkfifo(p, 0o644); err != nil {
		t.Fatal(err)
	}
}

func argsOf(t *testing.T, args map[string]any) json.RawMessage {
	t.Helper()
	b, err := json.Marshal(args)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// runGuarded runs tl in a goroutine and returns its result and how long it took. A call still
// running after a few seconds fails the test; fifo, if set, is then opened at both ends (O_RDWR
// never blocks) so that a tool stuck opening it is let go.
func runGuarded(t *testing.T, tl tool.Tool, args map[string]any, fifo string) (tool.Result, time.Duration) {
	t.Helper()
	call := tool.Call{ID: "c", Name: tl.Spec().Name, Args: argsOf(t, args)}
	done := make(chan tool.Result, 1)
	start := time.Now()
	go func() { done <- tl.Run(context.Background(), call) }()
	select {
	case r := <-done:
		return r, time.Since(start)
	case <-time.After(5 * time.Second):
		if fifo != "" {
			if f, err := os.OpenFile(fifo, os.O_RDWR, 0); err == nil {
				defer f.Close()
			}
		}
		t.Fatalf("%s %v still running after 5s: it waits on the named pipe", tl.Spec().Name, args)
		return tool.Result{}, 0
	}
}

// TestIrregularFilesRefused: read_file, write_file, edit_file and grep refuse a named pipe, with
// or without someone at its other end, a socket and a character device, by name and at once; a
// named pipe's reader gets nothing written.
func TestIrregularFilesRefused(t *testing.T) {
	w, dir := setup(t, map[string]string{"link": "->pipe", "sub/": ""})
	fifo := filepath.Join(dir, "pipe")
	mkfifo(t, fifo)
	ln, err := net.Listen("unix", filepath.Join(dir, "sock"))
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	device := ""
	if err := unix.Mknod(filepath.Join(dir, "null"), unix.S_IFCHR|0o666, int(unix.Mkdev(1, 3))); err == nil {
		device = "null"
	} else {
		t.Logf("no character device in this test (mknod: %v)", err)
	}

	type tcase struct {
		tl   tool.Tool
		args map[string]any
		want string
	}
	var cases []tcase
	for _, p := range []struct{ path, kind string }{{"pipe", "a named pipe (FIFO)"}, {"link", "a named pipe (FIFO)"}, {"sock", "a socket"}, {device, "a character device"}} {
		if p.path == "" {
			continue
		}
		cases = append(cases,
			tcase{w.ReadFile(), map[string]any{"path": p.path}, p.path + " is " + p.kind + "; read_file reads regular files only"},
			tcase{w.WriteFile(), map[string]any{"path": p.path, "content": "x\n"}, p.path + " is " + p.kind + "; write_file writes regular files only"},
			tcase{w.EditFile(), map[string]any{"path": p.path, "old": "a", "new": "b"}, p.path + " is " + p.kind + "; edit_file edits regular files only"},
			tcase{w.Grep(), map[string]any{"pattern": "a", "path": p.path}, p.path + " is " + p.kind + "; grep searches regular files only"},
		)
	}
	check := func(t *testing.T, c tcase) {
		prompt(t, fmt.Sprintf("%s refuses %s in", c.tl.Spec().Name, c.args["path"]), func() time.Duration {
			r, took := runGuarded(t, c.tl, c.args, fifo)
			if r.Outcome != record.Failed || r.Content != c.want {
				t.Errorf("%s %v: got %s %q\nwant failed %q", c.tl.Spec().Name, c.args, r.Outcome, r.Content, c.want)
			}
			return took
		})
	}
	t.Run("no one at the other end", func(t *testing.T) {
		for _, c := range cases {
			check(t, c)
		}
	})
	t.Run("someone at the other end", func(t *testing.T) {
		other, err := os.OpenFile(fifo, os.O_RDWR, 0) // a reader and a writer both
		if err != nil {
			t.Fatal(err)
		}
		defer other.Close()
		if _, err := other.Write([]byte("waiting\n")); err != nil {
			t.Fatal(err)
		}
		for _, c := range cases {
			check(t, c)
		}
		// Nothing was read from the pipe, nor written into it.
		if err := syscall.SetNonblock(int(other.Fd()), true); err != nil {
			t.Fatal(err)
		}
		buf := make([]byte, 64)
		n, _ := syscall.Read(int(other.Fd()), buf)
		if string(buf[:max(n, 0)]) != "waiting\n" {
			t.Errorf("the pipe holds %q, want what the test wrote, untouched", buf[:max(n, 0)])
		}
	})
	t.Run("searches walk past them", func(t *testing.T) {
		r, took := runGuarded(t, w.Grep(), map[string]any{"pattern": "a"}, fifo)
		if r.IsError || r.Content != "no matches for a" || took > stopBound {
			t.Errorf("grep over a tree holding a pipe: %s %q in %v", r.Outcome, r.Content, took)
		}
		r, _ = runGuarded(t, w.Glob(), map[string]any{"pattern": "*"}, fifo)
		if want := "link\n" + device + "\npipe\nsock\nsub/\n"; r.Content != strings.Replace(want, "\n\n", "\n", 1) {
			t.Errorf("glob lists %q", r.Content)
		}
	})
}

// TestOpenRegularJudgesTheOpenedFile: the check that counts is the one after opening, so a path
// a check saw as a regular file and then swapped for a named pipe is refused, not waited on.
// openRegular is called directly here, as if the check before had passed.
func TestOpenRegularJudgesTheOpenedFile(t *testing.T) {
	w, dir := setup(t, nil)
	fifo := filepath.Join(dir, "pipe")
	mkfifo(t, fifo)
	for _, flag := range []int{os.O_RDONLY, os.O_WRONLY | os.O_CREATE, os.O_RDWR} {
		done := make(chan error, 1)
		go func() {
			f, _, err := w.openRegular("pipe", flag, 0o644, "pipe", "this test opens")
			if f != nil {
				f.Close()
			}
			done <- err
		}()
		select {
		case err := <-done:
			var irr *IrregularError
			if !errors.As(err, &irr) || irr.Error() != "pipe is a named pipe (FIFO); this test opens regular files only" {
				t.Errorf("flag %#x: got %v", flag, err)
			}
		case <-time.After(5 * time.Second):
			if f, err := os.OpenFile(fifo, os.O_RDWR, 0); err == nil {
				f.Close()
			}
			t.Fatalf("flag %#x: opening the named pipe blocked", flag)
		}
	}
}

// TestSwappedUnderTheTools: a path swapped between a named pipe and a regular file while the file
// tools use it never holds a call: each is answered at once, a refusal or the file's own answer.
func TestSwappedUnderTheTools(t *testing.T) {
	w, dir := setup(t, nil)
	target := filepath.Join(dir, "swap")
	stop := make(chan struct{})
	var swaps atomic.Int64
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			tmp := filepath.Join(dir, fmt.Sprintf("tmp%d", i))
			if i%2 == 0 {
				if syscall.Mkfifo(tmp, 0o644) != nil {
					continue
				}
			} else if os.WriteFile(tmp, []byte("a regular file\n"), 0o644) != nil {
				continue
			}
			if os.Rename(tmp, target) == nil {
				swaps.Add(1)
			}
		}
	}()
	defer func() {
		close(stop)
		<-finished
	}()
	tools := []struct {
		tl   tool.Tool
		args map[string]any
	}{
		{w.ReadFile(), map[string]any{"path": "swap"}},
		{w.WriteFile(), map[string]any{"path": "swap", "content": "a regular file\n"}},
		{w.EditFile(), map[string]any{"path": "swap", "old": "regular", "new": "normal"}},
		{w.Grep(), map[string]any{"pattern": "regular", "path": "swap"}},
	}
	// Calls go on until the path has been swapped often while they ran, and for 300 calls at least.
	outcomes := map[string]int{}
	deadline := time.Now().Add(10 * time.Second)
	for i := 0; i < 300 || swaps.Load() < 300 && time.Now().Before(deadline); i++ {
		c := tools[i%len(tools)]
		r, _ := runGuarded(t, c.tl, c.args, target)
		what := string(r.Outcome)
		switch {
		case strings.Contains(r.Content, "named pipe"):
			what = "refused: a named pipe"
			if !strings.HasSuffix(r.Content, "regular files only") {
				t.Errorf("%s: %q", c.tl.Spec().Name, r.Content)
			}
		case strings.Contains(r.Content, "does not exist"):
			what = "not there yet"
		}
		outcomes[what]++
	}
	t.Logf("the path was swapped %d times under the calls", swaps.Load())
	t.Logf("outcomes: %v", outcomes)
}

// stopWhileBusy runs tl, cancels its ctx once it has run a while, and returns its result and the
// time from the cancel to its return. A tool that answered before the cancel fails the test: its
// workload must keep it busy for the test to mean anything.
func stopWhileBusy(t *testing.T, run func(ctx context.Context) tool.Result) (tool.Result, time.Duration) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cancelledAt := make(chan time.Time, 1)
	timer := time.AfterFunc(100*time.Millisecond, func() {
		at := time.Now()
		cancel()
		cancelledAt <- at
	})
	start := time.Now()
	r := run(ctx)
	returned := time.Now()
	if timer.Stop() {
		t.Fatalf("the call returned in %v, before the cancel: %s %.200q", returned.Sub(start), r.Outcome, r.Content)
	}
	return r, returned.Sub(<-cancelledAt)
}

func runWith(tl tool.Tool, args json.RawMessage) func(ctx context.Context) tool.Result {
	return func(ctx context.Context) tool.Result {
		return tl.Run(ctx, tool.Call{ID: "c", Name: tl.Spec().Name, Args: args})
	}
}

// deepTree makes a chain of directories d/d/d/… depth deep under dir, each holding files named
// by name(level, i) (i < files).
func deepTree(t testing.TB, dir string, depth, files int, name func(level, i int) string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	p := dir
	for level := 1; level <= depth; level++ {
		p = filepath.Join(p, "d")
		if err := os.Mkdir(p, 0o755); err != nil {
			t.Fatal(err)
		}
		for i := range files {
			if err := os.WriteFile(filepath.Join(p, name(level, i)), nil, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// busyGlob is a pattern within glob's bounds that costs milliseconds per entry of long names:
// 32 alternatives, each ending in a segment path.Match scans the whole name for, after six **
// (over a deep tree, exponential for the backtracking matcher glob had).
func busyGlob() string {
	return "**/*/**/*/**/*/**/*/**/*/**/*" + strings.Repeat("a", 200) + "{b,c,d,e,f,g,h,i,j,k,l,m,n,o,p,q,r,s,t,u,v,w,x,y,z,B,C,D,E,F,G,H}"
}

func longNames(level, i int) string { return strings.Repeat("a", 250) + fmt.Sprint(i) }

// TestStopWhileBusy: a Stop answers within stopBound while each tool is busy: read_file skipping
// through a large file, glob with a costly many-** pattern over a deep tree, grep with a costly
// regular expression over one long line and over many short ones.
func TestStopWhileBusy(t *testing.T) {
	w, dir := setup(t, nil)
	deepTree(t, filepath.Join(dir, "tree"), 64, 10, longNames)

	// 32 million short lines (64 MiB, left in the page cache by writing it): read_file asked for a
	// line past them reads through them all.
	mustWrite(t, filepath.Join(dir, "huge.txt"), strings.Repeat("x\n", 32<<20))

	// A costly regular expression (802 instructions) over text it almost matches.
	mustWrite(t, filepath.Join(dir, "grep", "oneline.txt"), strings.Repeat("abcdefghij", 100_000))
	mustWrite(t, filepath.Join(dir, "grep", "lines.txt"), strings.Repeat(strings.Repeat("abcdefghij", 6)+"\n", 20_000))
	const costly = `(?:[a-j]{1,20}){1,20}x`

	for _, c := range []struct {
		name string
		tl   tool.Tool
		args map[string]any
	}{
		{"read_file", w.ReadFile(), map[string]any{"path": "huge.txt", "offset": 40 << 20}},
		{"glob", w.Glob(), map[string]any{"pattern": busyGlob(), "path": "tree"}},
		{"grep one long line", w.Grep(), map[string]any{"pattern": costly, "path": "grep/oneline.txt"}},
		{"grep many lines", w.Grep(), map[string]any{"pattern": costly, "path": "grep/lines.txt"}},
		{"grep a tree", w.Grep(), map[string]any{"pattern": costly, "path": "grep"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			prompt(t, c.name+" returned after the cancel in", func() time.Duration {
				r, latency := stopWhileBusy(t, runWith(c.tl, argsOf(t, c.args)))
				if r.Outcome != record.Interrupted || !r.IsError || !strings.Contains(r.Content, "interrupted") {
					t.Errorf("got %s %.200q, want interrupted", r.Outcome, r.Content)
				}
				return latency
			})
		})
	}
}

// TestRunnerStopsAFileTool: the runner hands the call's ctx down to the file tool, so a Stop
// reaches a busy glob through it.
func TestRunnerStopsAFileTool(t *testing.T) {
	w, dir := setup(t, nil)
	deepTree(t, dir, 64, 10, longNames)
	reg, err := tool.NewRegistry(w.Tools()...)
	if err != nil {
		t.Fatal(err)
	}
	runner := &tool.Runner{Tools: reg}
	args := argsOf(t, map[string]any{"pattern": busyGlob()})
	prompt(t, "glob through the runner returned after the cancel in", func() time.Duration {
		r, latency := stopWhileBusy(t, func(ctx context.Context) tool.Result {
			return runner.Run(ctx, tool.Call{ID: "c", Name: "glob", Args: args})
		})
		if r.Outcome != record.Interrupted {
			t.Errorf("got %s %.100q", r.Outcome, r.Content)
		}
		return latency
	})
}

// TestPathologicalGlob: patterns whose backtracking match was exponential in their ** segments
// answer at once over a tree 64 levels deep.
func TestPathologicalGlob(t *testing.T) {
	w, dir := setup(t, nil)
	deepTree(t, dir, 70, 1, func(level, i int) string { return "x" })
	for _, p := range []string{
		"**/**/**/**/**/**/**/**/x",
		"**/*/**/*/**/*/**/*/**/*/**/*/**/*/**/*/y",
		"**/d/**/d/**/d/**/d/**/d/**/d/**/d/**/d/y",
	} {
		start := time.Now()
		r := call(t, w.Glob(), map[string]any{"pattern": p})
		took := time.Since(start)
		if r.IsError || !strings.HasSuffix(r.Content, "[1 directory 64 levels below the workspace was not searched, the deepest a search goes; search under it with path]") {
			t.Errorf("%s: %s %.300q", p, r.Outcome, r.Content)
		}
		if took > time.Second {
			t.Errorf("%s took %v", p, took)
		}
		t.Logf("%s over 70 levels: %v", p, took.Round(10*time.Microsecond))
	}
	r := call(t, w.Glob(), map[string]any{"pattern": "**/**/**/**/**/**/**/**/x"})
	if n := strings.Count(r.Content, "/x\n"); n != 63 || !strings.HasPrefix(r.Content, strings.Repeat("d/", 63)+"x\n") {
		t.Errorf("want the 63 x within 64 levels, got %d: %.200q", n, r.Content)
	}
}

// TestSearchBounds: each bound a search reaches is named in its answer, with what it covers and
// how to narrow it: entries visited, depth, time.
func TestSearchBounds(t *testing.T) {
	t.Run("entries", func(t *testing.T) {
		files := map[string]string{}
		for i := range 30 {
			files[fmt.Sprintf("f%02d.txt", i)] = "hit\n"
		}
		w, _ := setup(t, files)
		w.limits.entries = 10
		r := call(t, w.Glob(), map[string]any{"pattern": "*.txt"})
		want := "f00.txt\nf01.txt\nf02.txt\nf03.txt\nf04.txt\nf05.txt\nf06.txt\nf07.txt\nf08.txt\nf09.txt\n" +
			"[stopped after visiting 10 entries, the most one search visits: what is above comes from that part only; narrow the path or the pattern]"
		if r.Outcome != record.OK || r.Content != want {
			t.Errorf("glob: %s %q", r.Outcome, r.Content)
		}
		r = call(t, w.Grep(), map[string]any{"pattern": "hit"})
		if r.Outcome != record.OK || !strings.HasSuffix(r.Content, "f09.txt:1:hit\n[10 matches in 10 files]\n"+
			"[stopped after visiting 10 entries, the most one search visits: what is above comes from that part only; narrow the path, the glob or the pattern]") {
			t.Errorf("grep: %s %q", r.Outcome, r.Content)
		}
	})
	t.Run("depth", func(t *testing.T) {
		w, dir := setup(t, nil)
		deepTree(t, dir, 6, 1, func(level, i int) string { return "x" })
		w.limits.depth = 3
		r := call(t, w.Glob(), map[string]any{"pattern": "**/x"})
		want := "d/d/x\nd/x\n[1 directory 3 levels below the workspace was not searched, the deepest a search goes; search under it with path]"
		if r.Content != want {
			t.Errorf("glob: %q", r.Content)
		}
		r = call(t, w.Glob(), map[string]any{"pattern": "**/x", "path": "d/d/d/d"})
		if want := "d/d/d/d/d/d/x\nd/d/d/d/d/x\nd/d/d/d/x\n"; r.Content != want {
			t.Errorf("glob under the cut: %q", r.Content)
		}
	})
	t.Run("time", func(t *testing.T) {
		w, dir := setup(t, nil)
		deepTree(t, dir, 64, 10, longNames)
		mustWrite(t, filepath.Join(dir, "text"), strings.Repeat("abcdefghij", 100_000))
		w.limits.time = 150 * time.Millisecond
		for _, c := range []struct {
			tl   tool.Tool
			args map[string]any
			want string
		}{
			{w.Glob(), map[string]any{"pattern": busyGlob()}, "no paths under the workspace match " + busyGlob() +
				"\n[stopped after 150ms, the longest one search runs, having visited %d entries: what is above comes from that part only; narrow the path or the pattern]"},
			{w.Grep(), map[string]any{"pattern": `(?:[a-j]{1,20}){1,20}x`}, "no matches for (?:[a-j]{1,20}){1,20}x" +
				"\n[stopped after 150ms, the longest one search runs, having visited %d entries: what is above comes from that part only; narrow the path, the glob or the pattern]"},
		} {
			promptWithin(t, timeBound, c.tl.Spec().Name+" ran past its time limit by", func() time.Duration {
				start := time.Now()
				r := call(t, c.tl, c.args)
				took := time.Since(start)
				m := regexp.MustCompile(`having visited (\d+) entries`).FindStringSubmatch(r.Content)
				if m == nil {
					t.Fatalf("%s: no count of the entries visited in %q", c.tl.Spec().Name, r.Content)
				}
				if r.Outcome != record.OK || !strings.HasPrefix(r.Content, strings.Replace(c.want, "%d", m[1], 1)) {
					t.Errorf("%s: %s %q", c.tl.Spec().Name, r.Outcome, r.Content)
				}
				if took < w.limits.time {
					t.Errorf("%s answered in %v, before its time limit of %v", c.tl.Spec().Name, took, w.limits.time)
				}
				return took - w.limits.time
			})
		}
	})
}

// TestBoundedPatterns: a glob or a regular expression beyond the bounds is refused, saying which;
// consecutive ** count once.
func TestBoundedPatterns(t *testing.T) {
	w, _ := setup(t, map[string]string{"a/b/c.go": "x"})
	for _, c := range []struct {
		tl      tool.Tool
		pattern string
		want    string
	}{
		{w.Glob(), strings.Repeat("a", 1100), `bad pattern "` + strings.Repeat("a", 60) + `…": it is 1100 bytes long, more than 1024`},
		{w.Glob(), "{a,b}{c,d}{e,f}{g,h}{i,j}{k,l}{m,n}{o,p}{q,r}", `bad pattern "{a,b}{c,d}{e,f}{g,h}{i,j}{k,l}{m,n}{o,p}{q,r}": it expands to more than 256 alternatives`},
		{w.Glob(), "{a,b,c,d}{a,b,c,d}{a,b,c,d}{a,b,c,d}/" + strings.Repeat("x", 40), `bad pattern "{a,b,c,d}{a,b,c,d}{a,b,c,d}{a,b,c,d}/` + strings.Repeat("x", 40) + `": its {…} alternatives together are more than 8192 bytes; split it into several globs`},
		{w.Glob(), strings.Repeat("*/", 33) + "x", `bad pattern "` + strings.Repeat("*/", 33) + `x": it has 34 path segments, more than 32`},
		{w.Glob(), strings.Repeat("**/a/", 9) + "x", `bad pattern "` + strings.Repeat("**/a/", 9) + `x": it has 9 ** segments, more than 8; one ** already matches any number of directories`},
		{w.Grep(), strings.Repeat("a", 1001), "the regular expression is 1001 bytes long, more than 1000; search for a shorter one"},
		{w.Grep(), `(?:[a-z][0-9]){1,999}`, "the regular expression is too complex to search with: it compiles to 2998 instructions, more than 2000 (a large {n,m} repetition is the usual cause); simplify it"},
	} {
		r := call(t, c.tl, map[string]any{"pattern": c.pattern})
		if r.Outcome != record.Failed || r.Content != c.want {
			t.Errorf("%s %.40q: got %s %q\nwant %q", c.tl.Spec().Name, c.pattern, r.Outcome, r.Content, c.want)
		}
	}
	r := call(t, w.Glob(), map[string]any{"pattern": strings.Repeat("**/", 40) + "c.go"})
	if r.Content != "a/b/c.go\n" {
		t.Errorf("40 consecutive **: %s %q", r.Outcome, r.Content)
	}
}

// TestEditFileBounded: edit_file reads a file whole, so one past maxEditFile is refused, saying
// what to use instead, without being read.
func TestEditFileBounded(t *testing.T) {
	w, dir := setup(t, nil)
	if err := os.WriteFile(filepath.Join(dir, "big.txt"), []byte("old\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(filepath.Join(dir, "big.txt"), maxEditFile+1); err != nil {
		t.Fatal(err)
	}
	r := call(t, w.EditFile(), map[string]any{"path": "big.txt", "old": "old", "new": "new"})
	if want := "big.txt is larger than 16 MiB, the most edit_file edits; change it with a command in bash (sed, say)"; r.Outcome != record.Failed || r.Content != want {
		t.Errorf("got %s %q", r.Outcome, r.Content)
	}
}
