package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/reinhq/rein/internal/record"
)

// damageSeed chooses the bytes TestDoctorDamage flips.
const damageSeed = 7

var (
	goodOnce   sync.Once
	goodRecord []byte
	goodErr    string
)

// realRecord is the record of one complete session rein ran with tool calls (a batch of two, a
// write, retries), made once per test run.
func realRecord(t *testing.T) []byte {
	t.Helper()
	goodOnce.Do(func() {
		sb := newSandbox(t)
		script := crashScript(t, t.TempDir())
		res := sb.rein(t, append(append([]string{"run"}, simArgs(script)...), crashPrompt)...)
		paths := sb.records(t)
		if res.code != 0 || len(paths) != 1 {
			goodErr = fmt.Sprintf("the session failed (records %v):\n%s", paths, res)
			return
		}
		goodRecord, _ = os.ReadFile(paths[0])
	})
	if goodErr != "" {
		t.Fatal(goodErr)
	}
	return goodRecord
}

// splitLines returns copies of the complete lines of b, each with its newline.
func splitLines(b []byte) [][]byte {
	var out [][]byte
	for _, l := range lines(b) {
		out = append(out, append(bytes.Clone(l), '\n'))
	}
	return out
}

func join(ls [][]byte) []byte { return bytes.Join(ls, nil) }

// reseal recomputes a line's checksum after an edit by hand (line with or without its newline).
func reseal(line []byte) []byte {
	line = bytes.TrimSuffix(line, []byte("\n"))
	i := bytes.LastIndex(line, []byte(`,"crc":"`))
	body := line[:i:i]
	sum := crc32.Checksum(body, crc32.MakeTable(crc32.Castagnoli))
	return fmt.Appendf(body, `,"crc":"%08x"}`+"\n", sum)
}

