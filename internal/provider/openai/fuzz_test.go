package openai

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/reinhq/rein/internal/provider"
	"github.com/reinhq/rein/internal/record"
)

func seedStreams(f *testing.F, dir string) {
	files, _ := filepath.Glob(filepath.Join("testdata", dir, "*.sse"))
	for _, file := range files {
		b, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
}

// checkReply holds what any decoded reply must satisfy, whatever the bytes were.
func checkReply(t *testing.T, reply provider.Reply, err error) {
	for _, i := range reply.Incomplete {
		if i < 0 || i >= len(reply.Parts) || reply.Parts[i].Type != record.PartToolCall {
			t.Fatalf("Incomplete names part %d, which is not a tool call: %+v", i, reply)
		}
	}
	if err == nil && reply.StopReason == "" {
		t.Fatalf("a successful reply with no stop reason: %+v", reply)
	}
	if err != nil {
		if _, ok := err.(*provider.Error); !ok {
			t.Fatalf("error %T is not a *provider.Error: %v", err, err)
		}
	}
}

func FuzzChatDecode(f *testing.F) {
	seedStreams(f, "chat")
	f.Fuzz(func(t *testing.T, data []byte) {
		reply, events, err := decodeStream(bytes.NewReader(data), chatDec)
		checkReply(t, reply, err)
		checkEvents(t, reply, events, "*")
	})
}

func FuzzResponsesDecode(f *testing.F) {
	seedStreams(f, "responses")
	f.Fuzz(func(t *testing.T, data []byte) {
		reply, events, err := decodeStream(bytes.NewReader(data), respDec)
		checkReply(t, reply, err)
		checkEvents(t, reply, events, "*")
	})
}

func FuzzValidateChat(f *testing.F) {
	body, _ := EncodeChat(sampleRequest())
	f.Add(body)
	f.Add([]byte(chatBody(cUser + "," + cCall2 + "," + cResX)))
	f.Fuzz(func(t *testing.T, data []byte) { ValidateChat(data) })
}

func FuzzValidateResponses(f *testing.F) {
	body, _ := EncodeResponses(sampleRequest())
	f.Add(body)
	f.Add([]byte(respBody(rUser + "," + rCallX + "," + rOutY)))
	custom := sampleRequest()
	custom.Tools = append(custom.Tools, provider.Tool{Name: "apply_patch", Schema: provider.FreeformSchema, Grammar: "start: /.+/"})
	custom.Messages = append(custom.Messages,
		record.Message{Role: record.Assistant, Parts: []record.Part{{Type: record.PartToolCall, CallID: "c9", Name: "apply_patch", Args: provider.FreeformArgs("*** Begin Patch")}}},
		record.Message{Role: record.User, Parts: []record.Part{{Type: record.PartToolResult, CallID: "c9", Text: "ok"}}})
	if body, err := EncodeResponses(custom); err == nil {
		f.Add(body)
	}
	f.Fuzz(func(t *testing.T, data []byte) { ValidateResponses(data) })
}
