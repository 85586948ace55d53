package host_test

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/reinhq/rein/internal/api"
	"github.com/reinhq/rein/internal/client"
	"github.com/reinhq/rein/internal/record"
)

var update = flag.Bool("update", false, "rewrite the expected output of the scenario files under testdata/scenarios")

// TestScenarios plays the scenario files under testdata/scenarios against a real host (the rig:
// the real HTTP API, real records, the simulator behind the real Anthropic client), in the style
// of etcd-io/raft's testdata: each file scripts sends, Stops, deliveries, approvals and restarts,
// and holds, under each command, what it answered, the records it led to (kinds and states) and
// the conversation as clients see it. A change of behaviour shows as a diff of these files; go
// test -run TestScenarios -update rewrites them, for review.
//
// A file is a list of commands. A command is a line, then optional input lines, then "----", then
// its expected output, up to a blank line. Lines starting with # between commands are comments.
//
//	host [bash] [ask]              start the host (first); input: the simulator's script (JSON)
//	new <conv> [title]             create a conversation
//	send <conv> [op=<op>] [queue] <text>
//	stop <conv> [op=<op>] [turn=<turn>]
//	approve <conv> <call> allow|deny [op=<op>]
//	gate close|open|wait           hold the agent before its next request / let it go / wait until held
//	wait <conv> idle|record <kind>|live <kind>
//	records <conv>                 the records written since the last records of <conv>
//	view <conv>                    the published state
//	restart | crash                close and reopen the host / open a copy of its disk as a kill leaves it
//
// Message ids are shown as m1, m2, … and call ids as c1, c2, … in the order they are first seen.
func TestScenarios(t *testing.T) {
	paths, err := filepath.Glob(filepath.Join("testdata", "scenarios", "*.txt"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no scenarios: %v", err)
	}
	for _, p := range paths {
		t.Run(strings.TrimSuffix(filepath.Base(p), ".txt"), func(t *testing.T) {
			t.Parallel()
			runScenario(t, p)
		})
	}
}

// block is one command of a scenario file, with the lines around it kept for rewriting.
type block struct {
	pre    []string // comments and blank lines before it
	line   int      // its line number
	cmd    string
	input  []string
	want   []string
	got    []string
	result bool // whether it had an output section
}

func parseScenario(t *testing.T, path string) (blocks []*block, tail []string) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	var pre []string
	for i := 0; i < len(lines); i++ {
		l := lines[i]
		if strings.TrimSpace(l) == "" || strings.HasPrefix(l, "#") {
			pre = append(pre, l)
			continue
		}
		b := &block{pre: pre, line: i + 1, cmd: l}
		pre = nil
		for i++; i < len(lines) && lines[i] != "----"; i++ {
			b.input = append(b.input, lines[i])
		}
		if i == len(lines) {
			t.Fatalf("%s:%d: %q has no ---- line", path, b.line, l)
		}
		b.result = true
		for i++; i < len(lines) && lines[i] != ""; i++ {
			b.want = append(b.want, lines[i])
		}
		if i < len(lines) {
			i-- // the blank line belongs to the next block's preamble
		}
		blocks = append(blocks, b)
	}
	return blocks, pre
}

