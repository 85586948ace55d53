package fold

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/reinhq/rein/internal/provider"
	"github.com/reinhq/rein/internal/provider/anthropic"
	"github.com/reinhq/rein/internal/provider/openai"
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

// BenchmarkRequest measures what the harness spends on a turn of a long session, before the
// request leaves: at 10,000 turns with a hundred residues in place, each iteration steps one more
// tool turn into the state (its assistant message and its results, judged and applied), renders the
// context (State.Context) and encodes the request with a real provider encoder through one
// provider.Memo, as the agent does before every request (the Anthropic encoder uses it; the OpenAI
// encoders do not yet). DESIGN §15 budgets building a request at 10,000 turns at 2 ms median;
// p50-ms and p99-ms are per iteration, step-us is the fold's share, encode-ms the encoder's, and
// req-MB the size of the request body. The state grows by one turn an iteration: a run of b.N
// iterations ends at 10,000 + b.N turns.
//
//	go test -run '^$' -bench Request -benchtime 200x ./internal/fold
func BenchmarkRequest(b *testing.B) {
	tools := make([]provider.Tool, 10)
	for i := range tools {
		tools[i] = provider.Tool{Name: fmt.Sprintf("tool_%d", i), Description: strings.Repeat("what the tool does. ", 20),
			Schema: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"},"n":{"type":"integer"}},"required":["path"]}`)}
	}
	for _, enc := range []struct {
		name   string
		encode func(provider.Request) ([]byte, error)
	}{{"anthropic", anthropic.Encode}, {"chat", openai.EncodeChat}, {"responses", openai.EncodeResponses}} {
		b.Run(enc.name, func(b *testing.B) {
			l := sessionOf(b, 10000, 100)
			if len(l.s.Residues()) != 100 {
				b.Fatalf("the session has %d residues, want 100", len(l.s.Residues()))
			}
			l.prompt("keep going")
			out := strings.Repeat("output line\n", 20)
			memo := &provider.Memo{} // as the agent keeps one per conversation
			var last []byte          // the last body, given back once the next is built, as the agent does
			times := make([]time.Duration, 0, b.N)
			var stepped, encoding time.Duration
			var size int
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				start := time.Now()
				id := l.s.Next()
				callID := fmt.Sprintf("b%d", i)
				for _, p := range []record.Payload{
					&record.AssistantMessage{Turn: id, Parts: []record.Part{text("running it"), call(callID, "bash", `{"command":"make test"}`)}},
					&record.ToolResults{Results: []record.ToolResult{{CallID: callID, Content: out + Trailer(id), Outcome: record.OK}}},
				} {
					if err := l.s.Step(record.Record{Seq: l.s.Seq() + 1, Time: int64(i), Body: p}); err != nil {
						b.Fatal(err)
					}
				}
				rendered := time.Now()
				body, err := enc.encode(provider.Request{Model: "m", System: l.s.System(), Messages: l.s.Context(), Tools: tools, MaxTokens: 8192, Memo: memo})
				if err != nil {
					b.Fatal(err)
				}
				end := time.Now()
				memo.Recycle(last)
				last = body
				stepped += rendered.Sub(start)
				encoding += end.Sub(rendered)
				times = append(times, end.Sub(start))
				size = len(body)
			}
			b.StopTimer()
			slices.Sort(times)
			b.ReportMetric(float64(times[len(times)/2].Microseconds())/1000, "p50-ms")
			b.ReportMetric(float64(times[len(times)*99/100].Microseconds())/1000, "p99-ms")
			b.ReportMetric(float64(stepped.Microseconds())/float64(b.N), "step-us")
			b.ReportMetric(float64(encoding.Microseconds())/float64(b.N)/1000, "encode-ms")
			b.ReportMetric(float64(size)/(1<<20), "req-MB")
		})
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
// followed by a snapshot, on a session of about n turns (every n/10 exchanges the session is
// folded afresh, outside the timer, so that n stays within a third of n). Its cost must not grow with n beyond
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
					if i++; i%(n/10) == 0 {
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

// BenchmarkOpenSubmissions is what a host conversation's published state reads of its messages
// after every record (host.StateOf): the open ones, a handful however long the conversation,
// against walking every message it ever had (what StateOf did before OpenSubmissions).
func BenchmarkOpenSubmissions(b *testing.B) {
	for _, n := range []int{100, 5000} {
		l := newLog(b)
		for i := range n {
			id := fmt.Sprintf("m%d", i)
			l.add(&record.Submission{ID: id, Op: "op-" + id, State: record.SubmissionAccepted, Text: "message " + id})
			l.add(&record.UserPrompt{Turn: l.s.Next(), Text: "message " + id, Submission: id})
			l.add(&record.AssistantMessage{Turn: l.s.Next(), Parts: []record.Part{text("done")}})
			l.add(&record.Quiesced{Reason: Replied})
			for _, p := range l.s.FinishPlan(Replied, "") {
				l.add(p)
			}
		}
		l.add(&record.Submission{ID: "last", Op: "op-last", State: record.SubmissionAccepted, Text: "waiting"})
		b.Run(fmt.Sprintf("messages=%d/open", n), func(b *testing.B) {
			for b.Loop() {
				if len(l.s.OpenSubmissions()) != 1 {
					b.Fatal("want the one waiting")
				}
			}
		})
		b.Run(fmt.Sprintf("messages=%d/every", n), func(b *testing.B) {
			for b.Loop() {
				open := 0
				for _, v := range l.s.Submissions() {
					if v.Open() {
						open++
					}
				}
				if open != 1 {
					b.Fatal("want the one waiting")
				}
			}
		})
	}
}
