package redact

import (
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"
)

const (
	oddKey  = "zq9-x7x7x7x7x7x7x7x7-abc" // no known shape: only the exact value can find it
	realKey = antKey
)

func held(t testing.TB, kv ...string) *Secrets {
	t.Helper()
	var s Secrets
	for i := 0; i+1 < len(kv); i += 2 {
		if !s.Add(kv[i], kv[i+1]) {
			t.Fatalf("Add(%q) refused a %d-byte value", kv[i], len(kv[i+1]))
		}
	}
	return &s
}

func TestSecretsForms(t *testing.T) {
	s := held(t, "K", oddKey)
	b64 := base64.StdEncoding.EncodeToString([]byte(oddKey))
	tests := []struct{ name, in, want string }{
		{"raw", "env: K=" + oddKey + "\n", "env: K=[REDACTED:K]\n"},
		{"raw twice", oddKey + oddKey, "[REDACTED:K]"},
		{"base64", "x " + b64 + " y", "x [REDACTED:K] y"},
		{"base64 raw", "x " + strings.TrimRight(b64, "=") + " y", "x [REDACTED:K] y"},
		{"base64 url", base64.URLEncoding.EncodeToString([]byte(oddKey)), "[REDACTED:K]"},
		{"hex", hex.EncodeToString([]byte(oddKey)), "[REDACTED:K]"},
		{"hex upper", strings.ToUpper(hex.EncodeToString([]byte(oddKey))), "[REDACTED:K]"},
		{"url", "https://h/?k=" + oddKey + "&q", "https://h/?k=[REDACTED:K]&q"},
		{"wrapped", oddKey[:10] + "\n" + oddKey[10:], "[REDACTED:K]"},
		{"sixteen bytes of it", "cut: " + oddKey[5:21] + "!", "cut: [REDACTED:K]!"},
		{"fifteen bytes of it", "cut: " + oddKey[5:20] + "!", "cut: " + oddKey[5:20] + "!"},
		{"cut off by the end", "…" + b64[:len(b64)-8], "…[REDACTED:K]"},
		{"placeholder", "[REDACTED:K]", "[REDACTED:K]"},
		{"nothing", "hello world", "hello world"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := s.Redact(tt.in)
			if got != tt.want {
				t.Errorf("Redact(%q)\n got %q\nwant %q", tt.in, got, tt.want)
			}
			if again := s.Redact(got); again != got {
				t.Errorf("not idempotent: %q then %q", got, again)
			}
		})
	}
}

// A value with characters JSON and URLs escape is found in its escaped forms, and what is left is
// still JSON.
func TestSecretsEscapedForms(t *testing.T) {
	key := `q"<x&y>\z/+ 0123456789`
	s := held(t, "K", key)
	plain, _ := json.Marshal(map[string]string{"error": "bad key " + key})
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.Encode(map[string]string{"error": "bad key " + key})
	for _, in := range []string{string(plain), b.String()} {
		got := s.Redact(in)
		if !json.Valid([]byte(got)) {
			t.Errorf("Redact(%s) = %s: not JSON", in, got)
		}
		var v map[string]string
		json.Unmarshal([]byte(got), &v)
		if v["error"] != "bad key [REDACTED:K]" {
			t.Errorf("Redact(%s) = %s", in, got)
		}
	}
}

func TestSecretsRefusesShortValues(t *testing.T) {
	var s Secrets
	if s.Add("K", "ollama") || s.Add("K", "") || s.Len() != 0 {
		t.Fatalf("a value under %d bytes was taken", MinSecret)
	}
	if got := s.Redact("OPENAI_API_KEY=ollama"); got != "OPENAI_API_KEY=ollama" {
		t.Errorf("got %q", got)
	}
	if !s.Add("K", "12345678") || s.Len() != 1 {
		t.Fatalf("an %d-byte value was refused", MinSecret)
	}
}

