package host

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/reinhq/rein/internal/api"
	"github.com/reinhq/rein/internal/store"
)

// Mutations reach the owner (several hosts over one store; the README's "running several hosts").
//
// A request that changes a conversation — a send, a Stop, an answer to an approval, an edit, a
// fork, a rename, a close, a release — or reads its transcript needs the conversation's session, which only the host
// holding its lease may open. A host asked for one that another host holds hands the request on
// to that host, at the URL the lease gives (pgstore's SetAdvertise, rein serve --advertise), with
// the client's own body (its op_id, so a retry keeps its meaning wherever it lands) and its own
// Authorization (every host has the one token), and streams the owner's answer back as it came. A
// client may therefore talk to any host, as behind a load balancer with no sticky sessions.
//
// A forwarded request carries ForwardedHeader, and a host never forwards one: it serves it or
// refuses it. When the owner cannot be reached, or answers that it no longer owns the
// conversation (its lease lapsed or moved meanwhile), this host serves the request itself: it
// acquires the conversation if its lease is free or lapsed (a takeover, settled as a restart), or
// refuses not_owner naming the owner and when its lease ends. A send the unreachable owner may
// have accepted before it stopped is then kept once: the retry, under the same op_id, is answered
// with whatever the record says became of it.

// ForwardedHeader marks a request a host handed on to a conversation's owner; its value is the
// forwarding host's name.
const ForwardedHeader = "Rein-Forwarded-By"

// ServedByHeader names, on every answer of a host over a store, the host that served it.
const ServedByHeader = "Rein-Served-By"

// forwardTimeout bounds a forwarded request's wait for the owner's answer to begin.
const forwardTimeout = 30 * time.Second

