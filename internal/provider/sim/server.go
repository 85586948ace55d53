package sim

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"hash/maphash"
	"io"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/reinhq/rein/internal/provider"
)

// DefaultModel is the model the simulator reports when a request names one that is not a
// simulator model.
const DefaultModel = "sim-1"

// ContextWindow returns the context window of a simulated model ("sim-…"), in tokens, or 0 for a
// model that is not the simulator's. The simulator refuses a request over its own limit only when
// Options.ContextLimit says so.
func ContextWindow(model string) int64 {
	if strings.HasPrefix(strings.ToLower(model), "sim") {
		return 200_000
	}
	return 0
}

// ConversationHeader names the request header that sets a request's conversation for scripts.
const ConversationHeader = "X-Sim-Conversation"

const maxBody = 64 << 20

// Options configure a Server. The zero value plays the policy with no delay and no context limit.
type Options struct {
	// Script is played before the policy; nil plays the policy only.
	Script *Script
	// ContextLimit, when positive, refuses every request whose estimated input tokens exceed it
	// with the provider's context error. A step's context_limit applies on top of it.
	ContextLimit int
	// Delay is waited before each content delta of a reply whose step sets no delay_ms, the
	// policy's included, so a person can watch a reply stream.
	Delay time.Duration
	// MaxToolRounds bounds the policy's tool rounds per exchange; 0 means 3.
	MaxToolRounds int
	// Log, when set, receives one line per request.
	Log io.Writer
	// MaxLogged, when positive, keeps only that many of the latest requests in the request log,
	// so a long-running simulator does not grow without bound; 0 keeps them all (tests).
	MaxLogged int
	// Now is the clock for the "created" fields; nil means time.Now.
	Now func() time.Time
}

// Server is the simulator: an http.Handler for the three wire formats, its script and the log of
// the requests it received.
type Server struct {
	opts    Options
	handler http.Handler

	mu    sync.Mutex
	epoch string // per server, so call ids are unique across simulator processes
	// conversations are what is kept of recent conversations (recall, keep).
	conversations map[string]*conversation
	uses          int64
	// cuts are the last requests' bodies cut into their parts, the newest last, from which the
	// next request of the same conversation is cut (splitFrom).
	cuts  []*cut
	queue queue
	log   []*Request
	n     int // replies and calls minted, for ids
}

// Request is one request the simulator received and what it did with it.
type Request struct {
	Format Format
	Path   string
	Header http.Header
	Body   []byte
	// Violation is the validator's refusal, or nil if the request passed.
	Violation *provider.Violation
	// Conversation is the key scripted steps are matched by (package doc).
	Conversation string
	// Step is the index of the script step played, or -1 when none was.
	Step int
	// Estimate is the request's estimated input tokens.
	Estimate int
	// Status is the HTTP status answered (0 while the request is being read).
	Status int
	// Outcome says what the simulator did; see the Outcome constants.
	Outcome Outcome

	done chan struct{}
}

// Done is closed when the simulator's handler for this request has returned.
func (r Request) Done() <-chan struct{} { return r.done }

// Outcome is what the simulator did with one request.
type Outcome string

// The outcomes of a request.
const (
	Streaming   Outcome = "streaming"     // the stream is being written
	Streamed    Outcome = "streamed"      // the whole stream was written
	Errored     Outcome = "error_event"   // a mid-stream error event ended the stream
	CutOff      Outcome = "cut"           // the stream was cut without its terminating event
	Cancelled   Outcome = "cancelled"     // the client went away first
	StatusError Outcome = "status"        // a scripted HTTP error status
	Refused     Outcome = "violation"     // the validator refused the request
	OverLimit   Outcome = "context_limit" // the request was over the context limit
	Unplayable  Outcome = "unplayable"    // not streamed, unreadable, or the strict script was exhausted
)

// New returns a simulator with the given options.
func New(opts Options) *Server {
	if opts.MaxToolRounds <= 0 {
		opts.MaxToolRounds = 3
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	s := &Server{opts: opts, queue: newQueue(opts.Script), epoch: fmt.Sprintf("%x_", opts.Now().UnixNano()&0xffffffff)}
	mux := http.NewServeMux()
	for _, prefix := range []string{"", "/anthropic"} {
		mux.Handle("POST "+prefix+"/v1/messages", s.serve(anthropicWire{}))
	}
	for _, prefix := range []string{"", "/openai"} {
		mux.Handle("POST "+prefix+"/v1/chat/completions", s.serve(chatWire{}))
		mux.Handle("POST "+prefix+"/v1/responses", s.serve(responsesWire{}))
	}
	mux.HandleFunc("GET /v1/models", s.models(""))
	mux.HandleFunc("GET /anthropic/v1/models", s.models(Anthropic))
	mux.HandleFunc("GET /openai/v1/models", s.models(Chat))
	mux.HandleFunc("/", notFound)
	s.handler = mux
	return s
}

// Handler returns the simulator's HTTP handler.
func (s *Server) Handler() http.Handler { return s.handler }

// ServeHTTP serves the simulator's endpoints, so a *Server is itself an http.Handler.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.handler.ServeHTTP(w, r) }

// SetScript replaces the script; its steps start unconsumed. nil plays the policy only.
func (s *Server) SetScript(script *Script) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.queue = newQueue(script)
}

