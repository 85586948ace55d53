package openai

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/reinhq/rein/internal/provider"
	"github.com/reinhq/rein/internal/record"
)

// decodeStream runs a decoder over r as a client would, collecting the live events.
func decodeStream(r io.Reader, newDec func(func(provider.Event)) streamDecoder) (provider.Reply, []provider.Event, error) {
	var events []provider.Event
	d := newDec(func(e provider.Event) { events = append(events, e) })
	reply, err := finish(context.Background(), d, readStream(context.Background(), r, d))
	return reply, events, err
}

func chatDec(on func(provider.Event)) streamDecoder { return newChatDecoder(on) }
func respDec(on func(provider.Event)) streamDecoder { return newRespDecoder(on) }

func decodeFile(t *testing.T, path string, newDec func(func(provider.Event)) streamDecoder) (provider.Reply, []provider.Event, error) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	return decodeStream(f, newDec)
}

func text(s string) record.Part { return record.Part{Type: record.PartText, Text: s} }

func thinking(s, item string) record.Part {
	return record.Part{Type: record.PartThinking, Text: s, Data: item}
}

func call(id, name, args string) record.Part {
	return record.Part{Type: record.PartToolCall, CallID: id, Name: name, Args: json.RawMessage(args)}
}

// streamCase is one recorded stream and what decoding it must give.
type streamCase struct {
	file  string
	want  provider.Reply
	class provider.Class // the error's class, "" for success
	typ   string         // the error's Type, when class is set
	// thinking is the reasoning the events carried.
	thinking string
}

func checkStream(t *testing.T, dir string, newDec func(func(provider.Event)) streamDecoder, tc streamCase) {
	t.Helper()
	reply, events, err := decodeFile(t, filepath.Join("testdata", dir, tc.file), newDec)
	if diff := cmp.Diff(tc.want, reply, cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("reply (-want +got):\n%s", diff)
	}
	switch {
	case tc.class == "" && err != nil:
		t.Errorf("error = %v, want none", err)
	case tc.class != "":
		var pe *provider.Error
		if !errors.As(err, &pe) {
			t.Fatalf("error = %v, want a *provider.Error of class %s", err, tc.class)
		}
		if pe.Class != tc.class || (tc.typ != "" && pe.Type != tc.typ) {
			t.Errorf("error = %+v, want class %s type %q", pe, tc.class, tc.typ)
		}
		if pe.Status != 0 {
			t.Errorf("error status = %d, want 0 for a failure inside a stream", pe.Status)
		}
		if began := len(reply.Parts) > 0; pe.Partial != began {
			t.Errorf("error Partial = %v, want %v", pe.Partial, began)
		}
	}
	checkEvents(t, reply, events, tc.thinking)
}

// checkEvents requires the live events to tell the same story as the reply: the same text per
// part, each tool call announced once before its arguments, and the given thinking ("*": any).
func checkEvents(t *testing.T, reply provider.Reply, events []provider.Event, thinking string) {
	t.Helper()
	texts := map[int]string{}
	started := map[int]bool{}
	var thought strings.Builder
	for _, e := range events {
		switch e.Type {
		case provider.TextDelta, provider.ToolArgsDelta:
			if e.Type == provider.ToolArgsDelta && !started[e.Index] {
				t.Errorf("arguments for part %d before its ToolCallStart", e.Index)
			}
			texts[e.Index] += e.Text
		case provider.ToolCallStart:
			if started[e.Index] {
				t.Errorf("part %d started twice", e.Index)
			}
			started[e.Index] = true
		case provider.ThinkingDelta:
			if e.Index < 0 || e.Index >= len(reply.Parts) || reply.Parts[e.Index].Type != record.PartThinking {
				t.Errorf("thinking event names part %d, which is not a thinking part of %+v", e.Index, reply.Parts)
			}
			thought.WriteString(e.Text)
		}
	}
	if thinking != "*" && thought.String() != thinking {
		t.Errorf("thinking = %q, want %q", thought.String(), thinking)
	}
	for i, p := range reply.Parts {
		switch p.Type {
		case record.PartText:
			if texts[i] != p.Text {
				t.Errorf("part %d: events said %q, reply says %q", i, texts[i], p.Text)
			}
		case record.PartToolCall:
			if !started[i] {
				t.Errorf("part %d: tool call never announced", i)
			}
		}
	}
}

