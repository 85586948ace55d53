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
	"net/url"
	"reflect"
	"strconv"
	"strings"
	"time"

	"github.com/reinhq/rein/internal/api"
	"github.com/reinhq/rein/internal/record"
	"github.com/reinhq/rein/internal/session"
)

// capabilities are what every host accepts (package api names them); a host whose agents take an
// approver and a model (Config.NewAgentFor) also accepts approvals and model switches.
var capabilities = []string{api.CapStop, api.CapOpIDs, api.CapEvents, api.CapAttachments, api.CapQueue, api.CapEdits, api.CapFork, api.CapRelease,
	api.CapTranscriptPages}

// PingEvery is how often an events stream sends a keep-alive comment, so that a proxy keeps it open
// and a peer that vanished is found by the write failing.
const PingEvery = 15 * time.Second

// Server is the host's HTTP API (docs/api.md) and the web chat.
type Server struct {
	h     *Host
	token string
	hosts map[string]bool // allowed Host header values
	web   fs.FS
	mux   *http.ServeMux
	lim   Limits       // set by HTTPServer; the zero value sets no deadline on event streams
	fwd   *http.Client // hands requests on to a conversation's owner, with a Store (forward.go)
}

// NewServer returns the API for h, guarded by token, answering requests addressed to the listen
// address addr (and loopback names for its port). web, when not nil, is served at /.
func NewServer(h *Host, token, addr string, web fs.FS) *Server {
	s := &Server{h: h, token: token, hosts: allowedHosts(addr), web: web, mux: http.NewServeMux()}
	if h.cfg.Store != nil {
		s.fwd = newForwarder()
	}
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
	handle := func(pattern string, fn func(w http.ResponseWriter, r *http.Request) error) {
		s.mux.Handle(pattern, s.guard(fn))
	}
	handle("GET /api/capabilities", s.capabilities)
	handle("GET /api/conversations", s.list)
	handle("POST /api/conversations", s.create)
	handle("GET /api/conversations/{id}", s.get)
	handle("PATCH /api/conversations/{id}", s.rename)
	handle("DELETE /api/conversations/{id}", s.close)
	handle("POST /api/conversations/{id}/messages", s.send)
	handle("POST /api/conversations/{id}/stop", s.stop)
	handle("GET /api/conversations/{id}/events", s.events)
	handle("GET /api/conversations/{id}/transcript", s.transcript)
	s.editRoutes()
	s.approveRoutes()
	s.modelRoutes()
	s.shelfRoutes()
	s.releaseRoutes()
	s.mux.Handle("/api/", s.guard(func(w http.ResponseWriter, r *http.Request) error {
		return errf(api.NotFound, "no such endpoint: %s %s (docs/api.md lists them)", r.Method, r.URL.Path)
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
			writeErr(w, api.Errorf(api.BadHost, "this host does not answer to %q", r.Host))
			return
		}
		if o := r.Header.Get("Origin"); o != "" && !s.hosts[strings.TrimPrefix(strings.TrimPrefix(o, "http://"), "https://")] {
			writeErr(w, api.Errorf(api.BadOrigin, "requests from origin %q are not accepted", o))
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
			writeErr(w, api.Errorf(api.Unauthorized, "a bearer token is required: use the one `rein serve` printed at startup"))
			return
		}
		authorise(r)
		if r.Method == http.MethodPost || r.Method == http.MethodPatch {
			mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
			if mt != "application/json" {
				writeErr(w, api.Errorf(api.BadContentType, "request bodies must be Content-Type: application/json"))
				return
			}
		}
		r.Body = http.MaxBytesReader(w, r.Body, api.MaxBody)
		var err error
		if st := s.h.cfg.Store; st != nil {
			w.Header().Set(ServedByHeader, st.Name())
		}
		if s.forwardable(r) {
			err = s.serveOrForward(w, r, fn)
		} else {
			err = fn(w, r)
		}
		if err != nil {
			writeError(w, err)
		}
	}))
}

// writeError answers err: a refusal (*api.Error) with its code's status from the one table
// (api.Code.Status), anything else as too_large, session_failed or internal.
func writeError(w http.ResponseWriter, err error) {
	var he *api.Error
	var mbe *http.MaxBytesError
	switch {
	case errors.As(err, &mbe):
		writeErr(w, api.Errorf(api.TooLarge, "the request body is over %d bytes", api.MaxBody))
	case errors.As(err, &he):
		writeErr(w, he)
	case errors.Is(err, session.ErrFailed):
		writeErr(w, &api.Error{Code: api.SessionFailed, Message: err.Error()})
	default:
		writeErr(w, &api.Error{Code: api.Internal, Message: err.Error()})
	}
}

