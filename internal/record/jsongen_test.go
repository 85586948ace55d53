package record

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"unicode/utf8"

	"pgregory.net/rapid"
)

// This file generates the payloads TestDecodeDifferential feeds both decoders: random values of
// every payload type, re-emitted as JSON with random whitespace and escapes, some of them mutated
// into near misses.

// rewrite re-emits canonical JSON with random whitespace and escapes and up to three mutations.
func rewrite(rt *rapid.T, canonical []byte) []byte {
	tree := parseTree(rt, canonical)
	for n := rapid.IntRange(-3, 3).Draw(rt, "mutations"); n > 0; n-- {
		mutateTree(rt, tree)
	}
	// Per-character noise comes from a generator seeded by rapid: rapid's own draws favour the
	// ends of a range, which would make "one character in thirty" nearly every character.
	rng := rand.New(rand.NewPCG(rapid.Uint64().Draw(rt, "noise"), 0))
	return mutateBytes(rng, emit(rng, tree, nil))
}

// trickyRunes are the characters that exercise escaping: quotes, backslashes, controls, the
// separators encoding/json escapes, multi-byte and astral characters, and U+FFFD itself.
var trickyRunes = []rune{'a', 'Z', ' ', '"', '\\', '/', '\n', '\t', '\x00', '\x1f', '\x7f', 'é', '✓',
	'\u2028', '\u2029', '\ufeff', '\ufffd', '😀', '\U0010ffff', '<', '&'}

// fill sets v to a random value of its type.
func fill(rt *rapid.T, v reflect.Value, depth int) {
	if v.Type() == reflect.TypeOf(json.RawMessage(nil)) {
		if rapid.Bool().Draw(rt, "raw set") {
			v.SetBytes(randomJSON(rt, depth))
		}
		return
	}
	switch v.Kind() {
	case reflect.String:
		var s []byte
		for n := rapid.IntRange(0, 12).Draw(rt, "len"); n > 0; n-- {
			if rapid.IntRange(0, 20).Draw(rt, "invalid") == 0 {
				s = append(s, rapid.SampledFrom([]byte{0x80, 0xc3, 0xed, 0xff}).Draw(rt, "byte"))
			} else {
				s = utf8.AppendRune(s, rapid.SampledFrom(trickyRunes).Draw(rt, "rune"))
			}
		}
		v.SetString(string(s))
	case reflect.Int, reflect.Int64:
		v.SetInt(rapid.SampledFrom([]int64{0, 1, -1, 42, 1 << 53, -1 << 63, 1<<63 - 1}).Draw(rt, "int"))
	case reflect.Uint32:
		v.SetUint(uint64(rapid.Uint32().Draw(rt, "uint32")))
	case reflect.Bool:
		v.SetBool(rapid.Bool().Draw(rt, "bool"))
	case reflect.Pointer:
		if rapid.Bool().Draw(rt, "ptr set") {
			v.Set(reflect.New(v.Type().Elem()))
			fill(rt, v.Elem(), depth+1)
		}
	case reflect.Slice:
		switch n := rapid.IntRange(-1, 3).Draw(rt, "slice len"); {
		case n < 0 || depth > 3:
		default:
			s := reflect.MakeSlice(v.Type(), n, n)
			for i := range n {
				fill(rt, s.Index(i), depth+1)
			}
			v.Set(s)
		}
	case reflect.Struct:
		for i := range v.NumField() {
			fill(rt, v.Field(i), depth+1)
		}
	default:
		panic(v.Type())
	}
}

// randomJSON returns a small random JSON value, compact as encoding/json would write it.
func randomJSON(rt *rapid.T, depth int) []byte {
	choices := []string{`null`, `true`, `false`, `0`, `-1.5e+3`, `"s"`, `"é\n"`, `{}`, `[]`}
	if depth < 6 {
		choices = append(choices, "obj", "arr")
	}
	switch c := rapid.SampledFrom(choices).Draw(rt, "json"); c {
	case "obj":
		return fmt.Appendf(nil, `{"a":%s,"b":%s}`, randomJSON(rt, depth+1), randomJSON(rt, depth+1))
	case "arr":
		return fmt.Appendf(nil, `[%s,%s]`, randomJSON(rt, depth+1), randomJSON(rt, depth+1))
	default:
		return []byte(c)
	}
}

