package record

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"unicode"
	"unicode/utf8"
)

// ---- the envelope -------------------------------------------------------------------------------

// envelopeNames are the envelope's fields in the one order a line carries them, and
// envelopeKeys what precedes each value.
var (
	envelopeNames = [...]string{"v", "seq", "t", "class", "kind", "payload", "crc"}
	envelopeKeys  = [...]string{`{"v":`, `,"seq":`, `,"t":`, `,"class":`, `,"kind":`, `,"payload":`}
)

// envelope is a line's envelope as read, before its kind is judged.
type envelope struct {
	seq, t      int64
	class, kind []byte
	payload     []byte
	blob        []byte // a blob line's digest: 64 lowercase hex digits; payload is then nil
}

// blobKey is what precedes a blob line's digest where other lines hold `,"payload":`.
const blobKey = `,"blob":"`

// readEnvelope reads the envelope of body, a line without its checksum trailer. It accepts only the
// shape Encode writes: every field in order, no whitespace, class and kind as plain strings; the
// payload is every byte between "payload": and the trailer. A version other than 1 is refused as
// soon as it is read, whatever follows.
func readEnvelope(body []byte) (envelope, error) {
	var env envelope
	p := 0
	for i, key := range envelopeKeys {
		name := envelopeNames[i]
		if i == 5 && bytes.HasPrefix(body[p:], []byte(blobKey)) {
			d := body[p+len(blobKey):]
			if len(d) != 65 || d[64] != '"' || !lowerHex(d[:64]) {
				return env, errors.New(`its envelope does not decode: field "blob" is not a SHA-256 digest in 64 lowercase hex digits`)
			}
			env.blob = d[:64]
			return env, nil
		}
		if len(body)-p < len(key) || string(body[p:p+len(key)]) != key {
			return env, misshapen(body, p, i)
		}
		p += len(key)
		switch i {
		case 0, 1, 2: // v, seq, t
			neg, mag, end, ok := integer(body, p)
			if !ok || !neg && mag > 1<<63-1 || neg && mag > 1<<63 {
				return env, fmt.Errorf("its envelope does not decode: field %q is not a 64-bit integer", name)
			}
			n := int64(mag)
			if neg {
				n = -n
			}
			p = end
			switch i {
			case 0:
				if n != Version {
					return env, fmt.Errorf("it is format version %d; this rein reads version %d", n, Version)
				}
			case 1:
				env.seq = n
			case 2:
				env.t = n
			}
		case 3, 4: // class, kind
			end, _ := plain(body, p+1)
			if p >= len(body) || body[p] != '"' || end >= len(body) || body[end] != '"' {
				return env, fmt.Errorf("its envelope does not decode: field %q is not a plain string", name)
			}
			if i == 3 {
				env.class = body[p+1 : end]
			} else {
				env.kind = body[p+1 : end]
			}
			p = end + 1
		case 5: // payload
			env.payload = body[p:]
		}
	}
	return env, nil
}

