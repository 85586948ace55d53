package anthropic

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/google/go-cmp/cmp"
	"github.com/reinhq/rein/internal/provider"
	"github.com/reinhq/rein/internal/record"
)

func text(s string) record.Part { return record.Part{Type: record.PartText, Text: s} }

func call(id, name, args string) record.Part {
	p := record.Part{Type: record.PartToolCall, CallID: id, Name: name}
	if args != "" {
		p.Args = json.RawMessage(args)
	}
	return p
}

// decodeFile decodes one testdata stream, collecting its live events.
func decodeFile(t *testing.T, name string) (provider.Reply, []provider.Event, error) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	var events []provider.Event
	reply, err := decode(context.Background(), bytes.NewReader(data), func(ev provider.Event) { events = append(events, ev) })
	return reply, events, err
}

func TestDecode(t *testing.T) {
	for _, tc := range []struct {
		file    string
		want    provider.Reply
		class   provider.Class // the error's class, "" for success
		partial bool
		events  string // a compact summary of the live events
	}{
		{file: "text.sse",
			want: provider.Reply{ID: "msg_text", Model: "claude-test-1", Parts: []record.Part{text("Hello, world.")},
				StopReason: provider.StopEnd, Usage: record.Usage{Input: 25, Output: 12, CacheRead: 3400, CacheWrite: 1200}},
			events: `text[0]"Hello" text[0]", world."`},
		{file: "crlf.sse",
			want: provider.Reply{ID: "msg_crlf", Model: "claude-test-1", Parts: []record.Part{text("Hello, world.")},
				StopReason: provider.StopEnd, Usage: record.Usage{Input: 25, Output: 12, CacheRead: 3400, CacheWrite: 1200}},
			events: `text[0]"Hello" text[0]", world."`},
		{file: "thinking.sse",
			want: provider.Reply{ID: "msg_think", Model: "claude-test-1", Parts: []record.Part{
				{Type: record.PartThinking, Text: "Let me think about 2+2.", Signature: "EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds"},
				text("4"),
			}, StopReason: provider.StopEnd, Usage: record.Usage{Input: 50, Output: 30}},
			events: `think[0]"Let me think" think[0]" about 2+2." text[1]"4"`},
		{file: "redacted.sse",
			want: provider.Reply{ID: "msg_redacted", Model: "claude-test-1", Parts: []record.Part{
				{Type: record.PartRedacted, Data: "EmwKAhgBEgy3va3pzix/LafPsn4aDFIT2Xlxh0L5L8rLVyIwxtE3rAFBa8cr3qpP"},
				text("Done."),
			}, StopReason: provider.StopEnd, Usage: record.Usage{Input: 9, Output: 7}},
			events: `text[1]"Done" text[1]"."`},
		{file: "tool_use.sse",
			want: provider.Reply{ID: "msg_tools", Model: "claude-test-1", Parts: []record.Part{
				text("Reading both files."),
				call("toolu_01A", "read_file", `{"path": "a\"b\u00e9.go", "lines": [1, 2]}`),
				call("toolu_01B", "list_dir", `{}`),
			}, StopReason: provider.StopToolUse, Usage: record.Usage{Input: 400, Output: 89}},
			events: `text[0]"Reading both files." call[1]toolu_01A/read_file args[1]"" args[1]"{\"pa" args[1]"th\": \"a\\" ` +
				`args[1]"\"b\\u00" args[1]"e9.go\", \"lines\": [1," args[1]" 2]}" call[2]toolu_01B/list_dir`},
		{file: "max_tokens_tool.sse",
			want: provider.Reply{ID: "msg_max", Model: "claude-test-1", Parts: []record.Part{
				call("toolu_done", "ls", `{"dir":"."}`),
				call("toolu_cut", "write_file", `{"path":"a.go","content":"package`),
			}, Incomplete: []int{1}, StopReason: provider.StopMaxTokens, Usage: record.Usage{Input: 10, Output: 64}},
			events: `call[0]toolu_done/ls args[0]"{\"dir\":\".\"}" call[1]toolu_cut/write_file args[1]"{\"path\":\"a.go\",\"content\":\"package"`},
		{file: "error_mid.sse",
			want: provider.Reply{ID: "msg_err", Model: "claude-test-1", Parts: []record.Part{text("Partial")},
				Usage: record.Usage{Input: 5, Output: 1}},
			class: provider.Overloaded, partial: true, events: `text[0]"Partial"`},
		{file: "unknown.sse",
			want: provider.Reply{ID: "msg_unknown", Model: "claude-test-1", Parts: []record.Part{text("kept")},
				StopReason: provider.StopEnd, Usage: record.Usage{Input: 5, Output: 3}},
			events: `text[0]"kept"`},
		{file: "padded.sse",
			want: provider.Reply{ID: "msg_pad", Model: "claude-test-1", Parts: []record.Part{text("padded")},
				StopReason: provider.StopEnd, Usage: record.Usage{Input: 3, Output: 2}},
			events: `text[0]"padded"`},
		{file: "cut_tool.sse",
			want: provider.Reply{ID: "msg_cut", Model: "claude-test-1", Parts: []record.Part{
				text("Writing it."),
				call("toolu_cut", "write_file", `{"path":"a.go","con`),
			}, Incomplete: []int{1}, Usage: record.Usage{Input: 10, Output: 1}},
			class: provider.Network, partial: true,
			events: `text[0]"Writing it." call[1]toolu_cut/write_file args[1]"{\"path\":\"a.go\",\"con"`},
	} {
		t.Run(tc.file, func(t *testing.T) {
			reply, events, err := decodeFile(t, tc.file)
			if diff := cmp.Diff(tc.want, reply); diff != "" {
				t.Errorf("reply (-want +got):\n%s", diff)
			}
			var e *provider.Error
			switch {
			case tc.class == "" && err != nil:
				t.Errorf("err = %v, want none", err)
			case tc.class != "" && (!errors.As(err, &e) || e.Class != tc.class || e.Partial != tc.partial):
				t.Errorf("err = %#v, want class %s partial %v", err, tc.class, tc.partial)
			}
			if got := summary(events); got != tc.events {
				t.Errorf("events:\n got %s\nwant %s", got, tc.events)
			}
		})
	}
}

