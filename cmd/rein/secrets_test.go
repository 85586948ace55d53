package main

// Adversarial tests of the rule that API keys never reach a record or rein's output: the real
// binary, keys planted in its environment, a model (the simulator) that tries to make tools print
// them in every form, and a provider that echoes them in its errors.

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// plantedKeys returns fresh keys for one run: one of no known shape (only its exact value can find
// it), and one shaped like a real Anthropic key.
func plantedKeys(t *testing.T) (odd, real string) {
	b := make([]byte, 48)
	rand.Read(b)
	odd = "zq9-" + hex.EncodeToString(b[:8]) + "-abc"
	real = "sk-ant-api03-" + strings.NewReplacer("+", "-", "/", "_").Replace(base64.RawStdEncoding.EncodeToString(append(b[8:], b...))) + "AA"
	t.Logf("planted keys: %s, %s", odd, real)
	return odd, real
}

// keyForms returns what must never be found, for each key: the key and every sixteen bytes of it,
// and its base64 (both alphabets, each alignment's core) and hex. leaks reports the first found in
// text, which is searched also with line breaks, blanks, colons and JSON's \n escapes taken out,
// so that a form a tool wrapped or spaced is found too.
func keyForms(keys ...string) []string {
	var forms []string
	for _, k := range keys {
		forms = append(forms, k, strings.ToLower(hex.EncodeToString([]byte(k))), strings.ToUpper(hex.EncodeToString([]byte(k))))
		for i := 0; i+16 <= len(k); i++ {
			forms = append(forms, k[i:i+16])
		}
		for a := range 3 {
			buf := append(make([]byte, a), k...)
			enc := base64.RawStdEncoding.EncodeToString(buf)
			core := enc[(8*a+5)/6 : 8*(a+len(k))/6]
			forms = append(forms, core, strings.NewReplacer("+", "-", "/", "_").Replace(core))
		}
	}
	return forms
}

func leaks(text string, forms []string) string {
	flat := strings.NewReplacer(`\n`, "", `\r`, "", "\n", "", "\r", "", " ", "", ":", "").Replace(text)
	for _, f := range forms {
		if strings.Contains(text, f) || strings.Contains(flat, f) {
			return f
		}
	}
	return ""
}

// checkTree fails the test if any file under root holds a form of the keys.
func checkTree(t *testing.T, root string, forms []string) int {
	t.Helper()
	n := 0
	filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			t.Errorf("read %s: %v", path, err)
			return nil
		}
		n++
		if f := leaks(string(b), forms); f != "" {
			t.Errorf("%s holds %q", path, f)
		}
		return nil
	})
	return n
}

// attacks are the commands the model runs to print the keys: from rein's own environment (found
// as $PPID, the bash supervisor's parent, and by walking up the process tree to a process named
// rein), and from the keys it was told, encoded every way a shell makes easy.
func attacks(keys ...string) []map[string]any {
	env := `/proc/$PPID/environ`
	calls := []map[string]any{
		bash(`cat ` + env + `; echo`),
		bash(`tr '\0' '\n' < ` + env + ` | grep API_KEY`),
		bash(`tr '\0' '\n' < ` + env + ` | grep API_KEY | cut -c 1-45`),
		bash(`base64 ` + env),
		bash(`base64 -w0 ` + env),
		bash(`basenc --base64url ` + env),
		bash(`xxd -p ` + env),
		bash(`od -An -tx1 ` + env),
		bash(`p=$$; while [ "$p" -gt 1 ]; do if [ "$(cat /proc/$p/comm)" = rein ]; then echo "rein is $p"; tr '\0' '\n' < /proc/$p/environ; base64 /proc/$p/environ; fi; p=$(cut -d' ' -f4 /proc/$p/stat); done`),
		bash(`env; tr '\0' '\n' < /proc/self/environ`),
	}
	for _, k := range keys {
		calls = append(calls,
			bash(fmt.Sprintf(`echo %s; echo '{"key":"%s"}'; echo %s | fold -w 20; echo %s | cut -c 1-18; echo %s | cut -c 7-`, k, k, k, k, k)),
			bash(fmt.Sprintf(`echo %s | base64; echo -n %s | base64; printf 'x%%s' %s | base64; printf 'xy%%s' %s | base64 -w 16`, k, k, k, k)),
			bash(fmt.Sprintf(`echo -n %s | basenc --base64url; printf 'xy%%s\n' %s | basenc --base64url`, k, k)),
			bash(fmt.Sprintf(`echo %s | xxd -p; echo -n %s | xxd -p -c 4 | tr a-f A-F; printf %s | od -An -tx1; printf %s | hexdump -ve '1/1 "%%.2x"'`, k, k, k, k)),
		)
	}
	return calls
}

