package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/reinhq/rein/internal/agent"
	"github.com/reinhq/rein/internal/provider/sim"
	"github.com/spf13/cobra"
	"golang.org/x/sys/unix"
)

// This file is rein bench turns, the end-to-end benchmark of a tool turn: the real binary, a
// real session on disk, the real bash tool and the simulator over loopback HTTP, timed from the
// inside by the marks rein run writes when given --trace-turns (turnTrace), next to the floor
// the machine sets, measured the same way.

func newBenchCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:    "bench",
		Short:  "Measure rein on this machine",
		Hidden: true,
		Args:   cobra.NoArgs,
	}
	cmd.AddCommand(newBenchTurnsCmd())
	return cmd
}

func newBenchTurnsCmd() *cobra.Command {
	var o benchOptions
	cmd := &cobra.Command{
		Use:   "turns",
		Short: "Time tool turns end to end against the simulator, next to the machine's floor",
		Long: `turns runs this rein binary (rein run, in a fresh workspace and state directory) against
the simulator, started in this process on loopback at zero latency (or after --think, as
a model thinks) and scripted to answer every request with a bash call running "echo x",
for --turns tool turns and a closing reply. It prints each figure's p50, p90 and p99 in
milliseconds, per tool turn:

  turn           from one request's start to the next one's (rein's client sending)
  turn less the simulator
                 the turn less the simulator's own handling of its request: rein's share
  provider wait  sending the request until the reply's stream ended (the round trip)
    simulator    of which the simulator's own handling, its validation included
  encode         rendering the context and encoding the request
  validate       validating the encoded request
  commit         committing the assistant message and tool_started (an fsync)
  tool start     the bash tool's start of the command, until its process started
  tool run       from there until the tool returned the result
  results        appending tool_finished and tool_results
  other          the rest: admission, the turn boundary, publishing

Then the floor, measured here the same number of times: a bare bash -c 'echo x' spawned
and awaited, an fsync of a small append, a loopback HTTP round trip, and the sum of their
medians. Percentiles are of each line alone: they do not add up.

Last, the CPU time per tool turn: the rein run's, split into rein's own and its commands'
(bash; under a held sandbox, its helper too), and the simulator's.`,
		Example: `  rein bench turns
  rein bench turns --turns 1000 --sandbox off
  rein bench turns --think 50ms    # what a turn costs while a model takes 50 ms to answer`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if o.turns < 1 {
				return exitf(exitUsage, "--turns must be at least 1")
			}
			if o.rein == "" {
				exe, err := os.Executable()
				if err != nil {
					return fmt.Errorf("find this rein binary: %w", err)
				}
				o.rein = exe
			}
			return benchTurns(cmd.Context(), cmd.OutOrStdout(), o)
		},
	}
	cmd.Flags().IntVar(&o.turns, "turns", 200, "how many tool turns to time")
	cmd.Flags().StringVar(&o.sandbox, "sandbox", "", "the --sandbox mode of the rein run timed (default: rein's default here)")
	cmd.Flags().StringVar(&o.rein, "rein", "", "the rein binary to time (default: this one), to compare two builds against the same simulator and floor")
	cmd.Flags().DurationVar(&o.think, "think", 0, "how long the simulator takes before each answer, as a model thinks (0: it answers at once); the figures less the simulator are rein's alone")
	cmd.Flags().BoolVar(&o.noCheckpoints, "no-checkpoints", false, "time the run without checkpoints of the workspace (its --no-checkpoints)")
	cmd.Flags().StringVar(&o.cpuProfile, "cpu-profile", "", "write a CPU profile of the rein run timed to this file (go tool pprof reads it)")
	return cmd
}

type benchOptions struct {
	rein       string // the rein binary timed
	turns      int
	sandbox    string
	cpuProfile string
	// think is how long the simulator waits before each answer: what rein does while a model
	// thinks (a spare shell's start) is then off the turn's path, as it is in use.
	think time.Duration
	// noCheckpoints passes --no-checkpoints: no snapshot at all, not even the stat walk of an
	// unchanged workspace.
	noCheckpoints bool
}

