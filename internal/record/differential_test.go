package record

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"pgregory.net/rapid"
)

// This file holds the hand-written decoder (decode.go, jsonread.go) to encoding/json, the decoder
// it replaced: fed the same payload, both refuse, or both accept and give reflect.DeepEqual values.
// The only refusals allowed to differ are the two the record format adds on purpose, a duplicate
// field and a field named in a different case, and a walk of the JSON independent of the decoder
// confirms the payload has one.

// ---- the reference: the decoder as it was, on encoding/json ------------------------------------

// strictJSON decodes exactly one JSON value into v with encoding/json, refusing unknown fields and
// anything but JSON whitespace after it.
func strictJSON(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if len(bytes.TrimLeft(data[dec.InputOffset():], " \t\r\n")) != 0 {
		return errors.New("trailing data after the JSON object")
	}
	return nil
}

// referencePayload decodes a payload of kind k as the encoding/json decoder did.
func referencePayload(k Kind, data []byte) (Payload, error) {
	body := kinds[k].new()
	if t := bytes.TrimLeft(data, " \t\r\n"); len(t) == 0 || t[0] != '{' {
		return nil, errors.New("not a JSON object")
	}
	if err := strictJSON(data, body); err != nil {
		return nil, err
	}
	return body, nil
}

// referenceDecode is Decode as it was: encoding/json reads the envelope, in any order, then the
// payload.
func referenceDecode(line []byte, seq int64) (Record, error) {
	line = bytes.TrimSuffix(line, []byte{'\n'})
	if _, err := Checksum(line); err != nil {
		return Record{}, err
	}
	var env struct {
		V       int             `json:"v"`
		Seq     int64           `json:"seq"`
		T       int64           `json:"t"`
		Class   Class           `json:"class"`
		Kind    Kind            `json:"kind"`
		Payload json.RawMessage `json:"payload"`
		CRC     string          `json:"crc"`
	}
	if err := strictJSON(line, &env); err != nil {
		return Record{}, err
	}
	e, ok := kinds[env.Kind]
	switch {
	case env.V != Version, env.Seq != seq, !ok:
		return Record{}, errors.New("bad envelope")
	case e.class != env.Class, len(env.Payload) == 0 || env.Payload[0] != '{':
		return Record{}, errors.New("bad envelope")
	}
	body := e.new()
	if err := strictJSON(env.Payload, body); err != nil {
		return Record{}, err
	}
	return Record{Seq: env.Seq, Time: env.T, Body: body}, nil
}

// ---- agreement ----------------------------------------------------------------------------------

// disagreement compares the two decoders on one payload of kind k and describes how they differ,
// or returns "".
func disagreement(k Kind, data []byte) string {
	want, werr := referencePayload(k, data)
	got := kinds[k].new()
	gerr := decodePayload(data, got, maxDepth)
	return compareResults(k, data, got, gerr, want, werr)
}

func compareResults(k Kind, payload []byte, got any, gerr error, want any, werr error) string {
	switch {
	case gerr == nil && werr == nil:
		if !reflect.DeepEqual(got, want) {
			return fmt.Sprintf("%s: the decoders disagree on %q:\n fast %#v\n json %#v", k, payload, got, want)
		}
	case gerr == nil:
		return fmt.Sprintf("%s: the fast decoder accepts %q, which encoding/json refuses: %v", k, payload, werr)
	case werr == nil:
		if !errors.Is(gerr, errDuplicateField) && !errors.Is(gerr, errFieldCase) {
			return fmt.Sprintf("%s: the fast decoder refuses %q, which encoding/json accepts: %v", k, payload, gerr)
		}
		if !hasDuplicateOrFoldedKey(payload) {
			return fmt.Sprintf("%s: the fast decoder refuses %q for %v, but it has no duplicate or case-folded field", k, payload, gerr)
		}
	}
	return ""
}

// canonicalNames is every JSON field name of every payload type, from the struct tags.
var canonicalNames = func() map[string]bool {
	names := map[string]bool{}
	for _, t := range decodableTypes() {
		for i := range t.NumField() {
			name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
			names[name] = true
		}
	}
	return names
}()

