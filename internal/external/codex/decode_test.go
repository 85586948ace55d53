package codex

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reinhq/rein/internal/external"
)

// The files in testdata are what Codex 0.169.0's app-server wrote, line for line, in turns against
// rein's simulator (paths and the host's name replaced): rein sent initialize as request 1,
// thread/start as 2, turn/start as 3, and turn/interrupt as 4 and 5 where a file says so.

// replay decodes every line of a captured file and follows its turn as Turn does.
func replay(t *testing.T, name string) (tracker, []external.Item, []message) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	var tr tracker
	var items []external.Item
	var other []message // responses and requests, in order
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, 1<<20)
	for n := 1; sc.Scan(); n++ {
		m, err := decode(sc.Bytes())
		if err != nil {
			t.Fatalf("%s:%d: %v", name, n, err)
		}
		switch m.shape() {
		case shapeNotification:
			got, err := tr.note(m)
			if err != nil {
				t.Fatalf("%s:%d: %v", name, n, err)
			}
			items = append(items, got...)
		default:
			other = append(other, m)
			key, _ := requestID(m.ID)
			if m.shape() == shapeResponse && m.Result != nil {
				var res struct {
					Thread struct{ ID string } `json:"thread"`
					Turn   struct{ ID string } `json:"turn"`
				}
				json.Unmarshal(m.Result, &res)
				switch key {
				case "2":
					tr.thread = res.Thread.ID
				case "3":
					tr.turn = res.Turn.ID
				}
			}
		}
	}
	if !tr.done {
		t.Fatalf("%s: no turn/completed for the turn", name)
	}
	return tr, items, other
}

// said lists items as kind[/status]: text, for comparison.
func said(items []external.Item) []string {
	var out []string
	for _, it := range items {
		k := it.Kind
		if it.Status != "" {
			k += "/" + it.Status
		}
		text := it.Text
		if i := strings.IndexByte(text, '\n'); i >= 0 {
			text = text[:i] + "…"
		}
		out = append(out, k+": "+text)
	}
	return out
}

func TestReplay(t *testing.T) {
	cases := []struct {
		file   string
		status string
		reply  string
		items  []string // each must appear, in this order (others may come between)
	}{
		{"command.jsonl", turnCompleted, "One file, a.txt.", []string{
			"thinking: The listing is short.",
			"text: Let me look.",
			"command/started: /bin/bash -lc 'ls; exit 3'",
			"command/failed: /bin/bash -lc 'ls; exit 3'",
			"tool_result/failed: a.txt…",
			"text: One file, a.txt.",
		}},
		{"retry.jsonl", turnCompleted, "Finally.", []string{
			"retry: Reconnecting... 1/5: exceeded retry limit, last status: 429 Too Many Requests, request id: sim_req_1",
			"text: Finally.",
		}},
		{"approval.jsonl", turnCompleted, "Declined, then.", []string{
			"command/started: /bin/bash -lc 'touch b.txt'",
			"command/declined: /bin/bash -lc 'touch b.txt'",
			"text: Declined, then.",
		}},
		{"streaming.jsonl", turnInterrupted, "", []string{
			"text/incomplete: A long",
		}},
		{"refused.jsonl", turnInterrupted, "", nil},
		{"failed.jsonl", turnFailed, "", []string{
			`error: {"error":{"message":"the model refused","type":"invalid_request_error","param":null,"code":null}}`,
		}},
	}
	for _, c := range cases {
		t.Run(c.file, func(t *testing.T) {
			tr, items, _ := replay(t, c.file)
			if tr.status != c.status || tr.reply != c.reply {
				t.Errorf("status %q reply %q; want %q and %q", tr.status, tr.reply, c.status, c.reply)
			}
			got := said(items)
			i := 0
			for _, g := range got {
				if i < len(c.items) && strings.HasPrefix(g, c.items[i]) {
					i++
				}
			}
			if i < len(c.items) {
				t.Errorf("items:\n  %s\nlack, in order from:\n  %s", strings.Join(got, "\n  "), c.items[i])
			}
		})
	}
}

