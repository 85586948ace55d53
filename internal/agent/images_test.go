package agent_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"image"
	"image/color"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reinhq/rein/internal/fold"
	"github.com/reinhq/rein/internal/record"
	"github.com/reinhq/rein/internal/tool"
	fstool "github.com/reinhq/rein/internal/tool/fs"
)

// TestImageReachesTheNextRequest: a read_file of a PNG, for a model that takes images, answers
// with the picture, and the next request carries it as each wire's image part, as the simulator
// received it: an image block in Anthropic's tool_result, an input_image in the Responses
// function_call_output, and on Chat a user message after the tool message (which says so). The
// record keeps the picture in a blob line, and the record replays to the same result.
func TestImageReachesTheNextRequest(t *testing.T) {
	var pic bytes.Buffer
	img := image.NewRGBA(image.Rect(0, 0, 8, 6))
	img.Set(1, 1, color.RGBA{255, 0, 0, 255})
	if err := png.Encode(&pic, img); err != nil {
		t.Fatal(err)
	}
	b64 := base64.StdEncoding.EncodeToString(pic.Bytes())
	eachFormat(t, func(t *testing.T, f format) {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "chart.png"), pic.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		files, err := fstool.Open(dir)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { files.Close() })
		files.SetImages(true)
		h := newHarness(t, f, setup{noBash: true, tools: []tool.Tool{files.ReadFile()}, script: steps(
			`{"text":"Let me see.","tool_calls":[{"name":"read_file","arguments":{"path":"chart.png"}}]}`,
			textStep("A red dot."),
		)})
		expect(t, h.run(context.Background(), "what is in chart.png?"), fold.Replied, false)

		reqs := h.sim.Requests()
		if len(reqs) != 2 {
			t.Fatalf("%d requests, want 2", len(reqs))
		}
		body := string(reqs[1].Body)
		want := map[string][]string{
			"anthropic": {`"type":"tool_result"`, `"content":[{"type":"text","text":"[image: chart.png, a PNG image, 8×6`, `{"type":"image","source":{"type":"base64","media_type":"image/png","data":"` + b64 + `"}}]`},
			"responses": {`{"type":"function_call_output","call_id":`, `"output":[{"type":"input_text","text":"[image: chart.png`, `{"type":"input_image","image_url":"data:image/png;base64,` + b64 + `","detail":"auto"}]`},
			"chat":      {`"role":"tool"`, `they follow in the next user message`, `{"role":"user","content":[{"type":"text","text":"[rein: the image(s) of the result of tool call`, `{"type":"image_url","image_url":{"url":"data:image/png;base64,` + b64 + `"}}]`},
		}[f.name]
		for _, w := range want {
			if !strings.Contains(body, w) {
				t.Errorf("the second request lacks %s\n%s", w, body)
			}
		}
		for _, r := range reqs {
			if r.Violation != nil {
				t.Errorf("the simulator refused a request: %v", r.Violation)
			}
		}
		// The record: the results' line is a blob line, and it reads back with the picture.
		raw, err := os.ReadFile(h.sess.Path())
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.Split(string(raw), "\n") {
			if strings.Contains(line, `"kind":"tool_results"`) && !strings.Contains(line, `"blob":"`) {
				t.Errorf("the tool results with an image are not a blob line: %s", line)
			}
		}
		if strings.Contains(string(raw), b64[:40]) {
			t.Errorf("the record's own lines hold the image's bytes")
		}
		results := all[*record.ToolResults](h.records())
		if len(results) != 1 || len(results[0].Results[0].Images) != 1 || results[0].Results[0].Images[0].Data != b64 {
			t.Fatalf("the record's results do not keep the picture: %+v", results)
		}
	})
}
