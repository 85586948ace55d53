package record

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// A record too long for a line is written as a blob line: the envelope, the payload's digest, a
// checksum. It decodes to the same record through the blobs, and only through them.
func TestBlobLine(t *testing.T) {
	big := &AssistantMessage{Turn: 2, Parts: []Part{{Type: PartText, Text: strings.Repeat("é long reply ", 50_000)}}, StopReason: "end_turn"}
	line, err := Encode(Record{Seq: 9, Time: 7, Body: big})
	if err != nil {
		t.Fatal(err)
	}
	blobLine, digest, payload, err := Externalize(line)
	if err != nil {
		t.Fatal(err)
	}
	if len(blobLine) > 200 {
		t.Fatalf("a blob line of %d bytes: %s", len(blobLine), blobLine)
	}
	if !bytes.Contains(line, payload) {
		t.Fatal("the blob is not the payload as the line held it")
	}
	store := map[string][]byte{digest: payload}
	blobs := func(d string) ([]byte, error) {
		b, ok := store[d]
		if !ok {
			return nil, os.ErrNotExist
		}
		return b, nil
	}
	r, err := DecodeWith(blobLine, 9, blobs)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(r.Body, big) || r.Seq != 9 || r.Time != 7 {
		t.Fatalf("the blob line decodes to a different record")
	}
	if _, err := Decode(blobLine, 9); err == nil || !strings.Contains(err.Error(), "no blob store") {
		t.Fatalf("Decode of a blob line without blobs: %v", err)
	}
	if _, err := DecodeWith(blobLine, 9, func(string) ([]byte, error) { return nil, os.ErrNotExist }); err == nil || !strings.Contains(err.Error(), "cannot be read") {
		t.Fatalf("a missing blob: %v", err)
	}
	cut := payload[:len(payload)-1]
	if _, err := DecodeWith(blobLine, 9, func(string) ([]byte, error) { return cut, nil }); err == nil || !strings.Contains(err.Error(), "does not match its digest") {
		t.Fatalf("a cut blob: %v", err)
	}
	var de *DecodeError
	if _, err := DecodeWith(blobLine, 9, func(string) ([]byte, error) { return nil, errors.New("x") }); !errors.As(err, &de) || de.Seq != 9 {
		t.Fatalf("a blob refusal is not a DecodeError of record 9: %v", err)
	}
	if _, _, _, err := Externalize(blobLine); err == nil {
		t.Fatal("a blob line was externalized again")
	}
	// Every flipped bit of the blob line is caught by its checksum or its framing.
	for i := 0; i < len(blobLine)-1; i++ {
		for bit := 0; bit < 8; bit++ {
			l := bytes.Clone(blobLine)
			l[i] ^= 1 << bit
			if _, err := DecodeWith(l, 9, blobs); err == nil {
				t.Fatalf("flipped bit %d of byte %d went undetected", bit, i)
			}
		}
	}
}

// The blob line format is frozen like every kind's.
func TestBlobLineGolden(t *testing.T) {
	line, err := Encode(Record{Seq: 3, Time: 1764400000000, Body: &ToolResults{Results: []ToolResult{{CallID: "call_1", Content: "x\nTURN: 2", Outcome: OK}}}})
	if err != nil {
		t.Fatal(err)
	}
	blobLine, _, payload, err := Externalize(line)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join("testdata", "golden", "blob_line.jsonl")
	if *update {
		if err := os.WriteFile(path, blobLine, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./internal/record -update to create it)", err)
	}
	if !bytes.Equal(blobLine, want) {
		t.Fatalf("the blob line's encoding changed:\n got %s\nwant %s", blobLine, want)
	}
	if _, err := DecodeWith(want, 3, func(string) ([]byte, error) { return payload, nil }); err != nil {
		t.Fatal(err)
	}
}

func TestBlobLineRefusals(t *testing.T) {
	reseal := func(body string) []byte {
		var hex [8]byte
		putHex(hex[:], crc32Sum([]byte(body)))
		return []byte(body + crcOpen + string(hex[:]) + "\"}\n")
	}
	any := func(string) ([]byte, error) { return []byte("{}"), nil }
	for _, c := range []struct{ name, body, want string }{
		{"short digest", `{"v":1,"seq":3,"t":5,"class":"protocol","kind":"cleared","blob":"abc"`, "not a SHA-256 digest"},
		{"upper-case digest", `{"v":1,"seq":3,"t":5,"class":"protocol","kind":"cleared","blob":"` + strings.Repeat("A", 64) + `"`, "not a SHA-256 digest"},
		{"payload and blob", `{"v":1,"seq":3,"t":5,"class":"protocol","kind":"cleared","blob":"` + strings.Repeat("a", 64) + `","payload":{}`, "not a SHA-256 digest"},
	} {
		if _, err := DecodeWith(reseal(c.body), 3, any); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v, want %q", c.name, err, c.want)
		}
	}
}
