package session

import (
	"encoding/base64"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/reinhq/rein/internal/journal"
	"github.com/reinhq/rein/internal/record"
	"github.com/reinhq/rein/internal/redact"
)

const secret = "zq9-x7x7x7x7x7x7x7x7-abc"

func secrets(t testing.TB) *redact.Secrets {
	var s redact.Secrets
	if !s.Add("KEY", secret) {
		t.Fatal("the test secret was refused")
	}
	return &s
}

// payloads builds one payload of every kind; the test fails when a kind is missing, so a new kind
// must say here (and in redact) which of its texts are redacted.
var payloads = map[record.Kind]func() record.Payload{
	record.KindSystem:              func() record.Payload { return new(record.System) },
	record.KindUserPrompt:          func() record.Payload { return new(record.UserPrompt) },
	record.KindSteering:            func() record.Payload { return new(record.Steering) },
	record.KindImport:              func() record.Payload { return new(record.Import) },
	record.KindAssistantMessage:    func() record.Payload { return new(record.AssistantMessage) },
	record.KindToolResults:         func() record.Payload { return new(record.ToolResults) },
	record.KindEvicted:             func() record.Payload { return new(record.Evicted) },
	record.KindRewound:             func() record.Payload { return new(record.Rewound) },
	record.KindCleared:             func() record.Payload { return new(record.Cleared) },
	record.KindInherited:           func() record.Payload { return new(record.Inherited) },
	record.KindSessionStarted:      func() record.Payload { return new(record.SessionStarted) },
	record.KindSessionResumed:      func() record.Payload { return new(record.SessionResumed) },
	record.KindTurnStarted:         func() record.Payload { return new(record.TurnStarted) },
	record.KindUsage:               func() record.Payload { return new(record.UsageReported) },
	record.KindProviderError:       func() record.Payload { return new(record.ProviderError) },
	record.KindRetryScheduled:      func() record.Payload { return new(record.RetryScheduled) },
	record.KindToolStarted:         func() record.Payload { return new(record.ToolStarted) },
	record.KindToolFinished:        func() record.Payload { return new(record.ToolFinished) },
	record.KindCancelled:           func() record.Payload { return new(record.Cancelled) },
	record.KindQuiesced:            func() record.Payload { return new(record.Quiesced) },
	record.KindRepaired:            func() record.Payload { return new(record.Repaired) },
	record.KindNudge:               func() record.Payload { return new(record.Nudge) },
	record.KindHold:                func() record.Payload { return new(record.Hold) },
	record.KindReleased:            func() record.Payload { return new(record.Released) },
	record.KindModelChanged:        func() record.Payload { return new(record.ModelChanged) },
	record.KindPressure:            func() record.Payload { return new(record.Pressure) },
	record.KindFailure:             func() record.Payload { return new(record.Failure) },
	record.KindSubmission:          func() record.Payload { return new(record.Submission) },
	record.KindStop:                func() record.Payload { return new(record.Stop) },
	record.KindRenamed:             func() record.Payload { return new(record.Renamed) },
	record.KindClosed:              func() record.Payload { return new(record.Closed) },
	record.KindApproval:            func() record.Payload { return new(record.Approval) },
	record.KindMCPServer:           func() record.Payload { return new(record.MCPServer) },
	record.KindCheckpoint:          func() record.Payload { return new(record.Checkpoint) },
	record.KindFilesRestoreStarted: func() record.Payload { return new(record.FilesRestoreStarted) },
	record.KindFilesRestored:       func() record.Payload { return new(record.FilesRestored) },
	record.KindHook:                func() record.Payload { return new(record.Hook) },
	record.KindBackend:             func() record.Payload { return new(record.Backend) },
	record.KindExternalSession:     func() record.Payload { return new(record.ExternalSession) },
	record.KindExternalItem:        func() record.Payload { return new(record.ExternalItem) },
}

