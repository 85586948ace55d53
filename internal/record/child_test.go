package record

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// TestGoldenChildImport freezes the encoding of a child agent's reply delivered to its parent: an
// import with source "child" and the optional child field. The import golden without the field
// (TestGolden) is the older shape and must keep decoding with Child empty.
func TestGoldenChildImport(t *testing.T) {
	p := &Import{Turn: 9, Source: "child", Child: "20261201-101500-a1b2c3", Message: Message{Role: User, Parts: []Part{{Type: PartText,
		Text: "[rein: child agent 20261201-101500-a1b2c3 finished (replied). Its reply:]\nThe tests pass."}}}}
	line, err := Encode(Record{Seq: 12, Time: 1764400000000, Body: p})
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join("testdata", "golden", "import_child.jsonl")
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
		t.Errorf("encoding of a child import changed:\n got %s\nwant %s", line, want)
	}
	r, err := Decode(want, 12)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(r.Body, p) {
		t.Errorf("golden child import decodes to %#v, want %#v", r.Body, p)
	}

	old, err := os.ReadFile(filepath.Join("testdata", "golden", "import.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(old, []byte(`"child"`)) {
		t.Fatalf("the older import golden should not carry the child field: %s", old)
	}
	r, err = Decode(old, 4)
	if err != nil {
		t.Fatalf("an import without the child field no longer decodes: %v", err)
	}
	if imp := r.Body.(*Import); imp.Child != "" || imp.Source != "resume" {
		t.Errorf("the older import decodes to %+v", imp)
	}
}
