package fold

import (
	"bytes"
	"encoding/json"
	"os/exec"
	"strings"
	"testing"

	"github.com/reinhq/rein/internal/record"
	"pgregory.net/rapid"
)

// The fold and the record import only the standard library (and the fold, the record).
func TestPureDependencies(t *testing.T) {
	for _, pkg := range []string{"github.com/reinhq/rein/internal/fold", "github.com/reinhq/rein/internal/record"} {
		out, err := exec.Command("go", "list", "-deps", pkg).Output()
		if err != nil {
			t.Fatalf("go list: %v", err)
		}
		for _, dep := range strings.Fields(string(out)) {
			if dep == pkg || dep == "github.com/reinhq/rein/internal/record" || !strings.Contains(strings.SplitN(dep, "/", 2)[0], ".") {
				continue
			}
			t.Errorf("%s depends on %s: it must import only the standard library", pkg, dep)
		}
		for _, banned := range []string{"os", "net", "time", "math/rand", "math/rand/v2", "log", "sync"} {
			imp, _ := exec.Command("go", "list", "-f", `{{join .Imports " "}}`, pkg).Output()
			for _, i := range strings.Fields(string(imp)) {
				if i == banned {
					t.Errorf("%s imports %s: the fold is pure (no I/O, clock, randomness or locks)", pkg, banned)
				}
			}
		}
	}
}

// phaseLog builds a log resting in the given phase.
func phaseLog(t *testing.T, p Phase) *log {
	l := newLog(t)
	l.add(&record.System{Text: "sys"})
	switch p {
	case ReadyForUser:
		l.prompt("hi")
		l.reply(text("hello"))
	case AwaitingAssistantAfterUser:
		l.prompt("hi")
	case AwaitingToolResults:
		l.prompt("hi")
		l.reply(call("c1", "bash", `{"command":"ls"}`))
	case AwaitingAssistantAfterToolResults:
		l.prompt("hi")
		l.reply(call("c1", "bash", `{"command":"ls"}`))
		l.results(record.OK)
	}
	if l.s.Phase() != p {
		t.Fatalf("built phase %v, want %v", l.s.Phase(), p)
	}
	return l
}