// structural lists the fields a secret may stay in: identifiers, names, states, paths and binary
// data, which the record needs as they are. Every other string of every payload is redacted.
var structural = map[string]bool{
	"user_prompt.submission": true, "user_prompt.attachments.media_type": true, "user_prompt.attachments.data": true,
	"steering.source": true, "steering.submission": true,
	"import.source": true, "import.message.role": true, "import.child": true, // a child session id
	"assistant_message.stop_reason": true, "assistant_message.model": true,
	"tool_results.results.call_id": true, "tool_results.results.outcome": true,
	"evicted.by": true, "evicted.op": true, "rewound.op": true, "cleared.op": true,
	"inherited.parent": true, "inherited.rows.role": true, "inherited.rows.pointer.file": true,
	"inherited.rows.messages.role": true, "inherited.residues.by": true,
	"session_started.session": true, "session_started.provider": true, "session_started.model": true,
	"session_started.cwd": true, "session_started.version": true, "session_started.parent": true, "session_started.op": true,
	"session_started.permission_mode": true, "session_resumed.permission_mode": true,
	"session_started.sandbox": true, "session_resumed.sandbox": true, // workspace-write, read-only or off
	"session_started.effort": true, "session_resumed.effort": true, // low, medium or high
	"session_started.tools": true, "session_resumed.tools": true, // a tool set name (package toolset)
	"session_resumed.provider": true, "session_resumed.model": true, "session_resumed.cwd": true, "session_resumed.version": true,
	"provider_error.class": true, "retry_scheduled.class": true,
	"tool_started.call_id": true, "tool_started.name": true,
	"tool_finished.call_id": true, "tool_finished.outcome": true,
	"quiesced.reason": true, "quiesced.answered": true, "nudge.reason": true,
	"model_changed.provider": true, "model_changed.model": true, "model_changed.op": true,
	"pressure.line": true,
	"submission.id": true, "submission.op": true, "submission.state": true,
	"submission.attachments.media_type": true, "submission.attachments.data": true,
	"stop.op": true, "stop.withdrawn": true, "renamed.op": true, "closed.op": true,
	// Checkpoints: commit hashes, and paths of the workspace with the reasons they were left out.
	"checkpoint.commit": true, "checkpoint.skipped.path": true, "checkpoint.skipped.reason": true,
	"files_restore_started.target": true, "files_restore_started.safety": true,
	"files_restored.target": true, "files_restored.safety": true, "files_restored.changed": true, "files_restored.removed": true,
	"files_restored.not_covered.path": true, "files_restored.not_covered.reason": true,
	"approval.call_id": true, "approval.name": true, "approval.state": true, "approval.by": true, "approval.op": true,
	"mcp_server.name": true, "mcp_server.state": true, "mcp_server.tools": true,
	"hold.call_id": true, "hold.by": true, "released.by": true, "released.op": true,
	"hook.event": true, "hook.call_id": true, "hook.tool": true, "hook.decision": true,
	// External programs: their kind, session ids and versions; an item's kind, id, name, status.
	"import.external": true, "backend.kind": true, "backend.op": true,
	"external_session.kind": true, "external_session.id": true, "external_session.version": true,
	"external_item.item": true, "external_item.id": true, "external_item.name": true, "external_item.status": true,
	// Parts: the type, ids and names, binary data (images, redacted thinking; an OpenAI reasoning
	// item, dropped when anything in it would be redacted), and a signature (a thinking block
	// whose words change loses it).
	"parts.type": true, "parts.signature": true, "parts.call_id": true, "parts.name": true, "parts.media_type": true, "parts.data": true,
	"parts.outcome": true,
	// A tool result's images are parts, judged as parts: an image's data and media type are
	// binary and structure; its name, the file read, is redacted.
	"parts.images.data": true, "parts.images.media_type": true,
	// A server tool part's wire names the API it came from; its block (data) is the provider's,
	// as a signature is.
	"parts.wire": true, "tool_results.results.images.wire": true,
	"tool_results.results.images.call_id": true, "tool_results.results.images.outcome": true, "tool_results.results.images.signature": true,
	"tool_results.results.images.name": true, "tool_results.results.images.data": true, "tool_results.results.images.media_type": true,
	"tool_results.results.images.images.data": true, "tool_results.results.images.images.media_type": true,
}

// fillingParts is set while fill makes a slice of parts.
var fillingParts bool

// fill sets every string of v to secret (through slices, with one element, and raw JSON, as an
// object holding it). A slice of parts gets one part of each type, all its fields set.
func fill(v reflect.Value) {
	switch v.Kind() {
	case reflect.String:
		v.SetString(secret)
	case reflect.Struct:
		for i := range v.NumField() {
			fill(v.Field(i))
		}
	case reflect.Slice:
		switch v.Type() {
		case reflect.TypeFor[json.RawMessage]():
			v.SetBytes([]byte(`{"command":"echo ` + secret + `"}`))
		case reflect.TypeFor[[]record.Part]():
			if fillingParts {
				// A part's own parts (a tool result's images): one image, not parts all the way down.
				v.Set(reflect.ValueOf([]record.Part{{Type: record.PartImage, MediaType: secret, Data: secret, Name: secret}}))
				return
			}
			fillingParts = true
			defer func() { fillingParts = false }()
			var parts []record.Part
			for _, typ := range []record.PartType{record.PartText, record.PartThinking, record.PartRedacted, record.PartToolCall, record.PartToolResult, record.PartImage} {
				var p record.Part
				fill(reflect.ValueOf(&p).Elem())
				p.Type = typ
				parts = append(parts, p)
			}
			v.Set(reflect.ValueOf(parts))
		default:
			s := reflect.MakeSlice(v.Type(), 1, 1)
			fill(s.Index(0))
			v.Set(s)
		}
	}
}

