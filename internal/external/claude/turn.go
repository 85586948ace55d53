package claude

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/reinhq/rein/internal/external"
	"github.com/reinhq/rein/internal/procs"
)

// maxLine bounds one line of the program's output (a tool result can be large).
const maxLine = 64 << 20

// exitWait is how long a program that has given its result is given to exit on its own once its
// standard input is closed, before rein ends it.
const exitWait = 3 * time.Second

// run is one turn's program and what has been read of it.
type run struct {
	b       *Backend
	t       external.Turn
	sink    external.Sink
	cmd     *exec.Cmd
	stdin   io.WriteCloser
	wmu     sync.Mutex // one writer of stdin at a time
	lines   chan line  // what the reader decoded, closed at end of output
	bad     chan error // lines that did not decode
	stderr  *procs.Tail
	tree    *tree
	session string
	started bool          // system/init was read
	reply   string        // the last assistant text of the turn
	exited  chan struct{} // closed once the program has exited (waitErr is set)
	waitErr error
}

// Turn runs one turn (see the package doc).
func (b *Backend) Turn(ctx context.Context, t external.Turn, sink external.Sink) external.Result {
	if ctx.Err() != nil {
		return external.Result{Status: external.StatusInterrupted, Session: t.Resume}
	}
	argv, err := args(t)
	if err != nil {
		return external.Result{Status: external.StatusFailed, Session: t.Resume, Err: err}
	}
	r := &run{b: b, t: t, sink: sink, session: t.Resume, stderr: &procs.Tail{Max: 4096}}
	if err := r.start(argv); err != nil {
		return external.Result{Status: external.StatusFailed, Session: t.Resume, Err: err}
	}
	res := r.loop(ctx)
	// A turn that completed lets the program exit on its own; any other end ends it now.
	r.finish(ctx.Err() != nil || res.Status != external.StatusCompleted)
	if res.Status == external.StatusFailed && res.Err != nil && !r.started {
		// Refused before it began (a session to resume that it cannot find): its reasons are on
		// its standard error.
		if s := strings.TrimSpace(r.stderr.String()); s != "" {
			res.Err = fmt.Errorf("%w; its standard error ends: %s", res.Err, s)
		}
		if t.Resume != "" && strings.Contains(res.Err.Error(), "No conversation found") {
			res.Err = fmt.Errorf("%w: %w", external.ErrSessionGone, res.Err)
		}
	}
	if res.Status == external.StatusFailed && res.Err == nil {
		res.Err = r.died()
	}
	res.Session = r.session
	return res
}

func (r *run) start(argv []string) error {
	cmd := exec.Command(r.b.path, argv...)
	cmd.Dir = r.t.Cwd
	mark := newMark()
	env := r.t.Env
	if env == nil {
		env = os.Environ()
	}
	cmd.Env = append(slices.Clip(env), mark)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	in, err := cmd.StdinPipe()
	if err != nil {
		return err
	}
	// Its output comes through pipes rein owns, not exec's: Wait then returns when the program
	// exits, without closing what is still to be read or waiting on a descendant that holds them.
	out, outw, err := os.Pipe()
	if err != nil {
		return err
	}
	errr, errw, err := os.Pipe()
	if err != nil {
		out.Close()
		outw.Close()
		return err
	}
	cmd.Stdout, cmd.Stderr = outw, errw
	err = cmd.Start()
	outw.Close()
	errw.Close()
	if err != nil {
		out.Close()
		errr.Close()
		return fmt.Errorf("start %s: %w; %s", r.b.path, err, installHint)
	}
	r.cmd, r.stdin = cmd, in
	r.tree = newTree(cmd.Process.Pid, mark)
	r.lines, r.bad, r.exited = make(chan line), make(chan error, 16), make(chan struct{})
	go func() {
		r.waitErr = cmd.Wait()
		close(r.exited)
	}()
	go func() {
		_, _ = io.Copy(r.stderr, errr)
		errr.Close()
	}()
	go func() {
		r.read(out)
		out.Close()
	}()
	msg := map[string]any{"type": "user", "message": map[string]any{"role": "user", "content": r.t.Prompt}}
	if err := r.write(msg); err != nil {
		// The program died at once; the loop reads its end.
		r.bad <- fmt.Errorf("send the prompt: %w", err)
	}
	return nil
}

