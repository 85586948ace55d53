package record

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files")

func intp(i int) *int { return &i }

// samples holds one filled-in payload of every kind; the golden files freeze their encoding.
func samples() map[Kind]Payload {
	msg := Message{Role: User, Parts: []Part{{Type: PartText, Text: "resume: the last exchange was cut short"}}}
	return map[Kind]Payload{
		KindSystem:     &System{Text: "You are rein's agent."},
		KindUserPrompt: &UserPrompt{Turn: 1, Text: "list the files <here> & there", Attachments: []Attachment{{Name: "a.txt", MediaType: "text/plain", Text: "hello"}}},
		KindSteering:   &Steering{Text: "also check go.mod", Source: "user"},
		KindImport:     &Import{Turn: 3, Message: msg, Source: "resume"},
		KindAssistantMessage: &AssistantMessage{Turn: 2, Parts: []Part{
			{Type: PartThinking, Text: "let me look", Signature: "c2ln"},
			{Type: PartRedacted, Data: "b3BhcXVl"},
			{Type: PartThinking, Text: "**Listing**", Data: `{"id":"rs_1","type":"reasoning","encrypted_content":"gAAA","summary":[{"type":"summary_text","text":"**Listing**"}]}`},
			{Type: PartText, Text: "Looking."},
			{Type: PartToolCall, CallID: "call_1", Name: "bash", Args: json.RawMessage(`{"command":"ls"}`)},
		}, StopReason: "tool_use", Model: "sim-1", Usage: Usage{Input: 120, Output: 30, CacheRead: 100, CacheWrite: 20}},
		KindToolResults: &ToolResults{Results: []ToolResult{{CallID: "call_1", Content: "a\nb\nTURN: 2", Outcome: OK}, {CallID: "call_2", Content: "cut short", IsError: true, Outcome: Interrupted},
			{CallID: "call_3", Content: "[image: a.png]\nTURN: 2", Outcome: OK, Images: []Part{{Type: PartImage, MediaType: "image/png", Data: "iVBORw0KGgo=", Name: "a.png"}}}}},
		KindEvicted: &Evicted{From: 4, To: 9, Note: "the retry loop was a dead end", By: ByModel},
		KindRewound: &Rewound{Anchor: 5},
		KindCleared: &Cleared{},
		KindInherited: &Inherited{Parent: "s-parent", At: 4, High: 6, Rows: []InheritedRow{
			{Turn: 1, Role: User, Label: "list the files", Bytes: 40, Pointer: Pointer{File: "/x/record.jsonl", Loci: []Locus{{Seq: 2, Off: 100, Len: 200, Sum: 0xdeadbeef}}}, Messages: []Message{msg}},
			{Turn: 2, Role: Assistant, Label: "bash", Bytes: 80, Withdrawn: true, Pointer: Pointer{File: "/x/record.jsonl", Loci: []Locus{{Seq: 3, Off: 300, Len: 50, Sum: 1}}}},
		}, Residues: []Span{{From: 1, To: 1, Note: "n", By: ByHarness}}},
		KindSessionStarted:      &SessionStarted{Session: "s1", Provider: "sim", Model: "sim-1", ContextWindow: 200000, Cwd: "/w", Version: "0.1.0", BaseURL: "http://localhost:11434/v1", PermissionMode: "workspace", Thinking: 4000, Sandbox: "workspace-write, no network"},
		KindSessionResumed:      &SessionResumed{Provider: "sim", Model: "sim-1", ContextWindow: 200000, Cwd: "/w", Version: "0.1.0", BaseURL: "http://localhost:11434/v1", PermissionMode: "read-only", Effort: "high", Sandbox: "off"},
		KindTurnStarted:         &TurnStarted{Attempt: 2},
		KindUsage:               &UsageReported{Usage: Usage{Input: 1}},
		KindProviderError:       &ProviderError{Class: "rate_limited", Status: 429, Type: "rate_limit_error", Message: "slow down", Attempt: 1},
		KindRetryScheduled:      &RetryScheduled{Attempt: 1, DelayMs: 1500, Class: "rate_limited"},
		KindToolStarted:         &ToolStarted{CallID: "call_1", Name: "bash"},
		KindToolFinished:        &ToolFinished{CallID: "call_1", DurationMs: 12, ExitCode: intp(2), Outcome: Failed, Content: "no such file\n[exit code 2]\nTURN: 2", IsError: true},
		KindCancelled:           &Cancelled{Reason: "stop"},
		KindQuiesced:            &Quiesced{Reason: "cancelled", Answered: []string{"call_2"}},
		KindRepaired:            &Repaired{Turn: 2, What: "tool call call_1 arguments were not an object", Original: json.RawMessage(`"ls"`)},
		KindNudge:               &Nudge{Reason: "empty", Count: 1},
		KindHold:                &Hold{},
		KindReleased:            &Released{},
		KindModelChanged:        &ModelChanged{Provider: "anthropic", Model: "claude-sonnet-4-5", ContextWindow: 200000},
		KindPressure:            &Pressure{Line: "context_length", Used: 150000, Window: 200000, Limit: 131072},
		KindFailure:             &Failure{Message: "three repairs in one exchange"},
		KindSubmission:          &Submission{ID: "m1", Op: "op1", State: "accepted", Text: "hi"},
		KindStop:                &Stop{Op: "op2", Turn: 7},
		KindRenamed:             &Renamed{Title: "t", Op: "op3"},
		KindClosed:              &Closed{Op: "op4"},
		KindApproval:            &Approval{CallID: "call_1", Name: "bash", Args: `{"command":"ls"}`, State: "denied", By: "user", Op: "op5"},
		KindMCPServer:           &MCPServer{Name: "memory", State: "ready", Tools: []string{"mcp__memory__read_graph"}},
		KindCheckpoint:          &Checkpoint{Turn: 4, Commit: "3f2a9c0d5e6b7a8190c1d2e3f4a5b6c7d8e9f0a1", Skipped: []SkippedPath{{Path: "data/big.bin", Reason: "oversize", Size: 20971520}, {Path: "vendor/lib/", Reason: "nested repository"}}},
		KindFilesRestoreStarted: &FilesRestoreStarted{Target: "3f2a9c0d5e6b7a8190c1d2e3f4a5b6c7d8e9f0a1", Safety: "9e8d7c6b5a4f3e2d1c0b9a8f7e6d5c4b3a2f1e0d", Turn: 3},
		KindFilesRestored: &FilesRestored{Target: "3f2a9c0d5e6b7a8190c1d2e3f4a5b6c7d8e9f0a1", Safety: "9e8d7c6b5a4f3e2d1c0b9a8f7e6d5c4b3a2f1e0d",
			Changed: []string{"a.go"}, Removed: []string{"b.go"}, NotCovered: []SkippedPath{{Path: "node_modules/", Reason: "ignored"}}, MoreIgnored: 2, Resumed: true},
		KindBackend:         &Backend{Name: "claude", Op: "op6"},
		KindExternalSession: &ExternalSession{Program: "claude", ID: "5f0c2b1e-7d3a-4e8b-9c1d-2a3b4c5d6e7f", Version: "2.1.328"},
		KindExternalItem:    &ExternalItem{Item: "tool_call", ID: "toolu_1", Name: "Bash", Text: "ls -la", Status: "started", Raw: json.RawMessage(`{"command":"ls -la"}`)},
		KindHook:            &Hook{Event: "pre_tool", Command: "./guard.sh", Source: "/w/.rein/config.toml", CallID: "call_1", Tool: "bash", Decision: "refuse", Reason: "no push to main", ExitCode: intp(2), DurationMs: 14},
	}
}