var chatCases = []streamCase{
	{file: "text.sse", want: provider.Reply{ID: "chatcmpl-1", Model: "gpt-4.1-2025-04-14",
		Parts:      []record.Part{text("Hello, world! é😀")},
		StopReason: provider.StopEnd, Usage: record.Usage{Input: 176, Output: 9, CacheRead: 1024}}},
	{file: "parallel_tools.sse", want: provider.Reply{ID: "chatcmpl-2", Model: "gpt-4.1",
		Parts: []record.Part{
			call("call_a", "read_file", `{"path": "a\\b.go"}`),
			call("call_b", "shell", `{"cmd":"echo \u00e9 ok"}`),
		},
		StopReason: provider.StopToolUse, Usage: record.Usage{Input: 500, Output: 40}}},
	{file: "resent_ids.sse", want: provider.Reply{ID: "chatcmpl-3", Model: "qwen3",
		Parts:      []record.Part{text("Checking."), call("call_1", "ls", `{"dir":"."}`), call("call_2", "pwd", `{}`)},
		StopReason: provider.StopToolUse}},
	{file: "error_nested.sse", want: provider.Reply{ID: "chatcmpl-4", Model: "gpt-4.1", Parts: []record.Part{text("Par")}},
		class: provider.Server, typ: "server_error"},
	{file: "error_number.sse", want: provider.Reply{ID: "gen-5", Model: "anthropic/claude-sonnet-4", Parts: []record.Part{text("Hi")}},
		class: provider.Server},
	{file: "error_string_code.sse", class: provider.RateLimited, typ: "rate_limit_exceeded"},
	{file: "error_flat.sse", class: provider.ContextLength, typ: "BadRequestError"},
	{file: "padded.sse", want: provider.Reply{ID: "chatcmpl-6", Model: "llama3",
		Parts: []record.Part{text("padded")}, StopReason: provider.StopEnd, Usage: record.Usage{Input: 12, Output: 2}}},
	{file: "cut.sse", want: provider.Reply{ID: "chatcmpl-7", Model: "gpt-4.1",
		Parts: []record.Part{text("I will"), call("call_c", "shell", `{"cmd": "ma`)}, Incomplete: []int{1}},
		class: provider.Network},
	{file: "cut_midevent.sse", want: provider.Reply{ID: "chatcmpl-8", Model: "gpt-4.1", Parts: []record.Part{text("Half")}},
		class: provider.Network},
	{file: "length_in_tool.sse", want: provider.Reply{ID: "chatcmpl-9", Model: "gpt-4.1",
		Parts:      []record.Part{call("call_d", "ls", `{}`), call("call_e", "write_file", `{"path":"x.go","content":"package`)},
		Incomplete: []int{1}, StopReason: provider.StopMaxTokens, Usage: record.Usage{Input: 90, Output: 16}}},
	{file: "no_done.sse", want: provider.Reply{ID: "chatcmpl-10", Model: "llama.cpp", Parts: []record.Part{text("ok")}, StopReason: provider.StopEnd}},
	{file: "reasoning.sse", thinking: "Let me think about it.", want: provider.Reply{ID: "gen-11", Model: "deepseek/deepseek-r1",
		Parts: []record.Part{thinking("Let me think about it.", ""), text("Four.")}, StopReason: provider.StopEnd, Usage: record.Usage{Input: 20, Output: 30}}},
	{file: "reasoning_details.sse", thinking: "First, the weather tool.Then the answer.", want: provider.Reply{ID: "gen-12", Model: "x-ai/grok-4",
		Parts:      []record.Part{thinking("First, the weather tool.", ""), call("call_w", "weather", `{"city":"Oslo"}`), thinking("Then the answer.", "")},
		StopReason: provider.StopToolUse}},
	{file: "refusal.sse", want: provider.Reply{ID: "chatcmpl-12", Model: "gpt-4o",
		Parts: []record.Part{text("I can't help with that.")}, StopReason: provider.StopRefusal}},
	{file: "content_filter.sse", want: provider.Reply{ID: "chatcmpl-13", Model: "gpt-4o",
		Parts: []record.Part{text("Once")}, StopReason: provider.StopRefusal}},
	{file: "error_event.sse", want: provider.Reply{ID: "chatcmpl-14", Model: "vllm-model", Parts: []record.Part{text("Par")}},
		class: provider.Server},
	{file: "content_array.sse", want: provider.Reply{ID: "chatcmpl-15", Model: "magistral-medium",
		Parts: []record.Part{text("Hi there")}, StopReason: provider.StopEnd}},
}

func TestChatStreams(t *testing.T) {
	for _, tc := range chatCases {
		t.Run(tc.file, func(t *testing.T) { checkStream(t, "chat", chatDec, tc) })
	}
}

