package journal

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/reinhq/rein/internal/fsys"
	"github.com/reinhq/rein/internal/record"
)

// encode renders one real record line with sequence number seq; the kind and text vary with
// the sequence number and textLen so that lines differ in kind and length.
func encode(tb testing.TB, seq int64, textLen int) []byte {
	tb.Helper()
	text := fmt.Sprintf("%d:%s", seq, bytes.Repeat([]byte{'a' + byte(seq%26)}, textLen))
	var body record.Payload
	switch seq % 3 {
	case 0:
		body = &record.System{Text: text}
	case 1:
		body = &record.UserPrompt{Turn: seq, Text: text}
	default:
		body = &record.ToolStarted{CallID: fmt.Sprintf("call_%d", seq), Name: text}
	}
	line, err := record.Encode(record.Record{Seq: seq, Time: 1764400000000 + seq, Body: body})
	if err != nil {
		tb.Fatal(err)
	}
	return line
}

// encodeN renders lines 1..n.
func encodeN(tb testing.TB, n int) [][]byte {
	tb.Helper()
	var lines [][]byte
	for seq := int64(1); seq <= int64(n); seq++ {
		lines = append(lines, encode(tb, seq, int(seq%7)*5))
	}
	return lines
}

// decode is the verify a session passes: strict decoding, which checks the sequence numbers.
func decode(seq int64, line []byte, _ record.Locus) error {
	_, err := record.Decode(line, seq)
	return err
}

// writeFile puts content at name in a fresh Mem, durably.
func writeFile(tb testing.TB, m *fsys.Mem, name string, content []byte) {
	tb.Helper()
	if err := m.MkdirAll("/s"); err != nil {
		tb.Fatal(err)
	}
	f, err := m.Create(name)
	if err != nil {
		tb.Fatal(err)
	}
	if _, err := f.Write(content); err != nil {
		tb.Fatal(err)
	}
	if err := f.Sync(); err != nil {
		tb.Fatal(err)
	}
	if err := f.Close(); err != nil {
		tb.Fatal(err)
	}
}

func readFile(tb testing.TB, fs fsys.FS, name string) []byte {
	tb.Helper()
	b, err := fs.ReadFile(name)
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

func join(lines ...[]byte) []byte { return bytes.Join(lines, nil) }

func seeded(seed uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, 0x7e1)) }
