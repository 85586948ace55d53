package host_test

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"os"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"testing/fstest"
	"time"

	"github.com/reinhq/rein/internal/fsys"
	"github.com/reinhq/rein/internal/host"
	"github.com/reinhq/rein/internal/session"
)

// The caps that keep the host from being starved (conns.go, Host.make, Host.admit). The attacks at
// full scale (5,000 idle connections, 10,000 creates, slow-loris) run against the real binary in
// cmd/rein (TestServeUnderAttack); these check each rule at a small scale.

// refusal is an API error answer.
type refusal struct {
	status     int
	code, msg  string
	retryAfter string
}

// call makes one request with the token on a connection of its own and reads the answer.
func (r *rig) call(method, path, body string) (refusal, []byte) {
	r.t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, r.srv.URL+path, rd)
	if err != nil {
		r.t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	hc := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}, Timeout: 10 * time.Second}
	resp, err := hc.Do(req)
	if err != nil {
		r.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var e struct {
		Error struct{ Code, Message string }
	}
	_ = json.Unmarshal(b, &e)
	return refusal{status: resp.StatusCode, code: e.Error.Code, msg: e.Error.Message, retryAfter: resp.Header.Get("Retry-After")}, b
}

func (r *rig) createOp(op string) refusal {
	r.t.Helper()
	res, _ := r.call("POST", "/api/conversations", fmt.Sprintf(`{"op_id":%q,"title":"t"}`, op))
	return res
}

// dirs lists the session directories on disk.
func (r *rig) dirs() []string {
	r.t.Helper()
	des, err := os.ReadDir(session.ProjectDir(r.root, r.ws))
	if err != nil {
		r.t.Fatal(err)
	}
	var out []string
	for _, de := range des {
		if de.IsDir() {
			out = append(out, de.Name())
		}
	}
	return out
}

// rows counts the conversations the API lists (the index's rows).
func (r *rig) rows() int {
	r.t.Helper()
	vs, err := r.c.List(ctxT(r.t))
	if err != nil {
		r.t.Fatal(err)
	}
	return len(vs)
}

// checkNothingLeft checks that the conversations on disk, in the index and in the host are exactly
// want of them.
func (r *rig) checkNothingLeft(want int) {
	r.t.Helper()
	if d, n, st := len(r.dirs()), r.rows(), r.h.Stats(); d != want || n != want || st.Conversations != want {
		r.t.Fatalf("%d session directories, %d index rows, %d conversations in the host; want %d of each", d, n, st.Conversations, want)
	}
}

func TestFileBudget(t *testing.T) {
	for _, c := range []struct {
		nofile      uint64
		conns, open int
	}{
		{0, 16, 4}, {64, 16, 4}, {256, 64, 8}, {1024, 448, 56}, {4096, 1984, 248}, {20000, 4096, 512}, {1 << 40, 4096, 512},
	} {
		conns, open := host.FileBudget(c.nofile)
		if conns != c.conns || open != c.open {
			t.Errorf("FileBudget(%d) = %d connections, %d open; want %d, %d", c.nofile, conns, open, c.conns, c.open)
		}
		if c.nofile >= 256 && uint64(conns+open*8+128) > c.nofile {
			t.Errorf("FileBudget(%d) = %d connections, %d open: more files than the limit", c.nofile, conns, open)
		}
		lim := host.DefaultLimits(c.nofile)
		if lim.MaxConns != conns || lim.MaxUnauthenticated != conns/4 || lim.HeaderTimeout != host.DefaultHeaderTimeout {
			t.Errorf("DefaultLimits(%d) = %+v", c.nofile, lim)
		}
	}
}

// dial opens a bare TCP connection to the rig's API.
func (r *rig) dial() net.Conn {
	r.t.Helper()
	c, err := net.Dial("tcp", r.srv.Listener.Addr().String())
	if err != nil {
		r.t.Fatal(err)
	}
	r.t.Cleanup(func() { c.Close() })
	return c
}

