package providertest

import (
	"encoding/json"

	"pgregory.net/rapid"

	"github.com/reinhq/rein/internal/record"
)

// Evolve draws the next shape of a conversation's messages, as the agent's requests see them from
// one to the next: it grows (its new messages' parts drawn by parts), a message is changed in
// place (the same backing arrays, other contents), one is dropped (an eviction), repeated, or two
// are swapped. The encoders' memo tests hold each request through a Memo to the one without.
func Evolve(t *rapid.T, msgs []record.Message, parts func(*rapid.T, record.Role) []record.Part) []record.Message {
	switch op := rapid.IntRange(0, 5).Draw(t, "op"); {
	case op <= 1 || len(msgs) == 0: // the conversation grows
		for range rapid.IntRange(1, 4).Draw(t, "grow") {
			role := rapid.SampledFrom([]record.Role{record.User, record.Assistant}).Draw(t, "role")
			msgs = append(msgs, record.Message{Role: role, Parts: parts(t, role)})
		}
	case op == 2: // a message changed in place: same array, other contents
		i := rapid.IntRange(0, len(msgs)-1).Draw(t, "changed")
		if len(msgs[i].Parts) > 0 {
			p := &msgs[i].Parts[rapid.IntRange(0, len(msgs[i].Parts)-1).Draw(t, "part")]
			switch rapid.IntRange(0, 5).Draw(t, "field") {
			case 0:
				p.Text += rapid.SampledFrom([]string{"x", " ", "\n", "é"}).Draw(t, "more")
			case 1:
				p.Args = json.RawMessage(rapid.SampledFrom([]string{`{"a":2}`, `{"input":"x"}`, `{}`, ``, `{bad`}).Draw(t, "args"))
			case 2:
				p.IsError = !p.IsError
			case 3:
				p.Signature = rapid.SampledFrom([]string{"", "sig2"}).Draw(t, "sig")
			case 4:
				p.Name = rapid.SampledFrom([]string{"shell", "apply_patch"}).Draw(t, "renamed")
			case 5:
				p.Data = rapid.SampledFrom([]string{"", `{"id":"rs_9"}`}).Draw(t, "data")
			}
		}
	case op == 3 && len(msgs) > 1: // a message dropped (an eviction)
		i := rapid.IntRange(0, len(msgs)-1).Draw(t, "dropped")
		msgs = append(msgs[:i:i], msgs[i+1:]...)
	case op == 4: // a message repeated
		msgs = append(msgs, msgs[rapid.IntRange(0, len(msgs)-1).Draw(t, "repeated")])
	default: // two messages swapped
		i, j := rapid.IntRange(0, len(msgs)-1).Draw(t, "i"), rapid.IntRange(0, len(msgs)-1).Draw(t, "j")
		msgs[i], msgs[j] = msgs[j], msgs[i]
	}
	return msgs
}