// summary renders live events compactly for comparison.
func summary(events []provider.Event) string {
	var out []string
	for _, ev := range events {
		switch ev.Type {
		case provider.TextDelta:
			out = append(out, fmt.Sprintf("text[%d]%q", ev.Index, ev.Text))
		case provider.ThinkingDelta:
			out = append(out, fmt.Sprintf("think[%d]%q", ev.Index, ev.Text))
		case provider.ToolCallStart:
			out = append(out, fmt.Sprintf("call[%d]%s/%s", ev.Index, ev.CallID, ev.Name))
		case provider.ToolArgsDelta:
			out = append(out, fmt.Sprintf("args[%d]%q", ev.Index, ev.Text))
		default:
			out = append(out, fmt.Sprintf("event(%d)", ev.Type))
		}
	}
	return strings.Join(out, " ")
}

func TestDecodeOneByteAtATime(t *testing.T) {
	data, err := os.ReadFile("testdata/tool_use.sse")
	if err != nil {
		t.Fatal(err)
	}
	whole, _ := decode(context.Background(), bytes.NewReader(data), nil)
	bytewise, err := decode(context.Background(), iotest.OneByteReader(bytes.NewReader(data)), nil)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(whole, bytewise); diff != "" {
		t.Fatalf("one byte at a time differs (-whole +bytewise):\n%s", diff)
	}
}