var responsesCases = []streamCase{
	{file: "text.sse", want: provider.Reply{ID: "resp_1", Model: "gpt-4.1-2025-04-14",
		Parts:      []record.Part{text("Hello, world.")},
		StopReason: provider.StopEnd, Usage: record.Usage{Input: 464, Output: 4, CacheRead: 1536}}},
	{file: "tools.sse", want: provider.Reply{ID: "resp_2", Model: "gpt-4.1",
		Parts:      []record.Part{call("call_a", "read_file", `{"path":"a.go"}`), call("call_b", "shell", `{"cmd":"echo \u00e9"}`)},
		StopReason: provider.StopToolUse, Usage: record.Usage{Input: 300, Output: 30}}},
	// A custom tool's call: its free-form input kept exactly, as the arguments {"input": text}.
	{file: "custom_tool.sse", want: provider.Reply{ID: "resp_20", Model: "gpt-5",
		Parts:      []record.Part{call("call_p", "apply_patch", string(provider.FreeformArgs("*** Begin Patch\n*** Add File: \"q\".txt\n+tab\there é\n*** End Patch")))},
		StopReason: provider.StopToolUse, Usage: record.Usage{Input: 300, Output: 30}}},
	// One a max-output-tokens stop cut off: valid JSON once wrapped, but incomplete.
	{file: "custom_tool_cut.sse", want: provider.Reply{ID: "resp_21", Model: "gpt-5",
		Parts:      []record.Part{call("call_q", "apply_patch", string(provider.FreeformArgs("*** Begin Patch\n*** Delete Fi")))},
		Incomplete: []int{0}, StopReason: provider.StopMaxTokens, Usage: record.Usage{Input: 300, Output: 8}}},
	{file: "reasoning.sse", thinking: "**Adding** two and two", want: provider.Reply{ID: "resp_3", Model: "o4-mini",
		Parts: []record.Part{thinking("**Adding** two and two", ""), text("Four.")}, StopReason: provider.StopEnd, Usage: record.Usage{Input: 10, Output: 80}}},
	{file: "reasoning_tools.sse", thinking: "**Looking**\n\nFirst the files.\n\n**Then**\n\nthe test.", want: provider.Reply{ID: "resp_11", Model: "gpt-5",
		Parts: []record.Part{
			thinking("**Looking**\n\nFirst the files.\n\n**Then**\n\nthe test.", `{"id":"rs_a","type":"reasoning","content":[],"encrypted_content":"gAAAA\u002b/=","summary":[{"type":"summary_text","text":"**Looking**\n\nFirst the files."},{"type":"summary_text","text":"**Then**\n\nthe test."}]}`),
			text("Listing."),
			call("call_l", "bash", `{"command":"ls"}`),
			thinking("", `{"id":"rs_b","type":"reasoning","encrypted_content":"gAAAB","summary":[]}`),
			call("call_t", "bash", `{"command":"go test"}`),
		}, StopReason: provider.StopToolUse, Usage: record.Usage{Input: 40, Output: 90}}},
	{file: "incomplete.sse", want: provider.Reply{ID: "resp_4", Model: "gpt-4.1",
		Parts:      []record.Part{text("Writing it."), call("call_w", "write_file", `{"path":"x.go","content":"pack`)},
		Incomplete: []int{1}, StopReason: provider.StopMaxTokens, Usage: record.Usage{Input: 50, Output: 16}}},
	{file: "failed.sse", want: provider.Reply{ID: "resp_5", Model: "gpt-4.1", Parts: []record.Part{text("Par")}},
		class: provider.Server, typ: "server_error"},
	{file: "error_flat.sse", class: provider.RateLimited, typ: "rate_limit_exceeded"},
	{file: "error_nested.sse", want: provider.Reply{ID: "resp_6", Model: "gpt-4.1"},
		class: provider.ContextLength, typ: "context_length_exceeded"},
	{file: "error_number.sse", class: provider.RateLimited},
	{file: "unknown.sse", want: provider.Reply{ID: "resp_7", Model: "m",
		Parts: []record.Part{text("Found it.")}, StopReason: provider.StopEnd, Usage: record.Usage{Input: 5, Output: 3}}},
	{file: "cut.sse", want: provider.Reply{ID: "resp_8", Model: "gpt-4.1",
		Parts: []record.Part{text("Let me"), call("call_x", "ls", `{"dir`)}, Incomplete: []int{1}},
		class: provider.Network},
	{file: "failed_number.sse", want: provider.Reply{ID: "resp_10", Model: "openai/gpt-4.1"},
		class: provider.ContextLength, typ: "400"},
	{file: "refusal.sse", want: provider.Reply{ID: "resp_9", Model: "gpt-4o",
		Parts: []record.Part{text("I can't help with that.")}, StopReason: provider.StopRefusal}},
}

func TestResponsesStreams(t *testing.T) {
	for _, tc := range responsesCases {
		t.Run(tc.file, func(t *testing.T) { checkStream(t, "responses", respDec, tc) })
	}
}

// TestEveryTestdataStreamIsCovered keeps the tables above in step with the files.
func TestEveryTestdataStreamIsCovered(t *testing.T) {
	for dir, cases := range map[string][]streamCase{"chat": chatCases, "responses": responsesCases} {
		listed := map[string]bool{}
		for _, tc := range cases {
			listed[tc.file] = true
		}
		files, _ := filepath.Glob(filepath.Join("testdata", dir, "*.sse"))
		for _, f := range files {
			if !listed[filepath.Base(f)] {
				t.Errorf("%s has no case in the table", f)
			}
		}
	}
}
