package fold

import (
	"fmt"
	"strings"
	"testing"

	"github.com/reinhq/rein/internal/record"
)

// sessionOf builds a session of n turns: exchanges of a prompt, a tool turn and a reply, with
// residues over every tenth run of ten turns when residues > 0.
func sessionOf(b testing.TB, n int, residues int) *log {
	l := newLog(b)
	l.add(&record.System{Text: "system prompt"})
	out := strings.Repeat("output line\n", 20)
	for l.s.High() < int64(n) {
		l.prompt("do the next step of the task")
		id := l.s.Next()
		l.add(&record.AssistantMessage{Turn: id, Parts: []record.Part{text("running it"), call(fmt.Sprintf("c%d", id), "bash", `{"command":"make test"}`)}})
		l.add(&record.ToolResults{Results: []record.ToolResult{{CallID: fmt.Sprintf("c%d", id), Content: out + Trailer(id), Outcome: record.OK}}})
		l.reply(text("done with this step"))
	}
	made := 0
	for from := int64(1); made < residues && from+9 < l.s.High(); from += int64(n / residues) {
		if err := l.try(&record.Evicted{From: from, To: from + 8, Note: "an old step", By: record.ByHarness}); err == nil {
			made++
		}
	}
	return l
}

// Building a request is one slice append per frontier message: it must not grow per turn beyond
// that (DESIGN §15: ≤ 2 ms at 10,000 turns).
func BenchmarkContext(b *testing.B) {
	for _, n := range []int{1000, 10000} {
		for _, res := range []int{0, 100} {
			b.Run(fmt.Sprintf("turns=%d/residues=%d", n, res), func(b *testing.B) {
				l := sessionOf(b, n, res)
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					_ = l.s.Context()
				}
			})
		}
	}
}

func BenchmarkStep(b *testing.B) {
	l := sessionOf(b, 10000, 0)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		s := New()
		for _, r := range l.recs {
			if err := s.Step(r); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.ReportMetric(float64(len(l.recs)*b.N)/b.Elapsed().Seconds(), "records/s")
}

// A session publishes a snapshot after every record it applies (package session): this is an
// exchange of a prompt, a tool call, its tool_started event, its results and a reply, each
// followed by a snapshot, on a session of about n turns (every 100 exchanges the session is
// folded afresh, outside the timer, so that n stays about n). Its cost must not grow with n beyond
// one slice header per 64 turns.
func BenchmarkStepPublished(b *testing.B) {
	for _, n := range []int{1000, 10000} {
		for _, publish := range []bool{false, true} {
			b.Run(fmt.Sprintf("turns=%d/snapshots=%v", n, publish), func(b *testing.B) {
				base := sessionOf(b, n, 100)
				fresh := func() *log {
					l := newLog(b)
					for _, r := range base.recs {
						l.add(r.Body)
					}
					return l
				}
				l := fresh()
				out := strings.Repeat("output line\n", 20)
				var keep *State
				step := func(p record.Payload) {
					l.add(p)
					if publish {
						keep = l.s.Snapshot()
					}
				}
				i := 0
				for b.Loop() {
					if i++; i%100 == 0 {
						b.StopTimer()
						l = fresh()
						b.StartTimer()
					}
					step(&record.UserPrompt{Turn: l.s.Next(), Text: "the next step"})
					id := l.s.Next()
					c := fmt.Sprintf("c%d", id)
					step(&record.AssistantMessage{Turn: id, Parts: []record.Part{text("running it"), call(c, "bash", `{"command":"make test"}`)}})
					step(&record.ToolStarted{CallID: c, Name: "bash"})
					step(&record.ToolResults{Results: []record.ToolResult{{CallID: c, Content: out + Trailer(id), Outcome: record.OK}}})
					step(&record.AssistantMessage{Turn: l.s.Next(), Parts: []record.Part{text("done")}})
				}
				_ = keep
			})
		}
	}
}
