package api

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/reinhq/rein/internal/record"
)

// The status table is the one docs/api.md publishes: every code the API defines is in the docs'
// error table with the same status, and every code the docs list is defined.
func TestStatusTableIsTheDocs(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "docs", "api.md"))
	if err != nil {
		t.Fatal(err)
	}
	row := regexp.MustCompile("(?m)^\\| ([0-9]{3}) \\| (`[a-z_]+`(?:, `[a-z_]+`)*) \\|")
	code := regexp.MustCompile("`([a-z_]+)`")
	docs := map[Code]int{}
	for _, m := range row.FindAllStringSubmatch(string(b), -1) {
		status, _ := strconv.Atoi(m[1])
		for _, c := range code.FindAllStringSubmatch(m[2], -1) {
			docs[Code(c[1])] = status
		}
	}
	if len(docs) == 0 {
		t.Fatal("found no error table in docs/api.md")
	}
	for _, c := range Codes() {
		if s, ok := docs[c]; !ok {
			t.Errorf("code %s (%d) is not in docs/api.md's error table", c, c.Status())
		} else if s != c.Status() {
			t.Errorf("code %s: docs/api.md says %d, the table %d", c, s, c.Status())
		}
	}
	for c, s := range docs {
		if !slices.Contains(Codes(), c) {
			t.Errorf("docs/api.md lists code %s (%d), which the API does not define", c, s)
		}
	}
}

func TestStatusOfAnUnknownCodeIs400(t *testing.T) {
	if s := Code("made_up").Status(); s != 400 {
		t.Fatalf("an unknown code is answered %d, want 400", s)
	}
	if s := Busy.Status(); s != 409 {
		t.Fatalf("busy is answered %d", s)
	}
}

func TestErrorsSayTheirMessageAndAreFound(t *testing.T) {
	e := Errorf(Held, "conversation %s is held", "c-1")
	if e.Error() != "conversation c-1 is held" {
		t.Errorf("a host's refusal reads %q", e)
	}
	e.Status = 409
	if e.Error() != "held (409): conversation c-1 is held" {
		t.Errorf("a refusal read off an answer reads %q", e)
	}
	wrapped := fmt.Errorf("open: %w", e)
	if CodeOf(wrapped) != Held || CodeOf(errors.New("plain")) != "" || CodeOf(nil) != "" {
		t.Errorf("CodeOf: %q %q", CodeOf(wrapped), CodeOf(errors.New("plain")))
	}
}

// Working is the one working rule: an exchange in flight, or a submission accepted or delivered.
func TestWorking(t *testing.T) {
	sub := func(state string) []Submission { return []Submission{{ID: "m-1", State: state}} }
	for _, c := range []struct {
		s    State
		want bool
	}{
		{State{}, false},
		{State{InFlight: true}, true},
		{State{Submissions: sub(Accepted)}, true},
		{State{Submissions: sub(Delivered)}, true},
		{State{Submissions: sub(Answered)}, false},
		{State{Submissions: sub(Cancelled)}, false},
		{State{Submissions: sub(Withdrawn)}, false},
		{State{Submissions: sub(Rejected)}, false},
		{State{Approvals: []Approval{{CallID: "c1"}}}, false}, // a call waiting is in flight, or nothing is
		{State{Submissions: append(sub(Answered), Submission{ID: "m-2", State: Accepted})}, true},
	} {
		if got := Working(c.s); got != c.want {
			t.Errorf("Working(%+v) = %v, want %v", c.s, got, c.want)
		}
	}
}

func TestHasCapability(t *testing.T) {
	c := Capabilities{Version: "0.1.0", Capabilities: []string{CapStop, CapQueue}}
	if !c.Has(CapQueue) || c.Has(CapModel) {
		t.Fatalf("Has over %v", c.Capabilities)
	}
}

