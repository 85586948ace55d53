package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"

	"github.com/reinhq/rein/internal/fold"
	"github.com/reinhq/rein/internal/provider"
	"github.com/reinhq/rein/internal/record"
	"github.com/reinhq/rein/internal/tool"
)

// Doors returns the model's own doors onto its session: the context tool and the transcript tool
// (DESIGN §9).
func Doors() []Door { return []Door{contextDoor{}, transcriptDoor{}} }

// judgeDoor puts a door's call through the runner's policy, as the runner puts its own tools':
// a deny rule on context, transcript or agents refuses it, an ask rule asks. ok says it may run.
// A door changes nothing outside rein (it reads or edits the session), so it is judged as
// reading, with its op as the subject rules match: context(evict), transcript(grep),
// agents(start). A door implementing tool.Accessor says otherwise for itself.
func (a *Agent) judgeDoor(ctx context.Context, d Door, c tool.Call) (tool.Result, bool) {
	if a.cfg.Runner == nil {
		return tool.Result{}, true
	}
	return a.cfg.Runner.Judge(ctx, c, doorAccess(d, c))
}

// doorAccess is what a door's call does, as rules and hooks match it.
func doorAccess(d Door, c tool.Call) tool.Access {
	if x, ok := d.(tool.Accessor); ok {
		return x.Access(c.Args)
	}
	var args struct {
		Op string `json:"op"`
	}
	_ = json.Unmarshal(c.Args, &args)
	return tool.Access{Effect: tool.EffectRead, Subjects: []string{args.Op}}
}

func answer(v any) tool.Result {
	b, _ := json.Marshal(v)
	return tool.Result{Content: string(b), Outcome: record.OK}
}

// ---- context ------------------------------------------------------------------------------------

type contextDoor struct{}

func (contextDoor) Spec() provider.Tool {
	return provider.Tool{
		Name: "context",
		Description: `Your context, as turns. {"op":"survey"} lists what it holds: rows [from, to, role, kind, label, bytes, held] and the bytes sent. ` +
			`{"op":"evict","from":F,"to":T,"note":"..."} takes the run of turns F..T out of your context and leaves one line with your note in its place ` +
			`(the note is required, one line, at most 240 bytes: say what the turns held and what still matters). A run must cover a residue whole. ` +
			`Evicted turns stay readable with the transcript tool. The answer is the survey after the edit.`,
		Schema: json.RawMessage(`{"type":"object","properties":{"op":{"type":"string","enum":["survey","evict"]},"from":{"type":"integer"},"to":{"type":"integer"},"note":{"type":"string"}},"required":["op"],"additionalProperties":false}`),
	}
}

type surveyAnswer struct {
	Rows  [][]any `json:"rows"`
	Bytes int64   `json:"bytes"`
}

func surveyOf(sv fold.Survey) surveyAnswer {
	a := surveyAnswer{Rows: make([][]any, 0, len(sv.Rows)), Bytes: sv.Bytes + sv.SystemBytes}
	for _, r := range sv.Rows {
		a.Rows = append(a.Rows, []any{r.From, r.To, r.Role, r.Kind, r.Label, r.Bytes, r.Held})
	}
	return a
}

func (contextDoor) Run(ctx context.Context, a *Agent, turn int64, call tool.Call) (tool.Result, []record.Payload) {
	var args struct {
		Op   string `json:"op"`
		From int64  `json:"from"`
		To   int64  `json:"to"`
		Note string `json:"note"`
	}
	if err := json.Unmarshal(call.Args, &args); err != nil {
		return tool.Failure("context: the arguments do not decode: %v", err), nil
	}
	// An earlier call of this batch may have evicted: judge and answer against the context as
	// the batch leaves it, which is how the fold will judge the records in turn.
	st := a.edited
	if st == nil {
		st = a.sess.Snapshot()
	}
	switch args.Op {
	case "survey":
		return answer(surveyOf(st.Survey())), nil
	case "evict":
		if args.From == 0 || args.To == 0 {
			return tool.Failure(`context evict needs from and to (turn ids; the survey lists them) and a note`), nil
		}
		next, err := st.PreviewEviction(args.From, args.To, args.Note)
		if err != nil {
			return tool.Failure("context evict refused: %v", err), nil
		}
		a.edited = next
		return answer(surveyOf(next.Survey())), []record.Payload{&record.Evicted{From: args.From, To: args.To, Note: args.Note, By: record.ByModel}}
	}
	return tool.Failure(`context: op must be "survey" or "evict", not %q`, args.Op), nil
}

