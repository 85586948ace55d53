// Package fetch provides web_fetch: the model fetches one http or https URL and reads it, an HTML
// page converted to Markdown (by github.com/JohannesKaufmann/html-to-markdown, the well-kept
// converter made for this), other text as it is, with the final URL after redirects.
//
// What it holds:
//
//   - Only public addresses. Every connection is checked by the dialer after the name is resolved
//     (control in addr.go), so a name resolving to a loopback, private, link-local or reserved
//     address, a DNS answer that changes between a look-up and the connection, and a redirect to an
//     internal host are all refused, outcome denied, unless Options.AllowPrivate (the tests'
//     local server; --web-fetch-private). Proxies from the environment are not used: a proxy would
//     make the connection on rein's behalf, out of the dialer's sight.
//   - Bounds: MaxRedirects hops (http and https only), MaxBytes of body read, Timeout for the
//     whole fetch (outcome timed_out), MaxText of text answered (the cut said).
//   - Stop ends a fetch at once: the request's context is the call's, and the outcome is
//     interrupted.
//   - Offline refuses every fetch with its reason: the session's sandbox keeps commands off the
//     network, and the model's fetches with them, unless the network is allowed.
//
// The policy judges a fetch as reaching the network (tool.EffectNetwork): refused in read-only
// mode, asked in ask mode, allowed in workspace and full mode; a rule's pattern is matched against
// the URL as given.
package fetch

import (
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"
	"unicode/utf8"

	"encoding/json"

	htmltomarkdown "github.com/JohannesKaufmann/html-to-markdown/v2"
	"github.com/JohannesKaufmann/html-to-markdown/v2/converter"

	"github.com/reinhq/rein/internal/provider"
	"github.com/reinhq/rein/internal/record"
	"github.com/reinhq/rein/internal/tool"
)

// Name is the tool's name.
const Name = "web_fetch"

// The default bounds of one fetch.
const (
	DefaultMaxBytes     = 5 << 20
	DefaultMaxText      = 100 << 10
	DefaultTimeout      = 30 * time.Second
	DefaultMaxRedirects = 5
)

// Options configure the tool. Zero bounds take the defaults.
type Options struct {
	// AllowPrivate lets fetches reach loopback, private, link-local and reserved addresses.
	AllowPrivate bool
	// Offline, when set, refuses every fetch and says this as the reason.
	Offline      string
	MaxBytes     int64
	MaxText      int
	Timeout      time.Duration
	MaxRedirects int
}

// Tool is the web_fetch tool.
type Tool struct {
	opts   Options
	client *http.Client
}

// New returns the tool with opts.
func New(opts Options) *Tool {
	if opts.MaxBytes <= 0 {
		opts.MaxBytes = DefaultMaxBytes
	}
	if opts.MaxText <= 0 {
		opts.MaxText = DefaultMaxText
	}
	if opts.Timeout <= 0 {
		opts.Timeout = DefaultTimeout
	}
	if opts.MaxRedirects <= 0 {
		opts.MaxRedirects = DefaultMaxRedirects
	}
	d := &net.Dialer{Timeout: opts.Timeout}
	if !opts.AllowPrivate {
		d.Control = control
	}
	tr := &http.Transport{
		Proxy:                 nil,
		DialContext:           d.DialContext,
		ForceAttemptHTTP2:     true,
		TLSHandshakeTimeout:   opts.Timeout,
		ResponseHeaderTimeout: opts.Timeout,
		MaxIdleConns:          4,
		IdleConnTimeout:       30 * time.Second,
	}
	t := &Tool{opts: opts}
	t.client = &http.Client{Transport: tr, CheckRedirect: t.checkRedirect}
	return t
}

func (t *Tool) checkRedirect(req *http.Request, via []*http.Request) error {
	if len(via) > t.opts.MaxRedirects {
		return fmt.Errorf("more than %d redirects (the last to %s)", t.opts.MaxRedirects, req.URL.Redacted())
	}
	if req.URL.Scheme != "http" && req.URL.Scheme != "https" {
		return fmt.Errorf("a redirect to %s, which is not http or https", req.URL.Redacted())
	}
	return nil
}

var schema = json.RawMessage(`{
  "type": "object",
  "properties": {
    "url": {"type": "string", "minLength": 1, "maxLength": 4096, "description": "The http or https URL to read."}
  },
  "required": ["url"],
  "additionalProperties": false
}`)

// Spec describes the tool to the model.
func (t *Tool) Spec() provider.Tool {
	return provider.Tool{
		Name: Name,
		Description: "Fetch one web page (http or https) and read it: HTML comes back as Markdown, other text as it is, " +
			"with the final URL after redirects. Public addresses only. Large pages are cut; the answer says where.",
		Schema: schema,
	}
}

type args struct {
	URL string `json:"url"`
}

// Access says a fetch reaches the network; rules match the URL as given.
func (t *Tool) Access(raw json.RawMessage) tool.Access {
	var a args
	_ = json.Unmarshal(raw, &a)
	return tool.Access{Effect: tool.EffectNetwork, Subjects: []string{a.URL}}
}