// encode renders a record as the line with sequence number seq.
func encode(t *testing.T, seq int64, body record.Payload) []byte {
	t.Helper()
	b, err := record.Encode(record.Record{Seq: seq, Time: 1764400000000 + seq, Body: body})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// renumber re-encodes every line from index from on with its new sequence number, as a careful
// hand-editor would after removing or inserting a line.
func renumber(t *testing.T, ls [][]byte, from int) [][]byte {
	t.Helper()
	out := append([][]byte(nil), ls...)
	for i := from; i < len(out); i++ {
		seq := int64(i + 1)
		re := regexp.MustCompile(`^\{"v":1,"seq":\d+,`)
		out[i] = reseal(re.ReplaceAll(out[i], fmt.Appendf(nil, `{"v":1,"seq":%d,`, seq)))
	}
	return out
}

// decodeAt decodes line i (0-based) of ls.
func decodeAt(t *testing.T, ls [][]byte, i int) record.Record {
	t.Helper()
	r, err := record.Decode(ls[i], int64(i+1))
	if err != nil {
		t.Fatal(err)
	}
	return r
}

var refusedAt = regexp.MustCompile(`(?m)^refused: record (\d+)[: ]`)

// damage is one damaged copy of a record and the verdict it must get: refused naming record
// want, or admissible (want 0) with the torn tail after its last newline quarantined.
type damage struct {
	name string
	data []byte
	want int64
}

// judge runs doctor --dry-run and doctor on a copy of d.data and checks the verdict, that a
// refused file is left byte-identical with no .torn beside it, and that an admissible one loses
// exactly its torn tail, to record.jsonl.torn.
func judge(t *testing.T, sb *sandbox, d damage) {
	t.Helper()
	dir := t.TempDir()
	path := filepath.Join(dir, "record.jsonl")
	if err := os.WriteFile(path, d.data, 0o644); err != nil {
		t.Fatal(err)
	}
	complete, torn := splitComplete(d.data)
	for _, dry := range []bool{true, false} {
		args := []string{"doctor", path}
		if dry {
			args = []string{"doctor", "--dry-run", path}
		}
		res := sb.rein(t, args...)
		what := fmt.Sprintf("%s: rein %s", d.name, strings.Join(args[:len(args)-1], " "))
		after, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		tornFile, tornErr := os.ReadFile(path + ".torn")
		if d.want > 0 {
			m := refusedAt.FindStringSubmatch(res.stdout)
			if res.code != exitFailed || m == nil {
				t.Errorf("%s: want refused naming record %d, got\n%s", what, d.want, res)
				continue
			}
			if os.Getenv("REIN_DOCTOR_VERBOSE") != "" && !dry {
				t.Logf("%s: %s", d.name, strings.SplitN(res.stdout, "\n", 2)[0])
			}
			if got, _ := strconv.ParseInt(m[1], 10, 64); got != d.want {
				t.Errorf("%s: refused naming record %d, want record %d\n%s", what, got, d.want, res.stdout)
			}
			// The record is named once, whether the fold judged it or the line is damaged.
			if twice := fmt.Sprintf("refused: record %d: record %d", d.want, d.want); strings.Contains(res.stdout, twice) {
				t.Errorf("%s: the refusal names its record twice\n%s", what, res.stdout)
			}
			if !bytes.Equal(after, d.data) {
				t.Errorf("%s: the refused file was changed", what)
			}
			if !errors.Is(tornErr, fs.ErrNotExist) {
				t.Errorf("%s: a refused file got a .torn beside it", what)
			}
			continue
		}
		if res.code != 0 || !strings.HasPrefix(res.stdout, "admissible") {
			t.Errorf("%s: want admissible, got\n%s", what, res)
			continue
		}
		if len(torn) > 0 && !strings.Contains(res.stdout, fmt.Sprintf("torn tail: %d bytes", len(torn))) {
			t.Errorf("%s: the report does not name the %d-byte torn tail:\n%s", what, len(torn), res.stdout)
		}
		switch {
		case dry || len(torn) == 0:
			if !bytes.Equal(after, d.data) {
				t.Errorf("%s: the file was changed", what)
			}
			if !errors.Is(tornErr, fs.ErrNotExist) {
				t.Errorf("%s: a .torn file was written", what)
			}
		default:
			if !bytes.Equal(after, complete) {
				t.Errorf("%s: the record is not its %d complete bytes after quarantine (%d bytes)", what, len(complete), len(after))
			}
			if !bytes.Equal(tornFile, torn) {
				t.Errorf("%s: record.jsonl.torn holds %d bytes (%v), want the %d-byte tail", what, len(tornFile), tornErr, len(torn))
			}
		}
	}
}

// TestDoctorDamage derives damaged copies of a real record and checks each verdict of doctor.
func TestDoctorDamage(t *testing.T) {
	good := realRecord(t)
	ls := splitLines(good)
	n := len(ls)
	rng := rand.New(rand.NewPCG(damageSeed, 0))
	t.Logf("a real record of %d lines; bit flips seeded with %d", n, damageSeed)
	var ds []damage
	add := func(name string, data []byte, want int64) { ds = append(ds, damage{name, data, want}) }

	add("the record as written", good, 0)
	add("an empty file", nil, 0)
	add("a file of only zeros", make([]byte, 4096), 0)

	// Torn tails: every prefix, cut at a line boundary or inside a line, is admissible.
	for i := range n {
		off := len(join(ls[:i]))
		add(fmt.Sprintf("cut after line %d", i), good[:off], 0)
		add(fmt.Sprintf("cut inside line %d", i+1), good[:off+1+rng.IntN(len(ls[i])-1)], 0)
	}
	add("the last line without its newline", good[:len(good)-1], 0)
	add("zero-padded tail", append(bytes.Clone(good), make([]byte, 4096)...), 0)
	add("the last line zeroed, no newline", append(join(ls[:n-1]), make([]byte, len(ls[n-1])-1)...), 0)
	add("the last line half zeroed", append(append(join(ls[:n-1]), ls[n-1][:len(ls[n-1])/2]...), make([]byte, 100)...), 0)

	// Damage in a complete line, or followed by valid lines, is refused naming the line.
	for i := range n {
		c := bytes.Clone(good)
		pos := len(join(ls[:i])) + rng.IntN(len(ls[i])-1)
		c[pos] ^= 1 << rng.IntN(8)
		add(fmt.Sprintf("a bit flipped in line %d", i+1), c, int64(i+1))
	}
	for _, i := range []int{0, n / 2, n - 2} {
		c := bytes.Clone(good)
		c[len(join(ls[:i+1]))-1] ^= 0x20 // line i+1's newline becomes '*', joining it to the next
		add(fmt.Sprintf("line %d's newline flipped", i+1), c, int64(i+1))
	}
	{
		c := bytes.Clone(good)
		c[len(c)-1] ^= 0x20 // the last newline: the last line becomes a torn tail
		add("the last newline flipped", c, 0)
	}
	for _, i := range []int{0, 2, n / 2, n - 2} {
		c := append([][]byte(nil), ls...)
		c[i], c[i+1] = c[i+1], c[i]
		add(fmt.Sprintf("lines %d and %d swapped", i+1, i+2), join(c), int64(i+1))
	}
	for _, i := range []int{0, 3, n / 2, n - 2} {
		c := append(append([][]byte(nil), ls[:i]...), ls[i+1:]...)
		add(fmt.Sprintf("line %d removed", i+1), join(c), int64(i+1))
	}
	add("the last line removed", join(ls[:n-1]), 0)
	for _, i := range []int{0, 4, n / 2, n} {
		for _, g := range []string{"this is not a record\n", "{}\n", "\n", `{"v":1,"seq":1,"t":0,"class":"event","kind":"hold","payload":{}}` + "\n"} {
			c := append(append(append([][]byte(nil), ls[:i]...), []byte(g)), ls[i:]...)
			add(fmt.Sprintf("garbage %q inserted before line %d", strings.TrimSpace(g), i+1), join(c), int64(i+1))
		}
	}
	for _, i := range []int{0, 5, n / 2, n - 1} {
		c := append(append(append([][]byte(nil), ls[:i+1]...), ls[i]), ls[i+1:]...)
		add(fmt.Sprintf("line %d duplicated", i+1), join(c), int64(i+2))
	}
	for _, i := range []int{1, n / 2} {
		c := append([][]byte(nil), ls...)
		c[i] = append(make([]byte, len(ls[i])-1), '\n')
		add(fmt.Sprintf("line %d zeroed, newline kept", i+1), join(c), int64(i+1))
		c[i] = make([]byte, len(ls[i]))
		add(fmt.Sprintf("line %d zeroed with its newline", i+1), join(c), int64(i+1))
	}
	{
		c := bytes.Clone(good)
		c[len(join(ls[:2]))+10] ^= 4
		add("a bit flipped in line 3 and a torn tail", append(c, `{"v":1,"seq":`...), 3)
	}
	add("a line of zeros after the record", append(bytes.Clone(good), append(make([]byte, 64), '\n')...), int64(n+1))

	// Hand edits with a recomputed checksum: the line is intact, its meaning is not.
	ds = append(ds, handEdits(t, ls)...)

	sb := newSandbox(t)
	for _, d := range ds {
		judge(t, sb, d)
	}
	t.Logf("%d damaged copies judged, each with doctor and doctor --dry-run", len(ds))
}

// handEdits are edits that keep every line's checksum right but break the format or the protocol.
func handEdits(t *testing.T, ls [][]byte) []damage {
	n := len(ls)
	var out []damage
	add := func(name string, c [][]byte, want int64) { out = append(out, damage{name, join(c), want}) }
	with := func(i int, line []byte) [][]byte {
		c := append([][]byte(nil), ls...)
		c[i] = line
		return c
	}
	// Find the landmarks: the first batch of two calls, its first tool_started, its results.
	batch, started, results := -1, -1, -1
	var nextTurn int64
	for i := range ls {
		r := decodeAt(t, ls, i)
		switch b := r.Body.(type) {
		case *record.AssistantMessage:
			nextTurn = b.Turn + 1
			calls := 0
			for _, p := range b.Parts {
				if p.Type == record.PartToolCall {
					calls++
				}
			}
			if calls == 2 && batch < 0 {
				batch = i
			}
		case *record.UserPrompt:
			nextTurn = b.Turn + 1
		case *record.ToolStarted:
			if batch >= 0 && started < 0 {
				started = i
			}
		case *record.ToolResults:
			if batch >= 0 && results < 0 {
				results = i
			}
		}
	}
	var batchTurn int64
	if batch >= 0 {
		batchTurn = decodeAt(t, ls, batch).Body.(*record.AssistantMessage).Turn
	}
	if batch < 0 || started < 0 || results < 0 {
		t.Fatalf("the real record has no batch of two calls with results (%d %d %d)", batch, started, results)
	}
	tr := decodeAt(t, ls, results).Body.(*record.ToolResults)
	seqR := int64(results + 1)
	edited := func(f func(*record.ToolResults)) []byte {
		c := &record.ToolResults{Results: append([]record.ToolResult(nil), tr.Results...)}
		f(c)
		return encode(t, seqR, c)
	}

	add("tool_results answering an unknown call", with(results, edited(func(c *record.ToolResults) { c.Results[0].CallID = "toolu_unknown" })), seqR)
	add("tool_results leaving a call unanswered", with(results, edited(func(c *record.ToolResults) { c.Results = c.Results[:1] })), seqR)
	add("tool_results answering a call twice", with(results, edited(func(c *record.ToolResults) { c.Results[1] = c.Results[0] })), seqR)
	add("tool_results with an unknown outcome", with(results, edited(func(c *record.ToolResults) { c.Results[0].Outcome = "rejected" })), seqR)
	add("tool_results with empty content", with(results, edited(func(c *record.ToolResults) { c.Results[0].Content = "" })), seqR)
	seqS := int64(started + 1)
	add("a user_prompt while results are owed", with(started, encode(t, seqS, &record.UserPrompt{Turn: batchTurn + 1, Text: "hello"})), seqS)
	add("an assistant_message while results are owed", with(started, encode(t, seqS, &record.AssistantMessage{Turn: batchTurn + 1,
		Parts: []record.Part{{Type: record.PartText, Text: "hi"}}, StopReason: "end_turn"})), seqS)
	add("a cleared while results are owed", with(started, encode(t, seqS, &record.Cleared{})), seqS)

	// The results removed and the rest renumbered: the next protocol record is refused.
	{
		c := renumber(t, append(append([][]byte(nil), ls[:results]...), ls[results+1:]...), results)
		want := int64(0)
		for i := results; i < len(c) && want == 0; i++ {
			if r := decodeAt(t, c, i); r.Class() == record.Protocol {
				want = int64(i + 1)
			}
		}
		add("tool_results removed and the rest renumbered", c, want)
	}
	// A link to a parent's transcript anywhere but first.
	{
		c := append(append(append([][]byte(nil), ls[:3]...), encode(t, 4, &record.Inherited{Parent: "p", At: 1, High: 1})), ls[3:]...)
		add("inherited after the first protocol record", renumber(t, c, 4), 4)
	}

	// Raw edits of the envelope or payload.
	b := ls[batch]
	seqB := int64(batch + 1)
	add("an unknown payload field", with(batch, reseal(bytes.Replace(b, []byte(`"payload":{`), []byte(`"payload":{"mood":"bold",`), 1))), seqB)
	add("an unknown envelope field", with(batch, reseal(bytes.Replace(b, []byte(`"payload":`), []byte(`"x":1,"payload":`), 1))), seqB)
	add("a class that disagrees with the kind", with(batch, reseal(bytes.Replace(b, []byte(`"class":"protocol"`), []byte(`"class":"event"`), 1))), seqB)
	add("an unknown kind", with(batch, reseal(bytes.Replace(b, []byte(`"kind":"assistant_message"`), []byte(`"kind":"assistant_monologue"`), 1))), seqB)
	add("format version 2", with(batch, reseal(bytes.Replace(b, []byte(`{"v":1,`), []byte(`{"v":2,`), 1))), seqB)
	add("a sequence number off by one", with(batch, reseal(bytes.Replace(b, fmt.Appendf(nil, `"seq":%d,`, seqB), fmt.Appendf(nil, `"seq":%d,`, seqB+1), 1))), seqB)
	add("a turn id reused", with(batch, reseal(regexp.MustCompile(`"payload":\{"turn":\d+`).ReplaceAll(b, []byte(`"payload":{"turn":1`)))), seqB)
	add("a turn id skipped ahead", with(batch, reseal(regexp.MustCompile(`"payload":\{"turn":\d+`).ReplaceAll(b, []byte(`"payload":{"turn":4000`)))), seqB)
	{
		am := decodeAt(t, ls, batch)
		body := *am.Body.(*record.AssistantMessage)
		body.Parts = append([]record.Part(nil), body.Parts...)
		for i, p := range body.Parts {
			if p.Type == record.PartToolCall {
				body.Parts[i].Args = json.RawMessage(`"ls -la"`)
				break
			}
		}
		add("tool call arguments that are not an object", with(batch, encode(t, seqB, &body)), seqB)
	}

	// Records appended at the end of a settled session: the controls are admissible.
	end := int64(n + 1)
	appended := func(p record.Payload) [][]byte { return append(append([][]byte(nil), ls...), encode(t, end, p)) }
	add("a next prompt appended (control)", appended(&record.UserPrompt{Turn: nextTurn, Text: "next"}), 0)
	add("an eviction of turns 1-2 appended (control)", appended(&record.Evicted{From: 1, To: 2, Note: "the first steps", By: record.ByUser}), 0)
	add("a clear appended (control)", appended(&record.Cleared{}), 0)
	add("tool_results appended while ready", appended(&record.ToolResults{Results: []record.ToolResult{{CallID: "x", Content: "y", Outcome: record.OK}}}), end)
	add("an eviction of an unrecorded turn", appended(&record.Evicted{From: 1, To: 999, Note: "too far", By: record.ByUser}), end)
	add("an eviction with a two-line note", appended(&record.Evicted{From: 1, To: 2, Note: "one\ntwo", By: record.ByUser}), end)
	add("a rewind to an unrecorded turn", appended(&record.Rewound{Anchor: 999}), end)
	add("a prompt reusing turn 1", appended(&record.UserPrompt{Turn: 1, Text: "again"}), end)
	return out
}