// read decodes the program's output into r.lines until it ends.
func (r *run) read(out io.Reader) {
	defer close(r.lines)
	br := bufio.NewReaderSize(out, 64<<10)
	for {
		b, err := readLine(br)
		if len(b) > 0 {
			l, derr := decode(b)
			if derr != nil {
				select {
				case r.bad <- derr:
				default: // a flood of bad lines: the first ones are enough
				}
			} else {
				r.lines <- l
			}
		}
		if err != nil {
			return
		}
	}
}

// readLine returns the next line, without its newline; a line longer than maxLine is skipped.
func readLine(br *bufio.Reader) ([]byte, error) {
	var buf []byte
	for {
		chunk, err := br.ReadSlice('\n')
		if len(buf)+len(chunk) <= maxLine {
			buf = append(buf, chunk...)
		} else {
			buf = buf[:0:0]
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		return buf, err
	}
}

func (r *run) write(v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	r.wmu.Lock()
	defer r.wmu.Unlock()
	_, err = r.stdin.Write(append(b, '\n'))
	return err
}

// loop reads the turn to its end: the result line, the end of the output, or a Stop.
func (r *run) loop(ctx context.Context) external.Result {
	stop := ctx.Done()
	var grace <-chan time.Time
	for {
		select {
		case <-stop:
			stop = nil
			if !r.started {
				return external.Result{Status: external.StatusInterrupted} // killed before it initialised
			}
			_ = r.write(map[string]any{"type": "control_request", "request_id": "rein-interrupt",
				"request": map[string]any{"subtype": "interrupt"}})
			grace = time.After(external.InterruptGrace)
		case <-grace:
			return external.Result{Status: external.StatusInterrupted, Reply: r.reply}
		case err := <-r.bad:
			if err := r.sink.Item(external.Item{Kind: external.ItemError, Text: "rein could not read a line of Claude Code's: " + err.Error()}); err != nil {
				return external.Result{Status: external.StatusFailed, Err: err}
			}
		case l, ok := <-r.lines:
			if !ok {
				if ctx.Err() != nil {
					return external.Result{Status: external.StatusInterrupted, Reply: r.reply}
				}
				return external.Result{Status: external.StatusFailed}
			}
			if res, done := r.take(ctx, l); done {
				return res
			}
		}
	}
}

// take acts on one line; done says the turn is over.
func (r *run) take(ctx context.Context, l line) (external.Result, bool) {
	fail := func(err error) (external.Result, bool) {
		return external.Result{Status: external.StatusFailed, Err: err}, true
	}
	switch l.Type {
	case "system":
		if l.Subtype == "init" {
			r.started = true
			if l.SessionID != "" {
				r.session = l.SessionID
			}
			if err := r.sink.Started(r.session, l.Version); err != nil {
				return fail(err)
			}
			r.tree.look()
			return external.Result{}, false
		}
	case "assistant":
		for _, b := range l.Message.blocks() {
			if b.Type == "text" && b.Text != "" {
				r.reply = b.Text
			}
			if b.Type == "tool_use" {
				r.tree.look()
			}
		}
	case "control_request":
		if l.Request != nil && l.Request.Subtype == "can_use_tool" {
			return r.ask(ctx, l)
		}
		// A request rein does not serve is refused, so the program is not left waiting.
		_ = r.write(map[string]any{"type": "control_response", "response": map[string]any{"subtype": "error", "request_id": l.RequestID,
			"error": "rein does not serve this request"}})
		return external.Result{}, false
	case "result":
		if l.SessionID != "" {
			r.session = l.SessionID
		}
		return r.result(ctx, l), true
	}
	for _, it := range l.items() {
		if err := r.sink.Item(it); err != nil {
			return fail(err)
		}
	}
	return external.Result{}, false
}

// ask puts a permission prompt to the person and answers it; a prompt the turn's end overtakes
// is answered deny.
func (r *run) ask(ctx context.Context, l line) (external.Result, bool) {
	q := l.Request
	r.tree.look()
	summ := q.Description
	if summ == "" {
		summ = summary(q.ToolName, q.Input)
	}
	id := q.ToolUseID
	if id == "" {
		id = l.RequestID
	}
	// The wait ends with the turn's ctx (a Stop) or with the program's output (it died).
	actx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		select {
		case <-actx.Done():
		case <-r.exited:
			cancel()
		}
	}()
	allow := r.sink.Approve(actx, external.Approval{ID: id, Tool: q.ToolName, Summary: summ, Input: compact(q.Input)})
	resp := map[string]any{"behavior": "deny", "message": "The person declined this tool call."}
	if ctx.Err() != nil {
		resp["message"] = "The person stopped the turn."
		resp["interrupt"] = true
	}
	if allow && ctx.Err() == nil {
		in := q.Input
		if len(in) == 0 {
			in = json.RawMessage(`{}`)
		}
		resp = map[string]any{"behavior": "allow", "updatedInput": in}
	}
	_ = r.write(map[string]any{"type": "control_response", "response": map[string]any{"subtype": "success", "request_id": l.RequestID, "response": resp}})
	return external.Result{}, false
}