// hasDuplicateOrFoldedKey walks valid JSON with encoding/json's tokenizer and reports whether an
// object outside a raw value (args, original) names a field twice, or names one only by folding
// case. It shares no code with the decoder under test.
func hasDuplicateOrFoldedKey(data []byte) bool {
	dec := json.NewDecoder(bytes.NewReader(data))
	var walk func() bool
	skip := func() {
		var v json.RawMessage
		_ = dec.Decode(&v)
	}
	walk = func() bool {
		tok, err := dec.Token()
		if err != nil {
			return false
		}
		switch tok {
		case json.Delim('{'):
			seen := map[string]bool{}
			found := false
			for dec.More() {
				t, _ := dec.Token()
				key, _ := t.(string)
				if seen[key] {
					found = true
				}
				seen[key] = true
				if !canonicalNames[key] {
					for name := range canonicalNames {
						if bytes.Equal(foldName([]byte(name)), foldName([]byte(key))) {
							found = true
						}
					}
				}
				if strings.EqualFold(key, "args") || strings.EqualFold(key, "original") {
					skip()
				} else if walk() {
					found = true
				}
			}
			_, _ = dec.Token()
			return found
		case json.Delim('['):
			found := false
			for dec.More() {
				if walk() {
					found = true
				}
			}
			_, _ = dec.Token()
			return found
		}
		return false
	}
	return walk()
}

// decodableTypes lists every struct type a payload is made of.
func decodableTypes() []reflect.Type {
	seen := map[reflect.Type]bool{}
	var out []reflect.Type
	var visit func(t reflect.Type)
	visit = func(t reflect.Type) {
		for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice {
			t = t.Elem()
		}
		if t.Kind() != reflect.Struct || seen[t] {
			return
		}
		seen[t] = true
		out = append(out, t)
		for i := range t.NumField() {
			visit(t.Field(i).Type)
		}
	}
	for _, k := range Kinds() {
		visit(reflect.TypeOf(kinds[k].new()))
	}
	return out
}

// ---- seeds --------------------------------------------------------------------------------------

// goldenPayloads returns the payload bytes of every golden file, cut out of the line by hand.
func goldenPayloads(t testing.TB) map[Kind][]byte {
	out := map[Kind][]byte{}
	for _, k := range Kinds() {
		line, err := os.ReadFile(filepath.Join("testdata", "golden", string(k)+".jsonl"))
		if err != nil {
			t.Fatal(err)
		}
		_, rest, _ := bytes.Cut(line, []byte(`"payload":`))
		out[k] = rest[:bytes.LastIndex(rest, []byte(crcOpen))]
	}
	return out
}