func runScenario(t *testing.T, path string) {
	blocks, tail := parseScenario(t, path)
	s := &scenario{t: t, convs: map[string]*scenConv{}, ids: namer{prefix: "m"}, calls: namer{prefix: "c"}}
	for _, b := range blocks {
		b.got = s.run(b)
		if !*update && strings.Join(b.got, "\n") != strings.Join(b.want, "\n") {
			t.Errorf("%s:%d: %s\n got:\n\t%s\nwant:\n\t%s", path, b.line, b.cmd, strings.Join(b.got, "\n\t"), strings.Join(b.want, "\n\t"))
		}
	}
	if !*update {
		return
	}
	var out []string
	for _, b := range blocks {
		out = append(out, b.pre...)
		out = append(out, b.cmd)
		out = append(out, b.input...)
		out = append(out, "----")
		out = append(out, b.got...)
	}
	out = append(out, tail...)
	if err := os.WriteFile(path, []byte(strings.Join(out, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
}

type scenario struct {
	t     *testing.T
	r     *rig
	convs map[string]*scenConv
	ids   namer // message ids
	calls namer // tool-call ids
	ops   int
}

type scenConv struct {
	id   string
	w    *watch
	seen int64 // the last record shown by records
}

// namer gives ids their scenario names, in the order they are first seen.
type namer struct {
	prefix string
	names  map[string]string
	ids    map[string]string
}

func (n *namer) name(id string) string {
	if id == "" {
		return ""
	}
	if n.names == nil {
		n.names, n.ids = map[string]string{}, map[string]string{}
	}
	if v, ok := n.names[id]; ok {
		return v
	}
	v := fmt.Sprintf("%s%d", n.prefix, len(n.names)+1)
	n.names[id], n.ids[v] = v, id
	return v
}

func (n *namer) id(name string) (string, bool) {
	id, ok := n.ids[name]
	return id, ok
}

// args splits a command's words into key=value options, flags and the rest.
func args(words []string) (opts map[string]string, rest []string) {
	opts = map[string]string{}
	for _, w := range words {
		if k, v, ok := strings.Cut(w, "="); ok && !strings.ContainsAny(k, " \"") {
			opts[k] = v
			continue
		}
		rest = append(rest, w)
	}
	return opts, rest
}

func (s *scenario) fatalf(b *block, format string, a ...any) {
	s.t.Helper()
	s.t.Fatalf("line %d: %s: %s", b.line, b.cmd, fmt.Sprintf(format, a...))
}

func (s *scenario) conv(b *block, name string) *scenConv {
	c, ok := s.convs[name]
	if !ok {
		s.fatalf(b, "no conversation %q (make it with new)", name)
	}
	return c
}

func (s *scenario) op(opts map[string]string) string {
	if op, ok := opts["op"]; ok {
		return op
	}
	s.ops++
	return fmt.Sprintf("op-%d", s.ops)
}

func (s *scenario) ctx() context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	s.t.Cleanup(cancel)
	return ctx
}

func (s *scenario) run(b *block) []string {
	words := strings.Fields(b.cmd)
	if s.r == nil && words[0] != "host" {
		s.fatalf(b, "the first command starts the host")
	}
	switch words[0] {
	case "host":
		opts := rigOptions{script: strings.Join(b.input, "\n")}
		for _, w := range words[1:] {
			switch w {
			case "bash":
				opts.bash = true
			case "ask":
				opts.bash, opts.ask = true, true
			default:
				s.fatalf(b, "unknown host option %q", w)
			}
		}
		s.r = newRig(s.t, opts)
		return nil
	case "new":
		title := strings.Join(words[2:], " ")
		if title == "" {
			title = words[1]
		}
		id := s.r.create(title)
		s.convs[words[1]] = &scenConv{id: id, w: s.r.events(id, 0)}
		return nil
	case "send":
		c := s.conv(b, words[1])
		opts, rest := args(words[2:])
		queue := len(rest) > 0 && rest[0] == "queue"
		if queue {
			rest = rest[1:]
		}
		res, err := s.r.c.Send(s.ctx(), c.id, api.Message{Op: s.op(opts), Text: strings.Join(rest, " "), Queue: queue})
		if err != nil {
			return []string{"error " + string(client.Code(err))}
		}
		out := s.ids.name(res.MessageID) + " " + res.State
		if res.Replayed {
			out += " replayed"
		}
		return []string{out}
	case "stop":
		c := s.conv(b, words[1])
		opts, _ := args(words[2:])
		turn, _ := strconv.ParseInt(opts["turn"], 10, 64)
		res, err := s.r.c.StopOp(s.ctx(), c.id, s.op(opts), turn)
		if err != nil {
			return []string{"error " + string(client.Code(err))}
		}
		return []string{s.stopLine(res)}
	case "approve":
		c := s.conv(b, words[1])
		opts, rest := args(words[2:])
		if len(rest) != 2 || (rest[1] != "allow" && rest[1] != "deny") {
			s.fatalf(b, "approve <conv> <call> allow|deny")
		}
		id, ok := s.calls.id(rest[0])
		if !ok {
			s.fatalf(b, "no call %s has been shown yet", rest[0])
		}
		res, err := s.r.c.Approve(s.ctx(), c.id, s.op(opts), id, rest[1] == "allow")
		if err != nil {
			return []string{"error " + string(client.Code(err))}
		}
		out := s.calls.name(res.CallID) + " " + res.State
		if res.Replayed {
			out += " replayed"
		}
		return []string{out}
	case "gate":
		switch words[1] {
		case "close":
			s.r.gate.close()
		case "open":
			s.r.gate.open()
		case "wait":
			select {
			case <-s.r.gate.reached():
			case <-time.After(20 * time.Second):
				s.fatalf(b, "no agent reached the gate")
			}
		}
		return nil
	case "wait":
		c := s.conv(b, words[1])
		switch words[2] {
		case "idle":
			c.w.idle()
		case "record":
			c.w.record(record.Kind(words[3]))
		case "live":
			c.w.live(words[3])
		default:
			s.fatalf(b, "wait for what? %q", words[2])
		}
		return nil
	case "records":
		c := s.conv(b, words[1])
		var out []string
		for _, rec := range s.r.records(c.id) {
			if rec.Seq > c.seen {
				out = append(out, fmt.Sprintf("%2d %s", rec.Seq, s.recordLine(rec)))
				c.seen = rec.Seq
			}
		}
		return out
	case "view":
		return s.viewLines(s.r.get(s.conv(b, words[1]).id))
	case "restart", "crash":
		if words[0] == "restart" {
			s.r.restart()
		} else {
			s.r = s.r.crash()
		}
		for _, c := range s.convs {
			c.w = s.r.events(c.id, s.r.get(c.id).State.Seq)
		}
		return nil
	}
	s.fatalf(b, "unknown command")
	return nil
}

func (s *scenario) stopLine(res api.StopResult) string {
	var out []string
	switch {
	case res.Reason != "":
		return "not stopped: " + res.Reason
	case !res.Stopped:
		return "quiet: nothing to stop"
	}
	out = append(out, "stopped")
	if res.Interrupted {
		out = append(out, "interrupted")
	}
	if res.Replayed {
		out = append(out, "replayed")
	}
	if len(res.Withdrawn) > 0 {
		var ws []string
		for _, w := range res.Withdrawn {
			ws = append(ws, fmt.Sprintf("%s %q", s.ids.name(w.ID), w.Text))
		}
		out = append(out, "withdrew "+strings.Join(ws, ", "))
	}
	return strings.Join(out, ", ")
}

func (s *scenario) viewLines(v api.View) []string {
	st := v.State
	head := fmt.Sprintf("working %v, phase %s", st.Working, st.Phase)
	if st.Turn != 0 {
		head += fmt.Sprintf(", turn %d in hand", st.Turn)
	}
	out := []string{head}
	for _, sub := range st.Submissions {
		line := fmt.Sprintf("  submission %s %s %q", s.ids.name(sub.ID), sub.State, sub.Text)
		if sub.Queue {
			line += " queued"
		}
		out = append(out, line)
	}
	for _, a := range st.Approvals {
		out = append(out, fmt.Sprintf("  approval %s %s %s", s.calls.name(a.CallID), a.Name, a.Args))
	}
	return out
}

var callIDs = regexp.MustCompile(`toolu_[A-Za-z0-9_]+`)

// recordLine is one record as a scenario shows it: its kind and what is stable about it (no
// times, no streamed text, whose length depends on when a Stop lands).
func (s *scenario) recordLine(rec record.Record) string {
	k := string(rec.Kind())
	switch b := rec.Body.(type) {
	case *record.Submission:
		line := fmt.Sprintf("%s %s %s", k, s.ids.name(b.ID), b.State)
		if b.Text != "" {
			line += fmt.Sprintf(" %q", b.Text)
		}
		if b.Queue {
			line += " queued"
		}
		if b.Reason != "" {
			line += " (" + b.Reason + ")"
		}
		return line
	case *record.UserPrompt:
		return fmt.Sprintf("%s turn %d %s %q", k, b.Turn, s.ids.name(b.Submission), b.Text)
	case *record.Steering:
		if b.Submission != "" {
			return fmt.Sprintf("%s %s %q", k, s.ids.name(b.Submission), b.Text)
		}
		return fmt.Sprintf("%s (%s)", k, b.Source)
	case *record.AssistantMessage:
		line := fmt.Sprintf("%s turn %d %s", k, b.Turn, b.StopReason)
		for _, p := range b.Parts {
			if p.Type == record.PartToolCall {
				line += fmt.Sprintf(", calls %s %s", s.calls.name(p.CallID), p.Name)
			}
		}
		return line
	case *record.ToolStarted:
		return fmt.Sprintf("%s %s %s", k, s.calls.name(b.CallID), b.Name)
	case *record.ToolFinished:
		return fmt.Sprintf("%s %s %s", k, s.calls.name(b.CallID), b.Outcome)
	case *record.ToolResults:
		var rs []string
		for _, r := range b.Results {
			rs = append(rs, s.calls.name(r.CallID)+" "+string(r.Outcome))
		}
		return k + " " + strings.Join(rs, ", ")
	case *record.Quiesced:
		return k + " " + b.Reason
	case *record.Stop:
		line := k + " " + b.Op
		if b.Turn != 0 {
			line += fmt.Sprintf(" turn %d", b.Turn)
		}
		for _, id := range b.Withdrawn {
			line += " " + s.ids.name(id)
		}
		if b.Interrupted {
			line += ", interrupted"
		}
		return line
	case *record.Approval:
		line := fmt.Sprintf("%s %s %s", k, s.calls.name(b.CallID), b.State)
		if b.Name != "" {
			line += " " + b.Name
		}
		if b.By != "" {
			line += " by " + b.By
		}
		return line
	case *record.ProviderError:
		return fmt.Sprintf("%s %s %d", k, b.Class, b.Status)
	case *record.RetryScheduled:
		return fmt.Sprintf("%s attempt %d", k, b.Attempt)
	case *record.Failure:
		return k + " " + callIDs.ReplaceAllString(b.Message, "<call>")
	}
	return k
}