func TestDecodeEdges(t *testing.T) {
	start := `data: {"type":"message_start","message":{"id":"m","model":"x","usage":{"input_tokens":1}}}` + "\n\n"
	stop := `data: {"type":"message_stop"}` + "\n\n"
	for _, tc := range []struct {
		name   string
		stream string
		check  func(provider.Reply, error) string
	}{
		{"ends without message_stop, no output", start, func(r provider.Reply, err error) string {
			var e *provider.Error
			if !errors.As(err, &e) || e.Class != provider.Network || e.Partial {
				return fmt.Sprintf("err = %#v, want network, not partial", err)
			}
			return ""
		}},
		{"empty stream", "", func(r provider.Reply, err error) string {
			var e *provider.Error
			if !errors.As(err, &e) || e.Class != provider.Network {
				return fmt.Sprintf("err = %v, want network", err)
			}
			return ""
		}},
		{"malformed known event", start + "data: {\"type\":\"content_block_start\",\"index\":\"zero\"}\n\n", func(r provider.Reply, err error) string {
			var e *provider.Error
			if !errors.As(err, &e) || e.Class != provider.Network {
				return fmt.Sprintf("err = %v, want network", err)
			}
			return ""
		}},
		{"message_stop without a stop reason", start + stop, func(r provider.Reply, err error) string {
			if err != nil || r.StopReason != provider.StopOther || len(r.Parts) != 0 {
				return fmt.Sprintf("reply %+v err %v, want an empty reply stopped as other", r, err)
			}
			return ""
		}},
		{"deltas for unknown and closed blocks are ignored", start +
			`data: {"type":"content_block_delta","index":5,"delta":{"type":"text_delta","text":"x"}}` + "\n\n" +
			`data: {"type":"content_block_start","index":0,"content_block":{"type":"text","text":"a"}}` + "\n\n" +
			`data: {"type":"content_block_stop","index":0}` + "\n\n" +
			`data: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"late"}}` + "\n\n" +
			`data: {"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"wrong type"}}` + "\n\n" +
			`data: {"type":"content_block_start","index":0,"content_block":{"type":"text","text":"again"}}` + "\n\n" + stop,
			func(r provider.Reply, err error) string {
				if err != nil || len(r.Parts) != 1 || r.Parts[0].Text != "a" {
					return fmt.Sprintf("reply %+v err %v, want one text part \"a\"", r, err)
				}
				return ""
			}},
		{"tool input sent whole in content_block_start", start +
			`data: {"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"t","name":"n","input":{"a":1}}}` + "\n\n" +
			`data: {"type":"content_block_stop","index":0}` + "\n\n" + stop,
			func(r provider.Reply, err error) string {
				if err != nil || len(r.Parts) != 1 || string(r.Parts[0].Args) != `{"a":1}` {
					return fmt.Sprintf("reply %+v err %v, want args {\"a\":1}", r, err)
				}
				return ""
			}},
		{"max_tokens with a complete last call", start +
			`data: {"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"t","name":"n","input":{}}}` + "\n\n" +
			`data: {"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"{}"}}` + "\n\n" +
			`data: {"type":"content_block_stop","index":0}` + "\n\n" +
			`data: {"type":"message_delta","delta":{"stop_reason":"max_tokens"}}` + "\n\n" + stop,
			func(r provider.Reply, err error) string {
				if err != nil || len(r.Incomplete) != 0 || r.StopReason != provider.StopMaxTokens {
					return fmt.Sprintf("reply %+v err %v, want a complete call", r, err)
				}
				return ""
			}},
		{"max_tokens right after a call began", start +
			`data: {"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"t","name":"n","input":{}}}` + "\n\n" +
			`data: {"type":"content_block_stop","index":0}` + "\n\n" +
			`data: {"type":"message_delta","delta":{"stop_reason":"max_tokens"}}` + "\n\n" + stop,
			func(r provider.Reply, err error) string {
				if err != nil || len(r.Incomplete) != 1 {
					return fmt.Sprintf("reply %+v err %v, want the call incomplete", r, err)
				}
				return ""
			}},
		{"error event without output", start +
			`data: {"type":"error","error":{"type":"api_error","message":"Internal server error"}}` + "\n\n",
			func(r provider.Reply, err error) string {
				var e *provider.Error
				if !errors.As(err, &e) || e.Class != provider.Server || e.Partial || e.Message != "Internal server error" {
					return fmt.Sprintf("err = %#v, want server, not partial", err)
				}
				return ""
			}},
		{"stop reasons", start + `data: {"type":"message_delta","delta":{"stop_reason":"refusal"}}` + "\n\n" + stop,
			func(r provider.Reply, err error) string {
				if r.StopReason != provider.StopRefusal {
					return fmt.Sprintf("stop %q, want refusal", r.StopReason)
				}
				return ""
			}},
		{"data after message_stop is not read", start + stop + "data: {\"type\":\"error\",\"error\":{}}\n\n",
			func(r provider.Reply, err error) string {
				if err != nil {
					return fmt.Sprintf("err = %v, want none", err)
				}
				return ""
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := decode(context.Background(), strings.NewReader(tc.stream), nil)
			if msg := tc.check(r, err); msg != "" {
				t.Fatal(msg)
			}
		})
	}
}

