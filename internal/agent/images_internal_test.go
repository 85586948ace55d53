package agent

import (
	"strings"
	"testing"

	"github.com/reinhq/rein/internal/record"
)

func TestPicturesNamed(t *testing.T) {
	pic := strings.Repeat("QUJD", 1000)
	msgs := []record.Message{{Role: record.User, Parts: []record.Part{
		{Type: record.PartImage, MediaType: "image/png", Data: pic},
		{Type: record.PartToolResult, CallID: "c", Text: "[image: a.png]", Images: []record.Part{{Type: record.PartImage, MediaType: "image/png", Data: pic, Name: "a.png"}}},
	}}}
	got := picturesNamed(msgs)
	if got[0].Parts[0].Data != "[rein: 4000 bytes of base64, not repeated in a transcript read]" || got[0].Parts[1].Images[0].Data != got[0].Parts[0].Data ||
		got[0].Parts[1].Images[0].Name != "a.png" || got[0].Parts[1].Text != "[image: a.png]" {
		t.Errorf("named: %+v", got)
	}
	if msgs[0].Parts[0].Data != pic || msgs[0].Parts[1].Images[0].Data != pic {
		t.Error("the messages given were changed")
	}
}
