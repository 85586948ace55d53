package fstool

import (
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"image"
	"image/gif"
	"image/jpeg"
	"image/png"
	"io"

	"golang.org/x/image/draw"
	"golang.org/x/image/webp"

	"github.com/reinhq/rein/internal/record"
	"github.com/reinhq/rein/internal/tool"
)

// read_file of an image (PNG, JPEG, GIF or WebP, told by its first bytes) answers with the picture
// itself, as an image part after a line of text, when the session's model takes images
// (Workspace.Images); else with a line saying what the file is and that this model cannot see it.
// A picture larger than the providers take well is scaled down (golang.org/x/image/draw's
// Catmull-Rom) and sent as PNG or JPEG.

// The bounds of an image read_file sends.
const (
	maxImageEdge   = 1568     // pixels on the long edge: Anthropic's advice; larger is scaled down
	maxImageBytes  = 3 << 20  // encoded bytes sent: under every provider's limit once in base64
	maxImageFile   = 32 << 20 // a larger file is not read at all
	maxImagePixels = 64 << 20 // a larger picture is not decoded (a decompression bomb)
)

// imageKind names the image format of a file from its first bytes, or "" for none rein reads.
func imageKind(head []byte) string {
	switch {
	case bytes.HasPrefix(head, []byte("\x89PNG\r\n\x1a\n")):
		return "image/png"
	case bytes.HasPrefix(head, []byte("\xff\xd8\xff")):
		return "image/jpeg"
	case bytes.HasPrefix(head, []byte("GIF87a")), bytes.HasPrefix(head, []byte("GIF89a")):
		return "image/gif"
	case len(head) >= 12 && bytes.Equal(head[:4], []byte("RIFF")) && bytes.Equal(head[8:12], []byte("WEBP")):
		return "image/webp"
	}
	return ""
}

var formatName = map[string]string{"image/png": "PNG", "image/jpeg": "JPEG", "image/gif": "GIF", "image/webp": "WebP"}

// readImage answers a read_file of the image f of the given media type.
func (w *Workspace) readImage(ctx context.Context, f io.Reader, size int64, name, media string) tool.Result {
	if size > maxImageFile {
		return tool.Failure("%s is a %s image of %d bytes; read_file reads images up to %d MiB", name, formatName[media], size, maxImageFile>>20)
	}
	data, err := io.ReadAll(io.LimitReader(f, maxImageFile+1))
	if err != nil {
		return tool.Failure("read %s: %v", name, err)
	}
	cfg, err := decodeConfig(media, data)
	if err != nil {
		return tool.Failure("%s looks like a %s image but does not decode: %v", name, formatName[media], err)
	}
	what := fmt.Sprintf("%s image, %d×%d, %s", formatName[media], cfg.Width, cfg.Height, kib(len(data)))
	if !w.images {
		return tool.Success(fmt.Sprintf("%s is a %s. The model of this session does not take images, so read_file cannot show it; "+
			"if you need what it shows, ask the person, or inspect it with a command.", name, what))
	}
	if int64(cfg.Width)*int64(cfg.Height) > maxImagePixels {
		return tool.Failure("%s is a %s: too many pixels to decode (more than %d million)", name, what, maxImagePixels>>20)
	}
	if ctx.Err() != nil {
		return interrupted("read_file stopped before it read the image " + name)
	}
	note := ""
	if max(cfg.Width, cfg.Height) > maxImageEdge || len(data) > maxImageBytes {
		// Scaling a large photograph takes a while (BenchmarkShrink): it runs apart, so that a
		// Stop answers at once; the work left is bounded and its result dropped.
		type shrunk struct {
			data          []byte
			media         string
			width, height int
			err           error
		}
		done := make(chan shrunk, 1)
		go func() {
			var s shrunk
			s.data, s.media, s.width, s.height, s.err = shrink(media, data)
			done <- s
		}()
		var s shrunk
		select {
		case s = <-done:
		case <-ctx.Done():
			return interrupted("read_file stopped while it scaled down the image " + name)
		}
		if s.err != nil {
			return tool.Failure("%s is a %s that could not be scaled down: %v", name, what, s.err)
		}
		data, media = s.data, s.media
		note = fmt.Sprintf("; sent scaled down to %d×%d %s, %s", s.width, s.height, formatName[media], kib(len(data)))
	}
	part := record.Part{Type: record.PartImage, MediaType: media, Data: base64.StdEncoding.EncodeToString(data), Name: name}
	return tool.Result{Content: fmt.Sprintf("[image: %s, a %s%s]", name, what, note), Outcome: record.OK, Images: []record.Part{part}}
}

func decodeConfig(media string, data []byte) (image.Config, error) {
	r := bytes.NewReader(data)
	switch media {
	case "image/png":
		return png.DecodeConfig(r)
	case "image/jpeg":
		return jpeg.DecodeConfig(r)
	case "image/gif":
		return gif.DecodeConfig(r)
	case "image/webp":
		return webp.DecodeConfig(r)
	}
	return image.Config{}, fmt.Errorf("unknown image type %s", media)
}

func decode(media string, data []byte) (image.Image, error) {
	r := bytes.NewReader(data)
	switch media {
	case "image/png":
		return png.Decode(r)
	case "image/jpeg":
		return jpeg.Decode(r)
	case "image/gif":
		return gif.Decode(r) // the first frame
	case "image/webp":
		return webp.Decode(r)
	}
	return nil, fmt.Errorf("unknown image type %s", media)
}

// shrink scales an image to fit maxImageEdge and encodes it: a photograph (JPEG) as JPEG, anything
// else as PNG unless that stays over maxImageBytes, then as JPEG.
func shrink(media string, data []byte) (out []byte, outMedia string, width, height int, err error) {
	src, err := decode(media, data)
	if err != nil {
		return nil, "", 0, 0, err
	}
	b := src.Bounds()
	width, height = b.Dx(), b.Dy()
	if long := max(width, height); long > maxImageEdge {
		width = max(1, width*maxImageEdge/long)
		height = max(1, height*maxImageEdge/long)
	}
	dst := image.NewRGBA(image.Rect(0, 0, width, height))
	draw.CatmullRom.Scale(dst, dst.Bounds(), src, b, draw.Src, nil)
	var buf bytes.Buffer
	if media != "image/jpeg" {
		if err := png.Encode(&buf, dst); err != nil {
			return nil, "", 0, 0, err
		}
		if buf.Len() <= maxImageBytes {
			return buf.Bytes(), "image/png", width, height, nil
		}
		buf.Reset()
	}
	for _, q := range []int{85, 70, 50} {
		buf.Reset()
		if err := jpeg.Encode(&buf, dst, &jpeg.Options{Quality: q}); err != nil {
			return nil, "", 0, 0, err
		}
		if buf.Len() <= maxImageBytes {
			break
		}
	}
	return buf.Bytes(), "image/jpeg", width, height, nil
}

func kib(n int) string {
	if n < 1024 {
		return fmt.Sprintf("%d bytes", n)
	}
	return fmt.Sprintf("%d KiB", (n+512)>>10)
}