// Every row of the admissibility table of DESIGN §4.1, in every phase.
func TestAdmissibilityTable(t *testing.T) {
	phases := []Phase{ReadyForUser, AwaitingAssistantAfterUser, AwaitingToolResults, AwaitingAssistantAfterToolResults}
	type rec struct {
		name string
		make func(l *log) record.Payload
		ok   map[Phase]Phase // admitted phases → next phase
	}
	unchanged := func(ps ...Phase) map[Phase]Phase {
		m := map[Phase]Phase{}
		for _, p := range ps {
			m[p] = p
		}
		return m
	}
	all := []Phase{ReadyForUser, AwaitingAssistantAfterUser, AwaitingAssistantAfterToolResults}
	to := func(next Phase, ps ...Phase) map[Phase]Phase {
		m := map[Phase]Phase{}
		for _, p := range ps {
			m[p] = next
		}
		return m
	}
	rows := []rec{
		{"user_prompt", func(l *log) record.Payload { return &record.UserPrompt{Turn: l.s.Next(), Text: "next"} }, to(AwaitingAssistantAfterUser, all...)},
		{"import", func(l *log) record.Payload {
			return &record.Import{Turn: l.s.Next(), Message: record.Message{Role: record.User, Parts: []record.Part{text("note")}}, Source: "resume"}
		}, to(AwaitingAssistantAfterUser, all...)},
		{"steering", func(l *log) record.Payload { return &record.Steering{Text: "also"} }, to(AwaitingAssistantAfterUser, AwaitingAssistantAfterUser, AwaitingAssistantAfterToolResults)},
		{"nudge", func(l *log) record.Payload { return &record.Steering{Text: "[rein: empty reply]", Source: "nudge"} }, to(AwaitingAssistantAfterUser, ReadyForUser, AwaitingAssistantAfterUser, AwaitingAssistantAfterToolResults)},
		{"assistant_message plain", func(l *log) record.Payload {
			return &record.AssistantMessage{Turn: l.s.Next(), Parts: []record.Part{text("ok")}}
		}, to(ReadyForUser, AwaitingAssistantAfterUser, AwaitingAssistantAfterToolResults)},
		{"assistant_message calls", func(l *log) record.Payload {
			return &record.AssistantMessage{Turn: l.s.Next(), Parts: []record.Part{call("c9", "bash", `{}`)}}
		}, to(AwaitingToolResults, AwaitingAssistantAfterUser, AwaitingAssistantAfterToolResults)},
		{"tool_results", func(l *log) record.Payload {
			return &record.ToolResults{Results: []record.ToolResult{{CallID: "c1", Content: "x", Outcome: record.OK}}}
		}, to(AwaitingAssistantAfterToolResults, AwaitingToolResults)},
		{"evicted", func(l *log) record.Payload { return &record.Evicted{From: 1, To: 1, Note: "n", By: record.ByModel} }, unchanged(ReadyForUser, AwaitingAssistantAfterToolResults)},
		{"rewound", func(l *log) record.Payload { return &record.Rewound{Anchor: 1} }, to(ReadyForUser, all...)},
		{"cleared", func(l *log) record.Payload { return &record.Cleared{} }, to(ReadyForUser, all...)},
		{"system", func(l *log) record.Payload { return &record.System{Text: "new"} }, unchanged(phases...)},
		{"inherited", func(l *log) record.Payload { return &record.Inherited{Parent: "p"} }, map[Phase]Phase{}},
	}
	for _, row := range rows {
		for _, p := range phases {
			l := phaseLog(t, p)
			before := viewOf(l.s)
			err := l.try(row.make(l))
			next, want := row.ok[p]
			if want && err != nil {
				t.Errorf("%s in %v: refused (%v), want admitted", row.name, p, err)
				continue
			}
			if !want {
				if err == nil {
					t.Errorf("%s in %v: admitted, want refused", row.name, p)
					continue
				}
				if diff := cmpViews(before, viewOf(l.s)); diff != "" {
					t.Errorf("%s in %v: a refusal changed the state: %s", row.name, p, diff)
				}
				continue
			}
			if l.s.Phase() != next {
				t.Errorf("%s in %v: next phase %v, want %v", row.name, p, l.s.Phase(), next)
			}
		}
	}
}

func TestIsReady(t *testing.T) {
	for _, p := range []Phase{ReadyForUser, AwaitingAssistantAfterUser, AwaitingToolResults, AwaitingAssistantAfterToolResults} {
		if got, want := phaseLog(t, p).s.IsReady(), p != AwaitingToolResults; got != want {
			t.Errorf("IsReady in %v = %v, want %v", p, got, want)
		}
	}
}

