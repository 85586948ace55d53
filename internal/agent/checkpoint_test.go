package agent_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/reinhq/rein/internal/agent"
	"github.com/reinhq/rein/internal/checkpoint"
	"github.com/reinhq/rein/internal/fold"
	"github.com/reinhq/rein/internal/provider"
	"github.com/reinhq/rein/internal/record"
	"github.com/reinhq/rein/internal/tool"
	fstool "github.com/reinhq/rein/internal/tool/fs"
)

// fileTools are the workspace's file tools, for a harness.
func fileTools(t testing.TB, ws string) []tool.Tool {
	t.Helper()
	files, err := fstool.Open(ws)
	if err != nil {
		t.Fatal(err)
	}
	return files.Tools()
}

func openRepo(t testing.TB, ws string) *checkpoint.Repo {
	t.Helper()
	repo, err := checkpoint.Open(t.TempDir(), ws, checkpoint.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return repo
}

// The loop checkpoints the workspace when it takes a prompt up and after each batch that could
// change files, never after a batch of reading tools, and records each checkpoint that made a
// commit before the next batch starts.
func TestCheckpointsFollowTheTurns(t *testing.T) {
	f := formats[0]
	ws := t.TempDir()
	if err := os.WriteFile(filepath.Join(ws, "mine.txt"), []byte("the person's file\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	repo := openRepo(t, ws)
	h := newHarness(t, f, setup{
		script: steps(
			bashStep("Writing with bash.", "echo one > one.txt"),
			callStep("Reading only.", `{"name":"read_file","arguments":{"path":"one.txt"}}`, `{"name":"glob","arguments":{"pattern":"*.txt"}}`),
			callStep("Writing with the tool.", `{"name":"write_file","arguments":{"path":"two.txt","content":"two\n"}}`),
			bashStep("Changing nothing.", "true"),
			textStep("Done."),
		),
		tools: fileTools(t, ws),
		ws:    ws,
		cfg:   func(c *agent.Config) { c.Checkpoints = repo },
	})
	out := h.run(context.Background(), "go")
	if out.Reason != fold.Replied || out.Err != nil {
		t.Fatalf("outcome %+v", out)
	}
	recs := h.records()
	cps := all[*record.Checkpoint](recs)
	var turns []int64
	for _, c := range cps {
		if c.Error != "" {
			t.Fatalf("a snapshot failed: %s", c.Error)
		}
		turns = append(turns, c.Turn)
	}
	// Turn 1 is the prompt (mine.txt), 2 the bash write, 3 the reads (no snapshot), 4 the
	// write_file, 5 a bash that changed nothing (a snapshot, but no commit).
	if want := []int64{1, 2, 4}; !slices.Equal(turns, want) {
		t.Fatalf("checkpoints at turns %v, want %v", turns, want)
	}
	// Each checkpoint is recorded before the next batch's first tool starts.
	var order []string
	for _, r := range recs {
		switch b := r.Body.(type) {
		case *record.Checkpoint:
			order = append(order, fmt.Sprintf("cp%d", b.Turn))
		case *record.ToolStarted:
			order = append(order, "start")
		}
	}
	if want := []string{"cp1", "start", "cp2", "start", "start", "start", "cp4", "start"}; !slices.Equal(order, want) {
		t.Fatalf("checkpoints and tool starts in the order %v, want %v", order, want)
	}
	for _, c := range cps {
		changes, err := repo.Diff(context.Background(), "", c.Commit)
		if err != nil {
			t.Fatal(err)
		}
		var paths []string
		for _, ch := range changes {
			paths = append(paths, string(ch.Status)+" "+ch.Path)
		}
		want := map[int64][]string{1: {"A mine.txt"}, 2: {"A one.txt"}, 4: {"A two.txt"}}[c.Turn]
		if !slices.Equal(paths, want) {
			t.Errorf("checkpoint at turn %d changed %v, want %v", c.Turn, paths, want)
		}
	}
}

// Two sessions checkpoint one workspace at once, each through its own shadow repository handle
// (as two processes would): neither's snapshots fail or lose the other's, and each session's last
// checkpoint holds every file it wrote. Run under -race.
func TestTwoSessionsCheckpointOneWorkspace(t *testing.T) {
	ws := t.TempDir()
	state := t.TempDir()
	const n = 6
	var wg sync.WaitGroup
	hs := make([]*harness, 2)
	repos := make([]*checkpoint.Repo, 2)
	for i := range hs {
		repo, err := checkpoint.Open(state, ws, checkpoint.Options{})
		if err != nil {
			t.Fatal(err)
		}
		repos[i] = repo
		var ss []string
		for j := range n {
			ss = append(ss, bashStep("step", fmt.Sprintf("mkdir -p s%d && echo %d > s%d/f%d.txt && echo %d >> shared.txt", i, j, i, j, i)))
		}
		hs[i] = newHarness(t, formats[i], setup{script: steps(append(ss, textStep("Done."))...), ws: ws,
			cfg: func(c *agent.Config) { c.Checkpoints = repo }})
	}
	for _, h := range hs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if out := h.run(context.Background(), "go"); out.Reason != fold.Replied || out.Err != nil {
				t.Errorf("outcome %+v", out)
			}
		}()
	}
	wg.Wait()
	for i, h := range hs {
		cps := all[*record.Checkpoint](h.records())
		if len(cps) == 0 {
			t.Fatalf("session %d recorded no checkpoint", i)
		}
		for _, c := range cps {
			if c.Error != "" {
				t.Fatalf("session %d: a snapshot failed: %s", i, c.Error)
			}
		}
		last := cps[len(cps)-1]
		dir := filepath.Join(t.TempDir(), "files")
		if err := repos[i].Materialise(context.Background(), last.Commit, dir); err != nil {
			t.Fatal(err)
		}
		for j := range n {
			if _, err := os.Stat(filepath.Join(dir, fmt.Sprintf("s%d", i), fmt.Sprintf("f%d.txt", j))); err != nil {
				t.Errorf("session %d's last checkpoint lacks its file %d: %v", i, j, err)
			}
		}
		list, err := repos[i].List(context.Background(), h.sess.ID())
		if err != nil {
			t.Fatal(err)
		}
		if len(list) != len(cps) {
			t.Errorf("session %d: %d checkpoints in the repository, %d recorded", i, len(list), len(cps))
		}
	}
}

// BenchmarkToolTurnCheckpoints measures what checkpoints add to a tool turn: exchanges of 20
// bash turns, each writing a file, in a workspace of 2,000 files, with the simulator streaming
// each reply over about 100 ms (a fast provider), checkpoints off and on. harness-p50 is the time
// from a reply's end to the next request, less the tool's time: a snapshot runs beside the next
// request, so it adds nothing unless it outlasts the request. The workspace's first snapshot ever
// is taken before the timing (it hashes every file, once per workspace).
//
//	go test -run '^$' -bench ToolTurnCheckpoints -benchtime 3x ./internal/agent
func BenchmarkToolTurnCheckpoints(b *testing.B) {
	const turns = 20
	ws := b.TempDir()
	for d := range 20 {
		for f := range 100 {
			p := filepath.Join(ws, fmt.Sprintf("d%02d", d), fmt.Sprintf("f%03d.txt", f))
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				b.Fatal(err)
			}
			if err := os.WriteFile(p, []byte(p+"\n"), 0o644); err != nil {
				b.Fatal(err)
			}
		}
	}
	for _, on := range []bool{false, true} {
		name := "off"
		if on {
			name = "on"
		}
		b.Run(name, func(b *testing.B) {
			var gaps, turnTimes []time.Duration
			var repo *checkpoint.Repo
			if on {
				// The workspace's first snapshot ever hashes every file (BenchmarkCheckpoint100k's
				// "first"); taken here, so that the figures are those of every later session,
				// whose first snapshot starts from a copy of the latest index.
				repo = openRepo(b, ws)
				if _, err := repo.Snapshot(context.Background(), "warm", 1); err != nil {
					b.Fatal(err)
				}
			}
			for b.Loop() {
				b.StopTimer()
				var ss []string
				for i := range turns {
					ss = append(ss, fmt.Sprintf(`{"text":"one two three four five","delay_ms":20,"tool_calls":[{"name":"bash","arguments":{"command":"echo %d > out-%d.txt"}}]}`, i, i))
				}
				h := newHarness(b, formats[0], setup{script: steps(append(ss, textStep("Done."))...), ws: ws, noCheck: true,
					cfg: func(c *agent.Config) { c.Checkpoints = repo }})
				var sends [][2]time.Time
				h.wire.onSend = func(start, end time.Time) { sends = append(sends, [2]time.Time{start, end}) }
				b.StartTimer()
				out := h.run(context.Background(), "go")
				b.StopTimer()
				if out.Reason != fold.Replied {
					b.Fatalf("outcome %+v", out)
				}
				for i := 0; i+1 < len(sends); i++ {
					gaps = append(gaps, sends[i+1][0].Sub(sends[i][1]))
					turnTimes = append(turnTimes, sends[i+1][0].Sub(sends[i][0]))
				}
				b.StartTimer()
			}
			report(b, gaps, "gap")
			report(b, turnTimes, "turn")
		})
	}
}