// newForwarder is the HTTP client a host hands requests on to other hosts with: connections kept
// warm between hosts, a short dial, a bounded wait for the answer.
func newForwarder() *http.Client {
	return &http.Client{
		Transport: &http.Transport{
			DialContext:           (&net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
			MaxIdleConns:          256,
			MaxIdleConnsPerHost:   64,
			IdleConnTimeout:       90 * time.Second,
			ResponseHeaderTimeout: forwardTimeout,
		},
		// An owner's answer is passed on as it is, redirect or not.
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}

// forwardable reports whether r is a request that this host may hand on to the conversation's
// owner: with a store, naming a conversation, not itself forwarded, and one that needs the
// conversation's session — a change, or the transcript (its view and events any host serves, from
// the index and the rows).
func (s *Server) forwardable(r *http.Request) bool {
	if s.h.cfg.Store == nil || r.PathValue("id") == "" || r.Header.Get(ForwardedHeader) != "" {
		return false
	}
	if r.Method == http.MethodGet || r.Method == http.MethodHead {
		return strings.HasSuffix(r.URL.Path, "/transcript")
	}
	return true
}

// unreachableError is a forward that found no owner to answer it.
type unreachableError struct {
	owner store.Owner
	err   error
}

func (e *unreachableError) Error() string { return e.err.Error() }

// serveOrForward runs fn for a request to change a conversation, or hands the request on to the
// conversation's owner. The body is read first (within its cap), so that it can be sent on, or
// served here after a forward that failed.
func (s *Server) serveOrForward(w http.ResponseWriter, r *http.Request, fn func(w http.ResponseWriter, r *http.Request) error) error {
	body, err := io.ReadAll(r.Body)
	var mbe *http.MaxBytesError
	if errors.As(err, &mbe) {
		return err
	}
	if err != nil {
		return errf(api.BadRequest, "the request body could not be read: %v", err)
	}
	id := r.PathValue("id")
	tried := false
	var unreachable *unreachableError
	if _, held := s.h.cfg.Store.Holds(id); !held {
		tried = true
		done, err := s.forward(w, r, id, body)
		if done {
			return nil
		}
		errors.As(err, &unreachable)
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	err = fn(w, r)
	if api.CodeOf(err) != api.NotOwner {
		return err
	}
	if !tried {
		// Another host took the conversation up between this one's look and its try.
		done, ferr := s.forward(w, r, id, body)
		if done {
			return nil
		}
		errors.As(ferr, &unreachable)
	}
	if unreachable != nil {
		var wait time.Duration
		if he := (*api.Error)(nil); errors.As(err, &he) {
			wait = he.RetryAfter
		}
		o := unreachable.owner
		return &api.Error{Code: api.NotOwner, RetryAfter: wait, Message: fmt.Sprintf("conversation %s is served by host %s, which did not answer "+
			"(%v); its lease runs to %s unless renewed, and then any host takes the conversation over. Retry with the same op_id then: "+
			"what that host accepted before it stopped is kept once, and the retry is answered with what became of it",
			id, o.Name, unreachable.err, o.Until.UTC().Format(time.RFC3339))}
	}
	return err
}

// forward hands r on to the host that owns conversation id, if another host holds its live lease
// and gave its URL, and writes that host's answer. It reports whether it answered; when it did
// not, nothing was written, and err says why, an *unreachableError when the owner did not answer.
func (s *Server) forward(w http.ResponseWriter, r *http.Request, id string, body []byte) (bool, error) {
	st := s.h.cfg.Store
	ctx, cancel := context.WithTimeout(r.Context(), st.Lease())
	o, err := st.Owner(ctx, id)
	cancel()
	if err != nil || !o.Live || o.Name == st.Name() || o.URL == "" {
		return false, err
	}
	req, err := http.NewRequestWithContext(r.Context(), r.Method, o.URL+r.URL.RequestURI(), bytes.NewReader(body))
	if err != nil {
		return false, &unreachableError{o, fmt.Errorf("its URL %q: %w", o.URL, err)}
	}
	for k, vs := range r.Header {
		if hopHeaders[http.CanonicalHeaderKey(k)] {
			continue
		}
		req.Header[k] = vs
	}
	// This host judged the Origin; the owner answers to its own names only.
	req.Header.Del("Origin")
	req.Header.Set(ForwardedHeader, st.Name())
	resp, err := s.fwd.Do(req)
	if err != nil {
		return false, &unreachableError{o, err}
	}
	defer resp.Body.Close()
	if resp.StatusCode == http.StatusUnauthorized {
		fmt.Fprintf(s.h.cfg.Log, "rein serve: host %s refused a request handed on to it as unauthorized: give every host the same token\n", o.Name)
	}
	if resp.StatusCode == http.StatusConflict {
		// The owner may have let the conversation go meanwhile: then it is served here.
		b, err := io.ReadAll(io.LimitReader(resp.Body, api.MaxBody))
		if err != nil {
			return false, &unreachableError{o, fmt.Errorf("read its answer: %w", err)}
		}
		var eb api.ErrorBody
		if json.Unmarshal(b, &eb) == nil && eb.Error != nil && eb.Error.Code == api.NotOwner {
			return false, nil
		}
		copyAnswer(w, resp)
		_, _ = w.Write(b)
		return true, nil
	}
	copyAnswer(w, resp)
	rc := http.NewResponseController(w)
	buf := make([]byte, 32<<10)
	for {
		n, err := resp.Body.Read(buf)
		if n > 0 {
			if _, werr := w.Write(buf[:n]); werr != nil {
				return true, nil // the client is gone
			}
			_ = rc.Flush()
		}
		if err != nil {
			return true, nil // the answer's status is written: an owner that broke off cannot be answered otherwise
		}
	}
}

// copyAnswer writes an owner's status and headers.
func copyAnswer(w http.ResponseWriter, resp *http.Response) {
	h := w.Header()
	for k, vs := range resp.Header {
		if hopHeaders[http.CanonicalHeaderKey(k)] || k == "Content-Length" {
			continue
		}
		h[k] = vs
	}
	w.WriteHeader(resp.StatusCode)
}

// hopHeaders are the headers of one connection, not passed on (RFC 9110 §7.6.1).
var hopHeaders = map[string]bool{
	"Connection": true, "Proxy-Connection": true, "Keep-Alive": true, "Proxy-Authenticate": true, "Proxy-Authorization": true,
	"Te": true, "Trailer": true, "Transfer-Encoding": true, "Upgrade": true,
}
