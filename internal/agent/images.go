package agent

import (
	"fmt"

	"github.com/reinhq/rein/internal/record"
)

// picturesNamed returns msgs with each picture's data (an attachment, a tool result's image)
// replaced by a line saying what it was, for the transcript door: a turn read back as text would
// otherwise hand the model megabytes of base64 it cannot see as a picture. msgs is not changed.
func picturesNamed(msgs []record.Message) []record.Message {
	named := func(p record.Part) record.Part {
		if p.Type == record.PartImage && p.Data != "" {
			p.Data = fmt.Sprintf("[rein: %d bytes of base64, not repeated in a transcript read]", len(p.Data))
		}
		return p
	}
	out := make([]record.Message, len(msgs))
	for i, m := range msgs {
		parts := make([]record.Part, len(m.Parts))
		for j, p := range m.Parts {
			p = named(p)
			if len(p.Images) > 0 {
				imgs := make([]record.Part, len(p.Images))
				for k, q := range p.Images {
					imgs[k] = named(q)
				}
				p.Images = imgs
			}
			parts[j] = p
		}
		out[i] = record.Message{Role: m.Role, Parts: parts}
	}
	return out
}
