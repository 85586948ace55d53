package fstool

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"image"
	"image/color"
	"image/gif"
	"image/jpeg"
	"image/png"
	"strings"
	"testing"
	"time"

	"github.com/reinhq/rein/internal/record"
	"github.com/reinhq/rein/internal/tool"
	"github.com/reinhq/rein/internal/tool/tooltest"
)

func picture(w, h int) *image.RGBA {
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			img.Set(x, y, color.RGBA{uint8(x), uint8(y), uint8(x ^ y), 255})
		}
	}
	return img
}

func encoded(t *testing.T, format string, img image.Image) string {
	t.Helper()
	var b bytes.Buffer
	var err error
	switch format {
	case "png":
		err = png.Encode(&b, img)
	case "jpeg":
		err = jpeg.Encode(&b, img, nil)
	case "gif":
		err = gif.Encode(&b, img, nil)
	}
	if err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// A minimal lossless WebP of 1×1 pixel.
const tinyWebP = "RIFF\x1a\x00\x00\x00WEBPVP8L\x0d\x00\x00\x00\x2f\x00\x00\x00\x10\x07\x10\x11\x11\x88\x88\xfe\x07\x00"

func TestReadImage(t *testing.T) {
	small := encoded(t, "png", picture(40, 30))
	w, _ := setup(t, map[string]string{
		"small.png": small,
		"photo.jpg": encoded(t, "jpeg", picture(2000, 1000)),
		"anim.gif":  encoded(t, "gif", picture(20, 10)),
		"tiny.webp": tinyWebP,
		"big.png":   encoded(t, "png", picture(3200, 100)),
		"fake.png":  "\x89PNG\r\n\x1a\nnot really",
	})
	w.SetImages(true)
	read := w.ReadFile()
	for _, tc := range []struct {
		path, media, text string
		width, height     int
		same              string // the bytes sent are the file's own
	}{
		{"small.png", "image/png", "[image: small.png, a PNG image, 40×30", 40, 30, small},
		{"photo.jpg", "image/jpeg", "; sent scaled down to 1568×784 JPEG", 1568, 784, ""},
		{"anim.gif", "image/gif", "a GIF image, 20×10", 20, 10, ""},
		{"tiny.webp", "image/webp", "a WebP image, 1×1", 1, 1, tinyWebP},
		{"big.png", "image/png", "3200×100", 1568, 49, ""},
	} {
		r := call(t, read, map[string]any{"path": tc.path})
		if r.Outcome != record.OK || len(r.Images) != 1 || !strings.Contains(r.Content, tc.text) {
			t.Errorf("%s: %s %q with %d images", tc.path, r.Outcome, r.Content, len(r.Images))
			continue
		}
		p := r.Images[0]
		data, err := base64.StdEncoding.DecodeString(p.Data)
		if err != nil || p.Type != record.PartImage || p.MediaType != tc.media || p.Name != tc.path {
			t.Errorf("%s: part %s %s %s, %v", tc.path, p.Type, p.MediaType, p.Name, err)
			continue
		}
		cfg, err := decodeConfig(tc.media, data)
		if err != nil || cfg.Width != tc.width || cfg.Height != tc.height {
			t.Errorf("%s: sent %d×%d (%v), want %d×%d", tc.path, cfg.Width, cfg.Height, err, tc.width, tc.height)
		}
		if tc.same != "" && string(data) != tc.same {
			t.Errorf("%s: the bytes sent are not the file's", tc.path)
		}
		if len(data) > maxImageBytes {
			t.Errorf("%s: %d bytes sent, over the cap", tc.path, len(data))
		}
	}
	if r := call(t, read, map[string]any{"path": "fake.png"}); r.Outcome != record.Failed || !strings.Contains(r.Content, "does not decode") || len(r.Images) > 0 {
		t.Errorf("fake.png: %s %q", r.Outcome, r.Content)
	}

	// A model that takes no images is told what the file is, with no picture.
	w.SetImages(false)
	r := call(t, read, map[string]any{"path": "small.png"})
	if r.Outcome != record.OK || len(r.Images) != 0 || !strings.Contains(r.Content, "small.png is a PNG image, 40×30") || !strings.Contains(r.Content, "does not take images") {
		t.Errorf("no images: %s %q", r.Outcome, r.Content)
	}
}

func FuzzImageKind(f *testing.F) {
	f.Add([]byte("\x89PNG\r\n\x1a\n"))
	f.Add([]byte(tinyWebP))
	f.Fuzz(func(t *testing.T, b []byte) {
		media := imageKind(b)
		if media == "" {
			return
		}
		// Whatever the kind, decoding the config of junk must fail or succeed, never panic.
		_, _ = decodeConfig(media, b)
	})
}

// BenchmarkShrink scales a 4000×3000 JPEG photograph to the long-edge cap and re-encodes it.
func BenchmarkShrink(b *testing.B) {
	var buf bytes.Buffer
	if err := jpeg.Encode(&buf, picture(4000, 3000), nil); err != nil {
		b.Fatal(err)
	}
	data := buf.Bytes()
	b.ResetTimer()
	for range b.N {
		if _, _, _, _, err := shrink("image/jpeg", data); err != nil {
			b.Fatal(err)
		}
	}
}

// A Stop while a large picture is being scaled down answers at once, interrupted.
func TestReadImageStop(t *testing.T) {
	w, _ := setup(t, map[string]string{"huge.jpg": encoded(t, "jpeg", picture(4000, 3000))})
	w.SetImages(true)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan tool.Result, 1)
	go func() {
		done <- w.ReadFile().Run(ctx, tool.Call{ID: "c", Name: "read_file", Args: json.RawMessage(`{"path":"huge.jpg"}`)})
	}()
	cancel()
	select {
	case r := <-done:
		if r.Outcome != record.Interrupted && r.Outcome != record.OK {
			t.Errorf("%s %q", r.Outcome, r.Content)
		}
	case <-time.After(tooltest.Promptly):
		t.Fatal("read_file did not answer the Stop")
	}
}
