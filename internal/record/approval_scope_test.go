package record

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// TestGoldenApprovalScope freezes the encoding of the approval fields a person's scoped answer
// uses: an approval asked with the diff shown and the rules offered, and one allowed for the
// conversation with the rules granted. The approval golden without them (TestGolden) is the older
// shape and must keep decoding with them empty.
func TestGoldenApprovalScope(t *testing.T) {
	recs := []Record{
		{Seq: 40, Time: 1764400000000, Body: &Approval{CallID: "call_2", Name: "edit_file", Args: `{"path":"a.txt","old":"x","new":"y"}`, State: ApprovalAsked,
			Diff: "--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-x\n+y\n", Rules: []string{"edit_file"}}},
		{Seq: 41, Time: 1764400000001, Body: &Approval{CallID: "call_2", State: ApprovalAllowed, By: "user", Op: "op6", Rules: []string{"edit_file"}, Scope: ScopeConversation}},
	}
	var got []byte
	for _, r := range recs {
		line, err := Encode(r)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, line...)
	}
	path := filepath.Join("testdata", "golden", "approval_scope.jsonl")
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./internal/record -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("encoding of scoped approvals changed:\n got %s\nwant %s", got, want)
	}
	for i, line := range bytes.SplitAfter(bytes.TrimSuffix(want, []byte("\n")), []byte("\n")) {
		r, err := Decode(line, recs[i].Seq)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(r.Body, recs[i].Body) {
			t.Errorf("golden line %d decodes to %#v, want %#v", i, r.Body, recs[i].Body)
		}
	}

	old, err := os.ReadFile(filepath.Join("testdata", "golden", "approval.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	r, err := Decode(old, 32)
	if err != nil {
		t.Fatalf("an approval without the new fields no longer decodes: %v", err)
	}
	if a := r.Body.(*Approval); a.Diff != "" || a.Rules != nil || a.Scope != "" {
		t.Errorf("the older approval decodes to %+v", a)
	}
}