// edgePayloads are payloads aimed at the corners of encoding/json's behaviour.
var edgePayloads = []struct {
	kind    Kind
	payload string
}{
	{KindSystem, `{"text":"a\"b\\c\/d\b\f\n\r\t\u0000\u001f\u00e9\u2028\uFFFF"}`},
	{KindSystem, `{"text":"\ud83d\ude00 \ud83d \ude00 \ud83d\u0041 \udc00\ud800\udc00 \ud800\ud800\udc00"}`},
	{KindSystem, "{\"text\":\"bad \xff \xc3 \xed\xa0\x80 \xf0\x9f\x98 ok \xc3\xa9\"}"},
	{KindSystem, "{\"text\":\"ctl \x01\"}"},
	{KindSystem, `{"text":"\'"}`},
	{KindSystem, `{"text":"\u12"}`},
	{KindSystem, `{"te\u0078t":"escaped key"}`},
	{KindSystem, `{"Text":"case"}`},
	{KindSystem, `{"text":"a","text":"b"}`},
	{KindSystem, `{"text":null}`},
	{KindSystem, `{"text":1}`},
	{KindSystem, " \t\r\n{ \"text\" : \"ws\" } \n"},
	{KindSystem, `{"text":"x"}{}`},
	{KindSystem, `{"text":"x",}`},
	{KindSystem, `null`},
	{KindRewound, `{"anchor":-0}`},
	{KindRewound, `{"anchor":-9223372036854775808}`},
	{KindRewound, `{"anchor":9223372036854775808}`},
	{KindRewound, `{"anchor":1.0}`},
	{KindRewound, `{"anchor":1e2}`},
	{KindRewound, `{"anchor":01}`},
	{KindRewound, `{"anchor":"1"}`},
	{KindTurnStarted, `{"attempt":-1}`},
	{KindInherited, `{"rows":[{"pointer":{"loci":[{"sum":4294967295}]}}]}`},
	{KindInherited, `{"rows":[{"pointer":{"loci":[{"sum":4294967296}]}}]}`},
	{KindInherited, `{"rows":[{"pointer":{"loci":[{"sum":-0}]}}]}`},
	{KindInherited, `{"rows":[null,{"messages":[null]}],"residues":[]}`},
	{KindToolFinished, `{"exit_code":null}`},
	{KindToolFinished, `{"exit_code":-1}`},
	{KindToolFinished, `{"exit_code":true}`},
	{KindToolFinished, `{"call_id":"c","outcome":"ok","content":"a\nTURN: 2","is_error":false}`},
	{KindToolFinished, `{"content":null,"is_error":null}`},
	{KindToolFinished, `{"content":"","is_error":"true"}`},
	{KindToolFinished, `{"Content":"x"}`},
	{KindQuiesced, `{"answered":[]}`},
	{KindQuiesced, `{"answered":null}`},
	{KindQuiesced, `{"answered":[null,"a"]}`},
	{KindAssistantMessage, `{"parts":[{"type":"tool_call","args": { "a" : [1, -0.5e+3, "x\u00e9", {"a":1,"a":2}] } }]}`},
	{KindAssistantMessage, `{"parts":[{"args":null},{"args":"s"},{"args":12},{"args":[]}]}`},
	{KindAssistantMessage, `{"parts":[{"args":{"a":01}}]}`},
	{KindAssistantMessage, `{"parts":[{"args":{"a":1.}}]}`},
	{KindAssistantMessage, `{"parts":[{"args":{"a":-}}]}`},
	{KindAssistantMessage, `{"parts":[{"args":{"a":tru}}]}`},
	{KindAssistantMessage, "{\"parts\":[{\"args\":\"raw \xff kept\"}]}"},
	{KindAssistantMessage, `{"usage":null,"parts":{}}`},
	{KindRepaired, `{"original":[1,2,{"x":null}]}`},
	{KindCleared, `{}`},
	{KindCleared, `{"x":1}`},
	{KindSubmission, `{"queue":null,"attachments":[{"name":"a","data":"AA=="}]}`},
}

// ---- the fuzz target ----------------------------------------------------------------------------

// FuzzDecodeDifferential feeds both decoders the same payload of one kind, alone and inside a
// well-formed line, seeded with every golden file and the corner cases above.
func FuzzDecodeDifferential(f *testing.F) {
	golden := goldenPayloads(f)
	for i, k := range Kinds() {
		f.Add(uint8(i), golden[k])
	}
	for _, e := range edgePayloads {
		f.Add(uint8(kindIndex(e.kind)), []byte(e.payload))
	}
	f.Fuzz(func(t *testing.T, which uint8, payload []byte) {
		k := Kinds()[int(which)%len(Kinds())]
		if d := disagreement(k, payload); d != "" {
			t.Fatal(d)
		}
		if d := lineDisagreement(k, payload); d != "" {
			t.Fatal(d)
		}
	})
}

func kindIndex(k Kind) int {
	for i, x := range Kinds() {
		if x == k {
			return i
		}
	}
	panic(k)
}

// sealed builds the line Encode would write around payload, checksum included.
func sealed(k Kind, seq int64, payload []byte) []byte {
	class, _ := ClassOf(k)
	body := fmt.Appendf(nil, `{"v":1,"seq":%d,"t":1764400000000,"class":"%s","kind":"%s","payload":%s`, seq, class, k, payload)
	var hex [8]byte
	putHex(hex[:], crc32Sum(body))
	return append(append(append(body, crcOpen...), hex[:]...), "\"}\n"...)
}

