package redact

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

const (
	antKey   = "sk-ant-api03-AbCdEfGhIjKlMnOpQrStUvWxYz0123456789_-AbCdEfGhIjKlMnOpQrStUvWxYz01234567-ABCDEFGH"
	orKey    = "sk-or-v1-0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
	projKey  = "sk-proj-AbCdEf0123456789_GhIjKlMnOpQrStUvWxYz-0123456789AbCdEfGhIjKlMnOpQrSt"
	oldKey   = "sk-AbCdEfGhIjKlMnOpQrStUvWxYz0123456789AbCdEfGhIjKl"
	awsKey   = "AKIAIOSFODNN7EXAMPLE"
	ghKey    = "ghp_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789"
	ghPAT    = "github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789ab"
	slackTok = "xoxb-123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx"
	googKey  = "AIzaSyA-0123456789abcdefghijklmnopqrstu"
	jwt      = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U"
)

const pemKey = `-----BEGIN RSA PRIVATE KEY-----
MIIEpAIBAAKCAQEA0Z3VS5JJcds3xfn/ygWyF8PbnGy0AHB7MhgHcTz6sE2I2yPB
aFDrBz9vFqU4yVN9e8RMyDTFsRRiBzY5bxTZb3bYtJ1FkZWR9cqpUw==
-----END RSA PRIVATE KEY-----`

func TestRedact(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"anthropic", "key=" + antKey + "\n", "key=[REDACTED:anthropic]\n"},
		{"openrouter", `"` + orKey + `"`, `"[REDACTED:openrouter]"`},
		{"openai project", "export OPENAI_API_KEY=" + projKey, "export OPENAI_API_KEY=[REDACTED:openai]"},
		{"openai legacy", oldKey + " and more", "[REDACTED:openai] and more"},
		{"aws", "aws_access_key_id = " + awsKey, "aws_access_key_id = [REDACTED:aws]"},
		{"aws temporary", "ASIAIOSFODNN7EXAMPLE,", "[REDACTED:aws],"},
		{"github classic", "token " + ghKey, "token [REDACTED:github]"},
		{"github oauth", "gho_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789", "[REDACTED:github]"},
		{"github fine-grained", ghPAT + ".", "[REDACTED:github]."},
		{"slack", "SLACK=" + slackTok, "SLACK=[REDACTED:slack]"},
		{"google", "?key=" + googKey + "&q=1", "?key=[REDACTED:google]&q=1"},
		{"pem", "before\n" + pemKey + "\nafter", "before\n[REDACTED:private_key]\nafter"},
		{"pem cut off", "before\n-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA", "before\n[REDACTED:private_key]"},
		{"pem public key kept", "-----BEGIN PUBLIC KEY-----\nMIIBIjAN\n-----END PUBLIC KEY-----", "-----BEGIN PUBLIC KEY-----\nMIIBIjAN\n-----END PUBLIC KEY-----"},
		{"pem certificate kept", "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----", "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----"},
		{"bearer", "Authorization: Bearer " + jwt + "\r\n", "Authorization: Bearer [REDACTED:bearer]\r\n"},
		{"bearer lower case", "-H 'authorization: bearer abcdef0123456789abcdef'", "-H 'authorization: bearer [REDACTED:bearer]'"},
		{"bearer wrapping a key", "Bearer " + antKey, "Bearer [REDACTED:bearer]"},
		{"two in a row", antKey + " " + ghKey, "[REDACTED:anthropic] [REDACTED:github]"},
		// Left alone.
		{"prose", "ask-me about the task-runner and sk-learn-contrib-extensions-for-everyone", "ask-me about the task-runner and sk-learn-contrib-extensions-for-everyone"},
		{"short sk", "sk-123", "sk-123"},
		{"key inside a word", "mask-" + oldKey[3:], "mask-" + oldKey[3:]},
		{"aws too long", "AKIAIOSFODNN7EXAMPLEX", "AKIAIOSFODNN7EXAMPLEX"},
		{"aws too short", "AKIA1234", "AKIA1234"},
		{"bearer prose", "Bearer authentication is described in RFC 6750.", "Bearer authentication is described in RFC 6750."},
		{"bearer variable", "Authorization: Bearer $TOKEN", "Authorization: Bearer $TOKEN"},
		{"placeholder", "[REDACTED:openai]", "[REDACTED:openai]"},
		{"empty", "", ""},
		{"nothing", "hello world", "hello world"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Redact(tt.in)
			if got != tt.want {
				t.Errorf("Redact(%q)\n got %q\nwant %q", tt.in, got, tt.want)
			}
			if again := Redact(got); again != got {
				t.Errorf("not idempotent: %q then %q", got, again)
			}
		})
	}
}

func TestRedactLeavesCleanTextUncopied(t *testing.T) {
	s := strings.Repeat("no secrets in this line, just bees and sks.\n", 100)
	if n := testing.AllocsPerRun(10, func() { Redact(s) }); n != 0 {
		t.Errorf("%v allocations for clean text", n)
	}
}

func FuzzRedact(f *testing.F) {
	for _, s := range []string{antKey, orKey, projKey, awsKey, ghKey, ghPAT, slackTok, googKey, pemKey,
		"Bearer " + jwt, "x" + antKey, awsKey + awsKey, "-----BEGIN PRIVATE KEY-----", "bearer\tbearer " + oldKey} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		once := Redact(s)
		if twice := Redact(once); twice != once {
			t.Errorf("not idempotent:\n in %q\nonce %q\ntwice %q", s, once, twice)
		}
		for _, key := range []string{antKey, orKey, projKey, ghKey, slackTok} {
			if strings.Contains(s, " "+key+" ") && strings.Contains(once, key) {
				t.Errorf("a delimited key survived: %q", once)
			}
		}
	})
}

// corpus is typical tool output: source, logs, a few secrets.
func corpus(size int) string {
	r := rand.New(rand.NewPCG(1, 2))
	lines := []string{
		"func (s *Server) handle(w http.ResponseWriter, r *http.Request) {",
		"2024-05-01T12:00:00Z INFO request served status=200 bytes=5123 path=/api/v1/sessions",
		"    --- PASS: TestSomething/subtest_with_a_long_name (0.00s)",
		"drwxr-xr-x  5 user staff   160 May  1 12:00 build-assets",
		"Because bees buzz, base64 blobs and ASCII art abound: AAAAABBBBBgggg-xxxx-ssss.",
		"curl -s -H 'Authorization: Bearer $TOKEN' https://example.com/api",
	}
	var b strings.Builder
	for b.Len() < size {
		if r.IntN(200) == 0 {
			fmt.Fprintf(&b, "OPENAI_API_KEY=%s\n", projKey)
			continue
		}
		b.WriteString(lines[r.IntN(len(lines))])
		b.WriteByte('\n')
	}
	return b.String()
}

func BenchmarkRedact(b *testing.B) {
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
				Redact(tc.text)
			}
		})
	}
}