func lowerHex(b []byte) bool {
	for _, c := range b {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

// misshapen says why body at p does not hold the envelope's field number i.
func misshapen(body []byte, p, i int) error {
	name := envelopeNames[i]
	sep := envelopeKeys[i][0]
	if p >= len(body) || body[p] != sep || p+1 >= len(body) || body[p+1] != '"' {
		return fmt.Errorf("its envelope does not decode: expected field %q at byte %d", name, p)
	}
	k := bytes.IndexByte(body[p+2:], '"')
	if k < 0 {
		return fmt.Errorf("its envelope does not decode: expected field %q at byte %d", name, p)
	}
	key := body[p+2 : p+2+k]
	if string(key) == name {
		return fmt.Errorf("its envelope does not decode: expected ':' right after field %q", name)
	}
	for _, n := range envelopeNames {
		if string(key) == n {
			return fmt.Errorf("its envelope does not decode: it has field %q where %q belongs (the envelope's fields come in a fixed order)", key, name)
		}
	}
	return fmt.Errorf("its envelope does not decode: it has an unknown field %q where %q belongs", key, name)
}

// ---- payloads -----------------------------------------------------------------------------------

// decodable is every payload type and every struct a payload holds: it lists its JSON members.
type decodable interface {
	members() fields
}

// decodePayload strictly decodes data, exactly one JSON object with optional surrounding
// whitespace, into p. maxNest is the deepest nesting allowed, the payload object being level 1.
func decodePayload(data []byte, p Payload, maxNest int) error {
	d, ok := p.(decodable)
	if !ok {
		panic(fmt.Sprintf("record: payload %T has no members", p))
	}
	r := reader{data: data, max: maxNest}
	r.ws()
	if r.peek() != '{' {
		r.mismatch("an object")
		return r.err
	}
	fs := d.members()
	r.object(&fs)
	r.ws()
	if r.err == nil && r.pos < len(data) {
		r.fail("trailing data after the payload object")
	}
	return r.err
}

// field is one member of an object: its JSON name and where its value goes.
type field struct {
	name string
	dst  any // *string, *int64, *int, *uint32, *bool, **int, *json.RawMessage, a nested struct or slice
}

// fields is an object's members as the reader sees them; its methods build and search the list.
// The array holds the most members any payload type has (session_started's 17), with room to grow;
// a type that outgrows it trips TestMembersMatchTags before it can meet a record.
type fields struct {
	n int
	f [24]field
}

func (fs *fields) add(name string, dst any) {
	fs.f[fs.n] = field{name, dst}
	fs.n++
}

// find returns the index of the member named key, or -1. Members usually come in the order
// Encode writes them, so the search starts at hint, the one after the last found.
func (fs *fields) find(key []byte, hint int) int {
	for i := hint; i < fs.n; i++ {
		if fs.f[i].name == string(key) {
			return i
		}
	}
	for i := 0; i < hint && i < fs.n; i++ {
		if fs.f[i].name == string(key) {
			return i
		}
	}
	return -1
}

// object decodes an object into fs's members, or leaves them alone for null.
func (r *reader) object(fs *fields) {
	switch r.peek() {
	case '{':
	case 'n':
		r.literal("null")
		return
	default:
		r.mismatch("an object")
		return
	}
	if !r.enter() {
		return
	}
	if r.peek() == '}' {
		r.pos++
		r.depth--
		return
	}
	var seen uint32
	hint := 0
	for {
		if r.peek() != '"' {
			r.fail("expected a field name, found %s", r.found())
			return
		}
		at := r.pos
		key := r.key()
		if r.err != nil {
			return
		}
		i := fs.find(key, hint)
		switch {
		case i < 0:
			r.pos = at
			r.unknown(key, fs)
			return
		case seen&(1<<i) != 0:
			r.pos = at
			r.failAs(errDuplicateField, "field %q appears twice", key)
			return
		}
		seen |= 1 << i
		hint = i + 1
		r.value(fs.f[i].dst)
		if r.err != nil || !r.more('}') {
			return
		}
	}
}

// unknown refuses a field name that is not a member, saying so when it differs from one only in
// case: encoding/json would have matched it, the record format does not.
func (r *reader) unknown(key []byte, fs *fields) {
	folded := foldName(key)
	for _, f := range fs.f[:fs.n] {
		if bytes.Equal(foldName([]byte(f.name)), folded) {
			r.failAs(errFieldCase, "field %q must be spelt %q", key, f.name)
			return
		}
	}
	r.fail("unknown field %q", key)
}

// foldName folds a field name the way encoding/json matches names without regard to case.
func foldName(in []byte) []byte {
	out := make([]byte, 0, len(in))
	for i := 0; i < len(in); {
		if c := in[i]; c < utf8.RuneSelf {
			if 'a' <= c && c <= 'z' {
				c -= 'a' - 'A'
			}
			out = append(out, c)
			i++
			continue
		}
		rr, n := utf8.DecodeRune(in[i:])
		out = utf8.AppendRune(out, unicode.ToUpper(unicode.ToLower(rr)))
		i += n
	}
	return out
}

// value decodes one member's value into dst.
func (r *reader) value(dst any) {
	switch d := dst.(type) {
	case *string:
		r.str(d)
	case *int64:
		r.int64(d)
	case *int:
		r.int(d)
	case *uint32:
		r.uint32(d)
	case *bool:
		r.bool(d)
	case **int:
		r.optInt(d)
	case *json.RawMessage:
		r.raw(d)
	case *[]string:
		r.strings(d)
	case *Usage:
		fs := d.members()
		r.object(&fs)
	case *Message:
		fs := d.members()
		r.object(&fs)
	case *Pointer:
		fs := d.members()
		r.object(&fs)
	case **Origin:
		if r.peek() == 'n' {
			if r.literal("null") {
				*d = nil
			}
			return
		}
		*d = new(Origin)
		fs := (*d).members()
		r.object(&fs)
	case *[]Part:
		list(r, d)
	case *[]Attachment:
		list(r, d)
	case *[]ToolResult:
		list(r, d)
	case *[]Message:
		list(r, d)
	case *[]InheritedRow:
		list(r, d)
	case *[]Locus:
		list(r, d)
	case *[]Span:
		list(r, d)
	case *[]SkippedPath:
		list(r, d)
	default:
		panic(fmt.Sprintf("record: no decoder for %T", dst))
	}
}

// list decodes an array of objects: [] is an empty slice, null a nil one.
func list[T any, P interface {
	*T
	decodable
}](r *reader, d *[]T) {
	switch r.peek() {
	case '[':
	case 'n':
		if r.literal("null") {
			*d = nil
		}
		return
	default:
		r.mismatch("an array")
		return
	}
	if !r.enter() {
		return
	}
	out := []T{}
	if r.peek() == ']' {
		r.pos++
		r.depth--
		*d = out
		return
	}
	for {
		var zero T
		out = append(out, zero)
		fs := P(&out[len(out)-1]).members()
		r.object(&fs)
		if r.err != nil || !r.more(']') {
			break
		}
	}
	*d = out
}

// strings decodes an array of strings: [] is an empty slice, null a nil one.
func (r *reader) strings(d *[]string) {
	switch r.peek() {
	case '[':
	case 'n':
		if r.literal("null") {
			*d = nil
		}
		return
	default:
		r.mismatch("an array")
		return
	}
	if !r.enter() {
		return
	}
	out := []string{}
	if r.peek() == ']' {
		r.pos++
		r.depth--
		*d = out
		return
	}
	for {
		out = append(out, "")
		r.str(&out[len(out)-1])
		if r.err != nil || !r.more(']') {
			break
		}
	}
	*d = out
}

// ---- members ------------------------------------------------------------------------------------
//
// Each list names a type's JSON fields as its struct tags do; TestMembersMatchTags holds them to
// the tags, so a field added to a type and not here fails the tests rather than every record.

func (p *Part) members() (f fields) {
	f.add("type", (*string)(&p.Type))
	f.add("text", &p.Text)
	f.add("signature", &p.Signature)
	f.add("data", &p.Data)
	f.add("media_type", &p.MediaType)
	f.add("call_id", &p.CallID)
	f.add("name", &p.Name)
	f.add("args", &p.Args)
	f.add("is_error", &p.IsError)
	f.add("outcome", (*string)(&p.Outcome))
	f.add("images", &p.Images)
	f.add("wire", &p.Wire)
	return f
}

func (p *Message) members() (f fields) {
	f.add("role", (*string)(&p.Role))
	f.add("parts", &p.Parts)
	return f
}

func (p *Usage) members() (f fields) {
	f.add("input", &p.Input)
	f.add("output", &p.Output)
	f.add("cache_read", &p.CacheRead)
	f.add("cache_write", &p.CacheWrite)
	return f
}

func (p *Attachment) members() (f fields) {
	f.add("name", &p.Name)
	f.add("media_type", &p.MediaType)
	f.add("text", &p.Text)
	f.add("data", &p.Data)
	return f
}

func (p *Locus) members() (f fields) {
	f.add("seq", &p.Seq)
	f.add("off", &p.Off)
	f.add("len", &p.Len)
	f.add("sum", &p.Sum)
	return f
}

func (p *Pointer) members() (f fields) {
	f.add("file", &p.File)
	f.add("loci", &p.Loci)
	return f
}

func (p *System) members() (f fields) {
	f.add("text", &p.Text)
	return f
}

func (p *UserPrompt) members() (f fields) {
	f.add("turn", &p.Turn)
	f.add("text", &p.Text)
	f.add("attachments", &p.Attachments)
	f.add("submission", &p.Submission)
	return f
}

func (p *Steering) members() (f fields) {
	f.add("text", &p.Text)
	f.add("source", &p.Source)
	f.add("submission", &p.Submission)
	return f
}

func (p *Import) members() (f fields) {
	f.add("turn", &p.Turn)
	f.add("message", &p.Message)
	f.add("source", &p.Source)
	f.add("child", &p.Child)
	f.add("external", &p.External)
	return f
}

func (p *AssistantMessage) members() (f fields) {
	f.add("turn", &p.Turn)
	f.add("parts", &p.Parts)
	f.add("stop_reason", &p.StopReason)
	f.add("model", &p.Model)
	f.add("usage", &p.Usage)
	return f
}

func (p *ToolResult) members() (f fields) {
	f.add("call_id", &p.CallID)
	f.add("content", &p.Content)
	f.add("is_error", &p.IsError)
	f.add("outcome", (*string)(&p.Outcome))
	f.add("images", &p.Images)
	return f
}

func (p *ToolResults) members() (f fields) {
	f.add("results", &p.Results)
	return f
}

func (p *Evicted) members() (f fields) {
	f.add("from", &p.From)
	f.add("to", &p.To)
	f.add("note", &p.Note)
	f.add("by", (*string)(&p.By))
	f.add("op", &p.Op)
	return f
}

func (p *Rewound) members() (f fields) {
	f.add("anchor", &p.Anchor)
	f.add("op", &p.Op)
	return f
}

func (p *Cleared) members() (f fields) {
	f.add("op", &p.Op)
	return f
}

func (p *InheritedRow) members() (f fields) {
	f.add("turn", &p.Turn)
	f.add("role", (*string)(&p.Role))
	f.add("label", &p.Label)
	f.add("bytes", &p.Bytes)
	f.add("withdrawn", &p.Withdrawn)
	f.add("pointer", &p.Pointer)
	f.add("messages", &p.Messages)
	return f
}

func (p *Span) members() (f fields) {
	f.add("from", &p.From)
	f.add("to", &p.To)
	f.add("note", &p.Note)
	f.add("by", (*string)(&p.By))
	return f
}

func (p *Inherited) members() (f fields) {
	f.add("parent", &p.Parent)
	f.add("at", &p.At)
	f.add("high", &p.High)
	f.add("rows", &p.Rows)
	f.add("residues", &p.Residues)
	return f
}

func (p *SessionStarted) members() (f fields) {
	f.add("session", &p.Session)
	f.add("provider", &p.Provider)
	f.add("model", &p.Model)
	f.add("context_window", &p.ContextWindow)
	f.add("cwd", &p.Cwd)
	f.add("version", &p.Version)
	f.add("parent", &p.Parent)
	f.add("title", &p.Title)
	f.add("op", &p.Op)
	f.add("base_url", &p.BaseURL)
	f.add("permission_mode", &p.PermissionMode)
	f.add("thinking", &p.Thinking)
	f.add("effort", &p.Effort)
	f.add("sandbox", &p.Sandbox)
	f.add("tools", &p.Tools)
	f.add("web_search", &p.WebSearch)
	f.add("source", &p.Source)
	return f
}

func (p *Origin) members() (f fields) {
	f.add("kind", &p.Kind)
	f.add("id", &p.ID)
	f.add("path", &p.Path)
	f.add("version", &p.Version)
	return f
}

func (p *SessionResumed) members() (f fields) {
	f.add("provider", &p.Provider)
	f.add("model", &p.Model)
	f.add("context_window", &p.ContextWindow)
	f.add("cwd", &p.Cwd)
	f.add("version", &p.Version)
	f.add("base_url", &p.BaseURL)
	f.add("permission_mode", &p.PermissionMode)
	f.add("thinking", &p.Thinking)
	f.add("effort", &p.Effort)
	f.add("sandbox", &p.Sandbox)
	f.add("tools", &p.Tools)
	f.add("web_search", &p.WebSearch)
	return f
}

func (p *TurnStarted) members() (f fields) {
	f.add("attempt", &p.Attempt)
	return f
}

func (p *UsageReported) members() (f fields) {
	f.add("usage", &p.Usage)
	return f
}

func (p *ProviderError) members() (f fields) {
	f.add("class", &p.Class)
	f.add("status", &p.Status)
	f.add("type", &p.Type)
	f.add("message", &p.Message)
	f.add("attempt", &p.Attempt)
	return f
}

func (p *RetryScheduled) members() (f fields) {
	f.add("attempt", &p.Attempt)
	f.add("delay_ms", &p.DelayMs)
	f.add("class", &p.Class)
	return f
}

func (p *ToolStarted) members() (f fields) {
	f.add("call_id", &p.CallID)
	f.add("name", &p.Name)
	return f
}

func (p *ToolFinished) members() (f fields) {
	f.add("call_id", &p.CallID)
	f.add("duration_ms", &p.DurationMs)
	f.add("exit_code", &p.ExitCode)
	f.add("outcome", (*string)(&p.Outcome))
	f.add("content", &p.Content)
	f.add("is_error", &p.IsError)
	return f
}

func (p *Cancelled) members() (f fields) {
	f.add("reason", &p.Reason)
	return f
}

func (p *Quiesced) members() (f fields) {
	f.add("reason", &p.Reason)
	f.add("answered", &p.Answered)
	return f
}

func (p *Repaired) members() (f fields) {
	f.add("turn", &p.Turn)
	f.add("what", &p.What)
	f.add("original", &p.Original)
	return f
}

func (p *Nudge) members() (f fields) {
	f.add("reason", &p.Reason)
	f.add("count", &p.Count)
	return f
}

func (p *ModelChanged) members() (f fields) {
	f.add("provider", &p.Provider)
	f.add("model", &p.Model)
	f.add("context_window", &p.ContextWindow)
	f.add("op", &p.Op)
	return f
}

func (p *Pressure) members() (f fields) {
	f.add("line", &p.Line)
	f.add("used", &p.Used)
	f.add("window", &p.Window)
	f.add("limit", &p.Limit)
	return f
}

func (p *Failure) members() (f fields) {
	f.add("message", &p.Message)
	return f
}

func (p *Submission) members() (f fields) {
	f.add("id", &p.ID)
	f.add("op", &p.Op)
	f.add("state", (*string)(&p.State))
	f.add("text", &p.Text)
	f.add("attachments", &p.Attachments)
	f.add("queue", &p.Queue)
	f.add("reason", &p.Reason)
	f.add("detail", &p.Detail)
	return f
}

func (p *Stop) members() (f fields) {
	f.add("op", &p.Op)
	f.add("turn", &p.Turn)
	f.add("withdrawn", &p.Withdrawn)
	f.add("interrupted", &p.Interrupted)
	return f
}

func (p *Renamed) members() (f fields) {
	f.add("title", &p.Title)
	f.add("op", &p.Op)
	return f
}

func (p *Closed) members() (f fields) {
	f.add("op", &p.Op)
	return f
}

func (p *Approval) members() (f fields) {
	f.add("call_id", &p.CallID)
	f.add("name", &p.Name)
	f.add("args", &p.Args)
	f.add("state", &p.State)
	f.add("by", &p.By)
	f.add("op", &p.Op)
	f.add("diff", &p.Diff)
	f.add("rules", &p.Rules)
	f.add("scope", &p.Scope)
	return f
}
