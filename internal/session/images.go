package session

import "github.com/reinhq/rein/internal/record"

// carriesImages reports whether p is a batch of tool results with a picture among them: its line
// is written as a blob line whatever its length (record's package doc, "Fields added later"), so
// an image's bytes rest in the blob store beside the record, by digest, and never in the
// record's own lines.
func carriesImages(p record.Payload) bool {
	b, ok := p.(*record.ToolResults)
	if !ok {
		return false
	}
	for _, r := range b.Results {
		if len(r.Images) > 0 {
			return true
		}
	}
	return false
}