// Run fetches the URL.
func (t *Tool) Run(ctx context.Context, call tool.Call) tool.Result {
	if ctx.Err() != nil {
		return result(record.NotExecuted, "the session was stopped before the fetch started")
	}
	var a args
	if err := json.Unmarshal(call.Args, &a); err != nil {
		return result(record.Failed, "the arguments are not {\"url\": \"...\"}: "+err.Error())
	}
	if t.opts.Offline != "" {
		return result(record.Denied, "refused: "+t.opts.Offline)
	}
	u, err := url.Parse(strings.TrimSpace(a.URL))
	if err != nil {
		return result(record.Failed, fmt.Sprintf("%q is not a URL: %v", a.URL, err))
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return result(record.Failed, fmt.Sprintf("%q is not an http or https URL; web_fetch reads only those", a.URL))
	}
	if u.Host == "" {
		return result(record.Failed, fmt.Sprintf("%q names no host", a.URL))
	}
	ctx, cancel := context.WithTimeoutCause(ctx, t.opts.Timeout, errTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return result(record.Failed, fmt.Sprintf("cannot fetch %q: %v", a.URL, err))
	}
	req.Header.Set("User-Agent", "rein-web-fetch/1")
	req.Header.Set("Accept", "text/html, text/markdown, text/plain, application/json, application/xml;q=0.9, */*;q=0.5")
	resp, err := t.client.Do(req)
	if err != nil {
		return t.failed(ctx, a.URL, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, t.opts.MaxBytes+1))
	if err != nil {
		return t.failed(ctx, a.URL, err)
	}
	return t.answer(resp, body)
}

var errTimeout = errors.New("the fetch took too long")

// failed classifies a fetch that did not complete: refused by address, stopped, timed out, or
// failed otherwise.
func (t *Tool) failed(ctx context.Context, raw string, err error) tool.Result {
	var refused *RefusedError
	switch {
	case errors.As(err, &refused):
		return result(record.Denied, fmt.Sprintf("refused: %s: %v (a loopback, private or link-local address is reached only with --web-fetch-private)", raw, refused))
	case context.Cause(ctx) == errTimeout:
		return result(record.TimedOut, fmt.Sprintf("the fetch of %s took longer than %s and was ended", raw, t.opts.Timeout))
	case ctx.Err() != nil:
		return result(record.Interrupted, fmt.Sprintf("the fetch of %s was stopped", raw))
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	return result(record.Failed, fmt.Sprintf("cannot fetch %s: %v", raw, err))
}

// answer turns a response into the model's text: a header line with the final URL, the status and
// the type, then the page.
func (t *Tool) answer(resp *http.Response, body []byte) tool.Result {
	final := resp.Request.URL
	ctype := resp.Header.Get("Content-Type")
	media, params, _ := mime.ParseMediaType(ctype)
	var b strings.Builder
	fmt.Fprintf(&b, "URL: %s\nStatus: %s\n", final.Redacted(), resp.Status)
	if ctype != "" {
		fmt.Fprintf(&b, "Content-Type: %s\n", ctype)
	}
	cut := int64(len(body)) > t.opts.MaxBytes
	if cut {
		body = body[:t.opts.MaxBytes]
		fmt.Fprintf(&b, "[rein: the body is larger than %d bytes; only the first %d were read]\n", t.opts.MaxBytes, t.opts.MaxBytes)
	}
	b.WriteByte('\n')
	if !textual(media, body) {
		fmt.Fprintf(&b, "[rein: the body is %d bytes of %s, which is not text; web_fetch reads only text and HTML]", len(body), orUnknown(media))
		return t.finish(resp, b.String())
	}
	if cs := strings.ToLower(params["charset"]); cs != "" && cs != "utf-8" && cs != "us-ascii" && cs != "utf8" {
		fmt.Fprintf(&b, "[rein: the page says it is in %s; it is read as UTF-8]\n", cs)
	}
	text := strings.ToValidUTF8(string(body), "\uFFFD")
	if media == "text/html" || media == "application/xhtml+xml" || (media == "" && looksHTML(text)) {
		domain := final.Scheme + "://" + final.Host
		md, err := htmltomarkdown.ConvertString(text, converter.WithDomain(domain))
		if err != nil {
			fmt.Fprintf(&b, "[rein: the HTML could not be converted (%v); here it is as sent]\n", err)
		} else {
			text = md
		}
	}
	if len(text) > t.opts.MaxText {
		n := t.opts.MaxText
		for n > 0 && !utf8.RuneStart(text[n]) {
			n--
		}
		text = text[:n] + fmt.Sprintf("\n[rein: cut at %d of %d bytes]", n, len(text))
	}
	b.WriteString(text)
	return t.finish(resp, b.String())
}

// finish answers an HTTP error status as a failed call, with the page it sent.
func (t *Tool) finish(resp *http.Response, text string) tool.Result {
	if resp.StatusCode >= 400 {
		return result(record.Failed, text)
	}
	return result(record.OK, text)
}

func textual(media string, body []byte) bool {
	switch {
	case strings.HasPrefix(media, "text/"), media == "application/json", media == "application/xml",
		media == "application/xhtml+xml", media == "application/javascript", media == "application/ld+json",
		strings.HasSuffix(media, "+json"), strings.HasSuffix(media, "+xml"):
		return true
	case media == "":
		// No type given: text if it looks like text.
		n := min(len(body), 512)
		return utf8.Valid(body[:n]) && !strings.ContainsRune(string(body[:n]), 0)
	}
	return false
}

func looksHTML(s string) bool {
	head := strings.ToLower(strings.TrimSpace(s[:min(len(s), 512)]))
	return strings.HasPrefix(head, "<!doctype html") || strings.HasPrefix(head, "<html")
}

func orUnknown(s string) string {
	if s == "" {
		return "an unknown type"
	}
	return s
}

func result(o record.Outcome, text string) tool.Result {
	return tool.Result{Content: text, Outcome: o, IsError: o != record.OK}
}
