package claude

import (
	"bufio"
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reinhq/rein/internal/external"
)

// The lines under testdata are Claude Code 2.1.328's own, captured against rein's simulator
// (paths shortened): a turn with a Bash call, one interrupted mid-tool, one with a permission
// prompt, one through a 429 retry, and one whose API error Claude Code reports with is_error
// under subtype success.

func readLines(t *testing.T, name string) []line {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name+".jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	var out []line
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(nil, maxLine)
	for sc.Scan() {
		l, err := decode(sc.Bytes())
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		out = append(out, l)
	}
	return out
}

func TestDecodeRecorded(t *testing.T) {
	cases := []struct {
		name    string
		kinds   string // the items the assistant, user and system lines make
		control string // the control requests' subtypes
		status  string // what the result line says of the turn (not stopped)
		reply   string
		errHas  string
	}{
		{name: "tool", kinds: "text,tool_call,tool_result,text", status: external.StatusCompleted, reply: "One file, a.txt."},
		{name: "interrupt", kinds: "text,tool_call,tool_result", status: external.StatusFailed, errHas: "error_during_execution"},
		{name: "approval", kinds: "text,tool_call,tool_result,text", control: "can_use_tool", status: external.StatusCompleted, reply: "Denied then."},
		{name: "retry", kinds: "retry,text", status: external.StatusCompleted, reply: "Finally."},
		{name: "error", kinds: "text", status: external.StatusFailed, errHas: "is_error, subtype success"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ls := readLines(t, c.name)
			if ls[0].Type != "system" || ls[0].Subtype != "init" || ls[0].SessionID == "" || ls[0].Version != "2.1.328" {
				t.Fatalf("first line %+v is not an init naming the session and version", ls[0])
			}
			var kinds, control []string
			r := &run{}
			var res external.Result
			for _, l := range ls {
				for _, it := range l.items() {
					kinds = append(kinds, it.Kind)
				}
				if l.Type == "control_request" {
					control = append(control, l.Request.Subtype)
				}
				if l.Type == "assistant" {
					for _, b := range l.Message.blocks() {
						if b.Type == "text" {
							r.reply = b.Text
						}
					}
				}
				if l.Type == "result" {
					res = r.result(context.Background(), l)
				}
			}
			if got := strings.Join(kinds, ","); got != c.kinds {
				t.Errorf("items %s, want %s", got, c.kinds)
			}
			if got := strings.Join(control, ","); got != c.control {
				t.Errorf("control requests %s, want %s", got, c.control)
			}
			if res.Status != c.status || (c.reply != "" && res.Reply != c.reply) {
				t.Errorf("result %+v, want %s %q", res, c.status, c.reply)
			}
			if c.errHas != "" && (res.Err == nil || !strings.Contains(res.Err.Error(), c.errHas)) {
				t.Errorf("error %v, want one saying %q", res.Err, c.errHas)
			}
		})
	}
}

func TestDecodeApprovalRequest(t *testing.T) {
	for _, l := range readLines(t, "approval") {
		if l.Type != "control_request" {
			continue
		}
		q := l.Request
		if l.RequestID == "" || q.ToolName != "Bash" || q.ToolUseID == "" || !strings.Contains(string(q.Input), "touch made.txt") || q.Description != "touch made.txt" {
			t.Fatalf("can_use_tool read as %+v (%s)", q, l.RequestID)
		}
		return
	}
	t.Fatal("no control_request in the approval capture")
}

func TestDecodeRefuses(t *testing.T) {
	for _, in := range []string{"", "not json", "[1,2]", `{"subtype":"init"}`, `{"type":`, "\x00"} {
		if _, err := decode([]byte(in)); err == nil {
			t.Errorf("%q decoded", in)
		}
	}
	// Unknown fields and shapes rein does not read are no error: the program adds fields often.
	l, err := decode([]byte(`{"type":"assistant","new":1,"message":{"content":"plain text","extra":{}}}`))
	if err != nil || len(l.items()) != 1 || l.items()[0].Text != "plain text" {
		t.Fatalf("%+v %v", l, err)
	}
}

func TestCheckVersion(t *testing.T) {
	for _, c := range []struct {
		said string
		ok   bool
	}{
		{"2.1.328 (Claude Code)\n", true},
		{"2.1.400 (Claude Code)", true},
		{"2.1.327 (Claude Code)", false},
		{"2.2.0 (Claude Code)", false},
		{"1.0.128 (Claude Code)", false},
		{"codex-cli 0.169.0", false},
		{"", false},
	} {
		v, err := checkVersion(c.said)
		if (err == nil) != c.ok {
			t.Errorf("%q: version %q, error %v", c.said, v, err)
		}
		if err != nil && !strings.Contains(err.Error(), "npm install") {
			t.Errorf("%q: the refusal does not say what to install: %v", c.said, err)
		}
	}
}

// FuzzDecode holds the line decoder and what is made of a line to never panic, and an item's
// text to its bound.
func FuzzDecode(f *testing.F) {
	for _, name := range []string{"tool", "interrupt", "approval", "retry", "error"} {
		b, err := os.ReadFile(filepath.Join("testdata", name+".jsonl"))
		if err != nil {
			f.Fatal(err)
		}
		for _, l := range bytes.Split(b, []byte("\n")) {
			f.Add(l)
		}
	}
	f.Add([]byte(`{"type":"user","message":{"content":[{"type":"tool_result","content":[{"type":"text","text":"x"},{"type":"image"}]}]}}`))
	f.Add([]byte(`{"type":"system","subtype":"api_retry","error":{"a":1},"error_status":null}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		l, err := decode(b)
		if err != nil {
			return
		}
		for _, it := range l.items() {
			if len(it.Text) > maxItemText+len("…") {
				t.Fatalf("an item's text is %d bytes", len(it.Text))
			}
			if it.Kind == "" {
				t.Fatal("an item with no kind")
			}
		}
		r := &run{}
		if l.Type == "result" {
			res := r.result(context.Background(), l)
			if res.Status == external.StatusFailed && res.Err == nil {
				t.Fatal("a failed result with no error")
			}
		}
		_ = l.errorText()
	})
}