// closedWithin reports whether the host closes c (a read ends) within d, and what it read.
func closedWithin(c net.Conn, d time.Duration) (bool, string) {
	_ = c.SetReadDeadline(time.Now().Add(d))
	b, err := io.ReadAll(c)
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return false, string(b)
	}
	return true, string(b)
}

// waitStats polls the gate until pred holds.
func (r *rig) waitStats(what string, pred func(host.GateStats) bool) host.GateStats {
	r.t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		st := r.conns.Stats()
		if pred(st) {
			return st
		}
		if time.Now().After(deadline) {
			r.t.Fatalf("waiting for %s: %+v", what, st)
		}
		time.Sleep(time.Millisecond) // polling the gate's counters: nothing to wait on
	}
}

// TestGateEvictsUnauthenticatedOldestFirst holds connections over the cap on those without the
// token: the oldest that never spoke is closed first, then the oldest not being answered; an
// authorised connection is never closed to make room, and a client with the token always gets in.
func TestGateEvictsUnauthenticatedOldestFirst(t *testing.T) {
	r := newRig(t, rigOptions{limits: host.Limits{MaxConns: 8, MaxUnauthenticated: 3}})
	// An authorised keep-alive connection.
	authed := &http.Client{Transport: &http.Transport{MaxConnsPerHost: 1}}
	get := func(hc *http.Client) int {
		req, _ := http.NewRequest("GET", r.srv.URL+"/api/conversations", nil)
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := hc.Do(req)
		if err != nil {
			t.Fatalf("an authorised request: %v", err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp.StatusCode
	}
	if s := get(authed); s != 200 {
		t.Fatalf("status %d", s)
	}
	r.waitStats("one authorised connection", func(st host.GateStats) bool { return st.Held == 1 && st.Unauthenticated == 0 })

	// One that spoke (a request without the token, answered 401 and kept alive), then two bare
	// ones: the cap of three is full.
	talk := func() net.Conn {
		c := r.dial()
		fmt.Fprintf(c, "GET /api/capabilities HTTP/1.1\r\nHost: %s\r\n\r\n", r.srv.Listener.Addr())
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 401 {
			t.Fatalf("status %d", resp.StatusCode)
		}
		return c
	}
	talker := talk()
	bare1, bare2 := r.dial(), r.dial()
	r.waitStats("three unauthorised", func(st host.GateStats) bool { return st.Unauthenticated == 3 })
	// A fourth closes the oldest that never spoke (bare1), not the older talker.
	bare3 := r.dial()
	if closed, _ := closedWithin(bare1, 2*time.Second); !closed {
		t.Fatal("the oldest silent connection was not closed to make room")
	}
	for _, c := range []net.Conn{talker, bare2, bare3} {
		if closed, _ := closedWithin(c, 50*time.Millisecond); closed {
			t.Fatal("a connection other than the oldest silent one was closed")
		}
	}
	// A flood of bare connections closes the silent ones before it, and one another; the talker
	// and the authorised connection stay, and the authorised one is answered on the same connection.
	for range 20 {
		r.dial()
	}
	for _, c := range []net.Conn{bare2, bare3} {
		if closed, _ := closedWithin(c, 2*time.Second); !closed {
			t.Fatal("a silent connection outlived a flood of newer ones")
		}
	}
	if closed, _ := closedWithin(talker, 50*time.Millisecond); closed {
		t.Fatal("a flood of silent connections closed one that had spoken")
	}
	st := r.waitStats("the flood held within the cap", func(st host.GateStats) bool { return st.Unauthenticated == 3 })
	if st.Held != 4 || st.Evicted != 1+20 {
		t.Fatalf("after the flood: %+v", st)
	}
	if s := get(authed); s != 200 {
		t.Fatalf("status %d", s)
	}
	if st := r.conns.Stats(); st.Accepted != 1+1+3+20 {
		t.Fatalf("the authorised client needed a new connection: %+v", st)
	}
	// Connections that spoke fill the cap: the oldest of them goes first.
	talker2, talker3 := talk(), talk()
	talk()
	if closed, _ := closedWithin(talker, 2*time.Second); !closed {
		t.Fatal("the oldest connection that spoke outlived newer ones over the cap")
	}
	for _, c := range []net.Conn{talker2, talker3} {
		if closed, _ := closedWithin(c, 50*time.Millisecond); closed {
			t.Fatal("a newer connection that spoke was closed")
		}
	}
	// A new client with the token gets in through the flood.
	fresh := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	if s := get(fresh); s != 200 {
		t.Fatalf("a new authorised client: status %d", s)
	}
	// Its connection is closed after the answer; the gate lets go of it asynchronously, and it
	// must be gone before the places are counted below.
	r.waitStats("the new client's connection let go", func(st host.GateStats) bool { return st.Held-st.Unauthenticated == 1 })

	// Every place held by an authorised connection (the first and seven more; the unauthorised
	// ones are closed to make room for them): a new connection is refused at once with 503.
	var clients []*http.Client
	for range 7 {
		hc := &http.Client{Transport: &http.Transport{MaxConnsPerHost: 1}}
		clients = append(clients, hc)
		if s := get(hc); s != 200 {
			t.Fatalf("status %d", s)
		}
	}
	r.waitStats("eight authorised connections", func(st host.GateStats) bool { return st.Held == 8 && st.Unauthenticated == 0 })
	c := r.dial()
	closed, answer := closedWithin(c, 2*time.Second)
	if !closed || !strings.HasPrefix(answer, "HTTP/1.1 503 ") || !strings.Contains(answer, `"code":"too_many_connections"`) {
		t.Fatalf("a connection over the cap: closed %v, answered %q", closed, answer)
	}
	if st := r.conns.Stats(); st.Refused != 1 {
		t.Fatalf("%+v", st)
	}
	for _, hc := range append(clients, authed) {
		hc.CloseIdleConnections()
	}
	r.waitStats("all closed", func(st host.GateStats) bool { return st.Held == 0 })
}

// TestGateSparesConnectionsBeingAnswered holds a connection without the token whose answer (a large
// file of the web chat) it is not reading: over the cap, a newer connection that is not being
// answered is closed before it.
func TestGateSparesConnectionsBeingAnswered(t *testing.T) {
	big := strings.Repeat("x", 64<<20)
	r := newRig(t, rigOptions{limits: host.Limits{MaxConns: 8, MaxUnauthenticated: 2},
		web: fstest.MapFS{"big.js": {Data: []byte(big)}}})
	slow := r.dial()
	fmt.Fprintf(slow, "GET /big.js HTTP/1.1\r\nHost: %s\r\n\r\n", r.srv.Listener.Addr())
	// Its answer fills the socket buffers and waits for a reader.
	if _, err := io.ReadFull(slow, make([]byte, 1024)); err != nil {
		t.Fatal(err)
	}
	talker := r.dial()
	fmt.Fprintf(talker, "GET /api/capabilities HTTP/1.1\r\nHost: %s\r\n\r\n", r.srv.Listener.Addr())
	resp, err := http.ReadResponse(bufio.NewReader(talker), nil)
	if err != nil || resp.StatusCode != 401 {
		t.Fatalf("%v %v", resp, err)
	}
	resp.Body.Close()
	// The talker is answered once its handler has returned, which its client does not see.
	r.waitStats("the talker answered", func(st host.GateStats) bool { return st.Answering == 1 })
	r.dial() // over the cap of two
	if closed, _ := closedWithin(talker, 2*time.Second); !closed {
		t.Fatal("the connection not being answered was not closed to make room")
	}
	// The slow one still gets its whole answer.
	_ = slow.SetReadDeadline(time.Now().Add(20 * time.Second))
	n, _ := io.Copy(io.Discard, io.LimitReader(slow, int64(len(big))-1024))
	if n < int64(len(big))-1024 {
		t.Fatalf("the connection being answered was cut after %d bytes", n)
	}
}

// TestSlowLorisClosed sends a request's header one byte at a time, more slowly than the header
// timeout allows: the host closes the connection at the timeout, whatever it has received.
func TestSlowLorisClosed(t *testing.T) {
	const timeout = time.Second
	r := newRig(t, rigOptions{limits: host.Limits{HeaderTimeout: timeout}})
	c := r.dial()
	header := "GET /api/conversations HTTP/1.1\r\nHost: " + r.srv.Listener.Addr().String() + "\r\nAuthorization: Bearer " + token + "\r\n\r\n"
	start := time.Now()
	closed := make(chan time.Duration, 1)
	go func() {
		_, _ = io.Copy(io.Discard, c)
		closed <- time.Since(start)
	}()
	tick := time.NewTicker(timeout / 5)
	defer tick.Stop()
	for i := 0; ; i++ {
		select {
		case d := <-closed:
			t.Logf("a header sent a byte every %v was cut off after %d bytes, %v", timeout/5, i, d.Round(time.Millisecond))
			if d < timeout-100*time.Millisecond || d > timeout+time.Second {
				t.Fatalf("closed after %v; the header timeout is %v", d, timeout)
			}
			return
		case <-tick.C:
			if i >= len(header) {
				t.Fatal("the whole header was sent before the host closed the connection")
			}
			_, _ = c.Write([]byte{header[i]})
		}
	}
}

// TestEventsOutliveTimeouts holds an events stream open well past the server's read and write
// timeouts: the same stream (read raw: the client would reconnect) stays, and still carries what
// happens next.
func TestEventsOutliveTimeouts(t *testing.T) {
	const timeout = 200 * time.Millisecond
	r := newRig(t, rigOptions{limits: host.Limits{ReadTimeout: timeout, WriteTimeout: timeout}})
	id := r.create("watched")
	req, _ := http.NewRequest("GET", r.srv.URL+"/api/conversations/"+id+"/events", nil)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	lines := make(chan string)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			lines <- sc.Text()
		}
	}()
	// Let the timeouts pass several times over: the stream must not be cut by them.
	quiet := time.After(5 * timeout)
wait:
	for {
		select {
		case _, ok := <-lines:
			if !ok {
				t.Fatal("the stream ended within the server's timeouts")
			}
		case <-quiet:
			break wait
		}
	}
	res := r.send(id, "still there?")
	deadline := time.After(10 * time.Second)
	for {
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatal("the stream ended before the message sent after the timeouts arrived")
			}
			if strings.Contains(l, res.MessageID) {
				return
			}
		case <-deadline:
			t.Fatal("the message sent after the timeouts did not arrive")
		}
	}
}