func TestGolden(t *testing.T) {
	s := samples()
	if len(s) != len(Kinds()) || len(kinds) != len(Kinds()) {
		t.Fatalf("samples cover %d kinds, Kinds() lists %d, the table %d", len(s), len(Kinds()), len(kinds))
	}
	for i, k := range Kinds() {
		p, ok := s[k]
		if !ok {
			t.Fatalf("no sample for kind %s", k)
		}
		line, err := Encode(Record{Seq: int64(i + 1), Time: 1764400000000, Body: p})
		if err != nil {
			t.Fatal(err)
		}
		path := filepath.Join("testdata", "golden", string(k)+".jsonl")
		if *update {
			if err := os.WriteFile(path, line, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		want, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("%v (run go test ./internal/record -update to create it)", err)
		}
		if !bytes.Equal(line, want) {
			t.Errorf("encoding of %s changed:\n got %s\nwant %s", k, line, want)
		}
		// The frozen bytes must keep decoding to the same value.
		r, err := Decode(want, int64(i+1))
		if err != nil {
			t.Fatalf("golden %s: %v", k, err)
		}
		if !reflect.DeepEqual(r.Body, p) {
			t.Errorf("golden %s decodes to %#v, want %#v", k, r.Body, p)
		}
	}
}

// olderLines are the lines under testdata/older/, frozen in the shapes records had before a field
// was added to their kind, with the values they must keep decoding to.
var olderLines = map[string]Payload{
	// tool_finished before content and is_error: a call whose result was not kept.
	"tool_finished.jsonl": &ToolFinished{CallID: "call_1", DurationMs: 12, ExitCode: intp(0), Outcome: OK},
	// tool_results before images: results of text alone.
	"tool_results.jsonl": &ToolResults{Results: []ToolResult{{CallID: "call_1", Content: "a\nb\nTURN: 2", Outcome: OK}, {CallID: "call_2", Content: "cut short", IsError: true, Outcome: Interrupted}}},
}

// Records written before a field was added keep decoding, to the value they had, and re-encode to
// the very same bytes: the added fields are optional and absent means what it meant.
func TestOlderShapes(t *testing.T) {
	entries, err := os.ReadDir(filepath.Join("testdata", "older"))
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != len(olderLines) {
		t.Fatalf("testdata/older holds %d files, olderLines names %d", len(entries), len(olderLines))
	}
	for name, want := range olderLines {
		line, err := os.ReadFile(filepath.Join("testdata", "older", name))
		if err != nil {
			t.Fatal(err)
		}
		seq := int64(kindIndex(want.Kind()) + 1)
		r, err := Decode(line, seq)
		if err != nil {
			t.Fatalf("%s no longer decodes: %v", name, err)
		}
		if !reflect.DeepEqual(r.Body, want) {
			t.Errorf("%s decodes to %#v, want %#v", name, r.Body, want)
		}
		again, err := Encode(r)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(again, line) {
			t.Errorf("%s re-encodes differently:\n got %s\nwant %s", name, again, line)
		}
	}
}

func TestDecodeRefusals(t *testing.T) {
	good, _ := Encode(Record{Seq: 3, Time: 5, Body: &UserPrompt{Turn: 1, Text: "hi"}})
	reseal := func(body string) []byte {
		// Recompute the checksum over a hand-made prefix so only the intended defect remains.
		line, _ := Encode(Record{Seq: 3, Time: 5, Body: &System{Text: "x"}})
		i := bytes.LastIndex(line, []byte(crcOpen))
		sum := crc32Sum([]byte(body))
		var hex [8]byte
		putHex(hex[:], sum)
		_ = i
		return []byte(body + crcOpen + string(hex[:]) + "\"}\n")
	}
	cases := []struct {
		name string
		line []byte
		seq  int64
		want string
		is   error // the cause a caller can tell the refusal by, if it has one
	}{
		{"wrong seq", good, 4, "sequence number 3 where 4 belongs", nil},
		{"unknown kind", reseal(`{"v":1,"seq":3,"t":5,"class":"protocol","kind":"mystery","payload":{}`), 3, `kind "mystery" is not one rein knows`, nil},
		{"class mismatch", reseal(`{"v":1,"seq":3,"t":5,"class":"event","kind":"user_prompt","payload":{"turn":1,"text":"x"}`), 3, "disagrees with its kind", nil},
		{"unknown payload field", reseal(`{"v":1,"seq":3,"t":5,"class":"protocol","kind":"user_prompt","payload":{"turn":1,"text":"x","extra":1}`), 3, `unknown field "extra"`, nil},
		{"unknown envelope field", reseal(`{"v":1,"seq":3,"t":5,"who":1,"class":"protocol","kind":"cleared","payload":{}`), 3, `unknown field "who"`, nil},
		{"future version", reseal(`{"v":2,"seq":3,"t":5,"class":"protocol","kind":"cleared","payload":{}`), 3, "format version 2", nil},
		{"payload not object", reseal(`{"v":1,"seq":3,"t":5,"class":"protocol","kind":"cleared","payload":[]`), 3, "not a JSON object", nil},
		{"envelope out of order", reseal(`{"v":1,"seq":3,"t":5,"kind":"cleared","class":"protocol","payload":{}`), 3, `it has field "kind" where "class" belongs`, nil},
		{"envelope field missing", reseal(`{"v":1,"seq":3,"t":5,"class":"protocol","payload":{}`), 3, `it has field "payload" where "kind" belongs`, nil},
		{"envelope whitespace", reseal(`{"v":1, "seq":3,"t":5,"class":"protocol","kind":"cleared","payload":{}`), 3, `expected field "seq"`, nil},
		{"envelope escape", reseal(`{"v":1,"seq":3,"t":5,"class":"protocol","kind":"clea\u0072ed","payload":{}`), 3, `field "kind" is not a plain string`, nil},
		{"envelope seq not integer", reseal(`{"v":1,"seq":3.0,"t":5,"class":"protocol","kind":"cleared","payload":{}`), 3, `field "seq" is not a 64-bit integer`, nil},
		{"future version, other shape", reseal(`{"v":2,"kind":"cleared"`), 3, "format version 2", nil},
		{"payload whitespace", reseal(`{"v":1,"seq":3,"t":5,"class":"protocol","kind":"cleared","payload": {}`), 3, "not a JSON object", nil},
		{"payload trailing data", reseal(`{"v":1,"seq":3,"t":5,"class":"protocol","kind":"cleared","payload":{}{}`), 3, "trailing data after the payload object", nil},
		{"duplicate field", reseal(`{"v":1,"seq":3,"t":5,"class":"protocol","kind":"user_prompt","payload":{"turn":1,"text":"x","text":"y"}`), 3, `field "text" appears twice`, errDuplicateField},
		{"field in another case", reseal(`{"v":1,"seq":3,"t":5,"class":"protocol","kind":"user_prompt","payload":{"Turn":1,"text":"x"}`), 3, `field "Turn" must be spelt "turn"`, errFieldCase},
		{"wrong type", reseal(`{"v":1,"seq":3,"t":5,"class":"protocol","kind":"user_prompt","payload":{"turn":"1"}`), 3, "expected an integer, found a string", nil},
		{"bad escape", reseal(`{"v":1,"seq":3,"t":5,"class":"protocol","kind":"system","payload":{"text":"\x"}`), 3, `invalid escape "\\x" in a string`, nil},
		{"no trailer", []byte(`{"v":1}`), 1, "not a rein record line", nil},
		{"garbage", []byte("hello world, this is not json at all"), 1, "not a rein record line", nil},
		{"flipped byte", bytes.Replace(good, []byte(`"hi"`), []byte(`"ho"`), 1), 3, "do not match its checksum", ErrChecksum},
	}
	for _, c := range cases {
		_, err := Decode(c.line, c.seq)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v, want an error containing %q", c.name, err, c.want)
		}
		// A refusal is classified, not only worded: a *DecodeError naming the line, and its cause.
		var de *DecodeError
		if !errors.As(err, &de) || de.Seq != c.seq {
			t.Errorf("%s: %v is not a *DecodeError of record %d", c.name, err, c.seq)
		}
		if c.is != nil && !errors.Is(err, c.is) {
			t.Errorf("%s: %v does not wrap %v", c.name, err, c.is)
		}
	}
}