// lineDisagreement compares Decode with the old Decode on payload sealed in a canonical line.
// Where the payload is not exactly one valid object, Decode must refuse the line; the old decoder
// might not, having read the envelope in any order and whitespace ("payload":{} ,"payload":{...}
// is a line it accepted).
func lineDisagreement(k Kind, payload []byte) string {
	line := sealed(k, 7, payload)
	got, gerr := Decode(line, 7)
	if _, err := referencePayload(k, payload); err != nil || payload[0] != '{' || payload[len(payload)-1] != '}' {
		if gerr == nil {
			return fmt.Sprintf("%s: Decode accepts a line whose payload is not exactly one valid object: %q", k, payload)
		}
		return ""
	}
	want, werr := referenceDecode(line, 7)
	// A DecodeError wraps its cause: compareResults tells a duplicate or case-folded field by it.
	if d := compareResults(k, payload, got, gerr, want, werr); d != "" {
		return "whole line: " + d
	}
	return ""
}

// ---- the property test --------------------------------------------------------------------------

// TestDecodeDifferential generates payloads of every kind, encodes them, rewrites the JSON with
// random whitespace, escapes and mutations (duplicate, case-folded, unknown and missing fields,
// values of every type, invalid UTF-8, lone surrogates, flipped, cut and inserted bytes), and
// holds the two decoders to agreement on each.
func TestDecodeDifferential(t *testing.T) {
	// rapid picks a random seed it prints only on failure; pick it here so that it is always shown.
	seedFlag := flag.Lookup("rapid.seed").Value
	if seedFlag.String() == "0" {
		if err := seedFlag.Set(fmt.Sprint(uint64(time.Now().UnixNano()))); err != nil {
			t.Fatal(err)
		}
		defer seedFlag.Set("0")
	}
	t.Logf("seed %s (rerun with -rapid.seed=%[1]s)", seedFlag)
	// A check takes tens of microseconds: run thousands unless told otherwise (-rapid.checks).
	if checks := flag.Lookup("rapid.checks").Value; checks.String() == "100" && !testing.Short() {
		if err := checks.Set("3000"); err != nil {
			t.Fatal(err)
		}
		defer checks.Set("100")
	}

	rapid.Check(t, func(rt *rapid.T) {
		k := rapid.SampledFrom(Kinds()).Draw(rt, "kind")
		p := kinds[k].new()
		fill(rt, reflect.ValueOf(p).Elem(), 0)
		var b bytes.Buffer
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(p); err != nil {
			rt.Fatal(err)
		}
		canonical := bytes.TrimSuffix(b.Bytes(), []byte{'\n'})

		// What Encode writes decodes, on both paths, to the same value.
		line, err := Encode(Record{Seq: 3, Time: -1, Body: p})
		if err != nil {
			rt.Fatal(err)
		}
		got, gerr := Decode(line, 3)
		want, werr := referenceDecode(line, 3)
		if gerr != nil || werr != nil || !reflect.DeepEqual(got, want) {
			rt.Fatalf("%s: Encode's line %q: fast %#v (%v), json %#v (%v)", k, line, got, gerr, want, werr)
		}

		payload := rewrite(rt, canonical)
		if d := disagreement(k, payload); d != "" {
			rt.Fatal(d)
		}
		if d := lineDisagreement(k, payload); d != "" {
			rt.Fatal(d)
		}
	})
}

// ---- the corners, pinned ------------------------------------------------------------------------

// Every edge payload and every golden payload gets the same answer from both decoders.
func TestDecodeDifferentialEdges(t *testing.T) {
	for k, p := range goldenPayloads(t) {
		if d := disagreement(k, p); d != "" {
			t.Error(d)
		}
	}
	for _, e := range edgePayloads {
		if d := disagreement(e.kind, []byte(e.payload)); d != "" {
			t.Error(d)
		}
		if d := lineDisagreement(e.kind, []byte(e.payload)); d != "" {
			t.Error(d)
		}
	}
}