// holding returns the paths (kind.field.field, indexes left out) of the strings in v that hold
// the secret.
func holding(path string, v any, out map[string]bool) {
	switch x := v.(type) {
	case string:
		if strings.Contains(x, secret) {
			out[path] = true
		}
	case []any:
		for _, e := range x {
			holding(path, e, out)
		}
	case map[string]any:
		for k, e := range x {
			holding(path+"."+k, e, out)
		}
	}
}

// Every text a payload carries from outside is redacted when it is written; what stays is
// structure, listed in structural.
func TestEveryTextIsRedacted(t *testing.T) {
	s := &Session{opts: Options{Redact: secrets(t)}.withDefaults()}
	for _, k := range record.Kinds() {
		mk, ok := payloads[k]
		if !ok {
			t.Errorf("kind %s is not in payloads: say which of its texts are redacted", k)
			continue
		}
		p := mk()
		fill(reflect.ValueOf(p).Elem())
		before, _ := json.Marshal(p)
		red := s.redact(p)
		if after, _ := json.Marshal(p); string(after) != string(before) {
			t.Errorf("%s: redact changed the payload it was given", k)
		}
		b, err := json.Marshal(red)
		if err != nil {
			t.Fatalf("%s: %v", k, err)
		}
		var v any
		json.Unmarshal(b, &v)
		left := map[string]bool{}
		holding(string(k), v, left)
		var wrong []string
		for path := range left {
			field := path
			if i := strings.Index(path, ".parts."); i >= 0 {
				field = path[i+1:]
			}
			if !structural[field] {
				wrong = append(wrong, path)
			}
		}
		sort.Strings(wrong)
		if len(wrong) > 0 {
			t.Errorf("%s keeps the secret in %v", k, wrong)
		}
	}
}

// A model's tool arguments are redacted as they read, escapes and all; arguments with nothing to
// redact keep their bytes.
func TestToolArgumentsRedacted(t *testing.T) {
	r := secrets(t)
	escaped := `{"z":1,"command":"echo \u007a` + secret[1:] + `","a":[true,null,2.50]}`
	got := redactJSON(r, json.RawMessage(escaped))
	if want := `{"z":1,"command":"echo [REDACTED:KEY]","a":[true,null,2.50]}`; string(got) != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	clean := json.RawMessage(`{ "command" : "ls -la",  "n": 1e3 }`)
	if got := redactJSON(r, clean); string(got) != string(clean) {
		t.Errorf("clean arguments changed: %s", got)
	}
	wrapped := `{"content":"` + strings.Replace(base64.StdEncoding.EncodeToString([]byte("K="+secret)), "Q", `Q\n`, 1) + `"}`
	if got := redactJSON(r, json.RawMessage(wrapped)); strings.Contains(string(got), base64.StdEncoding.EncodeToString([]byte(secret))[8:20]) || !json.Valid(got) {
		t.Errorf("wrapped base64 in arguments: %s", got)
	}
}

// A thinking block whose words were redacted no longer carries the signature of other words; an
// OpenAI reasoning item kept to be sent back is dropped when its summary held a secret (it holds
// the summary's words too), and kept byte for byte when nothing in it was.
func TestRedactedThinkingLosesItsSignature(t *testing.T) {
	r := secrets(t)
	item := func(summary string) string {
		s, _ := json.Marshal(summary)
		return `{"id":"rs_1","type":"reasoning","encrypted_content":"gAAAA","summary":[{"type":"summary_text","text":` + string(s) + `}]}`
	}
	parts := redactParts(r, []record.Part{
		{Type: record.PartThinking, Text: "the key is " + secret, Signature: "sig1"},
		{Type: record.PartThinking, Text: "nothing to hide", Signature: "sig2"},
		{Type: record.PartThinking, Text: "the key is " + secret, Data: item("the key is " + secret)},
		{Type: record.PartThinking, Text: "**Plan**", Data: item("**Plan**")},
		{Type: record.PartThinking, Data: `{"id":"rs_2","type":"reasoning","encrypted_content":"` + secret + `","summary":[]}`},
	})
	if parts[0].Signature != "" || parts[0].Text != "the key is [REDACTED:KEY]" {
		t.Errorf("redacted thinking: %+v", parts[0])
	}
	if parts[1].Signature != "sig2" {
		t.Errorf("clean thinking lost its signature: %+v", parts[1])
	}
	if parts[2].Data != "" || parts[2].Text != "the key is [REDACTED:KEY]" {
		t.Errorf("a reasoning item with a secret in its summary: %+v", parts[2])
	}
	if parts[3].Data != item("**Plan**") {
		t.Errorf("a clean reasoning item changed: %+v", parts[3])
	}
	if parts[4].Data != "" {
		t.Errorf("a reasoning item holding a secret anywhere is kept: %+v", parts[4])
	}
}

