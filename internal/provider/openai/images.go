package openai

import (
	"fmt"
	"strings"

	"github.com/reinhq/rein/internal/provider"
	"github.com/reinhq/rein/internal/record"
)

// Tool results that carry images (a read_file of a picture):
//
//   - Responses: the function_call_output's output is a list, its text as input_text and each image
//     as input_image with a data URL, as the API documents for function outputs.
//   - Chat: a tool message holds text only, so the result's text says which pictures it had and
//     that they follow (chatImageNote), and the user message after the batch's tool messages
//     carries them, each after a line naming the call it answers (chatImages). The Chat API takes
//     a user message right after tool messages; rein sends it only to models that take images,
//     since read_file gives no picture to any other.

// respOutputItem is a function_call_output whose output is a list of content parts.
type respOutputParts struct {
	Type   string        `json:"type"`
	CallID string        `json:"call_id"`
	Output []respContent `json:"output"`
}

func outputWithImages(p *record.Part) respOutputParts {
	out := respOutputParts{Type: "function_call_output", CallID: p.CallID, Output: make([]respContent, 0, 1+len(p.Images))}
	if p.Text != "" {
		out.Output = append(out.Output, respContent{Type: "input_text", Text: &p.Text})
	}
	for _, img := range p.Images {
		out.Output = append(out.Output, respContent{Type: "input_image", ImageURL: dataURL(img), Detail: "auto"})
	}
	return out
}

// checkOutputParts checks a function_call_output's output given as a list: each part input_text
// with its text, input_image with an image_url or a file_id, or input_file.
func checkOutputParts(path string, parts []respPartIn) *provider.Violation {
	types := []string{"input_text", "input_image", "input_file"}
	for j, p := range parts {
		pp := fmt.Sprintf("%s[%d]", path, j)
		if !contains(types, p.Type) {
			return violation(RuleBadContent, pp+".type", "Invalid value: '%s'. Supported values are: %s.", p.Type, quoteList(types))
		}
		switch p.Type {
		case "input_text":
			if p.Text.Kind() != "string" {
				return violation(RuleBadContent, pp+".text", "Missing required parameter: '%s.text'.", pp)
			}
		case "input_image":
			if p.ImageURL == "" && p.FileID == "" {
				return violation(RuleBadContent, pp, "Missing required parameter: '%s.image_url'.", pp)
			}
		}
	}
	return nil
}

// chatImageNote is the line a Chat tool message gets in place of a result's images.
func chatImageNote(p *record.Part) string {
	var names []string
	for _, img := range p.Images {
		name := img.Name
		if name == "" {
			name = "an image"
		}
		names = append(names, name+" ("+img.MediaType+")")
	}
	return fmt.Sprintf("\n[rein: this result has %d image(s), %s, which a tool message cannot carry; they follow in the next user message]",
		len(p.Images), strings.Join(names, ", "))
}

// chatImages are the content parts that carry a result's images in the user message after it.
func chatImages(p *record.Part) []chatContent {
	note := "[rein: the image(s) of the result of tool call " + p.CallID + "]"
	parts := []chatContent{{Type: "text", Text: &note}}
	for _, img := range p.Images {
		parts = append(parts, chatContent{Type: "image_url", ImageURL: &chatImageURL{URL: dataURL(img)}})
	}
	return parts
}

// TakesImages reports whether an OpenAI model reads images. The GPT-4o, GPT-4.1 and GPT-5 families,
// o1 (not o1-mini), o3 and o4-mini do, as do Claude and Gemini models reached through OpenRouter;
// GPT-3.5, the original GPT-4, o1-mini and o3-mini do not.
// A model rein does not know (an OpenAI-compatible server's) is taken to read none: it is told what
// an image file is instead of being sent one it might refuse.
func TakesImages(model string) bool {
	m := strings.ToLower(model)
	if i := strings.LastIndexByte(m, '/'); i >= 0 {
		m = m[i+1:] // openai/gpt-4o on OpenRouter
	}
	switch {
	case strings.HasPrefix(m, "o1-mini"), strings.HasPrefix(m, "o3-mini"), strings.HasPrefix(m, "gpt-3.5"):
		return false
	case strings.HasPrefix(m, "gpt-4o"), strings.HasPrefix(m, "gpt-4.1"), strings.HasPrefix(m, "gpt-4.5"),
		strings.HasPrefix(m, "gpt-5"), strings.HasPrefix(m, "chatgpt-4o"), strings.HasPrefix(m, "gpt-4-turbo"),
		strings.HasPrefix(m, "o1"), strings.HasPrefix(m, "o3"), strings.HasPrefix(m, "o4"), strings.HasPrefix(m, "codex"),
		strings.HasPrefix(m, "claude"), strings.HasPrefix(m, "gemini"): // on OpenRouter: anthropic/claude-…, google/gemini-…
		return true
	}
	return false
}