// TestGateCountsUnreadBytes checks the gate alone, with nothing reading its connections: one whose
// request is waiting in the kernel, unread, has spoken, and a silent one is closed before it.
func TestGateCountsUnreadBytes(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	g := host.NewGate(ln, 10, 2)
	defer g.Close()
	accepted := make(chan net.Conn, 10)
	go func() {
		for {
			c, err := g.Accept()
			if err != nil {
				return
			}
			accepted <- c
		}
	}()
	dial := func(send string) net.Conn {
		c, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		if send != "" {
			c.Write([]byte(send))
		}
		<-accepted
		return c
	}
	// On loopback a write is in the receiving socket's queue when it returns.
	early := dial("GET / HTTP/1.1\r\n")
	silent := dial("")
	if st := g.Stats(); st.Held != 2 || st.Unauthenticated != 2 {
		t.Fatalf("%+v", st)
	}
	dial("")
	if closed, _ := closedWithin(silent, 2*time.Second); !closed {
		t.Fatal("the silent connection was not closed to make room")
	}
	if closed, _ := closedWithin(early, 100*time.Millisecond); closed {
		t.Fatal("a connection whose request was waiting unread was closed before a silent one")
	}
}

// TestConversationCap refuses creates and forks over the cap on conversations with 503 and leaves
// nothing behind; a retry of a create that was accepted still answers.
func TestConversationCap(t *testing.T) {
	r := newRig(t, rigOptions{caps: caps{maxConversations: 3}})
	for i := range 3 {
		if res := r.createOp(fmt.Sprintf("op-%d", i)); res.status != 201 {
			t.Fatalf("create %d: %+v", i, res)
		}
	}
	res := r.createOp("op-over")
	if res.status != 503 || res.code != "too_many_conversations" || !strings.Contains(res.msg, "--max-conversations") {
		t.Fatalf("a create over the cap: %+v", res)
	}
	if res := r.createOp("op-1"); res.status != 200 {
		t.Fatalf("a retry of an accepted create: %+v", res)
	}
	// The fork door is refused the same way.
	vs, err := r.c.List(ctxT(t))
	if err != nil {
		t.Fatal(err)
	}
	fres, _ := r.call("POST", "/api/conversations/"+vs[0].ID+"/fork", `{"op_id":"op-fork"}`)
	if fres.status != 503 || fres.code != "too_many_conversations" {
		t.Fatalf("a fork over the cap: %+v", fres)
	}
	r.checkNothingLeft(3)
}

