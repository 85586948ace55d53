package provider

import (
	"bufio"
	"bytes"
	"io"
	"sync"
)

// SSEEvent is one server-sent event: its event name (empty when the stream has no "event:" lines),
// its data (multiple data lines joined by "\n") and its id.
type SSEEvent struct {
	Event string
	Data  []byte
	ID    string
}

// SSEReader decodes a server-sent-events stream as the HTML standard specifies: lines ended by
// "\n", "\r\n" or "\r"; "field: value" with one optional space after the colon; comment lines
// starting with ":"; a blank line dispatches the event; an event with no data is dropped. It is
// the one decoder every provider client shares.
type SSEReader struct {
	r     *bufio.Reader
	data  bytes.Buffer
	event string
	id    string
	line  []byte
	cr    bool // the previous line ended with a lone "\r"; skip a following "\n"
}

// buffers keeps the readers' 32 KiB buffers between streams: a fresh one each reply costs more
// than decoding a short reply does.
var buffers = sync.Pool{New: func() any { return bufio.NewReaderSize(nil, 32<<10) }}

// NewSSEReader returns a decoder reading from r. Close it when done with it.
func NewSSEReader(r io.Reader) *SSEReader {
	br := buffers.Get().(*bufio.Reader)
	br.Reset(r)
	return &SSEReader{r: br}
}

// Close gives the reader's buffer back for another stream; the reader must not be used after.
// (The events it returned hold none of that buffer.)
func (s *SSEReader) Close() {
	if s.r != nil {
		s.r.Reset(nil)
		buffers.Put(s.r)
		s.r = nil
	}
}

// Next returns the next event. At the end of the stream it returns io.EOF if the stream ended at
// an event boundary, or io.ErrUnexpectedEOF if an event was cut off before its blank line.
// The returned Data is valid until the next call.
func (s *SSEReader) Next() (SSEEvent, error) {
	s.data.Reset()
	s.event = ""
	pending := false
	for {
		line, err := s.readLine()
		if err != nil {
			if err == io.EOF && (pending || len(line) > 0) {
				return SSEEvent{}, io.ErrUnexpectedEOF
			}
			return SSEEvent{}, err
		}
		if len(line) == 0 {
			if s.data.Len() == 0 && !pending {
				s.event = ""
				continue
			}
			if s.data.Len() == 0 {
				// An event with no data is dropped.
				pending = false
				s.event = ""
				continue
			}
			d := s.data.Bytes()
			d = d[:len(d)-1] // the last data line's "\n"
			return SSEEvent{Event: s.event, Data: d, ID: s.id}, nil
		}
		if line[0] == ':' {
			continue
		}
		pending = true
		field, value := line, []byte(nil)
		if i := bytes.IndexByte(line, ':'); i >= 0 {
			field, value = line[:i], line[i+1:]
			if len(value) > 0 && value[0] == ' ' {
				value = value[1:]
			}
		}
		switch string(field) {
		case "data":
			s.data.Write(value)
			s.data.WriteByte('\n')
		case "event":
			s.event = string(value)
		case "id":
			if bytes.IndexByte(value, 0) < 0 {
				s.id = string(value)
			}
		}
	}
}

// readLine returns one line without its terminator. A final line with no terminator is returned
// with io.EOF.
func (s *SSEReader) readLine() ([]byte, error) {
	s.line = s.line[:0]
	for {
		b, err := s.r.ReadByte()
		if err != nil {
			return s.line, err
		}
		if s.cr {
			s.cr = false
			if b == '\n' {
				continue
			}
		}
		// Fast path: copy up to the next terminator in one go.
		if b != '\n' && b != '\r' {
			s.line = append(s.line, b)
			buf, _ := s.r.Peek(s.r.Buffered())
			i := bytes.IndexAny(buf, "\r\n")
			if i < 0 {
				s.line = append(s.line, buf...)
				s.r.Discard(len(buf))
				continue
			}
			s.line = append(s.line, buf[:i]...)
			s.r.Discard(i)
			continue
		}
		if b == '\r' {
			s.cr = true
		}
		return s.line, nil
	}
}