// keyOnly returns, for data holding key at byte offset a, the base64 characters (as indexes into
// its encoding) made only of the key's bits: the ones a leak would show.
func keyOnly(a, n int) (from, to int) {
	return (8*a + 5) / 6, 8 * (a + n) / 6
}

// A key inside a larger base64 blob is redacted at every alignment, in both alphabets, padded or
// not, wrapped as base64(1) and MIME wrap it or not: no run of eight characters made only of the
// key's bits survives.
func TestSecretsBase64Alignments(t *testing.T) {
	seed := time.Now().UnixNano()
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(uint64(seed), 7))
	for _, key := range []string{oddKey, realKey, "12345678"} {
		s := held(t, "K", key)
		for a := range 6 {
			for tail := range 4 {
				data := make([]byte, a+len(key)+tail)
				for i := range data {
					data[i] = byte(r.IntN(256))
				}
				copy(data[a:], key)
				for _, e := range []*base64.Encoding{base64.StdEncoding, base64.URLEncoding, base64.RawStdEncoding, base64.RawURLEncoding} {
					enc := e.EncodeToString(data)
					from, to := keyOnly(a, len(key))
					var runs []string
					for i := from; i+8 <= to; i++ {
						runs = append(runs, enc[i:i+8])
					}
					for _, wrap := range []string{"", "\n", "\r\n", `\n`} {
						in := enc
						if wrap != "" {
							var b strings.Builder
							for i := 0; i < len(enc); i += 76 {
								b.WriteString(enc[i:min(i+76, len(enc))])
								b.WriteString(wrap)
							}
							in = b.String()
						}
						got := s.Redact("blob: " + in + " end")
						flat := strings.NewReplacer("\r", "", "\n", "", `\n`, "").Replace(got)
						for _, run := range runs {
							if strings.Contains(flat, run) {
								t.Fatalf("key %q at offset %d (+%d after), wrap %q: %q survives in\n%s", key, a, tail, wrap, run, got)
							}
						}
						if !strings.Contains(got, "[REDACTED:K]") {
							t.Fatalf("nothing redacted in %q", got)
						}
					}
				}
			}
		}
	}
}

// Hex as xxd -p (wrapped at 60), od -An -tx1 (blank-separated lines of 16) and hexdump -ve print
// it.
func TestSecretsHexDumps(t *testing.T) {
	s := held(t, "K", oddKey)
	data := "PATH=/bin\x00K=" + oddKey + "\x00HOME=/root\x00"
	h := hex.EncodeToString([]byte(data))
	var xxd, od strings.Builder
	for i := 0; i < len(h); i += 60 {
		xxd.WriteString(h[i:min(i+60, len(h))] + "\n")
	}
	for i := 0; i < len(data); i += 16 {
		for _, c := range []byte(data[i:min(i+16, len(data))]) {
			fmt.Fprintf(&od, " %02x", c)
		}
		od.WriteByte('\n')
	}
	keyHex := hex.EncodeToString([]byte(oddKey))
	for name, in := range map[string]string{"xxd -p": xxd.String(), "od": od.String(), "upper": strings.ToUpper(h), "colons": strings.Join(strings.SplitAfter(h, ""), ":")} {
		got := s.Redact(in)
		flat := strings.NewReplacer("\n", "", " ", "", ":", "").Replace(strings.ToLower(got))
		if strings.Contains(flat, keyHex[2:len(keyHex)-2]) || !strings.Contains(got, "[REDACTED:K]") {
			t.Errorf("%s: the key's hex survives:\n%s", name, got)
		}
	}
}

