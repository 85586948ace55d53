package host

import (
	"bytes"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"mime"
	"net"
	"net/http"
	"reflect"
	"strconv"
	"strings"
	"time"

	"github.com/reinhq/rein/internal/record"
	"github.com/reinhq/rein/internal/session"
)

// Capabilities are what this host accepts; a client sends an optional field only to a host that
// advertises it.
var Capabilities = []string{"conversation-stop.v1", "op-ids.v1", "events.v1", "attachments.v1", "queue.v1", "context-edits.v1", "fork.v1"}

// PingEvery is how often an events stream sends a keep-alive comment, so that a proxy keeps it open
// and a peer that vanished is found by the write failing.
const PingEvery = 15 * time.Second

// MaxBody bounds every request body.
const MaxBody = 1 << 20

// Server is the host's HTTP API (docs/api.md) and the web chat.
type Server struct {
	h     *Host
	token string
	hosts map[string]bool // allowed Host header values
	web   fs.FS
	mux   *http.ServeMux
	lim   Limits // set by HTTPServer; the zero value sets no deadline on event streams
}

// NewServer returns the API for h, guarded by token, answering requests addressed to the listen
// address addr (and loopback names for its port). web, when not nil, is served at /.
func NewServer(h *Host, token, addr string, web fs.FS) *Server {
	s := &Server{h: h, token: token, hosts: allowedHosts(addr), web: web, mux: http.NewServeMux()}
	s.routes()
	return s
}

func allowedHosts(addr string) map[string]bool {
	m := map[string]bool{}
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return m
	}
	m[addr] = true
	for _, name := range []string{"127.0.0.1", "localhost", "[::1]", host} {
		if name == "" || name == "0.0.0.0" || name == "::" {
			continue
		}
		if strings.Contains(name, ":") && !strings.HasPrefix(name, "[") {
			name = "[" + name + "]"
		}
		m[name+":"+port] = true
	}
	return m
}

// AllowHost adds a Host header value (e.g. a name the host is reached by through a proxy).
func (s *Server) AllowHost(h string) { s.hosts[h] = true }

func (s *Server) routes() {
	api := func(pattern string, fn func(w http.ResponseWriter, r *http.Request) error) {
		s.mux.Handle(pattern, s.guard(fn))
	}
	api("GET /api/capabilities", s.capabilities)
	api("GET /api/conversations", s.list)
	api("POST /api/conversations", s.create)
	api("GET /api/conversations/{id}", s.get)
	api("PATCH /api/conversations/{id}", s.rename)
	api("DELETE /api/conversations/{id}", s.close)
	api("POST /api/conversations/{id}/messages", s.send)
	api("POST /api/conversations/{id}/stop", s.stop)
	api("GET /api/conversations/{id}/events", s.events)
	api("GET /api/conversations/{id}/transcript", s.transcript)
	s.editRoutes()
	s.approveRoutes()
	s.mux.Handle("/api/", s.guard(func(w http.ResponseWriter, r *http.Request) error {
		return errf("not_found", "no such endpoint: %s %s (docs/api.md lists them)", r.Method, r.URL.Path)
	}))
	if s.web != nil {
		files := http.FileServerFS(s.web)
		s.mux.Handle("/", s.checkHost(files))
	}
}

// ServeHTTP serves the API.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.mux.ServeHTTP(w, r) }

// checkHost refuses requests addressed to another name (DNS rebinding) or from another origin.
func (s *Server) checkHost(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !s.hosts[r.Host] {
			writeErr(w, http.StatusMisdirectedRequest, "bad_host", fmt.Sprintf("this host does not answer to %q", r.Host))
			return
		}
		if o := r.Header.Get("Origin"); o != "" && !s.hosts[strings.TrimPrefix(strings.TrimPrefix(o, "http://"), "https://")] {
			writeErr(w, http.StatusForbidden, "bad_origin", fmt.Sprintf("requests from origin %q are not accepted", o))
			return
		}
		w.Header().Set("X-Content-Type-Options", "nosniff")
		w.Header().Set("Referrer-Policy", "no-referrer")
		next.ServeHTTP(w, r)
	})
}

// guard checks host and origin, the bearer token, the body's type and size, then runs fn and
// writes its error.
func (s *Server) guard(fn func(w http.ResponseWriter, r *http.Request) error) http.Handler {
	return s.checkHost(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		tok := strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
		if tok == "" && r.Method == http.MethodGet {
			tok = r.URL.Query().Get("access_token") // EventSource cannot set headers
		}
		if subtle.ConstantTimeCompare([]byte(tok), []byte(s.token)) != 1 {
			writeErr(w, http.StatusUnauthorized, "unauthorized", "a bearer token is required: use the one `rein serve` printed at startup")
			return
		}
		authorise(r)
		if r.Method == http.MethodPost || r.Method == http.MethodPatch {
			mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
			if mt != "application/json" {
				writeErr(w, http.StatusUnsupportedMediaType, "bad_content_type", "request bodies must be Content-Type: application/json")
				return
			}
		}
		r.Body = http.MaxBytesReader(w, r.Body, MaxBody)
		if err := fn(w, r); err != nil {
			writeError(w, err)
		}
	}))
}

