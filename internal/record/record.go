// Package record owns rein's vocabulary: the envelope of a record, every protocol kind and event
// kind with its payload, the neutral message types the context is made of, and the one encoding of
// a record as a line of a session's record.jsonl.
//
// # The line format (version 1)
//
// A record is one JSON object on one line, UTF-8, ended by "\n":
//
//	{"v":1,"seq":7,"t":1764400000000,"class":"protocol","kind":"user_prompt","payload":{...},"crc":"1b2c3d4e"}
//
// The fields appear in exactly this order. v is the format version; seq is the 1-based sequence
// number, equal to the line's number in the file; t is the time in unix milliseconds; class is
// "protocol" or "event" and must agree with the kind; payload is the kind's body. crc is the
// CRC-32C (Castagnoli) of every byte of the line before `,"crc":"`, as eight lowercase hex digits;
// the line ends `"}` right after it. A flipped byte anywhere in a complete line therefore fails
// either the checksum or the framing. The checksum doubles as the line's digest in a Locus, so a
// pointer's read-back can tell a line it measured from any other.
//
// # Blob lines
//
// A record whose line would be longer than BlobOver keeps its payload in a blob beside the record
// (journal.BlobDir), a file named by the SHA-256 of the payload's bytes, and its line carries the
// digest where the payload stood:
//
//	{"v":1,"seq":8,"t":1764400000000,"class":"protocol","kind":"tool_results","blob":"8d4c…83cd","crc":"0f8a14de"}
//
// The digest is 64 lowercase hex digits. DecodeWith reads the blob, checks it against the digest
// before anything parses it, and decodes it as the payload; so a blob line decodes to exactly the
// record the long line would have, and a changed, cut or missing blob is refused like a damaged
// line. The blob is made durable before the line that names it is appended.
//
// Decoding is strict: an unknown field anywhere, an unknown kind, a class that disagrees with its
// kind, a version other than 1 or a sequence number other than the expected one is refused with
// the record number and the reason, never skipped. So is an envelope in any other shape than the
// one above (fields out of order or missing, whitespace, escapes in class or kind), a field named
// twice in one object, and a field named in another case than its own ("Text" for "text"). Kinds
// are append-only and new fields are optional; golden files under testdata/ freeze the bytes of
// every kind.
//
// # Fields added later
//
// A field added to a kind after records of it were written is optional, and a line without it
// keeps the meaning it had: tool_finished gained content and is_error, the call's result as its
// batch's tool_results will carry it, so that a crash in the middle of a batch does not relabel
// a call that had finished (DESIGN §3.3). A tool_finished without content is a call whose result
// was not kept; a resume answers it interrupted, as it did before the field existed.
//
// A tool result gained images (in tool_results, and in the tool_result parts of messages that
// carry them): the pictures a call answered with, a read_file of a PNG say, as image parts after
// its text. A result without it is text only, as every result was before. A tool_results line
// that carries an image is always written as a blob line, whatever its length, so the image's
// bytes rest in the blob store by digest and the record itself stays small; its tool_finished
// keeps only the text. Lines in the earlier shapes are kept under testdata/older/ and must keep
// decoding to the same values.
//
// # Why decoding is hand-written
//
// Encode uses encoding/json; Decode does not. Replay must run at 250 MB/s or more on one core
// (DESIGN §15), and encoding/json's Decoder reads each byte about four times (the envelope's value
// and fields, then the payload's), which held replay under 80 MB/s. Decode reads the envelope by
// its fixed shape and the payload in one pass (jsonread.go) straight into the payload types, each
// of which lists its fields in decode.go. Apart from the two refusals named above, it accepts
// exactly what encoding/json with unknown fields disallowed accepts, and yields the same values:
// escapes, surrogate pairs, invalid UTF-8 replaced by U+FFFD, null leaving a field alone, [] and
// null slices, raw JSON kept as written. Differential tests and a fuzz target hold it to that.
package record

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"strconv"
)

// Version is the line format this package writes and reads.
const Version = 1

// Record is one decoded line: its place, its time and its payload.
type Record struct {
	Seq  int64
	Time int64 // unix milliseconds
	Body Payload
}

// Kind returns the kind of the record's payload.
func (r Record) Kind() Kind { return r.Body.Kind() }

// Class returns the class of the record's kind.
func (r Record) Class() Class {
	c, _ := ClassOf(r.Body.Kind())
	return c
}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