// A key shown in pieces is redacted piece by piece, each of sixteen bytes or more: the ASCII
// column of xxd, a truncated output, a middle elided. (A shorter piece stays.)
func TestSecretsPieces(t *testing.T) {
	s := held(t, "K", realKey)
	var xxd strings.Builder
	data := "PATH=/bin\x00K=" + realKey + "\x00"
	for i := 0; i < len(data); i += 16 {
		line := data[i:min(i+16, len(data))]
		fmt.Fprintf(&xxd, "%08x: %-40x  %s\n", i, line, strings.Map(func(r rune) rune {
			if r < 32 {
				return '.'
			}
			return r
		}, line))
	}
	elided := "out: " + realKey[:40] + "\n[… 1000 bytes of output elided …]\n" + realKey[60:] + "\n"
	for name, in := range map[string]string{"xxd": xxd.String(), "head -c": "K=" + realKey[:30], "elided": elided} {
		got := s.Redact(in)
		for i := 0; i+minFrag <= len(realKey); i++ {
			if strings.Contains(got, realKey[i:i+minFrag]) {
				t.Errorf("%s: %q survives in\n%s", name, realKey[i:i+minFrag], got)
				break
			}
		}
		if !strings.Contains(got, "[REDACTED:K]") {
			t.Errorf("%s: nothing redacted in\n%s", name, got)
		}
	}
}

// Values added later are found too, and both names show.
func TestSecretsAddWhileRedacting(t *testing.T) {
	s := held(t, "A", oddKey)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for range 100 {
			s.Redact("x " + oddKey + " y")
		}
	}()
	s.Add("B", "another-secret-value")
	<-done
	got := s.Redact(oddKey + " and another-secret-value")
	if got != "[REDACTED:A] and [REDACTED:B]" {
		t.Errorf("got %q", got)
	}
	if s.Add("B", "another-secret-value"); s.Len() != 2 {
		t.Errorf("Len() = %d after adding a value twice", s.Len())
	}
}

// Shapes are still redacted, after exact values; a nil set redacts shapes only.
func TestSecretsKeepsShapes(t *testing.T) {
	s := held(t, "K", oddKey)
	if got := s.Redact(oddKey + " " + ghKey); got != "[REDACTED:K] [REDACTED:github]" {
		t.Errorf("got %q", got)
	}
	var none *Secrets
	if got := none.Redact(ghKey); got != "[REDACTED:github]" {
		t.Errorf("got %q", got)
	}
}

func TestSecretsLeaveCleanTextUncopied(t *testing.T) {
	s := held(t, "A", oddKey, "B", realKey, "C", projKey)
	text := strings.Repeat("no secrets in this line, just bees and sks and 7a71 hex.\n", 100)
	if n := testing.AllocsPerRun(10, func() { s.Redact(text) }); n != 0 {
		t.Errorf("%v allocations for clean text", n)
	}
}

// stream plays text cut into pieces through Safe, as a live stream does, and returns what it
// released.
func stream(s *Secrets, pieces []string) string {
	var out strings.Builder
	held := ""
	for _, p := range pieces {
		buf := held + p
		n := s.Safe(buf)
		out.WriteString(s.Redact(buf[:n]))
		held = buf[n:]
	}
	out.WriteString(s.Redact(held))
	return out.String()
}