// writeErr answers a refusal with its code's status, and a Retry-After when it says when to retry.
func writeErr(w http.ResponseWriter, e *api.Error) {
	if e.RetryAfter > 0 {
		w.Header().Set("Retry-After", strconv.FormatInt(int64((e.RetryAfter+time.Second-1)/time.Second), 10))
	}
	writeJSON(w, e.Code.Status(), api.ErrorBody{Error: e})
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
		return errf(api.BadRequest, "the request body could not be read: %v", err)
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		if errors.Is(err, io.EOF) {
			return errf(api.BadRequest, "the request body is empty: send a JSON object")
		}
		if f, ok := unknownField(body, v); ok {
			return errf(api.BadRequest, "the request body has an unknown field %q: this endpoint takes %s", f, fieldsOf(v))
		}
		return errf(api.BadRequest, "the request body is not the JSON this endpoint takes: %v", err)
	}
	if dec.More() {
		return errf(api.BadRequest, "the request body has data after its JSON object: send one object")
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
	caps := capabilities
	if s.h.cfg.NewAgentFor != nil {
		// The agents this host builds take an approver and a model: approvals and model switches.
		caps = append(caps[:len(caps):len(caps)], api.CapApprovals, api.CapApprovalScope, api.CapModel)
	}
	if s.h.cfg.Checkpoints != nil {
		caps = append(caps[:len(caps):len(caps)], api.CapFiles)
	}
	caps = append(caps[:len(caps):len(caps)], api.CapBackends)
	def := s.h.cfg.Backend
	if def == "" {
		def = api.BackendRein
	}
	writeJSON(w, 200, api.Capabilities{Version: s.h.cfg.Version, Capabilities: caps, Backends: s.h.Backends(), Backend: def})
	return nil
}

func (s *Server) list(w http.ResponseWriter, r *http.Request) error {
	views, err := s.h.List()
	if err != nil {
		return err
	}
	writeJSON(w, 200, api.Conversations{Conversations: views})
	return nil
}

func (s *Server) create(w http.ResponseWriter, r *http.Request) error {
	var req api.CreateRequest
	if err := decode(r, &req); err != nil {
		return err
	}
	c, replayed, err := s.h.CreateOn(req.Op, req.Title, req.Backend)
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
	writeJSON(w, status, api.Created{Conversation: v, Replayed: replayed})
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
	c.h.placeView(&v)
	writeJSON(w, 200, v)
	return nil
}

func (s *Server) rename(w http.ResponseWriter, r *http.Request) error {
	c, err := s.conv(r)
	if err != nil {
		return err
	}
	var req api.RenameRequest
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
	var req api.Message
	if err := decode(r, &req); err != nil {
		return err
	}
	for i, a := range req.Attachments {
		if a.Name == "" || (a.Text == "" && a.Data == "") {
			return errf(api.BadRequest, "attachment %d needs a name and text or data", i+1)
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
	var req api.StopRequest
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
	page, err := indexPageOf(r.URL.Query())
	if err != nil {
		return err
	}
	b, err := c.Transcript(page)
	if err != nil {
		return err
	}
	w.Header().Set("Content-Type", "application/json")
	_, err = w.Write(b)
	return err
}

// indexPageOf reads which of the index a transcript request asks for (capability
// transcript-pages.v1): index_from=N, a page from turn N; index=none, no index; neither, all.
func indexPageOf(q url.Values) (api.IndexPage, error) {
	var p api.IndexPage
	switch v := q.Get("index"); v {
	case "", "all":
	case "none":
		p.None = true
	default:
		return p, errf(api.BadRequest, "index=%q: give index=none to leave the index out, or index_from=N for a page of it from turn N", v)
	}
	if v := q.Get("index_from"); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 0 {
			return p, errf(api.BadRequest, "index_from=%q is not a turn id: give the first turn of the page (0 for the start)", v)
		}
		if p.None {
			return p, errf(api.BadRequest, "index=none and index_from ask for no index and a page of it: give one")
		}
		p.Paged, p.From = true, n
	}
	return p, nil
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
			return errf(api.BadRequest, "the event cursor %q is not a record number: give the id of the last event received", cursor)
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
				// The session's live event and the wire's have the same fields: the conversion
				// fails to compile if they part.
				fmt.Fprintf(w, "event: %s\ndata: %s\n\n", api.EventLive, mustJSON(api.Live(*u.Live)))
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
	payload, err := json.Marshal(rec.Body)
	data := mustJSON(api.Event{Seq: rec.Seq, Kind: string(rec.Kind()), Payload: payload, State: sub.State()})
	if err != nil {
		data = mustJSON(map[string]string{"error": err.Error()})
	}
	fmt.Fprintf(w, "id: %d\nevent: %s\ndata: %s\n\n", rec.Seq, api.EventRecord, data)
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		b, _ = json.Marshal(map[string]string{"error": err.Error()})
	}
	return b
}