// TestCreateRate refuses creates over the rate with 429 and a Retry-After, and accepts them again
// once the bucket has refilled.
func TestCreateRate(t *testing.T) {
	r := newRig(t, rigOptions{caps: caps{createRate: 1, createBurst: 3}}) // a token a second: the burst is spent before one returns, even on a loaded machine
	for i := range 3 {
		if res := r.createOp(fmt.Sprintf("op-%d", i)); res.status != 201 {
			t.Fatalf("create %d in the burst: %+v", i, res)
		}
	}
	res := r.createOp("op-3")
	if res.status != 429 || res.code != "rate_limited" || res.retryAfter != "1" || !strings.Contains(res.msg, "--create-rate") {
		t.Fatalf("a create over the rate: %+v", res)
	}
	r.checkNothingLeft(3)
	// A retry of an accepted create is not a new create: the rate does not refuse it.
	if res := r.createOp("op-0"); res.status != 200 {
		t.Fatalf("a retry while over the rate: %+v", res)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		res := r.createOp("op-3")
		if res.status == 201 {
			break
		}
		if res.status != 429 || time.Now().After(deadline) {
			t.Fatalf("once the bucket refilled: %+v", res)
		}
		time.Sleep(50 * time.Millisecond) // the bucket refills with time; nothing to wait on
	}
	r.checkNothingLeft(4)
}