// Pending is the number of script steps not yet consumed.
func (s *Server) Pending() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.queue.pending()
}

// Requests returns a copy of the log of requests received, in arrival order.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Request, len(s.log))
	for i, r := range s.log {
		out[i] = *r
	}
	return out
}

// ListenAndServe listens on addr (":0" picks a port), writes the bound address and the base URLs
// to out, and serves until ctx ends, then shuts down, ending open streams.
func (s *Server) ListenAndServe(ctx context.Context, addr string, out io.Writer) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("listen for the simulator: %w", err)
	}
	base := "http://" + ln.Addr().String()
	fmt.Fprintf(out, "rein simulator listening on %s\n", base)
	fmt.Fprintf(out, "  Anthropic base URL: %s   OpenAI base URL: %s/v1   model: %s\n", base, base, DefaultModel)
	srv := &http.Server{Handler: s.handler, ReadHeaderTimeout: 10 * time.Second,
		BaseContext: func(net.Listener) context.Context { return ctx }}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return fmt.Errorf("serve the simulator: %w", err)
	case <-ctx.Done():
	}
	shut, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if err := srv.Shutdown(shut); err != nil {
		srv.Close()
	}
	if err := <-errc; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("serve the simulator: %w", err)
	}
	return nil
}

// readBody reads a request's body, up to maxBody, into one buffer the size its Content-Length
// announces (io.ReadAll would grow one, copying, a dozen times for a long conversation).
func readBody(rw http.ResponseWriter, r *http.Request) ([]byte, error) {
	rd := http.MaxBytesReader(rw, r.Body, maxBody)
	n := r.ContentLength
	if n <= 0 || n > maxBody {
		return io.ReadAll(rd)
	}
	b := make([]byte, 0, n+1) // one byte more: the read that finds the end
	for {
		m, err := rd.Read(b[len(b):cap(b)])
		b = b[:len(b)+m]
		switch {
		case err == io.EOF:
			return b, nil
		case err != nil:
			return b, err
		case len(b) == cap(b): // longer than announced: the rest as io.ReadAll reads it
			rest, err := io.ReadAll(rd)
			return append(b, rest...), err
		}
	}
}

// serve is the handler of one wire format's endpoint.
func (s *Server) serve(w wire) http.Handler {
	return http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		body, readErr := readBody(rw, r)
		rec, n := s.begin(w.format(), r, body)
		defer s.end(rec)
		reqID := fmt.Sprintf("sim_req_%d", n)
		rw.Header().Set(w.requestIDHeader(), reqID)
		refuse := func(status int, outcome Outcome, body []byte) {
			s.set(rec, func(r *Request) { r.Status, r.Outcome = status, outcome })
			writeJSON(rw, status, body)
		}
		if readErr != nil {
			typ, code, _ := w.defaultError(413)
			refuse(413, Unplayable, w.errorBody(413, typ, code, "could not read the request body: "+readErr.Error(), "", reqID))
			return
		}
		key, c := s.recall(w, r.Header.Get(ConversationHeader), body)
		defer s.keep(key, c)
		if v := c.v.Validate(body); v != nil {
			s.set(rec, func(r *Request) { r.Violation = v })
			refuse(400, Refused, w.errorBody(400, "invalid_request_error", "", v.Message, v.Path, reqID))
			return
		}
		if ver, ok := w.(verifier); ok {
			if code, msg := ver.verify(body); msg != "" {
				refuse(400, Refused, w.errorBody(400, "invalid_request_error", code, msg, "", reqID))
				return
			}
		}
		v := w.read(body, &c.read)
		conv := r.Header.Get(ConversationHeader)
		if conv == "" {
			conv = v.first
		}
		s.set(rec, func(r *Request) { r.Conversation, r.Estimate = conv, v.estimate })
		if !v.stream {
			refuse(400, Unplayable, w.errorBody(400, "invalid_request_error", "", `the rein simulator only streams: set "stream": true`, "stream", reqID))
			return
		}
		if lim := s.opts.ContextLimit; lim > 0 && v.estimate > lim {
			refuse(400, OverLimit, w.contextError(v.estimate, lim, reqID))
			return
		}
		st, idx, strict := s.take(conv)
		s.set(rec, func(r *Request) { r.Step = idx })
		model := s.model(v.model)
		switch {
		case idx < 0 && strict:
			refuse(400, Unplayable, w.errorBody(400, "invalid_request_error", "", "the rein simulator's script is exhausted: no step is left for this request", "", reqID))
			return
		case idx < 0:
			st = policy(v, model, s.opts.MaxToolRounds)
		}
		if st.ContextLimit > 0 && v.estimate > st.ContextLimit {
			refuse(400, OverLimit, w.contextError(v.estimate, st.ContextLimit, reqID))
			return
		}
		if st.Status != 0 {
			s.status(rw, w, st, reqID)
			s.set(rec, func(r *Request) { r.Status, r.Outcome = st.Status, StatusError })
			return
		}
		p := fromStep(st, s.mintCall)
		p.dropSearches(v, w.format()) // websearch.go
		p.measure(v)
		p.n, p.model, p.created, p.includeUsage, p.encrypted = n, model, s.opts.Now().Unix(), v.includeUsage, v.encrypted
		p.id = map[Format]string{Anthropic: "sim_msg_", Chat: "sim_chatcmpl_", Responses: "sim_resp_"}[w.format()] + fmt.Sprint(n)
		if st.DelayMs == 0 {
			p.delay = s.opts.Delay
		}
		s.set(rec, func(r *Request) { r.Status, r.Outcome = http.StatusOK, Streaming })
		outcome := play(rw, r, w, p)
		s.set(rec, func(r *Request) { r.Outcome = outcome })
		if outcome == CutOff && (p.cut == nil || !p.cut.Clean) {
			// Abort the connection so the client sees the body end mid-stream.
			panic(http.ErrAbortHandler)
		}
	})
}

