package record

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// realisticMix is 200 records shaped like a working session: a prompt now and then, assistant
// messages with prose and a tool call, tool_started/tool_finished events, and tool results whose
// outputs are a few KB of escaped, multi-line text. Most bytes are long strings, as on disk.
func realisticMix() [][]byte {
	var out strings.Builder
	for i := 0; out.Len() < 4000; i++ {
		switch i % 5 {
		case 0:
			fmt.Fprintf(&out, "internal/fold/fold.go:%d:\tfunc (t *Table) apply(r record.Record) error {\n", 100+i)
		case 1:
			fmt.Fprintf(&out, "--- PASS: TestReplay/case_%d (0.00s)\n", i)
		case 2:
			out.WriteString("    \"path\": \"/src/rein/internal/record\", \"ok\": true ✓\n")
		case 3:
			out.WriteString("ok  \tgithub.com/reinhq/rein/internal/record\t0.412s\tcoverage: 91.3% of statements\n")
		default:
			out.WriteString("\t\treturn fmt.Errorf(\"apply record %d: %w\", r.Seq, err)\n")
		}
	}
	prose := strings.Repeat("I'll run the tests again and look at the failure in the fold; the turn table "+
		"looks right, but the residue over [4, 9] is not what the survey shows.\n\n", 4)
	var recs []Payload
	for i := 0; len(recs) < 200; i++ {
		call := fmt.Sprintf("toolu_%08d", i)
		recs = append(recs,
			&UserPrompt{Turn: int64(2 * i), Text: "please fix the failing test in internal/fold and explain the cause"},
			&TurnStarted{Attempt: 1},
			&AssistantMessage{Turn: int64(2*i + 1), Parts: []Part{
				{Type: PartText, Text: prose},
				{Type: PartToolCall, CallID: call, Name: "bash", Args: json.RawMessage(`{"command":"go test ./internal/fold -run TestReplay -count=1"}`)},
			}, StopReason: "tool_use", Model: "claude-sonnet-4-5", Usage: Usage{Input: 12000, Output: 340, CacheRead: 11000}},
			&ToolStarted{CallID: call, Name: "bash"},
			&ToolFinished{CallID: call, DurationMs: 412, ExitCode: new(int), Outcome: OK},
			&ToolResults{Results: []ToolResult{{CallID: call, Content: out.String(), Outcome: OK}}},
			&UsageReported{Usage: Usage{Input: 12000, Output: 340}},
		)
	}
	return encodeAll(recs[:200])
}

// eventMix is 200 small event-only records, where per-record overhead dominates.
func eventMix() [][]byte {
	var recs []Payload
	for i := 0; len(recs) < 200; i++ {
		call := fmt.Sprintf("call_%d", i)
		recs = append(recs,
			&TurnStarted{Attempt: 1},
			&ToolStarted{CallID: call, Name: "read_file"},
			&ToolFinished{CallID: call, DurationMs: 3, ExitCode: new(int), Outcome: OK},
			&UsageReported{Usage: Usage{Input: 5000, Output: 120, CacheRead: 4800}},
			&Quiesced{Reason: "replied", Answered: []string{call}},
		)
	}
	return encodeAll(recs[:200])
}

func encodeAll(recs []Payload) [][]byte {
	lines := make([][]byte, len(recs))
	for i, p := range recs {
		l, err := Encode(Record{Seq: int64(i + 1), Time: 1764400000000 + int64(i), Body: p})
		if err != nil {
			panic(err)
		}
		lines[i] = l
	}
	return lines
}

func benchDecode(b *testing.B, lines [][]byte) {
	total := 0
	for _, l := range lines {
		total += len(l)
	}
	b.SetBytes(int64(total))
	b.ReportAllocs()
	for b.Loop() {
		for i, l := range lines {
			if _, err := Decode(l, int64(i+1)); err != nil {
				b.Fatal(err)
			}
		}
	}
}

// BenchmarkDecode measures Decode (checksum, envelope, payload) over a realistic session mix.
func BenchmarkDecode(b *testing.B) { benchDecode(b, realisticMix()) }

// BenchmarkDecodeEvents measures Decode over small event-only records.
func BenchmarkDecodeEvents(b *testing.B) { benchDecode(b, eventMix()) }
