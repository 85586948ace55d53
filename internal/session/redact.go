package session

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"

	"github.com/reinhq/rein/internal/record"
)

// Redactor takes secrets out of text. *redact.Secrets is the one rein uses.
type Redactor interface {
	// Redact returns text with every secret it knows replaced by a placeholder.
	Redact(text string) string
	// Safe returns how much of streamed text can be redacted and published now: the length of
	// its longest prefix no secret crosses, complete or still forming at the end.
	Safe(text string) int
}

// RedactFunc is a Redactor made of a function; it holds nothing back from a stream.
type RedactFunc func(string) string

// Redact calls f.
func (f RedactFunc) Redact(text string) string { return f(text) }

// Safe releases all of text.
func (f RedactFunc) Safe(text string) int { return len(text) }

// Redact passes text through the session's redactor, for what is written beside the record (a
// request saved for a bug report).
func (s *Session) Redact(text string) string { return s.opts.Redact.Redact(text) }

// redact returns p with every text that can carry outside data passed through the redactor: what
// tools printed, what the model wrote (text, thinking, tool arguments — a model can repeat a key),
// what a person typed or attached, what a provider answered in an error, the originals kept by a
// repair, notes and titles. Identifiers, names, states and measures are structure and left alone,
// as are binary data (images, attachments sent as data, redacted thinking): changing them would
// break what the record promises. p itself is never changed; a changed payload is a copy.
func (s *Session) redact(p record.Payload) record.Payload {
	r := s.opts.Redact
	switch b := p.(type) {
	case *record.System:
		return &record.System{Text: r.Redact(b.Text)}
	case *record.UserPrompt:
		c := *b
		c.Text, c.Attachments = r.Redact(b.Text), redactAttachments(r, b.Attachments)
		return &c
	case *record.Steering:
		c := *b
		c.Text = r.Redact(b.Text)
		return &c
	case *record.Import:
		c := *b
		c.Message = redactMessage(r, b.Message)
		return &c
	case *record.AssistantMessage:
		c := *b
		c.Parts = redactParts(r, b.Parts)
		return &c
	case *record.ToolResults:
		c := &record.ToolResults{Results: make([]record.ToolResult, len(b.Results))}
		for i, res := range b.Results {
			res.Content = r.Redact(res.Content)
			res.Images = redactParts(r, res.Images)
			c.Results[i] = res
		}
		return c
	case *record.ToolFinished:
		// The result a tool_finished keeps is redacted as its batch's results are, so a resume
		// answers the call with the very bytes the batch would have recorded. (That is why the
		// redactor must be idempotent: the kept result passes through it again then.)
		if b.Content == "" {
			return p
		}
		c := *b
		c.Content = r.Redact(b.Content)
		return &c
	case *record.Evicted:
		c := *b
		c.Note = r.Redact(b.Note)
		return &c
	case *record.Inherited:
		c := *b
		c.Rows = make([]record.InheritedRow, len(b.Rows))
		for i, row := range b.Rows {
			row.Label = r.Redact(row.Label)
			if row.Messages != nil {
				msgs := make([]record.Message, len(row.Messages))
				for j, m := range row.Messages {
					msgs[j] = redactMessage(r, m)
				}
				row.Messages = msgs
			}
			c.Rows[i] = row
		}
		if b.Residues != nil {
			c.Residues = make([]record.Span, len(b.Residues))
			for i, sp := range b.Residues {
				sp.Note = r.Redact(sp.Note)
				c.Residues[i] = sp
			}
		}
		return &c
	case *record.SessionStarted:
		c := *b
		c.Title, c.BaseURL = r.Redact(b.Title), r.Redact(b.BaseURL)
		return &c
	case *record.SessionResumed:
		c := *b
		c.BaseURL = r.Redact(b.BaseURL)
		return &c
	case *record.ProviderError:
		c := *b
		c.Type, c.Message = r.Redact(b.Type), r.Redact(b.Message)
		return &c
	case *record.Repaired:
		c := *b
		c.What, c.Original = r.Redact(b.What), redactJSON(r, b.Original)
		return &c
	case *record.Failure:
		return &record.Failure{Message: r.Redact(b.Message)}
	case *record.ExternalItem:
		// What the program said and did, and the input of its calls, as a model's are.
		c := *b
		c.Text, c.Raw = r.Redact(b.Text), redactJSON(r, b.Raw)
		return &c
	case *record.Cancelled:
		return &record.Cancelled{Reason: r.Redact(b.Reason)}
	case *record.Submission:
		c := *b
		c.Text, c.Attachments = r.Redact(b.Text), redactAttachments(r, b.Attachments)
		c.Reason, c.Detail = r.Redact(b.Reason), r.Redact(b.Detail)
		return &c
	case *record.Renamed:
		c := *b
		c.Title = r.Redact(b.Title)
		return &c
	case *record.Approval:
		c := *b
		c.Args, c.Diff, c.Scope = r.Redact(b.Args), r.Redact(b.Diff), r.Redact(b.Scope)
		if b.Rules != nil {
			// A rule whose command held a key no longer matches that command: it asks again.
			c.Rules = make([]string, len(b.Rules))
			for i, rule := range b.Rules {
				c.Rules[i] = r.Redact(rule)
			}
		}
		return &c
	case *record.MCPServer:
		c := *b
		c.Error = r.Redact(b.Error)
		return &c
	case *record.Checkpoint:
		if b.Error == "" {
			return p
		}
		c := *b
		c.Error = r.Redact(b.Error)
		return &c
	case *record.Hold:
		c := *b
		c.Reason = r.Redact(b.Reason)
		return &c
	case *record.Hook:
		c := *b
		c.Command, c.Source = r.Redact(b.Command), r.Redact(b.Source)
		c.Reason, c.Context, c.Failed = r.Redact(b.Reason), r.Redact(b.Context), r.Redact(b.Failed)
		return &c
	}
	return p
}

