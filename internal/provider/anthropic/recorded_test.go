package anthropic

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/reinhq/rein/internal/provider"
	"github.com/reinhq/rein/internal/record"
)

// recorded is where streams recorded from the real API are kept, outside the repository.
const recorded = "/work/shared/fixtures/recorded"

// TestRecordedStreams decodes every Anthropic stream recorded from the real API: a stream that
// reached message_stop must decode without error; any other must end in a classified error.
func TestRecordedStreams(t *testing.T) {
	if _, err := os.Stat(recorded); err != nil {
		t.Skipf("no recorded streams at %s (%v); they are kept outside the repository", recorded, err)
	}
	n := 0
	err := filepath.WalkDir(recorded, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if !bytes.Contains(data, []byte("message_start")) || !bytes.Contains(data, []byte("data:")) {
			return nil // not an Anthropic event stream
		}
		n++
		t.Run(filepath.Base(path), func(t *testing.T) {
			reply, err := decode(context.Background(), bytes.NewReader(data), nil)
			var e *provider.Error
			switch {
			case err != nil && !errors.As(err, &e):
				t.Fatalf("err %v is not classified", err)
			case err != nil && bytes.Contains(data, []byte("message_stop")) && e.Class == provider.Network:
				t.Fatalf("a complete stream failed to decode: %v", err)
			case err == nil && reply.StopReason == "":
				t.Fatalf("no stop reason in %+v", reply)
			}
			for _, i := range reply.Incomplete {
				if reply.Parts[i].Type != record.PartToolCall {
					t.Fatalf("incomplete %d is not a tool call", i)
				}
			}
			t.Logf("%s: %d parts, stop %q, usage %+v, err %v", path, len(reply.Parts), reply.StopReason, reply.Usage, err)
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n == 0 {
		t.Skipf("no Anthropic streams under %s", recorded)
	}
}