// TestReplayRequests reads the server's approval request and the refused interrupt as Turn does.
func TestReplayRequests(t *testing.T) {
	_, _, other := replay(t, "approval.jsonl")
	var req *message
	for i := range other {
		if other[i].Method == reqCommandApproval {
			req = &other[i]
		}
	}
	if req == nil {
		t.Fatal("no command approval request in approval.jsonl")
	}
	var p approvalParams
	if err := json.Unmarshal(req.Params, &p); err != nil {
		t.Fatal(err)
	}
	var line string
	if json.Unmarshal(p.Command, &line); p.ItemID == "" || !strings.Contains(line, "touch b.txt") {
		t.Errorf("approval params %+v; want the item and the command", p)
	}

	tr, _, other := replay(t, "refused.jsonl")
	var refusal, accepted bool
	for _, m := range other {
		key, _ := requestID(m.ID)
		switch {
		case key == "4" && m.Error != nil && strings.Contains(m.Error.Message, "no active turn"):
			refusal = true
		case key == "5" && m.Result != nil:
			accepted = true
		}
	}
	if !refusal || !accepted || tr.status != turnInterrupted {
		t.Errorf("refused %v, accepted after turn/started %v, status %q; want the early interrupt refused, the second taken, the turn interrupted", refusal, accepted, tr.status)
	}
}

func TestDecodeRefuses(t *testing.T) {
	for _, line := range []string{
		``, `null`, `[]`, `"x"`, `{`, `{}`,
		`{"id":null,"result":{}}`,
		`{"id":1.5,"result":{}}`,
		`{"id":{},"result":{}}`,
		`{"id":1}`,
		`{"id":1,"result":{},"error":{"code":1,"message":"x"}}`,
		`{"id":1,"params":{}}`,
		`{"method":"x","result":{}}`,
	} {
		if m, err := decode([]byte(line)); err == nil {
			t.Errorf("decode(%q) = %+v; want an error", line, m)
		}
	}
}

func TestRequestID(t *testing.T) {
	for raw, want := range map[string]string{`7`: "7", `"7"`: `"7"`, `0`: "0", `-3`: "-3", `"a\"b"`: `"a\"b"`} {
		if got, err := requestID(json.RawMessage(raw)); err != nil || got != want {
			t.Errorf("requestID(%s) = %q, %v; want %q", raw, got, err, want)
		}
	}
}

// FuzzDecode feeds the decoder and the turn's tracker anything: neither panics, what decodes
// keeps its shape through encode, and a tracker never reports a turn done without a status.
func FuzzDecode(f *testing.F) {
	for _, name := range []string{"command.jsonl", "retry.jsonl", "approval.jsonl", "streaming.jsonl", "refused.jsonl", "failed.jsonl"} {
		data, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			f.Fatal(err)
		}
		for _, line := range bytes.Split(data, []byte("\n")) {
			if len(line) > 0 {
				f.Add(line)
			}
		}
	}
	f.Add([]byte(`{"id":"x","method":"item/fileChange/requestApproval","params":{"itemId":"i"}}`))
	f.Fuzz(func(t *testing.T, line []byte) {
		m, err := decode(line)
		if err != nil {
			return
		}
		again, err := decode(encode(m))
		if err != nil {
			t.Fatalf("re-decoding %s: %v", encode(m), err)
		}
		if again.shape() != m.shape() || again.Method != m.Method {
			t.Fatalf("shape %s %q became %s %q", m.shape(), m.Method, again.shape(), again.Method)
		}
		tr := tracker{thread: threadOf(m)}
		items, _ := tr.note(m)
		if tr.done && tr.status == "" && len(items) > 0 {
			t.Logf("done without a status: %s", line)
		}
		for _, it := range items {
			if it.Kind == "" {
				t.Fatalf("an item with no kind from %s", line)
			}
		}
	})
}

// threadOf reads a message's threadId, so the fuzzer's notifications are the tracker's own.
func threadOf(m message) string {
	var p struct {
		ThreadID string `json:"threadId"`
	}
	json.Unmarshal(m.Params, &p)
	return p.ThreadID
}