// The record file never holds the secret, the live state applies the redacted record, and a
// resume reads the same.
func TestRecordFileHoldsNoSecret(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "s")
	s, err := Create(dir, Options{Now: clock(), Redact: secrets(t)}, started("s"))
	must(t, err)
	must(t, s.Append(&record.UserPrompt{Turn: s.Snapshot().Next(), Text: "use " + secret}))
	turn := s.Snapshot().Next()
	must(t, s.Append(&record.AssistantMessage{Turn: turn, Parts: []record.Part{
		{Type: record.PartText, Text: "echoing " + secret},
		{Type: record.PartToolCall, CallID: "c1", Name: "bash", Args: json.RawMessage(`{"command":"echo ` + secret + ` | base64"}`)}}}))
	must(t, s.Commit(&record.ToolStarted{CallID: "c1", Name: "bash"}))
	b64 := base64.StdEncoding.EncodeToString([]byte(secret + "\n"))
	must(t, s.Append(&record.ToolResults{Results: []record.ToolResult{{CallID: "c1", Content: b64, Outcome: record.OK}}}))
	must(t, s.Append(&record.ProviderError{Class: "invalid_request", Status: 400, Message: "bad key: " + secret}))
	must(t, s.Append(&record.Failure{Message: "the provider failed: bad key " + secret}))
	ctx := s.Snapshot().Context()
	must(t, s.Close())
	b, err := os.ReadFile(filepath.Join(dir, journal.FileName))
	must(t, err)
	for _, leak := range []string{secret, b64[:len(b64)-4]} {
		if strings.Contains(string(b), leak) {
			t.Errorf("the record holds %q:\n%s", leak, b)
		}
	}
	if n := strings.Count(string(b), "[REDACTED:KEY]"); n != 6 {
		t.Errorf("%d placeholders in the record, want 6:\n%s", n, b)
	}
	c, _ := json.Marshal(ctx)
	if strings.Contains(string(c), secret) || !strings.Contains(string(c), "[REDACTED:KEY]") {
		t.Errorf("the live context: %s", c)
	}
}

// A secret streamed in pieces is published redacted whole; what a stream holds back is published
// before anything that follows it, in order.
func TestLiveStreamsRedacted(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "s")
	s, err := Create(dir, Options{Now: clock(), Redact: secrets(t)}, started("s"))
	must(t, err)
	defer s.Close()
	ch, end := s.Subscribe()
	defer end()
	text := "the key is " + secret + " and then " + secret[:12]
	for i := 0; i < len(text); i += 5 {
		s.Publish(Live{Kind: "text", Text: text[i:min(i+5, len(text))]})
	}
	args := `{"command":"echo ` + secret + `"}`
	for i := 0; i < len(args); i += 7 {
		s.Publish(Live{Kind: "tool_args", CallID: "c1", Text: args[i:min(i+7, len(args))]})
	}
	s.Publish(Live{Kind: "tool_start", CallID: "c1", Name: "bash", Text: args})
	s.Publish(Live{Kind: "status", Text: "provider said: " + secret})
	must(t, s.Commit(&record.Failure{Message: "x " + secret}))
	var got struct{ text, args, rest strings.Builder }
	var kinds []string
	for u := range ch {
		if u.Record != nil {
			if f, ok := u.Record.Body.(*record.Failure); !ok || f.Message != "x [REDACTED:KEY]" {
				t.Errorf("record %+v", u.Record.Body)
			}
			break
		}
		kinds = append(kinds, u.Live.Kind)
		switch u.Live.Kind {
		case "text":
			got.text.WriteString(u.Live.Text)
		case "tool_args":
			got.args.WriteString(u.Live.Text)
		default:
			got.rest.WriteString(u.Live.Text + "\n")
		}
	}
	if want := "the key is [REDACTED:KEY] and then " + secret[:12]; got.text.String() != want {
		t.Errorf("text: %q, want %q", got.text.String(), want)
	}
	if want := `{"command":"echo [REDACTED:KEY]"}`; got.args.String() != want {
		t.Errorf("tool_args: %q, want %q", got.args.String(), want)
	}
	if want := "{\"command\":\"echo [REDACTED:KEY]\"}\nprovider said: [REDACTED:KEY]\n"; got.rest.String() != want {
		t.Errorf("others: %q, want %q", got.rest.String(), want)
	}
	// Each stream's held tail comes out when the next thing is published: the text's before the
	// arguments', the arguments' before the tool_start.
	seq := strings.Join(kinds, " ")
	for _, bad := range []string{"tool_args text", "tool_start tool_args", "status tool_start"} {
		if strings.Contains(seq, bad) {
			t.Errorf("out of order (%s): %s", bad, seq)
		}
	}
}