// benchTurns runs the benchmark and writes its table to out.
func benchTurns(ctx context.Context, out io.Writer, o benchOptions) error {
	dir, err := os.MkdirTemp("", "rein-bench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	ws, home, conf := filepath.Join(dir, "ws"), filepath.Join(dir, "home"), filepath.Join(dir, "config")
	for _, d := range []string{ws, home, conf} {
		if err := os.Mkdir(d, 0o755); err != nil {
			return err
		}
	}

	steps := make([]sim.Step, 0, o.turns+1)
	for range o.turns {
		steps = append(steps, sim.Step{ToolCalls: []sim.ToolCall{{Name: "bash", Arguments: json.RawMessage(`{"command":"echo x"}`)}}})
	}
	steps = append(steps, sim.Step{Text: "Done."})
	s := sim.New(sim.Options{Script: &sim.Script{Steps: steps, Strict: true}, MaxLogged: 1})
	var mu sync.Mutex
	var handled []simSpan
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return fmt.Errorf("listen for the simulator: %w", err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		if o.think > 0 {
			time.Sleep(o.think)
		}
		s.ServeHTTP(w, r)
		end := time.Now()
		mu.Lock()
		handled = append(handled, simSpan{start, end})
		mu.Unlock()
	})}
	go srv.Serve(ln)
	defer srv.Close()

	tracePath := filepath.Join(dir, "trace")
	args := []string{"run", "--provider", "anthropic", "--base-url", "http://" + ln.Addr().String(),
		"--max-turns", strconv.Itoa(o.turns + 1), "--trace-turns", tracePath}
	if o.sandbox != "" {
		args = append(args, "--sandbox", o.sandbox)
	}
	if o.noCheckpoints {
		args = append(args, "--no-checkpoints")
	}
	if o.cpuProfile != "" {
		abs, err := filepath.Abs(o.cpuProfile)
		if err != nil {
			return err
		}
		args = append(args, "--cpu-profile", abs)
	}
	args = append(args, "run `echo x` again and again")
	cmd := exec.CommandContext(ctx, o.rein, args...)
	cmd.Dir = ws
	cmd.Env = append(withoutEnv(os.Environ(), "REIN_HOME", "XDG_CONFIG_HOME", "ANTHROPIC_API_KEY", "OPENAI_API_KEY", "OPENROUTER_API_KEY"),
		"REIN_HOME="+home, "XDG_CONFIG_HOME="+conf, "ANTHROPIC_API_KEY=bench")
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = io.Discard, &stderr
	// While rein runs, this process only serves the simulator: its CPU time is the simulator's.
	before := selfCPU()
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("the timed rein run failed: %v\n%s", err, stderr.Bytes())
	}
	simCPU := selfCPU().less(before)
	marks, reinCPU, err := readTrace(tracePath)
	if err != nil {
		return err
	}
	turns := splitTurns(marks)
	if len(turns) != o.turns {
		return fmt.Errorf("the timed rein run made %d tool turns, not %d (did the bash calls run? it said: %s)", len(turns), o.turns, stderr.Bytes())
	}
	mu.Lock()
	simTimes := slices.Clone(handled)
	mu.Unlock()

	floor, err := measureFloor(dir, o.turns)
	if err != nil {
		return err
	}
	all := cpuSpent{user: cmd.ProcessState.UserTime(), system: cmd.ProcessState.SystemTime()}
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		all.faults = int64(ru.Minflt)
	}
	mode := o.sandbox
	if mode == "" {
		mode = string(sandboxSupport().Default()) + " (rein's default here)"
	}
	latency := "at zero latency"
	if o.think > 0 {
		latency = fmt.Sprintf("thinking %v before each answer", o.think)
	}
	fmt.Fprintf(out, "rein bench turns: %d tool turns of bash `echo x`, the simulator in-process %s\n", o.turns, latency)
	ckpt := "checkpoints on (each tool turn snapshots the workspace in the background: git runs when a file changed)"
	if o.noCheckpoints {
		ckpt = "no checkpoints"
	}
	fmt.Fprintf(out, "rein %s, sandbox %s, %s\n\n", o.rein, mode, ckpt)
	fmt.Fprintf(out, "%-26s %8s %8s %8s\n", "per tool turn (ms)", "p50", "p90", "p99")
	col := func(f func(turnTimes) time.Duration) []time.Duration {
		ds := make([]time.Duration, len(turns))
		for i, t := range turns {
			ds[i] = f(t)
		}
		return ds
	}
	row := func(name string, ds []time.Duration) {
		fmt.Fprintf(out, "%-26s %8s %8s %8s\n", name, ms(pct(ds, 50)), ms(pct(ds, 90)), ms(pct(ds, 99)))
	}
	if len(simTimes) < len(turns) {
		return fmt.Errorf("the simulator answered %d requests for %d tool turns", len(simTimes), len(turns))
	}
	row("turn", col(func(t turnTimes) time.Duration { return t.turn }))
	less := make([]time.Duration, len(turns))
	for i, t := range turns {
		less[i] = t.turn - simTimes[i].end.Sub(simTimes[i].start)
	}
	row("turn less the simulator", less)
	row("  provider wait", col(func(t turnTimes) time.Duration { return t.wait }))
	// The wait's parts, by the one clock both processes read: the request on its way (rein's
	// write, the loopback, the simulator's server reading its head), the simulator's handler, and
	// the answer on its way back to rein's "received" (the stream read and decoded) — zero when
	// rein had the whole answer before the handler's return was noted (it writes the stream, then
	// returns).
	to, sims, from := make([]time.Duration, len(turns)), make([]time.Duration, len(turns)), make([]time.Duration, len(turns))
	for i, t := range turns {
		sp := simTimes[i]
		to[i], sims[i], from[i] = sp.start.Sub(t.sentAt), sp.end.Sub(sp.start), max(0, t.receivedAt.Sub(sp.end))
	}
	row("    to the simulator", to)
	row("    simulator", sims)
	row("    back to rein", from)
	row("  encode", col(func(t turnTimes) time.Duration { return t.encode }))
	row("  validate", col(func(t turnTimes) time.Duration { return t.validate }))
	row("  commit", col(func(t turnTimes) time.Duration { return t.commit }))
	row("  tool start", col(func(t turnTimes) time.Duration { return t.start }))
	row("  tool run", col(func(t turnTimes) time.Duration { return t.run }))
	row("  results", col(func(t turnTimes) time.Duration { return t.results }))
	row("  other", col(func(t turnTimes) time.Duration { return t.other() }))
	fmt.Fprintf(out, "\nfloor, measured here %d times each\n", o.turns)
	row("  bash -c 'echo x'", floor.spawn)
	row("  fsync", floor.fsync)
	row("  loopback HTTP", floor.http)
	fmt.Fprintf(out, "%-26s %8s\n", "  sum of the p50s", ms(pct(floor.spawn, 50)+pct(floor.fsync, 50)+pct(floor.http, 50)))
	row("  a page's first touch", floor.fault)
	// The CPU times are over the whole run (rein's start and the closing reply too) spread over
	// the tool turns; the run's is rein's and its commands' (rein reaps them), of which rein's own
	// is what it said in the trace.
	perTurn := func(name string, c cpuSpent) {
		n := time.Duration(o.turns)
		fmt.Fprintf(out, "%-26s %8s   (user %s, system %s; %d page faults)\n", name, ms(c.total()/n), ms(c.user/n), ms(c.system/n), c.faults/int64(o.turns))
	}
	fmt.Fprintf(out, "\nCPU time per tool turn (ms)\n")
	perTurn("  the rein run", all)
	if reinCPU.total() > 0 {
		perTurn("    rein itself", reinCPU)
		perTurn("    its commands", all.less(reinCPU))
	}
	perTurn("  the simulator", simCPU)
	if load, err := os.ReadFile("/proc/loadavg"); err == nil {
		fmt.Fprintf(out, "load average (1, 5, 15 min) at the end: %s\n", strings.Join(strings.Fields(string(load))[:3], " "))
	}
	return nil
}