// ---- transcript ---------------------------------------------------------------------------------

type transcriptDoor struct{}

// Limits of the transcript door's answers.
const (
	readMax  = 128 << 10 // bytes of messages one read answers
	indexMax = 64 << 10  // bytes of rows one index answers
	grepHits = 100
	grepClip = 200
)

func (transcriptDoor) Spec() provider.Tool {
	return provider.Tool{
		Name: "transcript",
		Description: `Everything this session recorded, including turns that have left your context. ` +
			`{"op":"index","from":id?} lists the turns [id, role, kind, label, bytes, held] from the first (or from turn id), at most 64 KB of rows a call: "more" says where the next call starts. ` +
			`{"op":"read","turns":[ids]} answers each turn's messages exactly as they were sent. ` +
			`{"op":"grep","pattern":"regexp","turns":[ids]?} answers hits [from, to, kind, role, line, text] (the 100 oldest, text clipped to 200 bytes) and the total count; residue notes are searched too. ` +
			`The turn being written now cannot be read.`,
		Schema: json.RawMessage(`{"type":"object","properties":{"op":{"type":"string","enum":["index","read","grep"]},"turns":{"type":"array","items":{"type":"integer"}},"pattern":{"type":"string"},"from":{"type":"integer"}},"required":["op"],"additionalProperties":false}`),
	}
}

func (transcriptDoor) Run(ctx context.Context, a *Agent, turn int64, call tool.Call) (tool.Result, []record.Payload) {
	var args struct {
		Op      string  `json:"op"`
		Turns   []int64 `json:"turns"`
		Pattern string  `json:"pattern"`
		From    int64   `json:"from"`
	}
	if err := json.Unmarshal(call.Args, &args); err != nil {
		return tool.Failure("transcript: the arguments do not decode: %v", err), nil
	}
	st := a.sess.Snapshot()
	switch args.Op {
	case "index":
		rows, next := fold.IndexPage(st, args.From, indexMax, func(r fold.Row) ([]any, int) {
			row := []any{r.From, r.Role, r.Kind, r.Label, r.Bytes, r.Held}
			b, _ := json.Marshal(row)
			return row, len(b) + 1
		})
		if next != 0 {
			return answer(map[string]any{"turns": rows, "more": fmt.Sprintf("stopped before turn %d: one index answers at most %d bytes of rows; ask again with \"from\":%d", next, indexMax, next)}), nil
		}
		return answer(map[string]any{"turns": rows}), nil
	case "read":
		if len(args.Turns) == 0 {
			return tool.Failure(`transcript read needs "turns": a list of turn ids (the index lists them)`), nil
		}
		if res, ok := refuseUnclosed(st, args.Turns); !ok {
			return res, nil
		}
		type readTurn struct {
			Turn     int64            `json:"turn"`
			Role     record.Role      `json:"role"`
			Held     string           `json:"held"`
			Messages []record.Message `json:"messages"`
		}
		var out []readTurn
		size := 0
		for _, id := range args.Turns {
			if ctx.Err() != nil {
				return tool.Result{Content: "transcript read was stopped", IsError: true, Outcome: record.Interrupted}, nil
			}
			t, ok := st.Turn(id)
			if !ok {
				return tool.Failure("turn %d is not recorded: the latest is %d", id, st.High()), nil
			}
			msgs, err := a.sess.ReadTurn(id)
			if err != nil {
				return tool.Failure("turn %d cannot be read back: %v", id, err), nil
			}
			msgs = picturesNamed(msgs) // images.go
			for _, m := range msgs {
				size += int(fold.MessageSize(m))
			}
			if size > readMax && len(out) > 0 {
				return answer(map[string]any{"turns": out, "more": fmt.Sprintf("stopped before turn %d: one read answers at most %d bytes; read the rest in another call", id, readMax)}), nil
			}
			out = append(out, readTurn{Turn: id, Role: t.Role, Held: st.Held(id), Messages: msgs})
		}
		return answer(map[string]any{"turns": out}), nil
	case "grep":
		return grep(ctx, a, st, args.Pattern, args.Turns), nil
	}
	return tool.Failure(`transcript: op must be "index", "read" or "grep", not %q`, args.Op), nil
}