// Nesting is refused past encoding/json's limit, counted from the envelope on a whole line.
func TestDecodeDepthLimit(t *testing.T) {
	args := func(depth int) []byte {
		// The payload object, parts array and part object are three levels; args brings the rest.
		n := depth - 3
		return []byte(`{"parts":[{"args":` + strings.Repeat("[", n) + strings.Repeat("]", n) + `}]}`)
	}
	for _, c := range []struct {
		depth int
		ok    bool
	}{{maxDepth - 1, true}, {maxDepth, true}, {maxDepth + 1, false}} {
		if d := disagreement(KindAssistantMessage, args(c.depth)); d != "" {
			t.Errorf("depth %d: %s", c.depth, d)
		}
		err := decodePayload(args(c.depth), new(AssistantMessage), maxDepth)
		if (err == nil) != c.ok {
			t.Errorf("payload depth %d: got %v, want ok=%v", c.depth, err, c.ok)
		}
		// In a line the envelope is the first level.
		if d := lineDisagreement(KindAssistantMessage, args(c.depth-1)); d != "" {
			t.Errorf("line depth %d: %s", c.depth, d)
		}
	}
}

// json.RawMessage fields keep the bytes as written, null included, as encoding/json keeps them.
func TestDecodeRawArgs(t *testing.T) {
	payload := `{"parts":[{"type":"tool_call","args": {"b" : [1, 2.5e3],"a":"\u00e9"} },{"args":null}]}`
	var m AssistantMessage
	if err := decodePayload([]byte(payload), &m, maxDepth); err != nil {
		t.Fatal(err)
	}
	if got := string(m.Parts[0].Args); got != `{"b" : [1, 2.5e3],"a":"\u00e9"}` {
		t.Errorf("args = %s", got)
	}
	if got := string(m.Parts[1].Args); got != "null" {
		t.Errorf("null args = %q", got)
	}
}

// Every members list names exactly its type's tagged fields, in order, each pointing at its field.
func TestMembersMatchTags(t *testing.T) {
	for _, typ := range decodableTypes() {
		p := reflect.New(typ)
		d, ok := p.Interface().(decodable)
		if !ok {
			t.Errorf("%s has no members method", typ)
			continue
		}
		fs := d.members()
		if fs.n != typ.NumField() {
			t.Errorf("%s lists %d members for %d fields: list every field in its members method (decode.go)", typ, fs.n, typ.NumField())
			continue
		}
		for i := range typ.NumField() {
			name, _, _ := strings.Cut(typ.Field(i).Tag.Get("json"), ",")
			f := fs.f[i]
			dst := reflect.ValueOf(f.dst)
			if f.name != name || dst.Pointer() != p.Elem().Field(i).Addr().Pointer() ||
				dst.Elem().Kind() != typ.Field(i).Type.Kind() {
				t.Errorf("%s member %d is %q (%T), want field %s tagged %q", typ, i, f.name, f.dst, typ.Field(i).Name, name)
			}
		}
	}
}

// plain's eight-bytes-at-a-time scan finds the same stop as a byte loop, wherever the stop falls
// in a word and whatever high bytes come before or after it.
func TestPlain(t *testing.T) {
	naive := func(b []byte, i int) (int, bool) {
		ascii := true
		for ; i < len(b) && b[i] != '"' && b[i] != '\\' && b[i] >= 0x20; i++ {
			ascii = ascii && b[i] < 0x80
		}
		return i, ascii
	}
	fillers := []byte{'a', ' ', '!', '#', '[', ']', 0x7f, 0x80, 0xa2, 0xdc, 0xe9, 0xff}
	for n := 0; n < 40; n++ {
		for stop := 0; stop <= n; stop++ {
			for _, c := range []byte{'"', '\\', 0, 0x1f, '\n'} {
				for _, hi := range []int{-1, 0, stop - 1, stop + 1, n - 1} {
					b := make([]byte, n)
					for i := range b {
						b[i] = fillers[(i*7+n)%3] // printable ASCII only
					}
					if hi >= 0 && hi < n {
						b[hi] = fillers[7+(hi+n)%5]
					}
					if stop < n {
						b[stop] = c
					}
					for from := 0; from <= min(n, 3); from++ {
						gi, ga := plain(b, from)
						wi, wa := naive(b, from)
						if gi != wi || ga != wa {
							t.Fatalf("plain(%q, %d) = %d, %v; want %d, %v", b, from, gi, ga, wi, wa)
						}
					}
				}
			}
		}
	}
}
