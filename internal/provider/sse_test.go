package provider

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"testing/iotest"
)

// readAll decodes every event of a stream and the error that ended it.
func readAll(r io.Reader) ([]SSEEvent, error) {
	s := NewSSEReader(r)
	var out []SSEEvent
	for {
		ev, err := s.Next()
		if err != nil {
			return out, err
		}
		ev.Data = bytes.Clone(ev.Data)
		out = append(out, ev)
	}
}

func TestSSE(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   string
		want []SSEEvent
		err  error
	}{
		{name: "named events", in: "event: a\ndata: 1\n\nevent: b\ndata: 2\n\n",
			want: []SSEEvent{{Event: "a", Data: []byte("1")}, {Event: "b", Data: []byte("2")}}, err: io.EOF},
		{name: "no event lines", in: "data: {}\n\n", want: []SSEEvent{{Data: []byte("{}")}}, err: io.EOF},
		{name: "crlf", in: "event: a\r\ndata: 1\r\n\r\n", want: []SSEEvent{{Event: "a", Data: []byte("1")}}, err: io.EOF},
		{name: "lone cr", in: "event: a\rdata: 1\r\r", want: []SSEEvent{{Event: "a", Data: []byte("1")}}, err: io.EOF},
		{name: "comments and blank runs", in: ": ping\n\n\n: x\ndata: 1\n\n",
			want: []SSEEvent{{Data: []byte("1")}}, err: io.EOF},
		{name: "multi-line data", in: "data: a\ndata:b\ndata:  c\n\n",
			want: []SSEEvent{{Data: []byte("a\nb\n c")}}, err: io.EOF},
		{name: "event without data dropped", in: "event: x\n\ndata: 1\n\n",
			want: []SSEEvent{{Data: []byte("1")}}, err: io.EOF},
		{name: "id kept", in: "id: 7\ndata: 1\n\ndata: 2\n\n",
			want: []SSEEvent{{Data: []byte("1"), ID: "7"}, {Data: []byte("2"), ID: "7"}}, err: io.EOF},
		{name: "unknown fields ignored", in: "retry: 10\nfoo\ndata: 1\n\n", want: []SSEEvent{{Data: []byte("1")}}, err: io.EOF},
		{name: "cut before the blank line", in: "data: 1\n\ndata: 2\n",
			want: []SSEEvent{{Data: []byte("1")}}, err: io.ErrUnexpectedEOF},
		{name: "cut mid line", in: "data: 1\n\ndata: {\"a\"",
			want: []SSEEvent{{Data: []byte("1")}}, err: io.ErrUnexpectedEOF},
		{name: "empty", in: "", err: io.EOF},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := readAll(strings.NewReader(tc.in))
			if !errors.Is(err, tc.err) {
				t.Fatalf("err = %v, want %v", err, tc.err)
			}
			if fmt.Sprint(got) != fmt.Sprint(tc.want) {
				t.Fatalf("events = %q, want %q", got, tc.want)
			}
		})
	}
}

// FuzzSSE checks that the decoder never panics, that how the bytes arrive does not matter, and
// that "\r\n" line ends decode as "\n" ones do.
func FuzzSSE(f *testing.F) {
	for _, s := range []string{
		"event: a\ndata: 1\n\n",
		"data: a\r\ndata: b\r\n\r\n",
		": c\n\nid: 1\ndata\n\n",
		"event: x\rdata: y\r\r",
		"data: {\"type\":\"ping\"}\n\ndata: cut",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		want, wantErr := readAll(bytes.NewReader(in))
		got, gotErr := readAll(iotest.OneByteReader(bytes.NewReader(in)))
		if fmt.Sprint(got) != fmt.Sprint(want) || gotErr != wantErr {
			t.Fatalf("one byte at a time: %q %v, whole: %q %v", got, gotErr, want, wantErr)
		}
		if bytes.IndexByte(in, '\r') >= 0 {
			return
		}
		crlf := bytes.ReplaceAll(in, []byte("\n"), []byte("\r\n"))
		got, gotErr = readAll(bytes.NewReader(crlf))
		if fmt.Sprint(got) != fmt.Sprint(want) || gotErr != wantErr {
			t.Fatalf("crlf: %q %v, lf: %q %v", got, gotErr, want, wantErr)
		}
	})
}

func BenchmarkSSE(b *testing.B) {
	var buf bytes.Buffer
	for i := 0; buf.Len() < 1<<20; i++ {
		fmt.Fprintf(&buf, "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"token %d of a longer reply\"}}\n\n", i)
	}
	in := buf.Bytes()
	b.SetBytes(int64(len(in)))
	b.ReportAllocs()
	for b.Loop() {
		s := NewSSEReader(bytes.NewReader(in))
		for {
			if _, err := s.Next(); err != nil {
				break
			}
		}
	}
}
