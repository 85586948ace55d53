package tui

import (
	"context"
	"fmt"
	"testing"

	tea "charm.land/bubbletea/v2"
	"github.com/reinhq/rein/internal/api"
	"github.com/reinhq/rein/internal/record"
)

// longModel is a chat 120x40 whose scrollback holds at least lines lines: exchanges of a prompt
// and a markdown reply with a table and highlighted code.
func longModel(b *testing.B, lines int) *Model {
	n := 0
	m := New(newFake(), Options{Context: context.Background(), NewOp: func() string { n++; return fmt.Sprint("op-", n) }})
	m.Update(tea.WindowSizeMsg{Width: 120, Height: 40})
	m.conv, m.gen = "c-new", 1
	s := &stream{}
	text := reply(1500) + "\n\n| file | lines |\n|---|---:|\n| a.go | 12 |\n| b.go | 7 |\n"
	evs := []api.Event{s.rec(started())}
	for turn := int64(1); ; turn += 2 {
		evs = append(evs,
			s.rec(&record.UserPrompt{Turn: turn, Text: fmt.Sprint("question ", turn)}),
			s.rec(&record.AssistantMessage{Turn: turn + 1, StopReason: "end_turn", Model: "sim-1",
				Usage: record.Usage{Input: 1000, Output: 200}, Parts: []record.Part{{Type: record.PartText, Text: text}}}))
		if turn%20 == 1 {
			m.Update(eventsMsg{gen: 1, evs: evs})
			evs = nil
			if m.totalLines() >= lines {
				break
			}
		}
	}
	m.View()
	return m
}

// BenchmarkFrameLongConversation is the frame time with a 5,000-line conversation: a key press
// and the frame it draws (entries' lines cached), and the frame after a resize (every entry
// rendered again at the new width, markdown included).
func BenchmarkFrameLongConversation(b *testing.B) {
	m := longModel(b, 5000)
	b.Logf("scrollback: %d lines, %d entries", m.totalLines(), len(m.sb.entries))
	b.Run("keystroke", func(b *testing.B) {
		key := tea.KeyPressMsg{Code: 'a', Text: "a"}
		b.ReportAllocs()
		c0 := cpuTime()
		for i := 0; i < b.N; i++ {
			if i%64 == 0 {
				m.composer.Reset()
			}
			m.Update(key)
			m.View()
		}
		b.ReportMetric(float64(cpuTime()-c0)/float64(b.N), "cpu-ns/op")
	})
	b.Run("scrolled", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			m.scrollBy(38 - 2*(i%2)*38) // page up and back down
			m.View()
		}
		m.scroll = 0
	})
	b.Run("resize", func(b *testing.B) {
		b.ReportAllocs()
		c0 := cpuTime()
		for i := 0; i < b.N; i++ {
			m.Update(tea.WindowSizeMsg{Width: 100 + i%2*20, Height: 40})
			m.View()
		}
		b.ReportMetric(float64(cpuTime()-c0)/float64(b.N), "cpu-ns/op")
	})
}
