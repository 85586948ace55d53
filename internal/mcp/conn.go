package mcp

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/reinhq/rein/internal/procs"
)

// lifeline is the shell that stands between rein and a stdio server. It leads the server's
// process group (its own session), runs the server with rein's pipes as its stdin and stdout, and
// blocks on fd 3, a pipe whose write end only rein holds: when rein closes it, or dies however it
// dies, the read returns and the whole group is SIGKILLed, the server's own children with it.
// When the server exits by itself, the group goes the same way.
const lifeline = `"$@" 3<&- <&0 &
srv=$!
{ read -r _ <&3; kill -KILL 0; } &
wait "$srv"
kill -KILL 0`

// withheld are the environment variables a server is not given unless its configuration names
// them: the providers' keys rein itself holds.
var withheld = []string{"ANTHROPIC_API_KEY", "OPENAI_API_KEY", "OPENROUTER_API_KEY", "REIN_TOKEN"}

// conn is one connected server.
type conn struct {
	srv     Server
	session *sdk.ClientSession
	life    *os.File // the write end of a stdio server's lifeline
	cmd     *exec.Cmd
	stderr  *procs.Tail
	changed chan struct{} // a list_changed notice arrived (buffered 1)
	// images says the session's model takes images: a tool's pictures then reach it as image
	// parts, else as a line saying what they were (SetImages).
	images atomic.Bool

	closeOnce sync.Once
}

// connect starts (stdio) or reaches (HTTP) srv and completes the handshake within srv.Startup.
func connect(ctx context.Context, srv Server, version string) (*conn, error) {
	c := &conn{srv: srv, stderr: &procs.Tail{Max: 4096}, changed: make(chan struct{}, 1)}
	client := sdk.NewClient(&sdk.Implementation{Name: "rein", Version: version}, &sdk.ClientOptions{
		ToolListChangedHandler: func(context.Context, *sdk.ToolListChangedRequest) {
			select {
			case c.changed <- struct{}{}:
			default:
			}
		},
	})
	var transport sdk.Transport
	switch srv.Transport {
	case Stdio:
		cmd, r, w, err := c.command()
		if err != nil {
			return nil, err
		}
		// Once Connect has returned the child has its own copy of the read end (or never
		// started); rein keeps only the write end.
		defer r.Close()
		c.cmd, c.life = cmd, w
		transport = &sdk.CommandTransport{Command: cmd, TerminateDuration: 500 * time.Millisecond}
	case HTTP:
		transport = &sdk.StreamableClientTransport{
			Endpoint:   srv.URL,
			HTTPClient: &http.Client{Transport: headers{srv.Headers, http.DefaultTransport}},
			MaxRetries: 2,
		}
	}
	sctx, cancel := context.WithTimeout(ctx, srv.Startup)
	defer cancel()
	s, err := client.Connect(sctx, transport, nil)
	if err != nil {
		c.kill()
		return nil, c.explain(sctx, err)
	}
	c.session = s
	return c, nil
}

// command builds the lifeline shell around the server's command.
func (c *conn) command() (cmd *exec.Cmd, r, w *os.File, err error) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		return nil, nil, nil, errors.New("a stdio MCP server is started under bash, and there is no bash on PATH")
	}
	r, w, err = os.Pipe()
	if err != nil {
		return nil, nil, nil, err
	}
	cmd = exec.Command(bash, append([]string{"-c", lifeline, "rein-mcp-" + c.srv.Name, c.srv.Command}, c.srv.Args...)...)
	cmd.Dir = c.srv.Cwd
	cmd.Env = environ(c.srv.Env)
	cmd.Stderr = c.stderr
	cmd.ExtraFiles = []*os.File{r}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	return cmd, r, w, nil
}

func environ(extra map[string]string) []string {
	var env []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		if _, set := extra[name]; set {
			continue
		}
		withhold := false
		for _, w := range withheld {
			withhold = withhold || name == w
		}
		if !withhold {
			env = append(env, kv)
		}
	}
	for _, k := range sortedKeys(extra) {
		env = append(env, k+"="+extra[k])
	}
	return env
}

// explain words a failure to start for the person and the model.
func (c *conn) explain(ctx context.Context, err error) error {
	msg := err.Error()
	if ctx.Err() == context.DeadlineExceeded {
		msg = fmt.Sprintf("it did not complete the MCP handshake within %s", c.srv.Startup)
	}
	if strings.Contains(msg, "invalid character") || strings.Contains(msg, "unmarshal") {
		msg = "it wrote something that is not MCP's JSON-RPC to its stdout (" + msg + "); a stdio server must keep stdout for the protocol and log to stderr"
	}
	if t := strings.TrimSpace(c.stderr.String()); t != "" {
		msg += "; its stderr ends: " + t
	}
	return errors.New(msg)
}

// close ends the session and, for a stdio server, its whole process group: the SDK closes the
// server's stdin and waits briefly for it to go; then the lifeline closes, which kills what is
// left.
func (c *conn) close() {
	c.closeOnce.Do(func() {
		if c.session != nil {
			done := make(chan struct{})
			go func() { c.session.Close(); close(done) }()
			select {
			case <-done:
			case <-time.After(time.Second):
			}
		}
		c.kill()
	})
}

func (c *conn) kill() {
	if c.life != nil {
		c.life.Close()
	}
	if c.cmd != nil && c.cmd.Process != nil {
		_ = syscall.Kill(-c.cmd.Process.Pid, syscall.SIGKILL)
	}
}

// headers adds an HTTP server's configured headers to each request.
type headers struct {
	h    map[string]string
	next http.RoundTripper
}

func (t headers) RoundTrip(r *http.Request) (*http.Response, error) {
	if len(t.h) > 0 {
		r = r.Clone(r.Context())
		for k, v := range t.h {
			r.Header.Set(k, v)
		}
	}
	return t.next.RoundTrip(r)
}