// The model tries to print the keys it can reach and the keys it was told, says them in its text
// and thinking, and the provider echoes them in its errors (one retried, one final): no form of
// either key reaches any file under REIN_HOME, stdout or stderr, as human output or --json, nor
// the output of show, sessions and doctor.
func TestKeysNeverLeaveRein(t *testing.T) {
	odd, real := plantedKeys(t)
	forms := keyForms(odd, real)
	b64 := base64.StdEncoding.EncodeToString([]byte(odd))
	for _, mode := range []string{"human", "json"} {
		t.Run(mode, func(t *testing.T) {
			sb := newSandbox(t)
			sb.env = append(sb.env, "ANTHROPIC_API_KEY="+odd, "OPENROUTER_API_KEY="+real)
			steps := []map[string]any{}
			for _, c := range attacks(odd, real) {
				steps = append(steps, map[string]any{"tool_calls": []map[string]any{c}})
			}
			steps = append(steps,
				map[string]any{"thinking": map[string]any{"text": "the key is " + odd, "signature": "c2ln"},
					"text": "Here they are: " + odd + " and " + real + ".", "chunks": 40,
					"tool_calls": []map[string]any{bash("true")}},
				map[string]any{"status": 529, "message": "overloaded; your key " + odd + " (" + b64 + ") is fine", "retry_after_ms": 1},
				map[string]any{"status": 400, "message": "invalid x-api-key " + odd + " / " + real},
			)
			script := writeScript(t, filepath.Dir(sb.home), steps...)
			// Without the sandbox, whose PID namespace would hide rein's /proc from the attacks:
			// this test is about what rein does when a command can read it.
			args := []string{"run", "--provider", "sim", "--sim-delay", "1ms", "--sim-script", script, "--sandbox", "off"}
			if mode == "json" {
				args = append(args, "--json")
			}
			r := sb.rein(t, append(args, "go")...)
			if r.code != exitFailed {
				t.Fatalf("the final provider error should end the run with exit 1\n%s", r)
			}
			for name, out := range map[string]string{"stdout": r.stdout, "stderr": r.stderr} {
				if f := leaks(out, forms); f != "" {
					t.Errorf("%s holds %q:\n%s", name, f, out)
				}
			}
			if !strings.Contains(r.stderr, "invalid x-api-key [REDACTED:ANTHROPIC_API_KEY] / [REDACTED:OPENROUTER_API_KEY]") {
				t.Errorf("stderr does not show the provider's error, redacted:\n%s", r.stderr)
			}
			recs := sb.records(t)
			if len(recs) != 1 {
				t.Fatalf("%d records", len(recs))
			}
			id := filepath.Base(filepath.Dir(recs[0]))
			for _, cmd := range [][]string{{"show", id}, {"sessions"}, {"doctor", id}} {
				r := sb.rein(t, cmd...)
				if f := leaks(r.stdout+r.stderr, forms); f != "" {
					t.Errorf("rein %s prints %q:\n%s", strings.Join(cmd, " "), f, r)
				}
			}
			if n := checkTree(t, sb.home, forms); n < 2 {
				t.Errorf("only %d files under REIN_HOME; the saved request is missing", n)
			}
			checkTree(t, sb.ws, forms)
			// The attacks ran and their output was recorded, redacted: every encoding of the keys
			// the model was told shows as a placeholder in what the tools printed.
			outputs := toolOutputs(t, recs[0])
			for _, name := range []string{"ANTHROPIC_API_KEY", "OPENROUTER_API_KEY"} {
				if n := strings.Count(outputs, "[REDACTED:"+name+"]"); n < 12 {
					t.Errorf("%d placeholders for %s in the tools' output; the attacks did not run as meant:\n%s", n, name, outputs)
				}
			}
		})
	}
}

// A provider (or a proxy) that echoes the Authorization header in its error body, as JSON and as
// an HTML page, retried once and then final: the key it echoes reaches no record, no saved
// request, neither stderr nor --json output.
func TestProviderEchoingTheKey(t *testing.T) {
	odd, _ := plantedKeys(t)
	forms := keyForms(odd)
	var mu sync.Mutex
	var seen []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		auth := r.Header.Get("Authorization")
		mu.Lock()
		seen = append(seen, auth)
		n := len(seen)
		mu.Unlock()
		tok := strings.TrimPrefix(auth, "Bearer ")
		echo := fmt.Sprintf("Incorrect API key provided: %s (base64 %s, hex %s)", auth,
			base64.StdEncoding.EncodeToString([]byte(tok)), hex.EncodeToString([]byte(tok)))
		if n%2 == 1 {
			w.Header().Set("Content-Type", "text/html")
			w.Header().Set("Retry-After-Ms", "1")
			w.WriteHeader(http.StatusBadGateway)
			fmt.Fprintf(w, "<html><body><h1>502 Bad Gateway</h1><p>%s</p></body></html>", echo)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		json.NewEncoder(w).Encode(map[string]any{"error": map[string]any{"message": echo, "type": "invalid_request_error", "code": tok}})
	}))
	defer srv.Close()
	for _, mode := range []string{"human", "json"} {
		t.Run(mode, func(t *testing.T) {
			sb := newSandbox(t)
			sb.env = append(sb.env, "OPENAI_API_KEY="+odd)
			args := []string{"run", "--provider", "openai", "--base-url", srv.URL, "--model", "gpt-test"}
			if mode == "json" {
				args = append(args, "--json")
			}
			r := sb.rein(t, append(args, "hello")...)
			if r.code != exitFailed {
				t.Fatalf("want exit 1\n%s", r)
			}
			mu.Lock()
			last := seen[len(seen)-1]
			mu.Unlock()
			if last != "Bearer "+odd {
				t.Fatalf("the server was sent %q, not the planted key", last)
			}
			for name, out := range map[string]string{"stdout": r.stdout, "stderr": r.stderr} {
				if f := leaks(out, forms); f != "" {
					t.Errorf("%s holds %q:\n%s", name, f, out)
				}
			}
			if !strings.Contains(r.stdout+r.stderr, "Incorrect API key provided: Bearer [REDACTED:OPENAI_API_KEY]") {
				t.Errorf("the provider's words are not shown, redacted:\n%s", r)
			}
			checkTree(t, sb.home, forms)
			recs := sb.records(t)
			b, _ := os.ReadFile(recs[0])
			if n := strings.Count(string(b), "provider_error"); n < 2 {
				t.Errorf("%d provider errors recorded, want the retried one and the final one:\n%s", n, b)
			}
		})
	}
}

