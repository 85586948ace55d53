package anthropic

import "github.com/reinhq/rein/internal/record"

// resultBlocks renders a tool result that carries images as a content list: its text, then each
// image as a base64 image block (the Messages API's tool_result content).
func resultBlocks(p *record.Part) []wireBlock {
	blocks := make([]wireBlock, 0, 1+len(p.Images))
	if p.Text != "" {
		blocks = append(blocks, wireBlock{Type: "text", Text: &p.Text})
	}
	for j := range p.Images {
		img := &p.Images[j]
		blocks = append(blocks, wireBlock{Type: "image", Source: &wireSource{Type: "base64", MediaType: img.MediaType, Data: img.Data}})
	}
	return blocks
}

// TakesImages reports whether model reads images: every Claude model from Claude 3 on does, and
// rein knows no other.
func TakesImages(model string) bool { return true }