func withoutEnv(env []string, names ...string) []string {
	out := make([]string, 0, len(env))
	for _, kv := range env {
		name, _, _ := strings.Cut(kv, "=")
		if !slices.Contains(names, name) {
			out = append(out, kv)
		}
	}
	return out
}

// turnTimes is where one tool turn's time went, from its request's start to the next one's, and
// when its request was sent and its answer received.
type turnTimes struct {
	turn, wait, encode, validate, commit, start, run, results time.Duration
	sentAt, receivedAt                                        time.Time
}

// simSpan is when the simulator's handler began and ended one request, by the wall clock rein's
// trace marks read too.
type simSpan struct{ start, end time.Time }

func (t turnTimes) other() time.Duration {
	return t.turn - t.wait - t.encode - t.validate - t.commit - t.start - t.run - t.results
}

type traceMark struct {
	name string
	at   time.Time
}

// splitTurns reads the tool turns out of a run's marks: each from a request's send to the next
// one's, with the marks between them. A turn that ran no command (no "spawned") is not one.
func splitTurns(marks []traceMark) []turnTimes {
	var sends []int
	for i, m := range marks {
		if m.name == string(agent.MarkSend) {
			sends = append(sends, i)
		}
	}
	var turns []turnTimes
	for k := 0; k+1 < len(sends); k++ {
		span := marks[sends[k] : sends[k+1]+1]
		at := func(name string) (time.Time, bool) {
			for _, m := range span {
				if m.name == name {
					return m.at, true
				}
			}
			return time.Time{}, false
		}
		between := func(from, to string) time.Duration {
			a, ok1 := at(from)
			b, ok2 := at(to)
			if !ok1 || !ok2 {
				return 0
			}
			return b.Sub(a)
		}
		if _, ok := at(spawnedMark); !ok {
			continue
		}
		sent, _ := at(string(agent.MarkSend))
		received, _ := at(string(agent.MarkReceived))
		turns = append(turns, turnTimes{
			turn:     span[len(span)-1].at.Sub(span[0].at),
			wait:     between(string(agent.MarkSend), string(agent.MarkReceived)),
			encode:   between(string(agent.MarkEncode), string(agent.MarkValidate)),
			validate: between(string(agent.MarkValidate), string(agent.MarkValidated)),
			commit:   between(string(agent.MarkCommit), string(agent.MarkCommitted)),
			start:    between(string(agent.MarkTool), spawnedMark),
			run:      between(spawnedMark, string(agent.MarkToolDone)),
			results:  between(string(agent.MarkToolDone), string(agent.MarkResults)),
			sentAt:   sent, receivedAt: received,
		})
	}
	return turns
}

