package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"testing"

	"github.com/reinhq/rein/internal/tool"
)

// The transcript's index of a long session comes a page at a time: no answer is much over
// indexMax, and following "more" lists every turn once, in order, as the whole index has them — a
// session of a hundred thousand turns does not answer the model with megabytes it cannot take.
func TestIndexPages(t *testing.T) {
	a := transcriptSession(t, 1500*4500)
	st := a.sess.Snapshot()
	whole := st.Index()
	index := func(args string) (rows [][]any, more string) {
		t.Helper()
		res, _ := transcriptDoor{}.Run(context.Background(), a, 0, tool.Call{Name: "transcript", Args: json.RawMessage(args)})
		if res.IsError {
			t.Fatalf("index %s: %s", args, res.Content)
		}
		if len(res.Content) > indexMax+200 {
			t.Fatalf("index %s answered %d bytes, over %d", args, len(res.Content), indexMax)
		}
		var out struct {
			Turns [][]any `json:"turns"`
			More  string  `json:"more"`
		}
		if err := json.Unmarshal([]byte(res.Content), &out); err != nil {
			t.Fatal(err)
		}
		return out.Turns, out.More
	}
	next := regexp.MustCompile(`"from":(\d+)`)
	var listed []string
	pages := 0
	for args := `{"op":"index"}`; args != ""; pages++ {
		rows, more := index(args)
		for _, r := range rows {
			listed = append(listed, fmt.Sprint(r...))
		}
		args = ""
		if more != "" {
			m := next.FindStringSubmatch(more)
			if m == nil {
				t.Fatalf("more says no turn to go on from: %s", more)
			}
			from, _ := strconv.ParseInt(m[1], 10, 64)
			args = fmt.Sprintf(`{"op":"index","from":%d}`, from)
		}
	}
	if pages < 3 {
		t.Fatalf("%d turns answered in %d pages: the test does not page", len(whole), pages)
	}
	if len(listed) != len(whole) {
		t.Fatalf("the pages list %d turns, the index %d", len(listed), len(whole))
	}
	for i, r := range whole {
		if want := fmt.Sprint(r.From, r.Role, r.Kind, r.Label, r.Bytes, r.Held); listed[i] != want {
			t.Fatalf("row %d: %s, want %s", i, listed[i], want)
		}
	}
	if rows, more := index(fmt.Sprintf(`{"op":"index","from":%d}`, st.Next())); len(rows) != 0 || more != "" {
		t.Errorf("an index from past the newest turn: %d rows, more %q", len(rows), more)
	}
}
