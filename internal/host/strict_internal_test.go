package host

import "testing"

// unknownField finds a field the struct does not take by the body, as encoding/json judges it:
// names match case-folded, an untagged field by its Go name, a "-" field never; the first unknown
// one is named, in the order written; a nested object's fields are not the endpoint's.
func TestUnknownField(t *testing.T) {
	var req struct {
		Op      string `json:"op_id"`
		Text    string `json:"text,omitempty"`
		Queue   bool
		Secret  string `json:"-"`
		Attach  []struct{ Name string }
		private int
	}
	for _, c := range []struct {
		body string
		want string
	}{
		{`{"op_id":"1","txt":"hi"}`, "txt"},
		{`{"OP_ID":"1","Text":"hi","queue":true}`, ""},
		{`{"op_id":"1","zz":1,"aa":2}`, "zz"},
		{`{"Secret":"x"}`, "Secret"},
		{`{"private":1}`, "private"},
		{`{"attach":[{"nosuch":1}]}`, ""},
		{`[1,2]`, ""},
		{`{"op_id":`, ""},
	} {
		got, ok := unknownField([]byte(c.body), &req)
		if got != c.want || ok != (c.want != "") {
			t.Errorf("unknownField(%s) = %q, %v; want %q", c.body, got, ok, c.want)
		}
	}
	_ = req.private
}
