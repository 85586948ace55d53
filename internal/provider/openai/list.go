package openai

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/reinhq/rein/internal/provider"
	"github.com/reinhq/rein/internal/record"
)

// listBody is the shape both OpenAI requests share: a JSON object whose one long field is a list
// the conversation's messages make (Chat's messages, Responses' input), between fields that do
// not grow. Its encode writes the list item by item straight into the body, taking the items of
// the messages the conversation's last request sent the same from a provider.Memo, as they were:
// a long conversation's request repeats thousands of messages, and rendering and marshalling
// them again was most of the time spent building it. The bytes are those of marshalling the
// whole request as one value (TestEncodeIsWhole).
type listBody struct {
	open  any    // the fields before the list, as an object that marshals to at least one field
	name  string // the list's field
	fixed []any  // the list's items before the messages' own (Chat's system message)
	close any    // the fields after the list, as an object that marshals to at least one field
	// format names this encoding of messages in the Memo: everything besides a message that its
	// items depend on (that fixed items precede them, which puts a comma before the first).
	format string
}

// encode writes the request with msgs as the list's items, render making each message's. A
// render error is returned as it comes, before anything is marshalled, as the whole request's
// encoding reports it; skip, if set, is told how many leading messages come from the memo (and
// will not be rendered) before any is.
func (l *listBody) encode(msgs []record.Message, memo *provider.Memo, skip func(same int), render func(out []any, i int, m record.Message) ([]any, error)) ([]byte, error) {
	run := memo.Start(l.format, msgs)
	same := run.Same()
	if skip != nil {
		skip(same)
	}
	var items []any
	counts := make([]int, 0, len(msgs)-same) // how many items each message rendered makes
	text := 0
	for i := same; i < len(msgs); i++ {
		before := len(items)
		var err error
		if items, err = render(items, i, msgs[i]); err != nil {
			return nil, err
		}
		counts = append(counts, len(items)-before)
		for _, p := range msgs[i].Parts {
			text += len(p.Text) + len(p.Args) + len(p.Data)
		}
	}

	var jw jsonWriter
	open, err := jw.marshal(nil, l.open)
	if err != nil {
		return nil, err
	}
	// The closing fields are marshalled first, for their size; their error, if any, is returned
	// where the whole request's marshalling meets it, after the items'.
	close, closeErr := jw.marshal(nil, l.close)
	memoed, sent := run.Run()
	dst := memo.Buffer(len(open) + len(memoed) + text + text/8 + 256*(len(items)+len(l.fixed)) + len(close) + len(l.name) + 8)
	dst = append(dst, open[:len(open)-1]...) // its closing brace: the list follows
	dst = append(dst, `,"`...)
	dst = append(dst, l.name...)
	dst = append(dst, `":[`...)
	n := 0 // the list's items so far
	for _, it := range l.fixed {
		if dst, err = jw.item(dst, n, it); err != nil {
			return nil, err
		}
		n++
	}
	runStart := len(dst)
	dst = append(dst, memoed...)
	n += sent
	k := 0
	for _, c := range counts {
		for _, it := range items[k : k+c] {
			if dst, err = jw.item(dst, n, it); err != nil {
				return nil, err
			}
			n++
		}
		k += c
		run.Mark(len(dst)-runStart, n-len(l.fixed))
	}
	run.Finish(dst[runStart:])
	if closeErr != nil {
		return nil, closeErr
	}
	// The closing fields' own opening brace goes: they continue the request's object.
	dst = append(dst, "],"...)
	return append(dst, close[1:]...), nil
}

// jsonWriter marshals values as marshal does (no HTML escaping, no newline), appending them to a
// body, through one encoder and buffer.
type jsonWriter struct {
	buf bytes.Buffer
	enc *json.Encoder
}

// marshal appends v's JSON to dst.
func (w *jsonWriter) marshal(dst []byte, v any) ([]byte, error) {
	if w.enc == nil {
		w.enc = json.NewEncoder(&w.buf)
		w.enc.SetEscapeHTML(false)
	}
	w.buf.Reset()
	if err := w.enc.Encode(v); err != nil {
		return dst, fmt.Errorf("marshal request: %w", err)
	}
	return append(dst, bytes.TrimSuffix(w.buf.Bytes(), []byte("\n"))...), nil
}

// item appends v as the list's item after n others.
func (w *jsonWriter) item(dst []byte, n int, v any) ([]byte, error) {
	if n > 0 {
		dst = append(dst, ',')
	}
	return w.marshal(dst, v)
}