// Every single flipped bit anywhere in a complete line is detected.
func TestFlippedBitDetected(t *testing.T) {
	line, _ := Encode(Record{Seq: 1, Time: 99, Body: samples()[KindAssistantMessage]})
	body := line[:len(line)-1]
	for i := range body {
		for bit := 0; bit < 8; bit++ {
			c := bytes.Clone(body)
			c[i] ^= 1 << bit
			if _, err := Decode(c, 1); err == nil {
				t.Fatalf("flipping bit %d of byte %d (%q) went undetected", bit, i, body[i])
			}
		}
	}
}

func FuzzDecode(f *testing.F) {
	for i, k := range Kinds() {
		line, _ := Encode(Record{Seq: int64(i + 1), Time: 1, Body: samples()[k]})
		f.Add(line, int64(i+1))
	}
	f.Fuzz(func(t *testing.T, line []byte, seq int64) {
		r, err := Decode(line, seq)
		if err != nil {
			return
		}
		// Whatever decodes re-encodes to a line that decodes to the same value.
		again, err := Encode(r)
		if err != nil {
			t.Fatalf("decoded record does not re-encode: %v", err)
		}
		r2, err := Decode(again, seq)
		if err != nil {
			t.Fatalf("re-encoded record does not decode: %v\n%s", err, again)
		}
		if !reflect.DeepEqual(r, r2) {
			t.Fatalf("round trip changed the record:\n%#v\n%#v", r, r2)
		}
	})
}