// The wire's bytes are pinned: a renamed field or tag fails here before it fails a client.
func TestWireBytes(t *testing.T) {
	since := time.Date(2026, 11, 29, 20, 1, 2, 0, time.UTC)
	allow := true
	for _, c := range []struct {
		v    any
		want string
	}{
		{Capabilities{Version: "0.1.0", Capabilities: []string{CapStop}},
			`{"version":"0.1.0","capabilities":["conversation-stop.v1"]}`},
		{View{ID: "c-1", Title: "t", Created: "2026-11-29T20:01:02Z", Updated: "2026-11-29T20:01:09.5Z",
			State: State{Phase: "ready_for_user", InFlight: true, Turn: 3, Working: true,
				Submissions: []Submission{{ID: "m-1", Op: "op-1", State: Accepted, Text: "hi", Attachments: []record.Attachment{}, Queue: true}},
				Approvals:   []Approval{{CallID: "c1", Name: "bash", Args: "ls"}}, Seq: 14},
			Held: &Holder{PID: 42, Command: "rein run", Since: since}},
			`{"id":"c-1","title":"t","created":"2026-11-29T20:01:02Z","updated":"2026-11-29T20:01:09.5Z","closed":false,` +
				`"state":{"phase":"ready_for_user","in_flight":true,"turn":3,"working":true,` +
				`"submissions":[{"id":"m-1","op":"op-1","state":"accepted","text":"hi","attachments":[],"queue":true}],` +
				`"approvals":[{"call_id":"c1","name":"bash","args":"ls"}],"seq":14},` +
				`"held":{"pid":42,"command":"rein run","since":"2026-11-29T20:01:02Z"}}`},
		{Conversations{Conversations: []View{}}, `{"conversations":[]}`},
		{Created{Conversation: View{ID: "c-1"}, Replayed: true},
			`{"conversation":{"id":"c-1","title":"","created":"","updated":"","closed":false,"state":{"phase":"","in_flight":false,"turn":0,"working":false,"submissions":null,"approvals":null,"seq":0}},"replayed":true}`},
		{Event{Seq: 15, Kind: "quiesced", Payload: json.RawMessage(`{"reason":"replied"}`), Live: &Live{Kind: "text"}},
			`{"seq":15,"kind":"quiesced","payload":{"reason":"replied"},"state":{"phase":"","in_flight":false,"turn":0,"working":false,"submissions":null,"approvals":null,"seq":0}}`},
		{Live{Kind: "tool_start", Text: "{}", CallID: "c1", Name: "bash"}, `{"kind":"tool_start","text":"{}","call_id":"c1","name":"bash"}`},
		{Live{Kind: "restart"}, `{"kind":"restart"}`},
		{ErrorBody{Error: &Error{Code: NotFound, Message: "no conversation c-123", Status: 404, RetryAfter: time.Second}},
			`{"error":{"code":"not_found","message":"no conversation c-123"}}`},
		{Message{Op: "op-4", Text: "list the files here"}, `{"op_id":"op-4","text":"list the files here"}`},
		{Message{Op: "op-4", Attachments: []record.Attachment{{Name: "a.txt", Text: "x"}}, Queue: true},
			`{"op_id":"op-4","attachments":[{"name":"a.txt","media_type":"","text":"x"}],"queue":true}`},
		{SendResult{MessageID: "m-op-4", State: Accepted}, `{"message_id":"m-op-4","state":"accepted","replayed":false}`},
		{StopRequest{Op: "op-5"}, `{"op_id":"op-5"}`},
		{StopRequest{Op: "op-5", Turn: 3}, `{"op_id":"op-5","turn":3}`},
		{StopResult{Stopped: true, Interrupted: true, Withdrawn: []Taken{{ID: "m-op-6", Text: "and also", Attachments: []record.Attachment{}}}},
			`{"stopped":true,"interrupted":true,"withdrawn":[{"id":"m-op-6","text":"and also","attachments":[]}],"replayed":false}`},
		{StopResult{Withdrawn: []Taken{}, Reason: "turn 3 is no longer in hand"},
			`{"stopped":false,"interrupted":false,"withdrawn":[],"reason":"turn 3 is no longer in hand","replayed":false}`},
		{ApproveRequest{Op: "op-11", CallID: "toolu_01", Allow: &allow}, `{"op_id":"op-11","call_id":"toolu_01","allow":true}`},
		{ApproveResult{CallID: "toolu_01", State: "allowed"}, `{"call_id":"toolu_01","state":"allowed","replayed":false}`},
		{ModelRequest{Op: "op-12", Model: "m"}, `{"op_id":"op-12","model":"m"}`},
		{ModelResult{Provider: "sim", Model: "m", Conversation: View{ID: "c-1"}},
			`{"provider":"sim","model":"m","replayed":false,"conversation":{"id":"c-1","title":"","created":"","updated":"","closed":false,"state":{"phase":"","in_flight":false,"turn":0,"working":false,"submissions":null,"approvals":null,"seq":0}}}`},
		{EvictRequest{Op: "op-7", From: 4, To: 9, Note: "n"}, `{"op_id":"op-7","from":4,"to":9,"note":"n"}`},
		{RewindRequest{Op: "op-8", Turn: 12}, `{"op_id":"op-8","turn":12}`},
		{ClearRequest{Op: "op-9"}, `{"op_id":"op-9"}`},
		{ForkRequest{Op: "op-10"}, `{"op_id":"op-10"}`},
		{ForkRequest{Op: "op-10", At: 8}, `{"op_id":"op-10","at":8}`},
		{CreateRequest{Op: "op-1"}, `{"op_id":"op-1","title":""}`},
		{RenameRequest{Op: "op-2", Title: "renamed"}, `{"op_id":"op-2","title":"renamed"}`},
		{EditResult{Seq: 42, Survey: Survey{Rows: []Row{{From: 1, To: 3, Role: record.User, Kind: Own, Label: "list the files", Bytes: 812, Held: "resident"}}, Bytes: 812, SystemBytes: 1290}},
			`{"seq":42,"survey":{"rows":[{"from":1,"to":3,"role":"user","kind":"own","label":"list the files","bytes":812,"held":"resident"}],"bytes":812,"system_bytes":1290},"replayed":false}`},
		{Transcript{System: "s", Messages: []record.Message{{Role: record.User, Parts: []record.Part{{Type: record.PartText, Text: "hi"}}}},
			Survey: Survey{Rows: []Row{}}, Index: []Row{{From: 4, To: 4, Role: record.Assistant, Kind: Residual, Held: "under [4, 9]"}},
			Residues: []Residue{{From: 4, To: 9, Note: "dead end", By: record.ByUser, Parent: -1, Seq: 31}}},
			`{"system":"s","messages":[{"role":"user","parts":[{"type":"text","text":"hi"}]}],"survey":{"rows":[],"bytes":0,"system_bytes":0},` +
				`"index":[{"from":4,"to":4,"role":"assistant","kind":"residue","label":"","bytes":0,"held":"under [4, 9]"}],` +
				`"residues":[{"from":4,"to":9,"note":"dead end","by":"user","parent":-1,"withdrawn":false,"seq":31}]}`},
	} {
		b, err := json.Marshal(c.v)
		if err != nil {
			t.Fatalf("%T: %v", c.v, err)
		}
		if string(b) != c.want {
			t.Errorf("%T encodes\n%s\nwant\n%s", c.v, b, c.want)
		}
	}
}

// A holder that did not say who it is is named as such; a known one by pid, command and time.
func TestHolderString(t *testing.T) {
	if s := (Holder{}).String(); s != "a process that has not said who it is" {
		t.Errorf("unknown holder: %q", s)
	}
	since := time.Date(2026, 11, 29, 19, 45, 12, 0, time.Local)
	if s := (Holder{PID: 4242, Command: `rein run "fix it"`, Since: since}).String(); s != `pid 4242 (rein run "fix it") since 2026-11-29 19:45:12` {
		t.Errorf("known holder: %q", s)
	}
	if s := (Holder{PID: 7}).String(); !strings.HasPrefix(s, "pid 7") || strings.Contains(s, "since") {
		t.Errorf("bare holder: %q", s)
	}
}