// Refusals say what was refused and why, naming the record.
func TestRefusals(t *testing.T) {
	cases := []struct {
		name  string
		build func(l *log) record.Payload
		want  string
	}{
		{"results while ready", func(l *log) record.Payload {
			l.prompt("a")
			l.reply(text("b"))
			return &record.ToolResults{Results: []record.ToolResult{{CallID: "x", Content: "y", Outcome: record.OK}}}
		}, "is foreign protocol data: tool results arrived while the session was ready for your next prompt; was record.jsonl edited by hand?"},
		{"stale turn id", func(l *log) record.Payload {
			l.prompt("a")
			l.reply(text("b"))
			return &record.UserPrompt{Turn: 1, Text: "c"}
		}, "names turn 1, which the log had already moved past"},
		{"skipping turn id", func(l *log) record.Payload { return &record.UserPrompt{Turn: 5, Text: "c"} }, "skipping ahead: the next turn is 1"},
		{"inherited late", func(l *log) record.Payload {
			l.prompt("a")
			return &record.Inherited{Parent: "p"}
		}, "links this session to a parent's transcript, which only a fork's first record may do"},
		{"empty prompt", func(l *log) record.Payload { return &record.UserPrompt{Turn: 1, Text: "  "} }, "is an empty prompt"},
		{"prompt while owed", func(l *log) record.Payload {
			l.prompt("a")
			l.reply(call("c1", "bash", `{}`))
			return &record.UserPrompt{Turn: 3, Text: "c"}
		}, "tool results were owed for turn 2 (c1)"},
		{"missing result", func(l *log) record.Payload {
			l.prompt("a")
			l.reply(call("c1", "bash", `{}`), call("c2", "bash", `{}`))
			return &record.ToolResults{Results: []record.ToolResult{{CallID: "c1", Content: "x", Outcome: record.OK}}}
		}, "leaves tool calls unanswered (c2)"},
		{"unknown result", func(l *log) record.Payload {
			l.prompt("a")
			l.reply(call("c1", "bash", `{}`))
			return &record.ToolResults{Results: []record.ToolResult{{CallID: "c1", Content: "x", Outcome: record.OK}, {CallID: "zz", Content: "x", Outcome: record.OK}}}
		}, `answers tool call "zz", which no call of turn 2 asked for`},
		{"duplicate result", func(l *log) record.Payload {
			l.prompt("a")
			l.reply(call("c1", "bash", `{}`))
			return &record.ToolResults{Results: []record.ToolResult{{CallID: "c1", Content: "x", Outcome: record.OK}, {CallID: "c1", Content: "x", Outcome: record.OK}}}
		}, `answers tool call "c1" twice`},
		{"bad outcome", func(l *log) record.Payload {
			l.prompt("a")
			l.reply(call("c1", "bash", `{}`))
			return &record.ToolResults{Results: []record.ToolResult{{CallID: "c1", Content: "x", Outcome: "rejected"}}}
		}, `outcome "rejected"`},
		{"empty result", func(l *log) record.Payload {
			l.prompt("a")
			l.reply(call("c1", "bash", `{}`))
			return &record.ToolResults{Results: []record.ToolResult{{CallID: "c1", Outcome: record.OK}}}
		}, "empty content"},
		{"empty assistant", func(l *log) record.Payload {
			l.prompt("a")
			return &record.AssistantMessage{Turn: 2}
		}, "has no content"},
		{"whitespace assistant", func(l *log) record.Payload {
			l.prompt("a")
			return &record.AssistantMessage{Turn: 2, Parts: []record.Part{text("  ")}}
		}, "an empty message is refused"},
		{"string args", func(l *log) record.Payload {
			l.prompt("a")
			return &record.AssistantMessage{Turn: 2, Parts: []record.Part{call("c1", "bash", `"ls"`)}}
		}, "arguments that are not a JSON object"},
		{"repeated call id", func(l *log) record.Payload {
			l.prompt("a")
			l.reply(call("c1", "bash", `{}`))
			l.results(record.OK)
			return &record.AssistantMessage{Turn: 3, Parts: []record.Part{call("c1", "bash", `{}`)}}
		}, `repeats tool-call id "c1"`},
		{"steering while ready", func(l *log) record.Payload {
			l.prompt("a")
			l.reply(text("b"))
			return &record.Steering{Text: "x"}
		}, "steering arrived while the session was ready"},
		{"assistant while ready", func(l *log) record.Payload {
			l.prompt("a")
			l.reply(text("b"))
			return &record.AssistantMessage{Turn: 3, Parts: []record.Part{text("again")}}
		}, "an assistant message arrived while the session was ready"},
		{"import with a call", func(l *log) record.Payload {
			return &record.Import{Turn: 1, Message: record.Message{Role: record.Assistant, Parts: []record.Part{call("c1", "bash", `{}`)}}}
		}, "can neither owe nor answer a tool call"},
		{"import system role", func(l *log) record.Payload {
			return &record.Import{Turn: 1, Message: record.Message{Role: "system", Parts: []record.Part{text("x")}}}
		}, `role "system"`},
		{"rewind unknown", func(l *log) record.Payload {
			l.prompt("a")
			return &record.Rewound{Anchor: 9}
		}, "turn 9 is not recorded: the latest is 1"},
		{"rewind twice", func(l *log) record.Payload {
			l.prompt("a")
			l.add(&record.Rewound{Anchor: 1})
			return &record.Rewound{Anchor: 1}
		}, "turn 1 has already been withdrawn"},
		{"clear while owed", func(l *log) record.Payload {
			l.prompt("a")
			l.reply(call("c1", "bash", `{}`))
			return &record.Cleared{}
		}, "a clear waits for the tool batch"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			l := newLog(t)
			p := c.build(l)
			seq := l.s.Seq() + 1
			before := viewOf(l.s)
			err := l.try(p)
			mustContain(t, err, c.want)
			if !strings.HasPrefix(err.Error(), "record "+itoa(seq)+" ") {
				t.Errorf("refusal %q does not name record %d", err, seq)
			}
			if d := cmpViews(before, viewOf(l.s)); d != "" {
				t.Errorf("refusal changed the state: %s", d)
			}
		})
	}
}