// maxConversations bounds the conversations whose validator and reading the simulator keeps.
const maxConversations = 1024

// conversation is what the simulator keeps of one conversation's last request, so that the next
// costs what changed: its incremental validator (provider.Incremental, whose verdict is exactly
// the whole validator's) and its reading (readCache).
type conversation struct {
	v    provider.Validator
	read readCache
	used int64
}

// recall returns the conversation body belongs to: the header's, else the one whose conversation
// array starts with the same element. A wrong guess costs time, never a verdict or a reading
// (both judge any body exactly). A conversation serves one request at a time: one in use is out
// of the map until put back.
func (s *Server) recall(w wire, conv string, body []byte) (string, *conversation) {
	key := string(w.format()) + "\x00"
	var f map[string][]byte
	var els [][]byte
	cb, ok := s.cut(body, w.items())
	if ok {
		f, els = cb.parts()
	}
	switch {
	case conv != "":
		key += "h" + conv
	case ok && len(els) > 0:
		var h maphash.Hash
		h.SetSeed(conversationSeed)
		h.Write(els[0])
		key += fmt.Sprintf("b%x", h.Sum64())
	}
	s.mu.Lock()
	c := s.conversations[key]
	delete(s.conversations, key)
	s.mu.Unlock()
	if c == nil {
		c = &conversation{v: w.validator()}
	}
	c.read.fields, c.read.items = nil, nil
	if ok {
		c.read.fields, c.read.items = f, els // read splits the body no second time
	}
	return key, c
}

// keptCuts is how many of the last requests' cuts the server keeps to cut the next from.
const keptCuts = 4

// cut cuts body into its fields and the elements of its array items, from the kept cut of the
// request whose first element it repeats (its conversation's last, most likely) if there is one,
// and keeps its cut in that one's place.
func (s *Server) cut(body []byte, items string) (*cut, bool) {
	s.mu.Lock()
	var prev *cut
	at := -1
	for i := len(s.cuts) - 1; i >= 0; i-- {
		c := s.cuts[i]
		if len(c.els) > 0 && bytes.HasPrefix(body, c.body[:c.els[0].end]) {
			prev, at = c, i
			break
		}
	}
	s.mu.Unlock()
	cb, ok := splitFrom(body, prev, items)
	if !ok {
		return nil, false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if at >= 0 && at < len(s.cuts) && s.cuts[at] == prev {
		s.cuts = slices.Delete(s.cuts, at, at+1)
	}
	if len(s.cuts) >= keptCuts {
		s.cuts = slices.Delete(s.cuts, 0, 1)
	}
	s.cuts = append(s.cuts, &cb)
	return &cb, true
}

// keep keeps c for the conversation's next request, dropping the longest unused beyond
// maxConversations.
func (s *Server) keep(key string, c *conversation) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.conversations == nil {
		s.conversations = map[string]*conversation{}
	}
	s.uses++
	c.used = s.uses
	s.conversations[key] = c
	if len(s.conversations) > maxConversations {
		oldest, at := "", s.uses
		for k, e := range s.conversations {
			if e.used < at {
				oldest, at = k, e.used
			}
		}
		delete(s.conversations, oldest)
	}
}

