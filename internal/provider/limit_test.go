package provider

import "testing"

func TestStatedLimit(t *testing.T) {
	for _, c := range []struct {
		msg  string
		want int64
	}{
		{"prompt is too long: 3333404 tokens > 200000 maximum", 200000},
		{"This model's maximum context length is 8192 tokens. However, your messages resulted in 9000 tokens. Please reduce the length of the messages.", 8192},
		{"This model's maximum context length is 4096 tokens. However, you requested 5000 tokens (4000 in the messages, 1000 in the completion).", 4096},
		{"request (8192 tokens) exceeds the available context size (4096 tokens), try increasing it", 4096},
		{"Your input exceeds the context window of this model. Please adjust your input and try again. (rein simulator: 13000 tokens > 12288 maximum)", 12288},
		{"Your input exceeds the context window of this model. Please adjust your input and try again.", 0},
		{"the request exceeds the available context size, try increasing it", 0},
		{"", 0},
	} {
		if got := StatedLimit(c.msg); got != c.want {
			t.Errorf("StatedLimit(%q) = %d, want %d", c.msg, got, c.want)
		}
	}
}