const (
	crcOpen   = `,"crc":"`
	trailerSz = len(crcOpen) + 8 + 2 // ,"crc":" + 8 hex + "}
)

// Encode renders a record as one line, "\n" included. It fails only for an unknown kind or a
// payload that cannot be marshalled.
func Encode(r Record) ([]byte, error) {
	k := r.Body.Kind()
	class, ok := ClassOf(k)
	if !ok {
		return nil, fmt.Errorf("encode record %d: unknown kind %q", r.Seq, k)
	}
	var b bytes.Buffer
	b.Grow(128)
	b.WriteString(`{"v":1,"seq":`)
	b.WriteString(strconv.FormatInt(r.Seq, 10))
	b.WriteString(`,"t":`)
	b.WriteString(strconv.FormatInt(r.Time, 10))
	b.WriteString(`,"class":"`)
	b.WriteString(string(class))
	b.WriteString(`","kind":"`)
	b.WriteString(string(k))
	b.WriteString(`","payload":`)
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(r.Body); err != nil {
		return nil, fmt.Errorf("encode record %d (%s): %w", r.Seq, k, err)
	}
	b.Truncate(b.Len() - 1) // the encoder's newline
	sum := crc32.Checksum(b.Bytes(), castagnoli)
	b.WriteString(crcOpen)
	var hex [8]byte
	putHex(hex[:], sum)
	b.Write(hex[:])
	b.WriteString("\"}\n")
	return b.Bytes(), nil
}

func putHex(dst []byte, v uint32) {
	const digits = "0123456789abcdef"
	for i := 7; i >= 0; i-- {
		dst[i] = digits[v&0xf]
		v >>= 4
	}
}

// DecodeError is a refusal to decode one line. Seq is the line's number in the file; Reason says
// what is wrong in words a person can act on; Err, when set, is the error behind it, which
// errors.Is and errors.As see through the DecodeError (ErrChecksum for a line whose bytes do not
// match its checksum).
type DecodeError struct {
	Seq    int64
	Reason string
	Err    error
}

func (e *DecodeError) Error() string {
	return fmt.Sprintf("record %d is damaged: %s", e.Seq, e.Reason)
}

func (e *DecodeError) Unwrap() error { return e.Err }

// ErrChecksum is wrapped by refusals where a line's bytes do not match its checksum.
var ErrChecksum = errors.New("checksum mismatch")

// Checksum verifies a line's framing and checksum (line without its "\n") and returns the
// checksum, which is also the line's digest in a Locus. It does not parse the JSON.
func Checksum(line []byte) (uint32, error) {
	n := len(line)
	if n < trailerSz+2 || line[0] != '{' {
		return 0, errors.New("it is not a rein record line (no checksum trailer)")
	}
	t := line[n-trailerSz:]
	if string(t[:len(crcOpen)]) != crcOpen || string(t[trailerSz-2:]) != "\"}" {
		return 0, errors.New("it is not a rein record line (no checksum trailer)")
	}
	var want uint32
	for _, c := range t[len(crcOpen) : len(crcOpen)+8] {
		var d byte
		switch {
		case c >= '0' && c <= '9':
			d = c - '0'
		case c >= 'a' && c <= 'f':
			d = c - 'a' + 10
		default:
			return 0, errors.New("its checksum field is not eight lowercase hex digits")
		}
		want = want<<4 | uint32(d)
	}
	if got := crc32.Checksum(line[:n-trailerSz], castagnoli); got != want {
		return 0, fmt.Errorf("its bytes do not match its checksum (a flipped byte, or an edit by hand): %w", ErrChecksum)
	}
	return want, nil
}

// BlobOver is the length past which a line is written as a blob line: a record whose line would
// be longer keeps its payload in a blob beside the record (see Externalize), so no legitimate
// record — a long reply, a batch of large results — meets the record file's line limit.
const BlobOver = 256 << 10

// Blobs returns the bytes stored under a blob's digest (64 lowercase hex digits of SHA-256). A
// reader of a record file gets one from the file's journal.
type Blobs func(digest string) ([]byte, error)