// undeclared is a tool that says nothing of its effects, as an MCP server's tool not marked
// read-only: it writes a file.
type undeclared struct{ ws string }

func (u undeclared) Spec() provider.Tool {
	return provider.Tool{Name: "remote", Description: "A tool of unknown effect.", Schema: json.RawMessage(`{"type":"object","properties":{}}`)}
}

func (u undeclared) Run(ctx context.Context, call tool.Call) tool.Result {
	if err := os.WriteFile(filepath.Join(u.ws, "remote.txt"), []byte("written\n"), 0o644); err != nil {
		return tool.Failure("%v", err)
	}
	return tool.Result{Content: "done", Outcome: record.OK}
}

// A tool that does not declare itself read-only counts as one that may write: its batch is
// checkpointed (an MCP server's tools are such tools unless marked read-only).
func TestCheckpointAfterAToolOfUnknownEffect(t *testing.T) {
	ws := t.TempDir()
	repo := openRepo(t, ws)
	h := newHarness(t, formats[0], setup{
		script: steps(callStep("Calling it.", `{"name":"remote","arguments":{}}`), textStep("Done.")),
		tools:  []tool.Tool{undeclared{ws}}, noBash: true, ws: ws,
		cfg: func(c *agent.Config) {
			c.Checkpoints = repo
			c.Runner.Policy = tool.Policy{Mode: tool.ModeFull}
		},
	})
	if out := h.run(context.Background(), "go"); out.Reason != fold.Replied || out.Err != nil {
		t.Fatalf("outcome %+v", out)
	}
	cps := all[*record.Checkpoint](h.records())
	if len(cps) != 2 || cps[1].Turn != 2 {
		t.Fatalf("checkpoints %+v, want the prompt's and turn 2's", cps)
	}
	changes, err := repo.Diff(context.Background(), "", cps[1].Commit)
	if err != nil {
		t.Fatal(err)
	}
	if len(changes) != 1 || changes[0].Path != "remote.txt" || changes[0].Status != 'A' {
		t.Errorf("turn 2's checkpoint changed %+v, want remote.txt added", changes)
	}
}