func itoa(i int64) string { b, _ := json.Marshal(i); return string(b) }

func TestSequenceGap(t *testing.T) {
	s := New()
	err := s.Step(record.Record{Seq: 2, Body: &record.System{Text: "x"}})
	mustContain(t, err, "record 2 arrives after record 0")
}

// The size the fold counts is the size the record encodes.
func TestMessageSizeMatchesEncoding(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		str := rapid.OneOf(rapid.String(), rapid.StringOf(rapid.RuneFrom([]rune{'"', '\\', '\n', '\t', '\b', '\f', 0, 1, 0x1f, '<', '>', '&', 'é', '\u2028', '\u2029', '😀', 0xFFFD})), rapid.Just("\xff\xfe bad utf8"),
			// long runs of plain ASCII with the odd special byte, for the eight-bytes-at-a-time path
			rapid.StringOfN(rapid.OneOf(rapid.RuneFrom([]rune{'a', 'b', ' ', '~', '!', '#', 0x7f}), rapid.RuneFrom([]rune{'"', '\\', '\n', 0x1f, 'é', '\u2028'})), 0, 80, -1))
		var parts []record.Part
		for _, k := range rapid.SliceOfN(rapid.IntRange(0, 6), 1, 5).Draw(t, "kinds") {
			switch k {
			case 0:
				parts = append(parts, record.Part{Type: record.PartText, Text: str.Draw(t, "text")})
			case 1:
				parts = append(parts, record.Part{Type: record.PartThinking, Text: str.Draw(t, "th"), Signature: str.Draw(t, "sig")})
			case 2:
				args := rapid.SampledFrom([]string{`{}`, `{ "a" : 1 , "b":[1, 2] }`, "{\n \"s\": \"x y\\\" z\"\n}", `{"h":"<&>"}`}).Draw(t, "args")
				parts = append(parts, record.Part{Type: record.PartToolCall, CallID: str.Draw(t, "id"), Name: "bash", Args: json.RawMessage(args)})
			case 3:
				parts = append(parts, record.Part{Type: record.PartToolResult, CallID: "c", Text: str.Draw(t, "out"), IsError: rapid.Bool().Draw(t, "err"), Outcome: record.Interrupted})
			case 4:
				parts = append(parts, record.Part{Type: record.PartImage, MediaType: "image/png", Data: str.Draw(t, "data")})
			case 5:
				parts = append(parts, record.Part{Type: record.PartToolResult, CallID: "c", Text: str.Draw(t, "out"), Outcome: record.OK,
					Images: []record.Part{{Type: record.PartImage, MediaType: "image/png", Data: str.Draw(t, "img"), Name: str.Draw(t, "name")}, {Type: record.PartImage, MediaType: "image/gif", Data: "R0lG"}}})
			case 6:
				parts = append(parts, record.Part{Type: record.PartServerTool, Wire: record.WireAnthropic, Name: "web_search", CallID: "srvtoolu_1", Text: str.Draw(t, "q"), Data: `{"type":"server_tool_use"}`})
			}
		}
		m := record.Message{Role: record.Assistant, Parts: parts}
		var b bytes.Buffer
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(m); err != nil {
			t.Fatal(err)
		}
		if got, want := MessageSize(m), int64(b.Len()-1); got != want {
			t.Fatalf("MessageSize = %d, encoding is %d bytes: %s", got, want, b.Bytes())
		}
	})
}