// node is a JSON value as the mutator sees it: members keep their order and may repeat.
type node struct {
	kind byte   // '{', '[', '"', '0' (number), 'l' (true, false, null)
	text string // a string's value, a number's or a literal's text
	keys []string
	kids []*node
}

func parseTree(rt *rapid.T, data []byte) *node {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var read func() *node
	read = func() *node {
		tok, err := dec.Token()
		if err != nil {
			rt.Fatalf("parse %q: %v", data, err)
		}
		switch v := tok.(type) {
		case json.Delim:
			n := &node{kind: byte(v)}
			for dec.More() {
				if v == '{' {
					k, _ := dec.Token()
					n.keys = append(n.keys, k.(string))
				}
				n.kids = append(n.kids, read())
			}
			_, _ = dec.Token()
			return n
		case string:
			return &node{kind: '"', text: v}
		case json.Number:
			return &node{kind: '0', text: string(v)}
		case bool:
			return &node{kind: 'l', text: fmt.Sprint(v)}
		default:
			return &node{kind: 'l', text: "null"}
		}
	}
	return read()
}

func nodes(n *node, out []*node) []*node {
	out = append(out, n)
	for _, k := range n.kids {
		out = nodes(k, out)
	}
	return out
}

// mutateTree makes one random change to the tree.
func mutateTree(rt *rapid.T, root *node) {
	all := nodes(root, nil)
	var objects []*node
	for _, n := range all {
		if n.kind == '{' && len(n.keys) > 0 {
			objects = append(objects, n)
		}
	}
	op := rapid.IntRange(0, 5).Draw(rt, "op")
	if op <= 3 && len(objects) == 0 {
		op = 4
	}
	switch op {
	case 0: // a field twice, with its own value or another's
		o := rapid.SampledFrom(objects).Draw(rt, "object")
		i := rapid.IntRange(0, len(o.keys)-1).Draw(rt, "member")
		j := rapid.IntRange(0, len(o.keys)-1).Draw(rt, "value of")
		o.keys = append(o.keys, o.keys[i])
		o.kids = append(o.kids, o.kids[j])
	case 1: // a field in another case
		o := rapid.SampledFrom(objects).Draw(rt, "object")
		i := rapid.IntRange(0, len(o.keys)-1).Draw(rt, "member")
		k := o.keys[i]
		switch rapid.IntRange(0, 2).Draw(rt, "fold") {
		case 0:
			k = strings.ToUpper(k)
		case 1:
			k = strings.Replace(k, "s", "ſ", 1) // folds to "s" in encoding/json
		default:
			k = strings.Replace(k, "k", "\u212a", 1) // the Kelvin sign folds to "k"
		}
		o.keys[i] = k
	case 2: // an unknown field
		o := rapid.SampledFrom(objects).Draw(rt, "object")
		o.keys = append(o.keys, rapid.SampledFrom([]string{"extra", "", "tex", "texts", "call_id"}).Draw(rt, "unknown"))
		o.kids = append(o.kids, &node{kind: 'l', text: "null"})
	case 3: // a field dropped
		o := rapid.SampledFrom(objects).Draw(rt, "object")
		i := rapid.IntRange(0, len(o.keys)-1).Draw(rt, "member")
		o.keys = append(o.keys[:i], o.keys[i+1:]...)
		o.kids = append(o.kids[:i], o.kids[i+1:]...)
	default: // a value replaced by one of another type or shape
		n := rapid.SampledFrom(all[min(1, len(all)-1):]).Draw(rt, "node") // the root rarely: not an object
		v := rapid.SampledFrom([]string{`null`, `true`, `false`, `0`, `-0`, `7`, `1.0`, `1e2`, `-1`,
			`18446744073709551616`, `9223372036854775808`, `-9223372036854775808`, `4294967296`,
			`"str"`, `""`, `[]`, `{}`, `[null]`, `[{}]`, `["a"]`, `{"a":1}`}).Draw(rt, "value")
		*n = *parseTree(rt, []byte(v))
	}
}