// floorTimes are the machine's own costs of a tool turn's parts.
type floorTimes struct {
	spawn, fsync, http []time.Duration
	// fault is a page's first touch: the kernel's (and a virtual machine's hypervisor's) price
	// for each page a process maps, hundreds of which a bash start pays.
	fault []time.Duration
}

// measureFloor times n bare bash spawns, n fsyncs of a small append to a file in dir, n
// loopback HTTP round trips on one kept-alive connection, and the first touch of a page, n times
// over 64 fresh ones.
func measureFloor(dir string, n int) (floorTimes, error) {
	var f floorTimes
	for range n {
		start := time.Now()
		if err := exec.Command("bash", "-c", "echo x").Run(); err != nil {
			return f, fmt.Errorf("run bash -c 'echo x': %w", err)
		}
		f.spawn = append(f.spawn, time.Since(start))
	}
	file, err := os.Create(filepath.Join(dir, "fsync"))
	if err != nil {
		return f, err
	}
	defer file.Close()
	line := bytes.Repeat([]byte("x"), 200)
	for range n {
		start := time.Now()
		if _, err := file.Write(line); err != nil {
			return f, err
		}
		if err := file.Sync(); err != nil {
			return f, err
		}
		f.fsync = append(f.fsync, time.Since(start))
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return f, err
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, "ok") })}
	go srv.Serve(ln)
	defer srv.Close()
	client := &http.Client{Transport: &http.Transport{}}
	url := "http://" + ln.Addr().String() + "/"
	for range n {
		start := time.Now()
		resp, err := client.Get(url)
		if err != nil {
			return f, fmt.Errorf("loopback round trip: %w", err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		f.http = append(f.http, time.Since(start))
	}
	const pages = 64
	size := pages * os.Getpagesize()
	for range n {
		m, err := unix.Mmap(-1, 0, size, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_ANON|unix.MAP_PRIVATE)
		if err != nil {
			return f, fmt.Errorf("map pages to touch: %w", err)
		}
		start := time.Now()
		for i := 0; i < size; i += os.Getpagesize() {
			m[i] = 1
		}
		f.fault = append(f.fault, time.Since(start)/pages)
		unix.Munmap(m)
	}
	return f, nil
}

// pct is the p-th percentile of ds (nearest rank).
func pct(ds []time.Duration, p int) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	i := (len(s)*p + 99) / 100
	return s[max(i-1, 0)]
}

