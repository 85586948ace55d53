package provider

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/reinhq/rein/internal/record"
)

// TestMemoDigestCoversPart: two messages that differ in any one field of any part, or of an image
// inside a part, have different keys — so a field added to record.Part that the digest does not
// read fails here, not in a request that carried stale bytes.
func TestMemoDigestCoversPart(t *testing.T) {
	m := &Memo{}
	keyOf := func(format string, msg record.Message) MemoKey { return m.Start(format, []record.Message{msg}).keys[0] }
	base := record.Part{Type: record.PartText, Text: "t", Images: []record.Part{{Type: record.PartImage, Data: "d"}}}
	key := func(p record.Part) MemoKey {
		return keyOf("f", record.Message{Role: record.User, Parts: []record.Part{p}})
	}
	k0 := key(base)
	typ := reflect.TypeOf(record.Part{})
	for i := range typ.NumField() {
		f := typ.Field(i)
		for _, inImage := range []bool{false, true} {
			p := base
			p.Images = []record.Part{base.Images[0]}
			target := &p
			if inImage {
				target = &p.Images[0]
			}
			v := reflect.ValueOf(target).Elem().Field(i)
			switch v.Kind() {
			case reflect.String:
				v.SetString(v.String() + "x")
			case reflect.Bool:
				v.SetBool(!v.Bool())
			case reflect.Slice:
				if f.Type == reflect.TypeOf(json.RawMessage(nil)) {
					v.SetBytes([]byte(`{"a":1}`))
				} else if f.Name == "Images" {
					v.Set(reflect.Append(v, reflect.ValueOf(record.Part{Type: record.PartImage})))
				} else {
					t.Fatalf("Part.%s: a slice the test does not know; teach the digest and this test", f.Name)
				}
			default:
				t.Fatalf("Part.%s: a %s the test does not know; teach the digest and this test", f.Name, v.Kind())
			}
			if key(p) == k0 {
				t.Errorf("Part.%s (in an image: %v) changed and the key did not", f.Name, inImage)
			}
		}
	}
	if keyOf("f", record.Message{Role: record.Assistant, Parts: []record.Part{base}}) == k0 {
		t.Error("the role changed and the key did not")
	}
	if keyOf("g", record.Message{Role: record.User, Parts: []record.Part{base}}) == k0 {
		t.Error("the format changed and the key did not")
	}
	// Parts split differently, the same bytes in all.
	a := keyOf("f", record.Message{Role: record.User, Parts: []record.Part{{Text: "ab"}, {Text: ""}}})
	b := keyOf("f", record.Message{Role: record.User, Parts: []record.Part{{Text: "a"}, {Text: "b"}}})
	if a == b {
		t.Error("two splits of the same text share a key")
	}
}

// TestMemoRun: a request takes the bytes of the longest run of leading messages the last request
// encoded the same, and keeps its own for the next; a request that did not mark every message
// keeps nothing.
func TestMemoRun(t *testing.T) {
	msg := func(s string) record.Message {
		return record.Message{Role: record.User, Parts: []record.Part{{Text: s}}}
	}
	m := &Memo{}
	encode := func(msgs ...record.Message) (same int, run string) {
		r := m.Start("f", msgs)
		b, _ := r.Run()
		out := string(b)
		for i := r.Same(); i < len(msgs); i++ {
			out += msgs[i].Parts[0].Text + ";"
			r.Mark(len(out), i+1)
		}
		r.Finish([]byte(out))
		return r.Same(), string(b)
	}
	if same, run := encode(msg("a"), msg("b")); same != 0 || run != "" {
		t.Fatalf("first request: %d %q", same, run)
	}
	if same, run := encode(msg("a"), msg("b"), msg("c")); same != 2 || run != "a;b;" {
		t.Fatalf("grown: %d %q, want 2 \"a;b;\"", same, run)
	}
	if same, run := encode(msg("a"), msg("x"), msg("c")); same != 1 || run != "a;" {
		t.Fatalf("changed in the middle: %d %q, want 1 \"a;\"", same, run)
	}
	r := m.Start("f", []record.Message{msg("a"), msg("x"), msg("c"), msg("d")})
	r.Finish(nil) // nothing marked: nothing kept
	if same, _ := encode(msg("a")); same != 0 {
		t.Errorf("after an unfinished request: %d reused", same)
	}
	var none *Memo
	if r := none.Start("f", []record.Message{msg("a")}); r.Same() != 0 {
		t.Error("a nil memo reused something")
	}
}

// TestMemoRecycle: Buffer hands out the body Recycle gave when it has the room, and never one the
// memo's own run lives in (an encoder reads the run while it writes the buffer); nil drops it.
func TestMemoRecycle(t *testing.T) {
	m := &Memo{}
	msgs := []record.Message{{Role: record.User, Parts: []record.Part{{Text: "a"}}}}
	body := append(make([]byte, 0, 64), `{"head":1,"messages":[a]}`...)
	r := m.Start("f", msgs)
	r.Mark(1, 1)
	r.Finish(body[len(`{"head":1,"messages":[`) : len(body)-2])
	m.Recycle(body)
	if b := m.Buffer(8); overlaps(b, body) {
		t.Fatal("Buffer handed out the body the memo's run lives in")
	}
	other := make([]byte, 10, 100)
	m.Recycle(other)
	if b := m.Buffer(200); overlaps(b, other) {
		t.Error("Buffer handed out a body without the room asked for")
	}
	if b := m.Buffer(100); !overlaps(b, other) || len(b) != 0 {
		t.Error("Buffer did not hand out the body recycled, emptied")
	}
	if b := m.Buffer(1); overlaps(b, other) {
		t.Error("Buffer handed out the same body twice")
	}
	m.Recycle(other)
	m.Recycle(nil)
	if b := m.Buffer(1); overlaps(b, other) {
		t.Error("Recycle(nil) kept the body")
	}
	var none *Memo
	none.Recycle(other)
	if b := none.Buffer(5); cap(b) < 5 {
		t.Error("a nil memo's Buffer has no room")
	}
}