func redactAttachments(r Redactor, as []record.Attachment) []record.Attachment {
	if as == nil {
		return nil
	}
	out := make([]record.Attachment, len(as))
	for i, a := range as {
		a.Name, a.Text = r.Redact(a.Name), r.Redact(a.Text)
		out[i] = a
	}
	return out
}

func redactMessage(r Redactor, m record.Message) record.Message {
	return record.Message{Role: m.Role, Parts: redactParts(r, m.Parts)}
}

// redactParts redacts the text of each part. A thinking block whose text changed loses its
// signature, which vouched for the words before: unsigned, it is kept in the record but no longer
// sent back to a provider that checks signatures.
func redactParts(r Redactor, ps []record.Part) []record.Part {
	if ps == nil {
		return nil
	}
	out := make([]record.Part, len(ps))
	for i, p := range ps {
		if t := r.Redact(p.Text); t != p.Text {
			p.Text = t
			if p.Type == record.PartThinking {
				p.Signature, p.Data = "", ""
			}
		}
		// An OpenAI reasoning item kept whole holds its summary's words: one with anything to
		// redact is not kept (nor ever sent back).
		if p.Type == record.PartThinking && p.Data != "" && string(redactJSON(r, json.RawMessage(p.Data))) != p.Data {
			p.Data = ""
		}
		p.Args = redactJSON(r, p.Args)
		if p.Type == record.PartImage {
			p.Name = r.Redact(p.Name) // the file it was read from; its data is binary
		}
		p.Images = redactParts(r, p.Images)
		out[i] = p
	}
	return out
}

// redactJSON redacts every string of a JSON document (object keys too), as decoded: so a secret
// written with escapes (\u0073k-…) or wrapped across "\n"s is found as it reads. A document with
// nothing to redact is returned byte for byte; one with something is re-encoded compactly, in its
// own order. Text that is not JSON (never an admitted call's arguments) is redacted as text and,
// if that changed it, kept as a JSON string.
func redactJSON(r Redactor, raw json.RawMessage) json.RawMessage {
	if len(bytes.TrimSpace(raw)) == 0 {
		return raw
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var toks []json.Token
	changed := false
	for {
		t, err := dec.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			if red := r.Redact(string(raw)); red != string(raw) {
				s, _ := json.Marshal(red)
				return s
			}
			return raw
		}
		if str, ok := t.(string); ok {
			if red := r.Redact(str); red != str {
				t, changed = red, true
			}
		}
		toks = append(toks, t)
	}
	if !changed {
		return raw
	}
	return encodeTokens(toks)
}

// encodeTokens writes a token stream from json.Decoder.Token back as compact JSON.
func encodeTokens(toks []json.Token) json.RawMessage {
	var b bytes.Buffer
	// Each open container remembers whether it is an object and how many tokens it has had, to
	// place commas and colons.
	type level struct {
		object bool
		n      int
	}
	var stack []level
	for _, t := range toks {
		if d, ok := t.(json.Delim); ok && (d == '}' || d == ']') {
			stack = stack[:len(stack)-1]
			b.WriteByte(byte(d))
			continue
		}
		if n := len(stack); n > 0 {
			top := &stack[n-1]
			switch {
			case top.object && top.n%2 == 1:
				b.WriteByte(':')
			case top.n > 0:
				b.WriteByte(',')
			}
			top.n++
		}
		switch v := t.(type) {
		case json.Delim:
			b.WriteByte(byte(v))
			stack = append(stack, level{object: v == '{'})
		case nil:
			b.WriteString("null")
		default:
			e, _ := json.Marshal(v)
			b.Write(e)
		}
	}
	return b.Bytes()
}

// ---- live events --------------------------------------------------------------------------------

// heldText is the tail of a live stream (a kind and a call) that could still be the start of a
// secret, waiting for the stream's next piece. One stream is held at a time: a stream ends when
// anything else is published.
type heldText struct {
	kind, callID, text string
}

// streamed reports whether live events of kind carry pieces of one text.
func streamed(kind string) bool {
	return kind == "text" || kind == "thinking" || kind == "tool_args" || kind == "tool_output"
}

// redactUpdate returns what to publish for u, redacted. A stream's piece is released up to what
// Safe allows and the rest held back for the stream's next piece. Anything else (another stream's
// piece, a record, another live event) first releases what is held, redacted, as the end of its
// stream (a provider sends one block after another), so order is kept. It runs under smu.
func (s *Session) redactUpdate(u Update) []Update {
	r := s.opts.Redact
	l := u.Live
	h := s.held
	s.held = heldText{}
	var out []Update
	same := l != nil && streamed(l.Kind) && h.kind == l.Kind && h.callID == l.CallID
	if h.text != "" && !same {
		out = append(out, Update{Live: &Live{Kind: h.kind, CallID: h.callID, Text: r.Redact(h.text)}})
	}
	if l == nil {
		return append(out, u)
	}
	c := *l
	if !streamed(l.Kind) {
		c.Text, c.Name = r.Redact(l.Text), r.Redact(l.Name)
		return append(out, Update{Live: &c})
	}
	buf := l.Text
	if same {
		buf = h.text + buf
	}
	n := r.Safe(buf)
	if n < len(buf) {
		s.held = heldText{kind: l.Kind, callID: l.CallID, text: buf[n:]}
	}
	if n > 0 {
		c.Text = r.Redact(buf[:n])
		out = append(out, Update{Live: &c})
	}
	return out
}
