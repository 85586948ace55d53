package anthropic

import (
	"bytes"
	"fmt"
	"testing"

	"pgregory.net/rapid"

	"github.com/reinhq/rein/internal/provider"
	"github.com/reinhq/rein/internal/provider/providertest"
	"github.com/reinhq/rein/internal/record"
)

// TestMemoIsWhole: a conversation's requests encoded through one Memo are, byte for byte, what
// they are without it — as the conversation grows, as its messages are changed in place (the same
// backing arrays, other contents), dropped, repeated and reordered, and as requests that fail to
// encode come between. Each body is given back to the memo as the agent gives it (Recycle, once
// the next one is built), and no encoding writes over the last body, which its validator holds.
func TestMemoIsWhole(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		memo := &provider.Memo{}
		var held providertest.HeldBody
		var msgs []record.Message
		for step := range rapid.IntRange(1, 8).Draw(t, "requests") {
			msgs = providertest.Evolve(t, msgs, genParts)
			// The system prompt changes now and then: the body's head with it.
			system := rapid.SampledFrom([]string{"", "be brief", "a longer system prompt"}).Draw(t, fmt.Sprintf("system%d", step))
			req := provider.Request{Model: "m", MaxTokens: 1024, System: system, Messages: msgs}
			want, wantErr := Encode(req)
			req.Memo = memo
			got, gotErr := Encode(req)
			if fmt.Sprint(gotErr) != fmt.Sprint(wantErr) || !bytes.Equal(got, want) {
				t.Fatalf("request %d with the memo:\n%s (%v)\nwithout:\n%s (%v)", step, got, gotErr, want, wantErr)
			}
			if err := held.Next(memo, got, gotErr); err != nil {
				t.Fatalf("request %d: %v", step, err)
			}
		}
	})
}

// BenchmarkEncodeMemo is BenchmarkEncode1000's request encoded again through a Memo, as the agent
// encodes each request of a conversation: all but the new turn's messages come from the memo.
func BenchmarkEncodeMemo(b *testing.B) {
	req := bigRequest(1000)
	req.Memo = &provider.Memo{}
	if _, err := Encode(req); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Encode(req); err != nil {
			b.Fatal(err)
		}
	}
}

// TestMemoRecycleAfterShortRequest: a request too short to use the memo leaves the memo's run in
// the body before it; that body, given back, is not written over while the run is read from it —
// here by a request whose longer system prompt moves where its messages begin.
func TestMemoRecycleAfterShortRequest(t *testing.T) {
	memo := &provider.Memo{}
	var held providertest.HeldBody
	var msgs []record.Message
	for i := range 6 {
		role := record.User
		if i%2 == 1 {
			role = record.Assistant
		}
		msgs = append(msgs, record.Message{Role: role, Parts: []record.Part{text(fmt.Sprintf("message %d", i))}})
	}
	for i, req := range []provider.Request{
		{Model: "m", MaxTokens: 1024, Messages: msgs},
		{Model: "m", MaxTokens: 1024, Messages: msgs[:1]},
		{Model: "m", MaxTokens: 1024, System: "a system prompt long enough to move the messages", Messages: msgs},
	} {
		want, err := Encode(req)
		if err != nil {
			t.Fatal(err)
		}
		req.Memo = memo
		got, err := Encode(req)
		if !bytes.Equal(got, want) || err != nil {
			t.Fatalf("request %d with the memo:\n%s (%v)\nwithout:\n%s", i, got, err, want)
		}
		if err := held.Next(memo, got, nil); err != nil {
			t.Fatalf("request %d: %v", i, err)
		}
	}
}