func ms(d time.Duration) string {
	return strconv.FormatFloat(float64(d)/float64(time.Millisecond), 'f', 3, 64)
}

// spawnedMark is the mark the bash tool's Started hook writes.
const spawnedMark = "spawned"

// turnTrace keeps the marks of a traced rein run (--trace-turns) in memory and writes them, one
// "name unix-nanoseconds" line each, when the run ends. A nil turnTrace traces nothing.
type turnTrace struct {
	path  string
	mu    sync.Mutex
	marks []traceMark
}

func newTurnTrace(path string) *turnTrace {
	if path == "" {
		return nil
	}
	return &turnTrace{path: path, marks: make([]traceMark, 0, 4096)}
}

func (t *turnTrace) mark(name string) {
	now := time.Now()
	t.mu.Lock()
	t.marks = append(t.marks, traceMark{name, now})
	t.mu.Unlock()
}

// agent is the hook for agent.Config.Trace.
func (t *turnTrace) agent() func(agent.Mark) {
	if t == nil {
		return nil
	}
	return func(m agent.Mark) { t.mark(string(m)) }
}

// started is the hook for the bash tool's shell.Options.Started.
func (t *turnTrace) started() func() {
	if t == nil {
		return nil
	}
	return func() { t.mark(spawnedMark) }
}

// write writes the marks to the trace file, saying on log if it cannot.
func (t *turnTrace) write(log io.Writer) {
	if t == nil {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	var b bytes.Buffer
	for _, m := range t.marks {
		fmt.Fprintf(&b, "%s %d\n", m.name, m.at.UnixNano())
	}
	// Last, rein's own CPU time so far (its commands' is not in it), for the bench to tell the
	// two apart: "cpu user-ns system-ns minor-page-faults".
	cpu := selfCPU()
	fmt.Fprintf(&b, "%s %d %d %d\n", cpuMark, cpu.user, cpu.system, cpu.faults)
	if err := os.WriteFile(t.path, b.Bytes(), 0o644); err != nil {
		fmt.Fprintf(log, "rein: write the turn trace: %v\n", err)
	}
}

// cpuMark names the trace's last line, rein's own CPU time (see turnTrace.write).
const cpuMark = "cpu"

// cpuSpent is a process's CPU time, user and system, and the pages it touched first (minor page
// faults: on a machine where one is dear, they are much of what a command's start costs).
type cpuSpent struct {
	user, system time.Duration
	faults       int64
}

func (c cpuSpent) total() time.Duration { return c.user + c.system }

func (c cpuSpent) less(d cpuSpent) cpuSpent {
	return cpuSpent{c.user - d.user, c.system - d.system, c.faults - d.faults}
}

// selfCPU is this process's CPU time so far.
func selfCPU() cpuSpent {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return cpuSpent{time.Duration(ru.Utime.Nano()), time.Duration(ru.Stime.Nano()), int64(ru.Minflt)}
}

// readTrace reads a trace file turnTrace wrote: its marks, and rein's own CPU time (zero if the
// file has no cpu line).
func readTrace(path string) ([]traceMark, cpuSpent, error) {
	var cpu cpuSpent
	f, err := os.Open(path)
	if err != nil {
		return nil, cpu, fmt.Errorf("read the turn trace: %w", err)
	}
	defer f.Close()
	var marks []traceMark
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		malformed := fmt.Errorf("read the turn trace: a malformed line %q", sc.Text())
		f := strings.Fields(sc.Text())
		if (len(f) == 3 || len(f) == 4) && f[0] == cpuMark {
			u, err1 := strconv.ParseInt(f[1], 10, 64)
			s, err2 := strconv.ParseInt(f[2], 10, 64)
			var faults int64
			var err3 error
			if len(f) == 4 {
				faults, err3 = strconv.ParseInt(f[3], 10, 64)
			}
			if err1 != nil || err2 != nil || err3 != nil {
				return nil, cpu, malformed
			}
			cpu = cpuSpent{time.Duration(u), time.Duration(s), faults}
			continue
		}
		if len(f) != 2 {
			return nil, cpu, malformed
		}
		n, err := strconv.ParseInt(f[1], 10, 64)
		if err != nil {
			return nil, cpu, malformed
		}
		marks = append(marks, traceMark{f[0], time.Unix(0, n)})
	}
	return marks, cpu, sc.Err()
}
