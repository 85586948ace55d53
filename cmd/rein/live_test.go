package main

import (
	"bufio"
	"encoding/json"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// rein run --json shows a running command's output as tool_output events while it runs, before its
// tool_finished, and records only the result: no live piece is in the record.
func TestRunShowsLiveOutput(t *testing.T) {
	sb := newSandbox(t)
	script := writeScript(t, sb.ws,
		map[string]any{"tool_calls": []any{bash("for i in 1 2 3; do echo line$i; sleep 0.3; done")}},
		map[string]any{"text": "Done."})
	cmd := exec.Command(reinBin(t), "run", "--json", "--provider", "sim", "--sim-delay", "1ms", "--sim-script", script, "--sandbox", "off", "count")
	cmd.Dir, cmd.Env = sb.ws, sb.env
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var live strings.Builder
	var liveBeforeEnd string
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		var ev struct {
			Type, Kind, Text string
			CallID           string `json:"call_id"`
		}
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			t.Fatalf("a line that is not JSON: %q", sc.Text())
		}
		switch {
		case ev.Type == "tool_output":
			if ev.CallID == "" {
				t.Errorf("a tool_output event names no call: %s", sc.Text())
			}
			live.WriteString(ev.Text)
		case ev.Type == "record" && ev.Kind == "tool_finished":
			liveBeforeEnd = live.String()
		}
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("rein run: %v", err)
	}
	if liveBeforeEnd != "line1\nline2\nline3\n" {
		t.Fatalf("live output before the call's end: %q", liveBeforeEnd)
	}
	for _, p := range sb.records(t) {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(b), "tool_output") {
			t.Fatalf("the record holds a live event:\n%s", b)
		}
		if !strings.Contains(string(b), `line1\nline2\nline3`) {
			t.Fatalf("the record lacks the call's result:\n%s", b)
		}
	}

	// The human form prints the lines under the call as they come, and then only how it ended.
	sb2 := newSandbox(t)
	script = writeScript(t, sb2.ws,
		map[string]any{"tool_calls": []any{bash("echo first; sleep 0.2; echo second")}},
		map[string]any{"text": "Done."})
	r := sb2.rein(t, "run", "--provider", "sim", "--sim-delay", "1ms", "--sim-script", script, "--sandbox", "off", "count")
	if r.code != 0 || !strings.Contains(r.stdout, "  │ first\n  │ second\n  ⎿ done\n") {
		t.Fatalf("human output:\n%s", r)
	}
}
