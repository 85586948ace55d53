package host

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/reinhq/rein/internal/api"
	"github.com/reinhq/rein/internal/fold"
	"github.com/reinhq/rein/internal/fsys"
	"github.com/reinhq/rein/internal/record"
	"github.com/reinhq/rein/internal/session"
)

// The wire's holder names a process in the words the lock's own does (the host's held refusal
// uses the lock's; a client prints the wire's).
func TestHolderOnTheWireSaysWhatTheLockSays(t *testing.T) {
	since := time.Date(2026, 11, 29, 19, 45, 12, 0, time.UTC)
	for _, h := range []fsys.Holder{{}, {PID: 4242}, {PID: 4242, Command: `rein run "fix it"`}, {PID: 1, Command: "rein serve", Since: since}, {Command: "anonymous"}} {
		if got, want := holderOf(h).String(), h.String(); got != want {
			t.Errorf("holder %+v: the wire says %q, the lock %q", h, got, want)
		}
	}
}

// Every kind of turn the fold makes crosses the wire as the API's kind of the same name.
func TestRowKindsCrossTheWire(t *testing.T) {
	for k, want := range map[fold.TurnKind]api.RowKind{fold.Own: api.Own, fold.Imported: api.Imported, fold.Inherited: api.Inherited, fold.Residual: api.Residual} {
		row := fold.Row{From: 1, To: 2, Role: record.User, Kind: k, Label: "l", Bytes: 3, Held: "resident"}
		got := rowsOf([]fold.Row{row})[0]
		if got != (api.Row{From: 1, To: 2, Role: record.User, Kind: want, Label: "l", Bytes: 3, Held: "resident"}) {
			t.Errorf("fold kind %s crosses as %+v", k, got)
		}
	}
	sv := surveyOf(fold.Survey{Rows: []fold.Row{{Kind: fold.Own}}, Bytes: 7, SystemBytes: 9})
	if len(sv.Rows) != 1 || sv.Bytes != 7 || sv.SystemBytes != 9 {
		t.Errorf("survey crosses as %+v", sv)
	}
}

// A residue crosses the wire whole, in the API's names (not the fold's Go field names).
func TestResiduesCrossTheWire(t *testing.T) {
	got := residuesOf([]fold.Residue{{From: 4, To: 9, Note: "dead end", By: record.ByUser, Parent: 2, Withdrawn: true, Seq: 31}})
	b, _ := json.Marshal(got)
	if want := `[{"from":4,"to":9,"note":"dead end","by":"user","parent":2,"withdrawn":true,"seq":31}]`; string(b) != want {
		t.Errorf("residues cross as %s, want %s", b, want)
	}
	if b, _ := json.Marshal(residuesOf(nil)); string(b) != "[]" {
		t.Errorf("no residues cross as %s", b)
	}
}

// Every refusal is answered with its code's status from the one table, whatever the handler.
func TestRefusalsAreAnsweredByTheTable(t *testing.T) {
	answer := func(err error) (*httptest.ResponseRecorder, api.ErrorBody) {
		rec := httptest.NewRecorder()
		writeError(rec, err)
		var body api.ErrorBody
		if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil || body.Error == nil {
			t.Fatalf("answer %q: %v", rec.Body, err)
		}
		return rec, body
	}
	for _, code := range api.Codes() {
		rec, body := answer(fmt.Errorf("wrapped: %w", errf(code, "refused %s", code)))
		if rec.Code != code.Status() || body.Error.Code != code || body.Error.Message != "refused "+string(code) {
			t.Errorf("%s answered %d %+v, want %d", code, rec.Code, body.Error, code.Status())
		}
	}
	rec, _ := answer(&api.Error{Code: api.RateLimited, Message: "slow", RetryAfter: 1500 * time.Millisecond})
	if rec.Code != 429 || rec.Header().Get("Retry-After") != "2" {
		t.Errorf("rate_limited answered %d, Retry-After %q", rec.Code, rec.Header().Get("Retry-After"))
	}
	for _, c := range []struct {
		err    error
		status int
		code   api.Code
		says   string
	}{
		{fmt.Errorf("read: %w", &http.MaxBytesError{Limit: api.MaxBody}), 413, api.TooLarge, "the request body is over 1048576 bytes"},
		{fmt.Errorf("commit: %w", session.ErrFailed), 500, api.SessionFailed, "commit: session failed"},
		{errors.New("disk on fire"), 500, api.Internal, "disk on fire"},
	} {
		rec, body := answer(c.err)
		if rec.Code != c.status || body.Error.Code != c.code || body.Error.Message != c.says {
			t.Errorf("%v answered %d %+v, want %d %s %q", c.err, rec.Code, body.Error, c.status, c.code, c.says)
		}
	}
}