// toolOutputs returns what the tools printed, as a record holds it.
func toolOutputs(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var rec struct {
			Payload struct {
				Results []struct{ Content string } `json:"results"`
			} `json:"payload"`
		}
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		for _, res := range rec.Payload.Results {
			out.WriteString(res.Content + "\n")
		}
	}
	return out.String()
}

// The host shows no key either: its event stream (records and live text), its conversation,
// transcript and list answers, its own output and its files, while the model runs the attacks,
// says the keys and the provider echoes them.
func TestServeNeverShowsTheKeys(t *testing.T) {
	odd, real := plantedKeys(t)
	forms := keyForms(odd, real)
	sb := newSandbox(t)
	sb.env = append(sb.env, "ANTHROPIC_API_KEY="+odd, "OPENROUTER_API_KEY="+real)
	script := writeScript(t, filepath.Dir(sb.home),
		map[string]any{"tool_calls": []map[string]any{attacks(odd, real)[0], attacks(odd, real)[10], attacks(odd, real)[11]}},
		map[string]any{"text": "Here: " + odd + " and " + real, "chunks": 30, "tool_calls": []map[string]any{bash("true")}},
		map[string]any{"status": 400, "message": "invalid x-api-key " + odd},
	)
	c := sb.startRun(t, "serve", "--provider", "sim", "--sim-delay", "1ms", "--sim-script", script)
	var base, token string
	select {
	case l := <-c.lines:
		u, _ := l["text"].(string)
		u = strings.TrimPrefix(u, "rein serve: ")
		base, token, _ = strings.Cut(u, "/#token=")
	case <-c.done:
		t.Fatalf("rein serve ended\n%s", c.stderr)
	}
	if token == "" {
		t.Fatalf("no URL printed\n%s", c.stderr)
	}
	var seen strings.Builder // every byte the host answered
	call := func(method, path, body string) string {
		t.Helper()
		req, _ := http.NewRequest(method, base+path, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+token)
		if body != "" {
			req.Header.Set("Content-Type", "application/json")
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var b strings.Builder
		if _, err := io.Copy(&b, resp.Body); err != nil {
			t.Fatal(err)
		}
		seen.WriteString(b.String())
		return b.String()
	}
	var created struct{ Conversation struct{ ID string } }
	json.Unmarshal([]byte(call("POST", "/api/conversations", `{"op_id":"op-1"}`)), &created)
	conv := created.Conversation
	if conv.ID == "" {
		t.Fatalf("no conversation: %s", seen.String())
	}
	req, _ := http.NewRequest("GET", base+"/api/conversations/"+conv.ID+"/events", nil)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	events := newLogBuf()
	go func() {
		io.Copy(events, resp.Body)
		resp.Body.Close()
	}()
	call("POST", "/api/conversations/"+conv.ID+"/messages", `{"op_id":"op-2","text":"go"}`)
	if !events.waitFor(`"kind":"quiesced"`, time.Minute) {
		t.Fatalf("the exchange did not end\n%s\n%s", events, c.stderr)
	}
	resp.Body.Close()
	call("GET", "/api/conversations/"+conv.ID, "")
	call("GET", "/api/conversations/"+conv.ID+"/transcript", "")
	call("GET", "/api/conversations", "")
	c.cmd.Process.Signal(os.Interrupt)
	c.wait(t, 30*time.Second)
	all := events.String() + seen.String()
	if f := leaks(all, forms); f != "" {
		t.Errorf("the host answered %q:\n%s", f, all)
	}
	if !strings.Contains(events.String(), "[REDACTED:ANTHROPIC_API_KEY]") || !strings.Contains(events.String(), "event: live") {
		t.Errorf("the events do not show the attacks' output redacted, or no live text:\n%s", events)
	}
	if f := leaks(c.stderr.String(), forms); f != "" {
		t.Errorf("serve's stderr holds %q", f)
	}
	checkTree(t, sb.home, forms)
}