func TestStopReason(t *testing.T) {
	for in, want := range map[string]string{
		"end_turn": provider.StopEnd, "tool_use": provider.StopToolUse, "max_tokens": provider.StopMaxTokens,
		"stop_sequence": provider.StopSequence, "refusal": provider.StopRefusal, "pause_turn": provider.StopOther,
		"model_context_window_exceeded": provider.StopMaxTokens, "something_new": provider.StopOther,
	} {
		if got := stopReason(in); got != want {
			t.Errorf("stopReason(%q) = %q, want %q", in, got, want)
		}
	}
}

// FuzzDecode feeds the Anthropic event decoder arbitrary streams: it must never panic, and every
// index it reports must point into the reply.
func FuzzDecode(f *testing.F) {
	files, _ := filepath.Glob("testdata/*.sse")
	for _, name := range files {
		data, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		n := 0
		reply, err := decode(context.Background(), bytes.NewReader(in), func(ev provider.Event) {
			n++
			if ev.Index < 0 {
				t.Fatalf("event index %d", ev.Index)
			}
		})
		for _, i := range reply.Incomplete {
			if i < 0 || i >= len(reply.Parts) || reply.Parts[i].Type != record.PartToolCall {
				t.Fatalf("incomplete index %d does not name a tool call in %+v", i, reply.Parts)
			}
		}
		var e *provider.Error
		if err != nil && !errors.As(err, &e) {
			t.Fatalf("err %v is not a *provider.Error", err)
		}
	})
}

// TestDecodeStopsAtCancel shows that events already received are not published once ctx ends.
func TestDecodeStopsAtCancel(t *testing.T) {
	data, err := os.ReadFile("testdata/tool_use.sse")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	n := 0
	reply, err := decode(ctx, bytes.NewReader(data), func(provider.Event) { n++; cancel() })
	var e *provider.Error
	if !errors.As(err, &e) || e.Class != provider.Cancelled || !e.Partial || n != 1 || reply.StopReason != provider.StopCancelled {
		t.Fatalf("err %v, %d events, stop %q: want cancelled after the first event", err, n, reply.StopReason)
	}
}

// BenchmarkDecode measures decoding a long streamed reply: text deltas, then a tool call.
func BenchmarkDecode(b *testing.B) {
	var buf bytes.Buffer
	buf.WriteString("event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_b\",\"model\":\"m\",\"usage\":{\"input_tokens\":9}}}\n\n")
	buf.WriteString("event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n")
	for buf.Len() < 1<<20 {
		buf.WriteString("event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"a few more words of the reply \"}}\n\n")
	}
	buf.WriteString("event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\n")
	buf.WriteString("event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\"},\"usage\":{\"output_tokens\":9000}}\n\n")
	buf.WriteString("event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n")
	in := buf.Bytes()
	b.SetBytes(int64(len(in)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := decode(context.Background(), bytes.NewReader(in), func(provider.Event) {}); err != nil {
			b.Fatal(err)
		}
	}
}

func TestDecodeFutureDeltaShapes(t *testing.T) {
	stream := `data: {"type":"message_start","message":{"id":"m","model":"x"}}` + "\n\n" +
		`data: {"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}` + "\n\n" +
		`data: {"type":"content_block_delta","index":0,"delta":{"type":"rich_delta","text":{"runs":[1]}}}` + "\n\n" +
		`data: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"ok"}}` + "\n\n" +
		`data: {"type":"message_delta","delta":"opaque","usage":{"output_tokens":2}}` + "\n\n" +
		`data: {"type":"message_stop"}` + "\n\n"
	reply, err := decode(context.Background(), strings.NewReader(stream), nil)
	if err != nil || len(reply.Parts) != 1 || reply.Parts[0].Text != "ok" || reply.Usage.Output != 2 {
		t.Fatalf("reply %+v err %v: a delta of an unknown shape must only be skipped", reply, err)
	}
}