// TestOpenCap holds at most MaxOpen sessions open: idle ones rest, least recently used first, to
// make room; when every open one is watched, a create or a reopen is refused with 503 and leaves
// nothing behind; a watched conversation is never rested.
func TestOpenCap(t *testing.T) {
	r := newRig(t, rigOptions{idleAfter: -1, caps: caps{maxOpen: 2}})
	var ids []string
	for i := range 5 {
		ids = append(ids, r.create(fmt.Sprintf("c%d", i)))
		if st := r.h.Stats(); st.Open > 2 {
			t.Fatalf("after %d creates: %+v", i+1, st)
		}
	}
	// Each conversation reopens on demand, resting another.
	for _, id := range ids {
		r.send(id, "hello "+id)
		r.settle(id)
		if st := r.h.Stats(); st.Open > 2 {
			t.Fatalf("after a send to %s: %+v", id, st)
		}
	}
	// Two watched conversations fill the places: neither rests, and nothing else opens.
	w0, w1 := r.events(ids[0], 0), r.events(ids[1], 0)
	w0.record("session_started")
	w1.record("session_started")
	res := r.createOp("op-over")
	if res.status != 503 || res.code != "too_many_open" || res.retryAfter == "" || !strings.Contains(res.msg, "--max-open-conversations") {
		t.Fatalf("a create with every place watched: %+v", res)
	}
	sres, _ := r.call("POST", "/api/conversations/"+ids[4]+"/messages", `{"op_id":"op-s","text":"hi"}`)
	if sres.status != 503 || sres.code != "too_many_open" {
		t.Fatalf("a send to a resting conversation with every place watched: %+v", sres)
	}
	// Listing and reading resting conversations needs no place.
	if v := r.get(ids[4]); v.ID != ids[4] {
		t.Fatalf("%+v", v)
	}
	r.checkNothingLeft(5)
	// Both streams still work.
	r.send(ids[0], "still watched")
	w0.idle()
	r.send(ids[1], "still watched")
	w1.idle()
}