func writeError(w http.ResponseWriter, err error) {
	var he *Error
	var mbe *http.MaxBytesError
	switch {
	case errors.As(err, &mbe):
		writeErr(w, http.StatusRequestEntityTooLarge, "too_large", fmt.Sprintf("the request body is over %d bytes", MaxBody))
	case errors.As(err, &he):
		status := statusOf[he.Code]
		if status == 0 {
			status = 400
		}
		if he.RetryAfter > 0 {
			w.Header().Set("Retry-After", strconv.FormatInt(int64((he.RetryAfter+time.Second-1)/time.Second), 10))
		}
		writeErr(w, status, he.Code, he.Message)
	case errors.Is(err, session.ErrFailed):
		writeErr(w, http.StatusInternalServerError, "session_failed", err.Error())
	default:
		writeErr(w, http.StatusInternalServerError, "internal", err.Error())
	}
}

// statusOf is the HTTP status of each refusal code (docs/api.md); another code is 400.
var statusOf = map[string]int{
	"not_found": 404, "op_conflict": 409, "bad_request": 400, "closed": 409, "busy": 409, "held": 409,
	"rate_limited": 429, "too_many_conversations": 503, "too_many_open": 503, "host_closed": 503,
}

func writeErr(w http.ResponseWriter, status int, code, msg string) {
	writeJSON(w, status, map[string]any{"error": map[string]string{"code": code, "message": msg}})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
}

// decode reads a JSON body strictly into v.
func decode(r *http.Request, v any) error {
	body, err := io.ReadAll(r.Body)
	var mbe *http.MaxBytesError
	if errors.As(err, &mbe) {
		return err
	}
	if err != nil {
		return errf("bad_request", "the request body could not be read: %v", err)
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		if errors.Is(err, io.EOF) {
			return errf("bad_request", "the request body is empty: send a JSON object")
		}
		if f, ok := unknownField(body, v); ok {
			return errf("bad_request", "the request body has an unknown field %q: this endpoint takes %s", f, fieldsOf(v))
		}
		return errf("bad_request", "the request body is not the JSON this endpoint takes: %v", err)
	}
	if dec.More() {
		return errf("bad_request", "the request body has data after its JSON object: send one object")
	}
	return nil
}

// fieldsOf lists the JSON fields of the struct v points to, for a refusal a person can act on.
func fieldsOf(v any) string {
	t := reflect.TypeOf(v)
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct {
		return "a JSON object"
	}
	var names []string
	for i := range t.NumField() {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
		if name != "" && name != "-" {
			names = append(names, strconv.Quote(name))
		}
	}
	return strings.Join(names, ", ")
}

func (s *Server) capabilities(w http.ResponseWriter, r *http.Request) error {
	caps := Capabilities
	if s.h.cfg.NewAgentFor != nil {
		// The agents this host builds take an approver and a model: approvals and model switches.
		caps = append(caps[:len(caps):len(caps)], "approvals.v1", "model.v1")
	}
	writeJSON(w, 200, map[string]any{"version": s.h.cfg.Version, "capabilities": caps})
	return nil
}

func (s *Server) list(w http.ResponseWriter, r *http.Request) error {
	views, err := s.h.List()
	if err != nil {
		return err
	}
	writeJSON(w, 200, map[string]any{"conversations": views})
	return nil
}

func (s *Server) create(w http.ResponseWriter, r *http.Request) error {
	var req struct {
		Op    string `json:"op_id"`
		Title string `json:"title"`
	}
	if err := decode(r, &req); err != nil {
		return err
	}
	c, replayed, err := s.h.Create(req.Op, req.Title)
	if err != nil {
		return err
	}
	v, err := c.View()
	if err != nil {
		return err
	}
	status := http.StatusCreated
	if replayed {
		status = http.StatusOK
	}
	writeJSON(w, status, map[string]any{"conversation": v, "replayed": replayed})
	return nil
}

func (s *Server) conv(r *http.Request) (*Conv, error) { return s.h.Get(r.PathValue("id")) }

func (s *Server) get(w http.ResponseWriter, r *http.Request) error {
	c, err := s.conv(r)
	if err != nil {
		return err
	}
	return writeView(w, c)
}

func writeView(w http.ResponseWriter, c *Conv) error {
	v, err := c.View()
	if err != nil {
		return err
	}
	writeJSON(w, 200, v)
	return nil
}

func (s *Server) rename(w http.ResponseWriter, r *http.Request) error {
	c, err := s.conv(r)
	if err != nil {
		return err
	}
	var req struct {
		Op    string `json:"op_id"`
		Title string `json:"title"`
	}
	if err := decode(r, &req); err != nil {
		return err
	}
	if err := c.Rename(req.Op, req.Title); err != nil {
		return err
	}
	return writeView(w, c)
}

