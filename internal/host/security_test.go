package host_test

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
)

// TestSecurity sends the requests a browser on another site, a DNS-rebinding page or a careless
// script would, and checks each is refused with a clear code and message.
func TestSecurity(t *testing.T) {
	r := newRig(t, rigOptions{})
	id := r.create("guarded")
	big := `{"op_id":"op-big","text":"` + strings.Repeat("x", 1<<20+10) + `"}`
	cases := []struct {
		name, method, path, body, auth, host, origin, ctype string
		status                                              int
		code, says                                          string
	}{
		{name: "no token", method: "GET", path: "/api/conversations", status: 401, code: "unauthorized", says: "bearer token"},
		{name: "wrong token", method: "GET", path: "/api/conversations", auth: "Bearer nope", status: 401, code: "unauthorized"},
		{name: "token in the query of a POST", method: "POST", path: "/api/conversations?access_token=" + token, body: `{"op_id":"x"}`, auth: "-", status: 401, code: "unauthorized"},
		{name: "wrong host", method: "GET", path: "/api/conversations", host: "evil.example:80", status: 421, code: "bad_host", says: "evil.example"},
		{name: "foreign origin", method: "GET", path: "/api/conversations", origin: "http://evil.example", status: 403, code: "bad_origin", says: "evil.example"},
		{name: "null origin", method: "POST", path: "/api/conversations", origin: "null", body: `{"op_id":"x"}`, status: 403, code: "bad_origin"},
		{name: "not JSON", method: "POST", path: "/api/conversations/" + id + "/messages", body: `op_id=1&text=hi`, ctype: "application/x-www-form-urlencoded", status: 415, code: "bad_content_type"},
		{name: "no content type", method: "POST", path: "/api/conversations/" + id + "/messages", body: `{"op_id":"1","text":"hi"}`, ctype: "-", status: 415, code: "bad_content_type"},
		{name: "over 1 MiB", method: "POST", path: "/api/conversations/" + id + "/messages", body: big, status: 413, code: "too_large", says: "1048576"},
		{name: "unknown field", method: "POST", path: "/api/conversations/" + id + "/messages", body: `{"op_id":"1","txt":"hi"}`, status: 400, code: "bad_request", says: `unknown field "txt": this endpoint takes "op_id", "text", "attachments", "queue"`},
		{name: "two objects", method: "POST", path: "/api/conversations/" + id + "/stop", body: `{"op_id":"1"}{"op_id":"2"}`, status: 400, code: "bad_request"},
		{name: "empty body", method: "POST", path: "/api/conversations/" + id + "/stop", body: ``, status: 400, code: "bad_request", says: "empty"},
		{name: "attachment without content", method: "POST", path: "/api/conversations/" + id + "/messages", body: `{"op_id":"1","attachments":[{"name":"a"}]}`, status: 400, code: "bad_request", says: "attachment 1"},
		{name: "bad cursor", method: "GET", path: "/api/conversations/" + id + "/events?after=abc", status: 400, code: "bad_request", says: "cursor"},
		{name: "unknown conversation", method: "GET", path: "/api/conversations/nope", status: 404, code: "not_found", says: "nope"},
		{name: "send to an unknown conversation", method: "POST", path: "/api/conversations/nope/messages", body: `{"op_id":"1","text":"hi"}`, status: 404, code: "not_found"},
		{name: "stop an unknown conversation", method: "POST", path: "/api/conversations/nope/stop", body: `{"op_id":"1"}`, status: 404, code: "not_found"},
		{name: "events of an unknown conversation", method: "GET", path: "/api/conversations/nope/events", status: 404, code: "not_found"},
		{name: "unknown endpoint", method: "GET", path: "/api/nothing", status: 404, code: "not_found", says: "docs/api.md"},
		{name: "own origin", method: "GET", path: "/api/conversations", origin: "self", status: 200},
		{name: "token in the query of the events stream's GET", method: "GET", path: "/api/conversations/nope/events?access_token=" + token, auth: "-", status: 404, code: "not_found"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var body io.Reader
			if c.body != "" || c.method == "POST" {
				body = strings.NewReader(c.body)
			}
			req, err := http.NewRequest(c.method, r.srv.URL+c.path, body)
			if err != nil {
				t.Fatal(err)
			}
			switch c.auth {
			case "":
				if c.name != "no token" {
					req.Header.Set("Authorization", "Bearer "+token)
				}
			case "-":
			default:
				req.Header.Set("Authorization", c.auth)
			}
			if c.host != "" {
				req.Host = c.host
			}
			switch c.origin {
			case "":
			case "self":
				req.Header.Set("Origin", r.srv.URL)
			default:
				req.Header.Set("Origin", c.origin)
			}
			switch c.ctype {
			case "":
				if body != nil {
					req.Header.Set("Content-Type", "application/json")
				}
			case "-":
			default:
				req.Header.Set("Content-Type", c.ctype)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			b, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != c.status {
				t.Fatalf("status %d, want %d: %s", resp.StatusCode, c.status, b)
			}
			if c.code == "" {
				return
			}
			var e struct {
				Error struct{ Code, Message string }
			}
			if err := json.Unmarshal(b, &e); err != nil {
				t.Fatalf("the refusal is not JSON: %s", b)
			}
			if e.Error.Code != c.code || !strings.Contains(e.Error.Message, c.says) {
				t.Fatalf("refused %s %q, want %s mentioning %q", e.Error.Code, e.Error.Message, c.code, c.says)
			}
		})
	}
	// Nothing refused reached the record.
	for _, rec := range r.records(id) {
		if rec.Kind() == "submission" || rec.Kind() == "stop" {
			t.Errorf("a refused request wrote record %d (%s)", rec.Seq, rec.Kind())
		}
	}
}