// Externalize turns an encoded line (Encode's output) into a blob line: the same envelope with
//
//	,"blob":"<SHA-256 of the payload in 64 lowercase hex digits>"
//
// where `,"payload":{...}` stood, and a checksum of its own. It returns the blob line, the digest
// and the payload bytes, which must be stored durably under the digest before the blob line is
// appended.
func Externalize(line []byte) (blobLine []byte, digest string, payload []byte, err error) {
	line = bytes.TrimSuffix(line, []byte{'\n'})
	if _, err := Checksum(line); err != nil {
		return nil, "", nil, err
	}
	body := line[:len(line)-trailerSz]
	env, err := readEnvelope(body)
	if err != nil {
		return nil, "", nil, err
	}
	if env.blob != nil {
		return nil, "", nil, errors.New("the line is a blob line already")
	}
	sum := sha256.Sum256(env.payload)
	digest = hex.EncodeToString(sum[:])
	var b bytes.Buffer
	b.Grow(len(body) - len(env.payload) + 80)
	b.Write(body[:len(body)-len(env.payload)-len(envelopeKeys[5])])
	b.WriteString(blobKey)
	b.WriteString(digest)
	b.WriteByte('"')
	crc := crc32.Checksum(b.Bytes(), castagnoli)
	b.WriteString(crcOpen)
	var h [8]byte
	putHex(h[:], crc)
	b.Write(h[:])
	b.WriteString("\"}\n")
	return b.Bytes(), digest, env.payload, nil
}

// Decode verifies and strictly decodes one line (with or without its "\n") that must carry
// sequence number seq. A blob line is refused: it needs DecodeWith and the file's blobs.
func Decode(line []byte, seq int64) (Record, error) { return DecodeWith(line, seq, nil) }

// DecodeWith decodes one line as Decode does, reading a blob line's payload through blobs and
// checking it against the line's digest before anything parses it.
func DecodeWith(line []byte, seq int64, blobs Blobs) (Record, error) {
	line = bytes.TrimSuffix(line, []byte{'\n'})
	if _, err := Checksum(line); err != nil {
		return Record{}, &DecodeError{Seq: seq, Reason: err.Error(), Err: err}
	}
	env, err := readEnvelope(line[:len(line)-trailerSz])
	if err != nil {
		return Record{}, &DecodeError{Seq: seq, Reason: err.Error(), Err: err}
	}
	if env.seq != seq {
		return Record{}, &DecodeError{Seq: seq, Reason: fmt.Sprintf("it carries sequence number %d where %d belongs (a line was removed, repeated or moved)", env.seq, seq)}
	}
	e, ok := kinds[Kind(env.kind)]
	if !ok {
		return Record{}, &DecodeError{Seq: seq, Reason: fmt.Sprintf("its kind %q is not one rein knows", env.kind)}
	}
	if string(e.class) != string(env.class) {
		return Record{}, &DecodeError{Seq: seq, Reason: fmt.Sprintf("its class %q disagrees with its kind %q (which is %s)", env.class, env.kind, e.class)}
	}
	if env.blob != nil {
		if env.payload, err = readBlob(env.blob, blobs); err != nil {
			return Record{}, &DecodeError{Seq: seq, Reason: err.Error(), Err: err}
		}
	}
	if p := env.payload; len(p) == 0 || p[0] != '{' || p[len(p)-1] != '}' {
		return Record{}, &DecodeError{Seq: seq, Reason: fmt.Sprintf("its %s payload is not a JSON object", env.kind)}
	}
	body := e.new()
	// The envelope is the first level of nesting, as it was when encoding/json read the line.
	if err := decodePayload(env.payload, body, maxDepth-1); err != nil {
		return Record{}, &DecodeError{Seq: seq, Reason: fmt.Sprintf("its %s payload does not decode: %v", body.Kind(), err), Err: err}
	}
	return Record{Seq: env.seq, Time: env.t, Body: body}, nil
}

// readBlob reads and checks the payload a blob line points to.
func readBlob(digest []byte, blobs Blobs) ([]byte, error) {
	if blobs == nil {
		return nil, fmt.Errorf("it keeps its payload in blob %s, and no blob store was given to read it", digest)
	}
	data, err := blobs(string(digest))
	if err != nil {
		return nil, fmt.Errorf("its payload blob %s cannot be read: %v", digest, err)
	}
	if sum := sha256.Sum256(data); hex.EncodeToString(sum[:]) != string(digest) {
		return nil, fmt.Errorf("its payload blob %s does not match its digest (the blob file was changed or cut)", digest)
	}
	return data, nil
}

func crc32Sum(b []byte) uint32 { return crc32.Checksum(b, castagnoli) }
