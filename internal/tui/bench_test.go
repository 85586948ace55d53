package tui

import (
	"context"
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/reinhq/rein/internal/api"
	"github.com/reinhq/rein/internal/record"
)

// benchModel is a chat 120x40 with a long conversation in its scrollback (100 exchanges with a
// tool call each) and an exchange streaming; size is how much of the streamed reply has arrived.
func benchModel(b *testing.B, size int) (*Model, *stream) {
	n := 0
	m := New(newFake(), Options{Context: context.Background(), NewOp: func() string { n++; return fmt.Sprint("op-", n) }})
	m.Update(tea.WindowSizeMsg{Width: 120, Height: 40})
	m.conv, m.gen = "c-new", 1
	s := &stream{}
	var evs []api.Event
	evs = append(evs, s.rec(started()))
	for i := 0; i < 100; i++ {
		for _, ev := range exchange(&stream{}, "op", "prompt "+fmt.Sprint(i)) {
			if ev.Live != nil || ev.Kind == string(record.KindSessionStarted) {
				continue
			}
			ev2 := s.rec(decodePayload(ev.Kind, ev.Payload).(record.Payload))
			evs = append(evs, ev2)
		}
	}
	s.working(true)
	s.state.Submissions = []api.Submission{{ID: "m-x", Op: "op-x", State: api.Delivered}}
	evs = append(evs, s.rec(&record.UserPrompt{Turn: 9999, Text: "explain"}))
	evs = append(evs, api.Event{Live: &api.Live{Kind: "text", Text: reply(size)}})
	m.Update(eventsMsg{gen: 1, evs: evs})
	m.View()
	return m, s
}

// reply is size bytes of the markdown a model streams.
func reply(size int) string {
	var b strings.Builder
	for i := 0; b.Len() < size; i++ {
		switch i % 5 {
		case 0:
			b.WriteString("## Step " + fmt.Sprint(i) + "\n\n")
		case 1:
			b.WriteString("The parser refuses an **empty** input, and the test expects `[]`; see [the doc](https://example.com).\n\n")
		case 2:
			b.WriteString("- first point of the list, long enough that it wraps at a narrow width\n- second point\n\n")
		case 3:
			b.WriteString("```go\nfunc parse(s string) ([]Item, error) {\n\treturn nil, nil\n}\n```\n\n")
		default:
			b.WriteString("A plain paragraph of prose that goes on for a while to be wrapped across lines of the screen.\n\n")
		}
	}
	return b.String()[:size]
}

// BenchmarkStreamDelta is one delivery of streamed text and the frame it draws.
func BenchmarkStreamDelta(b *testing.B) {
	for _, size := range []int{1 << 10, 4 << 10, 16 << 10} {
		b.Run(fmt.Sprintf("reply=%dKiB", size>>10), func(b *testing.B) {
			m, _ := benchModel(b, size)
			delta := eventsMsg{gen: 1, evs: []api.Event{{Live: &api.Live{Kind: "text", Text: "word "}}}}
			b.ReportAllocs()
			b.ResetTimer()
			c0 := cpuTime()
			defer func() { b.ReportMetric(float64(cpuTime()-c0)/float64(b.N), "cpu-ns/op") }()
			for i := 0; i < b.N; i++ {
				m.Update(delta)
				m.View()
				if m.sb.live.text.Len() > size+4096 { // keep the reply at its size
					b.StopTimer()
					m.sb.live.text.Reset()
					m.sb.live.text.WriteString(reply(size))
					b.StartTimer()
				}
			}
		})
	}
}

// BenchmarkKeystrokeWhileStreaming is the latency a person feels: a key press, with the reply
// streaming, through Update to the drawn frame. Each iteration also takes one delivery of text,
// so the streamed block is never warm in the cache.
func BenchmarkKeystrokeWhileStreaming(b *testing.B) {
	for _, size := range []int{1 << 10, 4 << 10, 16 << 10} {
		b.Run(fmt.Sprintf("reply=%dKiB", size>>10), func(b *testing.B) {
			m, _ := benchModel(b, size)
			delta := eventsMsg{gen: 1, evs: []api.Event{{Live: &api.Live{Kind: "text", Text: "word "}}}}
			key := tea.KeyPressMsg{Code: 'a', Text: "a"}
			b.ReportAllocs()
			b.ResetTimer()
			var cpu time.Duration
			defer func() { b.ReportMetric(float64(cpu)/float64(b.N), "cpu-ns/op") }()
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				m.Update(delta)
				if m.sb.live.text.Len() > size+4096 {
					m.sb.live.text.Reset()
					m.sb.live.text.WriteString(reply(size))
				}
				if i%64 == 0 {
					m.composer.Reset()
				}
				b.StartTimer()
				c0 := cpuTime()
				m.Update(key)
				m.View()
				cpu += cpuTime() - c0
			}
		})
	}
}

// cpuTime is the process's CPU time: on a loaded machine wall time overstates a frame's cost.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