func (s *Server) close(w http.ResponseWriter, r *http.Request) error {
	c, err := s.conv(r)
	if err != nil {
		return err
	}
	if err := c.Close(r.URL.Query().Get("op_id")); err != nil {
		return err
	}
	return writeView(w, c)
}

func (s *Server) send(w http.ResponseWriter, r *http.Request) error {
	c, err := s.conv(r)
	if err != nil {
		return err
	}
	var req struct {
		Op          string              `json:"op_id"`
		Text        string              `json:"text"`
		Attachments []record.Attachment `json:"attachments"`
		Queue       bool                `json:"queue"`
	}
	if err := decode(r, &req); err != nil {
		return err
	}
	for i, a := range req.Attachments {
		if a.Name == "" || (a.Text == "" && a.Data == "") {
			return errf("bad_request", "attachment %d needs a name and text or data", i+1)
		}
	}
	res, err := c.Send(req.Op, req.Text, req.Attachments, req.Queue)
	if err != nil {
		return err
	}
	status := http.StatusAccepted
	if res.Replayed {
		status = http.StatusOK
	}
	writeJSON(w, status, res)
	return nil
}

func (s *Server) stop(w http.ResponseWriter, r *http.Request) error {
	c, err := s.conv(r)
	if err != nil {
		return err
	}
	var req struct {
		Op   string `json:"op_id"`
		Turn int64  `json:"turn"`
	}
	if err := decode(r, &req); err != nil {
		return err
	}
	res, err := c.Stop(req.Op, req.Turn)
	if err != nil {
		return err
	}
	writeJSON(w, 200, res)
	return nil
}

func (s *Server) transcript(w http.ResponseWriter, r *http.Request) error {
	c, err := s.conv(r)
	if err != nil {
		return err
	}
	b, err := c.Transcript()
	if err != nil {
		return err
	}
	w.Header().Set("Content-Type", "application/json")
	_, err = w.Write(b)
	return err
}

// events streams a conversation's records as server-sent events, resuming after Last-Event-ID
// (or ?after=). Each record event carries the conversation's state as of that record or later, so
// a client that applies an event twice, or out of a replay, converges on the newest state.
func (s *Server) events(w http.ResponseWriter, r *http.Request) error {
	c, err := s.conv(r)
	if err != nil {
		return err
	}
	after := int64(0)
	cursor := r.Header.Get("Last-Event-ID")
	if cursor == "" {
		cursor = r.URL.Query().Get("after")
	}
	if cursor != "" {
		if after, err = strconv.ParseInt(cursor, 10, 64); err != nil || after < 0 {
			return errf("bad_request", "the event cursor %q is not a record number: give the id of the last event received", cursor)
		}
	}
	sub, err := c.Subscribe(after)
	if err != nil {
		return err
	}
	defer sub.End()
	// The stream outlives the server's read and write timeouts: net/http lifts the read deadline
	// of a request with no body once its header is read, and every write here has its own
	// deadline, so a peer that stops reading is dropped after WriteTimeout. The pings find a peer
	// that vanished.
	rc := http.NewResponseController(w)
	flush := func() error {
		if s.lim.WriteTimeout > 0 {
			_ = rc.SetWriteDeadline(time.Now().Add(s.lim.WriteTimeout))
		} else {
			_ = rc.SetWriteDeadline(time.Time{})
		}
		return rc.Flush()
	}
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(200)
	fmt.Fprint(w, ": rein events\n\n")
	last := after
	for _, rec := range sub.Records {
		writeRecord(w, sub, rec)
		last = rec.Seq
	}
	if err := flush(); err != nil {
		return nil // the peer is gone; nothing can be answered to it
	}
	ping := time.NewTicker(PingEvery)
	defer ping.Stop()
	for {
		select {
		case <-r.Context().Done():
			return nil
		case <-ping.C:
			fmt.Fprint(w, ": ping\n\n")
			if err := flush(); err != nil {
				return nil
			}
		case u, ok := <-sub.Updates:
			if !ok {
				return nil // fell behind, or the host closed: the client reconnects with Last-Event-ID and misses nothing
			}
			if u.Record != nil {
				if u.Record.Seq <= last {
					continue
				}
				writeRecord(w, sub, *u.Record)
				last = u.Record.Seq
			} else if u.Live != nil {
				fmt.Fprintf(w, "event: live\ndata: %s\n\n", mustJSON(u.Live))
			}
			if len(sub.Updates) == 0 {
				if err := flush(); err != nil {
					return nil
				}
			}
		}
	}
}

func writeRecord(w io.Writer, sub *Subscription, rec record.Record) {
	fmt.Fprintf(w, "id: %d\nevent: record\ndata: %s\n\n", rec.Seq, mustJSON(map[string]any{"seq": rec.Seq, "kind": rec.Kind(), "payload": rec.Body, "state": sub.State()}))
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		b, _ = json.Marshal(map[string]string{"error": err.Error()})
	}
	return b
}
