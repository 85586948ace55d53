package fold

import (
	"encoding/json"
	"fmt"

	"github.com/reinhq/rein/internal/record"
)

// imageTypes are the media types of the images a tool result may carry: those every provider
// that takes images takes (Anthropic's list; OpenAI's is wider).
var imageTypes = map[string]bool{"image/png": true, "image/jpeg": true, "image/gif": true, "image/webp": true}

// checkImages says why a tool result's images could not be sent, or "": each is an image part
// with data and one of the media types every provider takes.
func checkImages(images []record.Part) string {
	for i, p := range images {
		switch {
		case p.Type != record.PartImage:
			return fmt.Sprintf("a %s part among its images (image %d): a result carries only images after its text", p.Type, i+1)
		case p.Data == "":
			return fmt.Sprintf("image %d without data", i+1)
		case !imageTypes[p.MediaType]:
			return fmt.Sprintf("image %d of type %q: images are image/png, image/jpeg, image/gif or image/webp", i+1, p.MediaType)
		}
	}
	return ""
}

// checkServerTool says why a provider's server tool block (web search) could not stand in a
// message, or "": only the model's messages carry one, from a wire rein knows, as a JSON object.
// It is not content on its own: a message of nothing else is empty on every other wire.
func checkServerTool(role record.Role, p record.Part) string {
	switch {
	case role != record.Assistant:
		return "carries a provider's server tool block in a user message"
	case p.Wire != record.WireAnthropic && p.Wire != record.WireResponses:
		return fmt.Sprintf("carries a server tool block from the unknown wire %q", p.Wire)
	case !isObject(json.RawMessage(p.Data)):
		return "carries a server tool block that is not a JSON object"
	}
	return ""
}

// imageTokens is what one picture is taken to cost in tokens when the context is estimated from
// bytes: about what Anthropic charges a picture of 1.2 megapixels, and OpenAI one at high detail.
const imageTokens = 1600

// imageDiscount is how many bytes the pictures in msgs (a user's attachments, a tool result's
// images) count for less than their base64: each weighs imageTokens tokens, four bytes a token.
func imageDiscount(msgs []record.Message) int64 {
	var d int64
	weigh := func(p record.Part) {
		if n := int64(len(p.Data)) - imageTokens*4; p.Type == record.PartImage && n > 0 {
			d += n
		}
	}
	for _, m := range msgs {
		for _, p := range m.Parts {
			weigh(p)
			for _, q := range p.Images {
				weigh(q)
			}
		}
	}
	return d
}