// refuseUnclosed refuses a read of the turn being written, naming the closed turns of the work in
// hand.
func refuseUnclosed(st *fold.State, ids []int64) (tool.Result, bool) {
	u := st.Unclosed()
	for _, id := range ids {
		if id == u && u != 0 {
			closed := []string{}
			for _, t := range st.Turns() {
				if t.ID < u && !t.Withdrawn && t.ID >= lastPrompt(st) {
					closed = append(closed, fmt.Sprint(t.ID))
				}
			}
			msg := fmt.Sprintf("turn %d is being written now and cannot be read", u)
			if len(closed) > 0 {
				msg += "; the closed turns of the work in hand are " + strings.Join(closed, ", ")
			}
			return tool.Failure("%s", msg), false
		}
	}
	return tool.Result{}, true
}

// lastPrompt is the id of the newest own user turn: where the work in hand began.
func lastPrompt(st *fold.State) int64 {
	for i := st.NumTurns() - 1; i >= 0; i-- {
		if t := st.TurnAt(i); t.Role == record.User && t.Kind == fold.Own {
			return t.ID
		}
	}
	return 0
}

func grep(ctx context.Context, a *Agent, st *fold.State, pattern string, turns []int64) tool.Result {
	if pattern == "" {
		return tool.Failure(`transcript grep needs a "pattern" (a Go regular expression)`)
	}
	re, err := regexp.Compile(pattern)
	if err != nil {
		return tool.Failure("transcript grep: the pattern does not compile: %v", err)
	}
	if res, ok := refuseUnclosed(st, turns); !ok {
		return res
	}
	prefix, _ := re.LiteralPrefix()
	want := map[int64]bool{}
	for _, id := range turns {
		want[id] = true
	}
	u := st.Unclosed()
	var hits [][]any
	total := 0
	add := func(from, to int64, kind string, role record.Role, line int, text string) {
		total++
		if len(hits) < grepHits {
			if len(text) > grepClip {
				text = text[:grepClip]
			}
			hits = append(hits, []any{from, to, kind, role, line, text})
		}
	}
	for _, r := range st.Residues() {
		if len(want) > 0 && !want[r.From] && !want[r.To] {
			continue
		}
		if re.MatchString(r.Note) {
			add(r.From, r.To, "residue", record.User, 1, r.Note)
		}
	}
	for _, t := range st.Turns() {
		if t.ID == u || (len(want) > 0 && !want[t.ID]) {
			continue
		}
		if ctx.Err() != nil {
			break
		}
		msgs, err := a.sess.ReadTurn(t.ID)
		if err != nil {
			continue
		}
		line := 0
		for _, m := range msgs {
			for _, p := range m.Parts {
				text := p.Text
				if p.Type == record.PartToolCall {
					text = p.Name + " " + string(p.Args)
				}
				// One pass of the expression over the whole part; line numbers are counted only
				// up to the hits. A part without the pattern's literal prefix cannot match.
				if prefix != "" && !strings.Contains(text, prefix) {
					line += strings.Count(text, "\n") + 1
					continue
				}
				at, n := 0, 0
				for _, loc := range re.FindAllStringIndex(text, -1) {
					if loc[0] < at {
						continue // a second hit on a line already reported
					}
					n += strings.Count(text[at:loc[0]], "\n")
					start := strings.LastIndexByte(text[:loc[0]], '\n') + 1
					end := strings.IndexByte(text[loc[0]:], '\n')
					if end < 0 {
						end = len(text)
					} else {
						end += loc[0]
					}
					add(t.ID, t.ID, string(t.Kind), m.Role, line+n+1, text[start:end])
					at = end
				}
				line += strings.Count(text, "\n") + 1
			}
		}
	}
	return answer(map[string]any{"hits": hits, "total": total})
}
