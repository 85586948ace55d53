package sim

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/reinhq/rein/internal/provider"
	"pgregory.net/rapid"
)

// genBody draws a request-like body: some fields before and after a messages array (which may
// be missing, repeated or not an array), the array's elements drawn from elems, spaces here and
// there, and now and then a byte broken.
func genBody(t *rapid.T, label string, elems []string) string {
	ws := func() string { return rapid.SampledFrom([]string{"", "", " ", "\n  "}).Draw(t, label+"ws") }
	var fields []string
	for range rapid.IntRange(0, 2).Draw(t, label+"before") {
		fields = append(fields, ws()+`"`+rapid.SampledFrom([]string{"model", "system", "Messages", "max_tokens"}).Draw(t, label+"name")+`":`+ws()+rapid.SampledFrom([]string{`"sim-1"`, `8192`, `[1,{"a":"]"}]`, `{"x":"\"}"}`}).Draw(t, label+"value"))
	}
	switch rapid.IntRange(0, 9).Draw(t, label+"arr") {
	case 0: // none
	case 1:
		fields = append(fields, `"messages":"not an array"`)
	default:
		var b strings.Builder
		b.WriteString(`"messages":` + ws() + "[")
		for i, e := range elems {
			if i > 0 {
				b.WriteString(ws() + "," + ws())
			}
			b.WriteString(e)
		}
		b.WriteString(ws() + "]")
		fields = append(fields, b.String())
	}
	for range rapid.IntRange(0, 2).Draw(t, label+"after") {
		fields = append(fields, `"`+rapid.SampledFrom([]string{"tools", "stream", "messages"}).Draw(t, label+"aname")+`":`+ws()+rapid.SampledFrom([]string{`true`, `[{"name":"bash"}]`, `[]`, `[{"role":"user","content":"late"}]`}).Draw(t, label+"avalue"))
	}
	body := ws() + "{" + ws() + strings.Join(fields, ","+ws()) + ws() + "}" + ws()
	if rapid.IntRange(0, 15).Draw(t, label+"break") == 0 && len(body) > 0 {
		i := rapid.IntRange(0, len(body)-1).Draw(t, label+"at")
		body = body[:i] + rapid.SampledFrom([]string{"", "\"", "]", "{", "x"}).Draw(t, label+"with") + body[i+1:]
	}
	return body
}

func genElems(t *rapid.T, label string, n int) []string {
	var out []string
	for i := range n {
		out = append(out, fmt.Sprintf(`{"role":"%s","content":%s}`, rapid.SampledFrom([]string{"user", "assistant"}).Draw(t, label+"role"),
			rapid.SampledFrom([]string{`"x"`, `"a \"quoted\" ]"`, `[{"type":"text","text":"[turn ` + fmt.Sprint(i) + `]"}]`, `[]`, `{"k":[1,2,{"z":null}]}`}).Draw(t, label+"content")))
	}
	return out
}

// TestSplitFromIsWhole: cutting a body from an earlier body's cut gives what cutting it whole
// gives — the same fields, the same elements, the same refusal — and both agree with topFields
// and elements, for bodies that share a prefix as a conversation's requests do (the later one
// longer, its last elements changed) and for bodies that share little or nothing.
func TestSplitFromIsWhole(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		elems := genElems(t, "e", rapid.IntRange(0, 8).Draw(t, "n"))
		keep := rapid.IntRange(0, len(elems)).Draw(t, "keep")
		next := append(append([]string{}, elems[:keep]...), genElems(t, "f", rapid.IntRange(0, 4).Draw(t, "more"))...)
		prevBody := genBody(t, "p", elems)
		nextBody := genBody(t, "q", next)
		switch rapid.IntRange(0, 3).Draw(t, "how") {
		case 0:
			nextBody = prevBody
		case 1, 2: // a conversation's next request: the same bytes up to a kept element, then others
			if i := strings.Index(prevBody, strings.Join(elems[:keep], ",")); keep > 0 && i >= 0 {
				head := prevBody[:i+len(strings.Join(elems[:keep], ","))]
				rest := genElems(t, "g", rapid.IntRange(0, 3).Draw(t, "added"))
				tail := rapid.SampledFrom([]string{`]}`, `],"tools":[{"name":"x"}]}`, ` ] , "stream":true }`, `]`, `],"messages":[]}`, `,{"role":"user"}]}`}).Draw(t, "tail")
				nextBody = head
				for _, e := range rest {
					nextBody += "," + e
				}
				nextBody += tail
			}
		}
		items := rapid.SampledFrom([]string{"messages", "input"}).Draw(t, "items")
		whole, wok := splitBody([]byte(nextBody), items)
		prev, pok := splitBody([]byte(prevBody), items)
		var from cut
		var fok bool
		if pok {
			from, fok = splitFrom([]byte(nextBody), &prev, items)
		} else {
			from, fok = splitFrom([]byte(nextBody), nil, items)
		}
		if wok != fok {
			t.Fatalf("whole %v, from %v\nprev %s\nnext %s", wok, fok, prevBody, nextBody)
		}
		// What topFields and elements make of it.
		f, ok := topFields([]byte(nextBody))
		var els [][]byte
		if ok {
			els, ok = elements(f[items])
		}
		if ok != wok {
			t.Fatalf("topFields/elements %v, splitBody %v: %s", ok, wok, nextBody)
		}
		if !ok {
			return
		}
		wf, we := whole.parts()
		ff, fe := from.parts()
		if d := cmp.Diff(f, wf); d != "" {
			t.Fatalf("splitBody's fields (-topFields +splitBody):\n%s", d)
		}
		if d := cmp.Diff(els, we); d != "" {
			t.Fatalf("splitBody's elements (-elements +splitBody):\n%s", d)
		}
		if d := cmp.Diff(wf, ff); d != "" {
			t.Fatalf("splitFrom's fields (-whole +from):\n%s\nprev %s\nnext %s", d, prevBody, nextBody)
		}
		if d := cmp.Diff(we, fe); d != "" {
			t.Fatalf("splitFrom's elements (-whole +from):\n%s\nprev %s\nnext %s", d, prevBody, nextBody)
		}
	})
}