var spaces = []string{"", "", "", " ", "\n", "\t", "\r\n  "}

// emit writes the tree as JSON with random whitespace and random (sometimes invalid) escaping.
func emit(rng *rand.Rand, n *node, out []byte) []byte {
	ws := func() { out = append(out, pick(rng, spaces)...) }
	switch n.kind {
	case '{', '[':
		out = append(out, n.kind)
		ws()
		for i, kid := range n.kids {
			if i > 0 {
				out = append(out, ',')
				ws()
			}
			if n.kind == '{' {
				out = emitString(rng, n.keys[i], out, 300) // rarely odd: that makes the field unknown
				ws()
				out = append(out, ':')
				ws()
			}
			out = emit(rng, kid, out)
			ws()
		}
		return append(out, n.kind+2) // '{'+2 is '}', '['+2 is ']'
	case '"':
		return emitString(rng, n.text, out, 30)
	default:
		return append(out, n.text...)
	}
}

// emitString writes s with random escapes; about one character in oddity is preceded by something
// odd, mostly valid (lone surrogates, invalid UTF-8), now and then not (a bad escape, a raw control).
func emitString(rng *rand.Rand, s string, out []byte, oddity int) []byte {
	out = append(out, '"')
	for _, r := range s {
		if rng.IntN(oddity) == 0 {
			if rng.IntN(20) == 0 {
				out = append(out, pick(rng, []string{`\'`, "\x01", "\x1f", `\u00`, `\x41`, `\`})...)
			} else {
				out = append(out, pick(rng, []string{`\ud800`, `\udc00`, `\udbff\udfff`, `\udfff\udbff`,
					`\ud800\u0041`, `\ud800\\`, "\xff", "\xc3", "\xed\xa0\x80", "\xf0\x9f\x98", `\/`})...)
			}
		}
		if rng.IntN(7) == 0 { // \u, lower or upper hex, a pair beyond the BMP
			format := pick(rng, []string{`\u%04x`, `\u%04X`})
			if r > 0xffff {
				r -= 0x10000
				out = fmt.Appendf(out, format+format, 0xd800+(r>>10), 0xdc00+(r&0x3ff))
			} else {
				out = fmt.Appendf(out, format, r)
			}
			continue
		}
		switch r {
		case '"':
			out = append(out, `\"`...)
		case '\\':
			out = append(out, `\\`...)
		case '\n':
			out = append(out, `\n`...)
		case '\t':
			out = append(out, `\t`...)
		case utf8.RuneError:
			out = append(out, `\ufffd`...)
		default:
			if r < 0x20 {
				out = fmt.Appendf(out, `\u%04x`, r)
			} else {
				out = utf8.AppendRune(out, r)
			}
		}
	}
	return append(out, '"')
}

// mutateBytes now and then damages the JSON text itself.
func mutateBytes(rng *rand.Rand, b []byte) []byte {
	if len(b) == 0 {
		return b
	}
	switch rng.IntN(25) {
	case 0:
		i := rng.IntN(len(b))
		b[i] ^= byte(1 + rng.IntN(255))
	case 1:
		i := rng.IntN(len(b))
		b = append(b[:i], b[i+1:]...)
	case 2:
		i := rng.IntN(len(b) + 1)
		c := pick(rng, []byte{'"', '\\', ',', ':', '{', '}', '[', ']', ' ', 0, 0x80, 0xff, 'u', '0'})
		b = append(b[:i], append([]byte{c}, b[i:]...)...)
	case 3:
		b = b[:rng.IntN(len(b))]
	case 4:
		b = append(b, pick(rng, []string{" ", "\n", "x", "{}", ",", "\v"})...)
	}
	return b
}

func pick[T any](rng *rand.Rand, from []T) T { return from[rng.IntN(len(from))] }