var conversationSeed = maphash.MakeSeed()

// status answers with a scripted HTTP error and the provider's error body.
func (s *Server) status(rw http.ResponseWriter, w wire, st Step, reqID string) {
	typ, code, msg := w.defaultError(st.Status)
	if st.ErrorType != "" {
		typ = st.ErrorType
	}
	if st.ErrorCode != "" {
		code = st.ErrorCode
	}
	if st.Message != "" {
		msg = st.Message
	}
	h := rw.Header()
	if st.RetryAfter != "" {
		h.Set("Retry-After", st.RetryAfter)
	}
	if st.RetryAfterMs > 0 {
		h.Set("Retry-After-Ms", fmt.Sprint(st.RetryAfterMs))
	}
	if st.ShouldRetry != nil {
		h.Set("X-Should-Retry", fmt.Sprint(*st.ShouldRetry))
	}
	writeJSON(rw, st.Status, w.errorBody(st.Status, typ, code, msg, "", reqID))
}

func (s *Server) begin(f Format, r *http.Request, body []byte) (*Request, int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.n++
	h := r.Header.Clone()
	for _, k := range []string{"Authorization", "X-Api-Key", "Api-Key"} {
		if h.Get(k) != "" {
			h.Set(k, "[redacted]") // keys never enter the simulator's log
		}
	}
	rec := &Request{Format: f, Path: r.URL.Path, Header: h, Body: body, Step: -1, done: make(chan struct{})}
	s.log = append(s.log, rec)
	if m := s.opts.MaxLogged; m > 0 && len(s.log) > m {
		s.log = append(s.log[:0], s.log[len(s.log)-m:]...)
	}
	return rec, s.n
}

func (s *Server) end(rec *Request) {
	s.mu.Lock()
	if rec.Outcome == Streaming {
		rec.Outcome = Cancelled
	}
	line := fmt.Sprintf("sim: %s %s: %d %s, step %d, ~%d tokens in", rec.Format, rec.Path, rec.Status, rec.Outcome, rec.Step, rec.Estimate)
	if rec.Violation != nil {
		line += ": " + rec.Violation.Error()
	}
	s.mu.Unlock()
	close(rec.done)
	if s.opts.Log != nil {
		fmt.Fprintln(s.opts.Log, line)
	}
}

func (s *Server) set(rec *Request, f func(*Request)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	f(rec)
}

func (s *Server) take(conversation string) (Step, int, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	st, i := s.queue.take(conversation)
	return st, i, s.queue.strict()
}

func (s *Server) mintCall() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.n++
	// Real providers never repeat a call id; the epoch keeps two simulator processes (a session
	// resumed against a fresh simulator) from repeating each other's.
	return fmt.Sprintf("sim_call_%s%d", s.epoch, s.n)
}

// model is the model a reply reports: the requested one if it is a simulator model, else sim-1.
func (s *Server) model(requested string) string {
	if strings.HasPrefix(requested, "sim") {
		return requested
	}
	return DefaultModel
}

// models lists the simulator's models, in one vendor's shape or (f == "") in a shape both read.
func (s *Server) models(f Format) http.HandlerFunc {
	return func(rw http.ResponseWriter, r *http.Request) {
		created := s.opts.Now().UTC()
		m := obj{"id", DefaultModel}
		if f != Anthropic {
			m = append(m, "object", "model", "created", created.Unix(), "owned_by", "rein-simulator")
		}
		if f != Chat {
			m = append(m, "type", "model", "display_name", "rein simulator (not a model)", "created_at", created.Format(time.RFC3339))
		}
		list := obj{"data", []any{m}}
		if f != Anthropic {
			list = append(obj{"object", "list"}, list...)
		}
		if f != Chat {
			list = append(list, "has_more", false, "first_id", DefaultModel, "last_id", DefaultModel)
		}
		writeJSON(rw, http.StatusOK, mustJSON(list))
	}
}

func notFound(rw http.ResponseWriter, r *http.Request) {
	msg := fmt.Sprintf("the rein simulator has no %s %s; it serves POST /v1/messages, /v1/chat/completions, /v1/responses and GET /v1/models", r.Method, r.URL.Path)
	writeJSON(rw, http.StatusNotFound, mustJSON(obj{"type", "error", "error", obj{"type", "not_found_error", "message", msg}}))
}

func writeJSON(rw http.ResponseWriter, status int, body []byte) {
	rw.Header().Set("Content-Type", "application/json")
	rw.WriteHeader(status)
	rw.Write(body)
}
