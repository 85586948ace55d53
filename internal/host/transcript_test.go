package host_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/reinhq/rein/internal/api"
	"github.com/reinhq/rein/internal/host"
)

// TestTranscriptPages: a client that asks for the transcript's index a page at a time
// (transcript-pages.v1) gets the whole index once, in order, no page over the limit unless it is
// one row, each page starting where the last said; index=none leaves it out and changes nothing
// else; without either the whole index comes as before; a malformed ask is refused and says what
// to give.
func TestTranscriptPages(t *testing.T) {
	const pageBytes = 400
	defer host.SetIndexPageBytes(pageBytes)()
	var script []string
	for i := range 8 {
		script = append(script, fmt.Sprintf(`{"text":"answer %d, with a line long enough to make the row's label a few dozen bytes"}`, i))
	}
	r := newRig(t, rigOptions{script: steps(script...)})
	id := r.create("pages")
	for i := range 8 {
		r.send(id, fmt.Sprintf("question %d, also long enough to fill a label", i))
		r.settle(id)
	}

	caps, err := r.c.Capabilities(ctxT(t))
	if err != nil || !slices.Contains(caps.Capabilities, api.CapTranscriptPages) {
		t.Fatalf("capabilities %v (%v): want %s", caps.Capabilities, err, api.CapTranscriptPages)
	}
	whole, err := r.c.Transcript(ctxT(t), id)
	if err != nil {
		t.Fatal(err)
	}
	if len(whole.Index) < 16 || whole.IndexNext != 0 {
		t.Fatalf("the whole index: %d rows, next %d; want the 16 turns or more, no next", len(whole.Index), whole.IndexNext)
	}

	var paged []api.Row
	pages := 0
	for from, more := int64(0), true; more; pages++ {
		tr, err := r.c.TranscriptPage(ctxT(t), id, api.IndexPage{Paged: true, From: from})
		if err != nil {
			t.Fatalf("the page from %d: %v", from, err)
		}
		if len(tr.Index) == 0 {
			t.Fatalf("the page from %d is empty", from)
		}
		if tr.Index[0].From < from {
			t.Fatalf("the page from %d starts at turn %d", from, tr.Index[0].From)
		}
		if size := rowBytes(t, tr.Index); size > pageBytes && len(tr.Index) > 1 {
			t.Errorf("the page from %d holds %d bytes of rows, over %d", from, size, pageBytes)
		}
		if diff := cmp.Diff(whole.Survey, tr.Survey); diff != "" {
			t.Errorf("the page from %d has another survey (-whole +page):\n%s", from, diff)
		}
		paged = append(paged, tr.Index...)
		from, more = tr.IndexNext, tr.IndexNext != 0
		if more && tr.IndexNext <= tr.Index[len(tr.Index)-1].From {
			t.Fatalf("the page from %d ends at turn %d and says to go on from %d", from, tr.Index[len(tr.Index)-1].From, tr.IndexNext)
		}
	}
	if pages < 3 {
		t.Errorf("%d pages of %d bytes for %d rows, want several", pages, pageBytes, len(whole.Index))
	}
	if diff := cmp.Diff(whole.Index, paged); diff != "" {
		t.Errorf("the pages put together are not the whole index (-whole +pages):\n%s", diff)
	}
	// A page from past the last turn is empty, and says no more.
	last := whole.Index[len(whole.Index)-1].From
	if tr, err := r.c.TranscriptPage(ctxT(t), id, api.IndexPage{Paged: true, From: last + 1}); err != nil || len(tr.Index) != 0 || tr.IndexNext != 0 {
		t.Errorf("the page from past the last turn: %d rows, next %d (%v)", len(tr.Index), tr.IndexNext, err)
	}

	none, err := r.c.TranscriptPage(ctxT(t), id, api.IndexPage{None: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(none.Index) != 0 || none.IndexNext != 0 {
		t.Errorf("index=none answered %d rows, next %d", len(none.Index), none.IndexNext)
	}
	none.Index = whole.Index
	if diff := cmp.Diff(whole, none); diff != "" {
		t.Errorf("index=none changed more than the index (-whole +none):\n%s", diff)
	}
	_, raw := r.call("GET", "/api/conversations/"+id+"/transcript?index=none", "")
	if !json.Valid(raw) || string(jsonField(t, raw, "index")) != "[]" {
		t.Errorf("index=none: the index is %s, want []", jsonField(t, raw, "index"))
	}

	for _, q := range []string{"index_from=-1", "index_from=three", "index=some", "index=none&index_from=3"} {
		ref, _ := r.call("GET", "/api/conversations/"+id+"/transcript?"+q, "")
		if ref.status != http.StatusBadRequest || ref.code != string(api.BadRequest) || ref.msg == "" {
			t.Errorf("?%s: %d %s %q, want 400 %s saying what to give", q, ref.status, ref.code, ref.msg, api.BadRequest)
		}
	}
}

// rowBytes is what rows take as a page counts them: each row's JSON and a separator.
func rowBytes(t *testing.T, rows []api.Row) int {
	n := 0
	for _, r := range rows {
		b, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		n += len(b) + 1
	}
	return n
}

// jsonField is the raw value of one field of a JSON object.
func jsonField(t *testing.T, b []byte, name string) json.RawMessage {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("%s: %v", b, err)
	}
	return m[name]
}
