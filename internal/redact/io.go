package redact

import (
	"io"
	"net/http"
)

// Writer redacts each write with Secrets before passing it on to W. It suits what is written a
// line or a whole message at a time (a program's messages, a log): a secret split between two
// writes is not seen whole. Streamed text is held back by its producer instead (Secrets.Safe).
type Writer struct {
	W       io.Writer
	Secrets *Secrets
}

// Write redacts b and writes it, answering len(b) on success: the redacted text's length differs.
func (w Writer) Write(b []byte) (int, error) {
	if _, err := io.WriteString(w.W, w.Secrets.Redact(string(b))); err != nil {
		return 0, err
	}
	return len(b), nil
}

// Unwrap returns the writer a Writer passes on to, for the one line that must show a secret (a
// host's URL with the token its person opens it with); any other writer is returned as it is.
func Unwrap(w io.Writer) io.Writer {
	if r, ok := w.(Writer); ok {
		return r.W
	}
	return w
}

// Handler redacts with s every response body h writes: what a server answers that no redactor
// saw before it (an error's words). Redacting can change a body's length, so a Content-Length h
// set is dropped and the body goes chunked; an event stream still flushes event by event.
func Handler(h http.Handler, s *Secrets) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.ServeHTTP(&response{ResponseWriter: w, secrets: s}, r)
	})
}

// response redacts each write of a response.
type response struct {
	http.ResponseWriter
	secrets *Secrets
	wrote   bool
}

func (w *response) WriteHeader(code int) {
	if !w.wrote {
		w.wrote = true
		w.Header().Del("Content-Length")
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *response) Write(b []byte) (int, error) {
	if !w.wrote {
		w.WriteHeader(http.StatusOK)
	}
	if _, err := io.WriteString(w.ResponseWriter, w.secrets.Redact(string(b))); err != nil {
		return 0, err
	}
	return len(b), nil
}

// Flush lets event streams flush through the wrapper.
func (w *response) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Unwrap lets http.ResponseController reach the connection.
func (w *response) Unwrap() http.ResponseWriter { return w.ResponseWriter }
