package openai

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reinhq/rein/internal/provider"
)

// recordedDir holds streams recorded from real servers, shared by the team and never copied into
// the repository.
const recordedDir = "/work/shared/fixtures/recorded"

// TestRecordedStreams decodes every recorded OpenAI Chat, Responses and OpenRouter stream. A
// stream is routed by its name (responses → the Responses decoder; chat, openai, openrouter →
// the Chat decoder) or, failing that, by its content. A recorded stream must decode without a
// decoding failure: it may end in an error the server sent, but never in one the decoder made up.
func TestRecordedStreams(t *testing.T) {
	var files []string
	filepath.WalkDir(recordedDir, func(path string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			files = append(files, path)
		}
		return nil
	})
	if len(files) == 0 {
		t.Skipf("no recorded streams in %s", recordedDir)
	}
	decoded := 0
	for _, path := range files {
		name := strings.ToLower(path)
		if strings.Contains(name, "anthropic") || strings.Contains(name, "claude-messages") {
			continue
		}
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		var newDec func(func(provider.Event)) streamDecoder
		switch {
		case strings.Contains(name, "responses") || bytes.Contains(data, []byte(`"type":"response.`)):
			newDec = respDec
		case strings.Contains(name, "chat") || strings.Contains(name, "openai") || strings.Contains(name, "openrouter") ||
			bytes.Contains(data, []byte("chat.completion.chunk")):
			newDec = chatDec
		default:
			continue
		}
		decoded++
		t.Run(filepath.Base(path), func(t *testing.T) {
			reply, _, err := decodeStream(bytes.NewReader(data), newDec)
			checkReply(t, reply, err)
			if err != nil {
				pe := err.(*provider.Error)
				if pe.Err != nil && !strings.Contains(strings.ToLower(name), "cut") {
					t.Errorf("%s: %v (a decoding or transport failure, not one the server sent)", path, err)
				}
				t.Logf("server error: %v", err)
			}
			t.Logf("%d parts, stop %q, usage %+v", len(reply.Parts), reply.StopReason, reply.Usage)
		})
	}
	if decoded == 0 {
		t.Skipf("no OpenAI-shaped streams among %d recorded files", len(files))
	}
}