// result reads the result line: is_error decides, whatever the subtype says.
func (r *run) result(ctx context.Context, l line) external.Result {
	if ctx.Err() != nil {
		return external.Result{Status: external.StatusInterrupted, Reply: r.reply}
	}
	if !l.IsError && (l.Subtype == "success" || l.Subtype == "") {
		reply := l.Result
		if reply == "" {
			reply = r.reply
		}
		return external.Result{Status: external.StatusCompleted, Reply: reply}
	}
	var why []string
	if l.Result != "" {
		why = append(why, l.Result)
	}
	why = append(why, l.Errors...)
	if l.APIErrorStatus != nil {
		why = append(why, fmt.Sprintf("the provider answered HTTP %d", *l.APIErrorStatus))
	}
	if len(why) == 0 {
		why = append(why, "it said no more")
	}
	sub := l.Subtype
	if sub == "" {
		sub = "none"
	}
	return external.Result{Status: external.StatusFailed, Reply: r.reply,
		Err: fmt.Errorf("Claude Code reported an error (is_error, subtype %s): %s", sub, strings.Join(why, "; "))}
}

// finish ends the program: its standard input is closed and, after a turn that completed, it is
// given exitWait to exit; then what is left of its tree is ended. It returns once all of it is
// gone.
func (r *run) finish(now bool) {
	r.tree.look()
	_ = r.stdin.Close()
	if !now && r.started {
		select {
		case <-r.exited:
		case <-time.After(exitWait):
		}
	}
	r.tree.end()
	<-r.exited
	go func() {
		for range r.lines { // the reader ends at the end of the output, which is gone with the tree
		}
	}()
}

// died says how the program ended without a result line.
func (r *run) died() error {
	how := "it exited"
	var ee *exec.ExitError
	if errors.As(r.waitErr, &ee) {
		how = ee.ProcessState.String()
	} else if r.waitErr != nil {
		how = r.waitErr.Error()
	} else if r.cmd.ProcessState != nil {
		how = r.cmd.ProcessState.String()
	}
	msg := fmt.Sprintf("Claude Code ended the turn without a result (%s)", how)
	if s := strings.TrimSpace(r.stderr.String()); s != "" {
		msg += "; its standard error ends: " + s
	}
	return errors.New(msg)
}