// faultFS fails the sessions' file operations named by fail, on record files and session
// directories only (the index is not written through it).
type faultFS struct {
	fsys.FS
	fail atomic.Value // string: "mkdir", "create", "sync", "syncdir", "write", "full" or ""
}

var errFault = errors.New("injected fault")

func (f *faultFS) is(op string) bool { s, _ := f.fail.Load().(string); return s == op }

func (f *faultFS) MkdirAll(dir string) error {
	if f.is("mkdir") {
		return errFault
	}
	return f.FS.MkdirAll(dir)
}

func (f *faultFS) Create(name string) (fsys.File, error) {
	if f.is("create") {
		return nil, &fs.PathError{Op: "open", Path: name, Err: syscall.EMFILE}
	}
	file, err := f.FS.Create(name)
	if err != nil {
		return nil, err
	}
	return &faultFile{File: file, fs: f}, nil
}

func (f *faultFS) SyncDir(dir string) error {
	if f.is("syncdir") {
		return errFault
	}
	return f.FS.SyncDir(dir)
}

type faultFile struct {
	fsys.File
	fs *faultFS
}

func (f *faultFile) Sync() error {
	if f.fs.is("sync") {
		return errFault
	}
	return f.File.Sync()
}

func (f *faultFile) Write(p []byte) (int, error) {
	if f.fs.is("write") {
		return 0, errFault
	}
	if f.fs.is("full") { // a full disk: half of it written, then ENOSPC
		n, _ := f.File.Write(p[:len(p)/2])
		return n, &fs.PathError{Op: "write", Path: "record.jsonl", Err: syscall.ENOSPC}
	}
	return f.File.Write(p)
}

// TestFailedCreateLeavesNothing fails a create at each step after its directory could be made (the
// directory, the record, its first write and syncs, the agent) and checks that it leaves no
// directory, no index row and no conversation, and that the host creates normally after.
func TestFailedCreateLeavesNothing(t *testing.T) {
	ffs := &faultFS{FS: fsys.OS{}}
	ffs.fail.Store("")
	var agentFails atomic.Bool
	r := newRig(t, rigOptions{fs: ffs, quiet: true, agentErr: func() error {
		if agentFails.Load() {
			return errFault
		}
		return nil
	}})
	r.create("before")
	for _, step := range []string{"mkdir", "create", "write", "sync", "syncdir", "agent"} {
		t.Run(step, func(t *testing.T) {
			if step == "agent" {
				agentFails.Store(true)
			} else {
				ffs.fail.Store(step)
			}
			res := r.createOp("op-" + step)
			ffs.fail.Store("")
			agentFails.Store(false)
			if res.status != 500 || !strings.Contains(res.msg, "create a conversation") {
				t.Fatalf("a create failing at %s: %+v", step, res)
			}
			r.checkNothingLeft(1)
		})
	}
	// The same operations succeed now, and a restart finds exactly what was created.
	for _, step := range []string{"mkdir", "create"} {
		if res := r.createOp("op-" + step); res.status != 201 {
			t.Fatalf("%+v", res)
		}
	}
	r.checkNothingLeft(3)
	r.restart()
	r.checkNothingLeft(3)
}