// TestSplitFromResumes: a conversation's next request is cut from where it parts from the last:
// the elements inside the common prefix are the earlier cut's, not scanned again (shown with an
// earlier cut whose first element was tampered with).
func TestSplitFromResumes(t *testing.T) {
	prev := []byte(`{"model":"m","messages":[{"role":"user","content":"a"},{"role":"assistant","content":"b"}],"tools":[]}`)
	next := []byte(`{"model":"m","messages":[{"role":"user","content":"a"},{"role":"assistant","content":"b"},{"role":"user","content":"c"}],"tools":[]}`)
	p, ok := splitBody(prev, "messages")
	if !ok {
		t.Fatal("prev does not cut")
	}
	whole, _ := splitBody(next, "messages")
	from, ok := splitFrom(next, &p, "messages")
	if !ok || !slices.Equal(whole.els, from.els) || !slices.Equal(whole.fields, from.fields) {
		t.Fatalf("got %v %+v, want %+v", ok, from, whole)
	}
	p.els[0].end-- // inside the common prefix: a resumed cut keeps it as it is
	from, _ = splitFrom(next, &p, "messages")
	if from.els[0].end != whole.els[0].end-1 {
		t.Error("splitFrom scanned the common prefix again")
	}
}

// topFields and elements are how the simulator cut a body before cut: the reference the cuts
// are held to.

// topFields splits a JSON object into its fields' raw values, by name folded to lower case, as
// encoding/json matches them to a struct's fields (case-insensitively; the last of two wins). It
// refuses (false) what it cannot read plainly: not an object, a name escaped or not ASCII.
func topFields(body []byte) (map[string][]byte, bool) {
	n := len(body)
	i := provider.SkipSpace(body, 0)
	if i == n || body[i] != '{' {
		return nil, false
	}
	fields := map[string][]byte{}
	i = provider.SkipSpace(body, i+1)
	if i < n && body[i] == '}' {
		return fields, provider.SkipSpace(body, i+1) == n
	}
	for {
		if i == n || body[i] != '"' {
			return nil, false
		}
		k := i + 1
		for k < n && body[k] != '"' {
			if body[k] == '\\' || body[k] >= 0x80 {
				return nil, false
			}
			k++
		}
		if k == n {
			return nil, false
		}
		name := string(bytes.ToLower(body[i+1 : k]))
		i = provider.SkipSpace(body, k+1)
		if i == n || body[i] != ':' {
			return nil, false
		}
		i = provider.SkipSpace(body, i+1)
		j, ok := provider.ValueEnd(body, i)
		if !ok {
			return nil, false
		}
		fields[name] = body[i:j]
		i = provider.SkipSpace(body, j)
		if i == n {
			return nil, false
		}
		if body[i] == '}' {
			return fields, provider.SkipSpace(body, i+1) == n
		}
		if body[i] != ',' {
			return nil, false
		}
		i = provider.SkipSpace(body, i+1)
	}
}

// elements splits a JSON array into its elements' raw values; false if raw is not one.
func elements(raw []byte) ([][]byte, bool) {
	n := len(raw)
	i := provider.SkipSpace(raw, 0)
	if i == n || raw[i] != '[' {
		return nil, false
	}
	var out [][]byte
	i = provider.SkipSpace(raw, i+1)
	if i < n && raw[i] == ']' {
		return out, provider.SkipSpace(raw, i+1) == n
	}
	for {
		j, ok := provider.ValueEnd(raw, i)
		if !ok {
			return nil, false
		}
		out = append(out, raw[i:j])
		i = provider.SkipSpace(raw, j)
		if i == n {
			return nil, false
		}
		if raw[i] == ']' {
			return out, provider.SkipSpace(raw, i+1) == n
		}
		if raw[i] != ',' {
			return nil, false
		}
		i = provider.SkipSpace(raw, i+1)
	}
}