// A secret streamed in pieces cut anywhere is redacted whole, in every form, and so are key
// shapes; text with none comes out as it went in.
func TestSafeStreams(t *testing.T) {
	seed := time.Now().UnixNano()
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(uint64(seed), 11))
	s := held(t, "K", oddKey, "R", realKey)
	b64 := base64.StdEncoding.EncodeToString([]byte("K=" + oddKey + "\n"))
	secrets := []string{oddKey, realKey, b64, b64[:30] + "\n" + b64[30:], hex.EncodeToString([]byte(realKey)), ghKey,
		"Authorization: Bearer " + jwt, pemKey}
	words := []string{"the ", "quick\n", "brown ", "fox, ", "zq9 ", "sk-", "x7x7 ", "Bearer ", "-----", "QUJD "}
	for range 2000 {
		var b strings.Builder
		for range 1 + r.IntN(12) {
			if r.IntN(4) == 0 {
				b.WriteString(secrets[r.IntN(len(secrets))])
				b.WriteString([]string{" ", "\n", ". "}[r.IntN(3)])
			} else {
				b.WriteString(words[r.IntN(len(words))])
			}
		}
		text := b.String()
		var pieces []string
		for rest := text; rest != ""; {
			n := min(len(rest), 1+r.IntN(12))
			pieces = append(pieces, rest[:n])
			rest = rest[n:]
		}
		got := stream(s, pieces)
		// The values held are found whatever surrounds them; key shapes only at a word boundary.
		for _, leak := range []string{oddKey, realKey[13:], b64[4:20], hex.EncodeToString([]byte(realKey))[30:60]} {
			if strings.Contains(got, leak) {
				t.Fatalf("streamed in %q\n%q survives in %q", pieces, leak, got)
			}
		}
		// Cut anywhere, the stream says what the whole text redacted says; except around private
		// key blocks, whose header a word glued to it can hide from the whole text's redaction
		// (the stream, judging the header on its own, is the stricter).
		if want := s.Redact(text); got != want && !strings.Contains(text, "-----") {
			t.Fatalf("streamed in %q\n got %q\nwant %q", pieces, got, want)
		}
	}
}

// Safe holds back no more than it must: clean text is released up to its last word.
func TestSafeReleasesCleanText(t *testing.T) {
	s := held(t, "K", oddKey)
	for _, tt := range []struct {
		in   string
		want int
	}{
		{"hello world", len("hello ")},
		{"hello world\n", len("hello world\n")},
		{"key: zq9-x7", len("key: ")},
		{"send it with Bearer ", len("send it with ")},
		{"line\n-----BEGIN RSA", len("line\n")},
		{"", 0},
	} {
		if got := s.Safe(tt.in); got != tt.want {
			t.Errorf("Safe(%q) = %d, want %d", tt.in, got, tt.want)
		}
	}
}

func FuzzSecrets(f *testing.F) {
	for _, s := range []string{oddKey, "x" + oddKey + "y", base64.StdEncoding.EncodeToString([]byte(oddKey)), hex.EncodeToString([]byte(oddKey)), `\n\n` + oddKey} {
		f.Add(s, 3)
	}
	s := held(f, "K", oddKey)
	f.Fuzz(func(t *testing.T, in string, cut int) {
		once := s.Redact(in)
		if twice := s.Redact(once); twice != once {
			t.Errorf("not idempotent:\n in %q\nonce %q\ntwice %q", in, once, twice)
		}
		if strings.Contains(once, oddKey) {
			t.Errorf("the key survived: %q", once)
		}
		if cut = max(cut, 1); cut < 64 {
			var pieces []string
			for rest := in; rest != ""; rest = rest[min(cut, len(rest)):] {
				pieces = append(pieces, rest[:min(cut, len(rest))])
			}
			if got := stream(s, pieces); strings.Contains(got, oddKey) {
				t.Errorf("the key survived a stream: %q", got)
			}
		}
	})
}

func BenchmarkSecrets(b *testing.B) {
	s := held(b, "A", oddKey, "B", realKey, "C", projKey)
	for _, tc := range []struct {
		name string
		text string
	}{
		{"clean", strings.ReplaceAll(corpus(1<<20), projKey, "sk-redacted")},
		{"with-secrets", corpus(1 << 20)},
	} {
		b.Run(tc.name, func(b *testing.B) {
			b.SetBytes(int64(len(tc.text)))
			for b.Loop() {
				s.Redact(tc.text)
			}
		})
	}
}

// BenchmarkSafe is the cost a live stream pays per piece: a typical piece with a held tail.
func BenchmarkSafe(b *testing.B) {
	s := held(b, "A", oddKey, "B", realKey, "C", projKey)
	piece := "The function returns the parsed value and an err"
	for b.Loop() {
		n := s.Safe(piece)
		s.Redact(piece[:n])
	}
}
