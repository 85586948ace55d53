package main

// The attacks on `rein serve` that once starved it — thousands of idle connections, a token
// holder creating conversations as fast as it can, a header sent a byte a second — run here
// against the real binary, each while a person's authorised request is timed: it must be answered
// within a second, during the attack and after it.

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// server is a running `rein serve`.
type server struct {
	addr, token string
	nofile      uint64 // the open-file limit it reported
	hard        uint64 // the hard limit it was started under
	cmd         *exec.Cmd
	stderr      *logBuf
	done        chan struct{}
}

var (
	serveURL   = regexp.MustCompile(`rein serve: http://([^/]+)/#token=([0-9a-f]+)`)
	serveLimit = regexp.MustCompile(`open-file limit (\d+)`)
)

// startServe starts `rein serve --provider sim` in the sandbox with its soft open-file limit
// lowered to 1024 (as many systems set it), so that the limit it reports shows that it raised it.
func (sb *sandbox) startServe(t testing.TB, args ...string) *server {
	t.Helper()
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		t.Fatal(err)
	}
	soft := min(uint64(1024), uint64(lim.Max))
	cmd := exec.Command("sh", append([]string{"-c", fmt.Sprintf(`ulimit -S -n %d && exec "$0" "$@"`, soft),
		reinBin(t), "serve", "--provider", "sim"}, args...)...)
	cmd.Dir, cmd.Env = sb.ws, sb.env
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	s := &server{cmd: cmd, stderr: newLogBuf(), done: make(chan struct{}), hard: uint64(lim.Max)}
	cmd.Stderr = s.stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		cmd.Wait()
		close(s.done)
	}()
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-s.done:
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			<-s.done
		}
	})
	started := make(chan []string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if m := serveURL.FindStringSubmatch(sc.Text()); m != nil {
				started <- m
			}
		}
		close(started)
	}()
	select {
	case m, ok := <-started:
		if !ok {
			t.Fatalf("rein serve ended before it listened:\n%s", s.stderr)
		}
		s.addr, s.token = m[1], m[2]
	case <-time.After(30 * time.Second):
		t.Fatalf("rein serve did not start within 30s:\n%s", s.stderr)
	}
	s.stderr.waitFor("open-file limit", 5*time.Second)
	m := serveLimit.FindStringSubmatch(s.stderr.String())
	if m == nil {
		t.Fatalf("rein serve did not report its open-file limit:\n%s", s.stderr)
	}
	s.nofile, _ = strconv.ParseUint(m[1], 10, 64)
	t.Logf("%s", strings.TrimSpace(s.stderr.String()))
	return s
}

var serveUnauth = regexp.MustCompile(`\((\d+) without the token\)`)

// maxUnauth is the cap on connections without the token that the server reported.
func (s *server) maxUnauth() int {
	m := serveUnauth.FindStringSubmatch(s.stderr.String())
	if m == nil {
		return 0
	}
	n, _ := strconv.Atoi(m[1])
	return n
}

// request makes one authorised request on a connection of its own (a person's client arriving in
// the middle of the attack) and returns its status and how long it took.
func (s *server) request(method, path, body string) (int, []byte, time.Duration, error) {
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, "http://"+s.addr+path, rd)
	if err != nil {
		return 0, nil, 0, err
	}
	req.Header.Set("Authorization", "Bearer "+s.token)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	hc := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}, Timeout: 10 * time.Second}
	start := time.Now()
	resp, err := hc.Do(req)
	if err != nil {
		return 0, nil, time.Since(start), err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, b, time.Since(start), err
}

// probe times an authorised GET of the conversation list every interval until stop is closed,
// and returns the latencies; a request that fails or takes over a second fails the test.
func (s *server) probe(t *testing.T, every time.Duration, stop <-chan struct{}) <-chan []time.Duration {
	out := make(chan []time.Duration, 1)
	go func() {
		var lat []time.Duration
		defer func() { out <- lat }()
		tick := time.NewTicker(every)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				return
			case <-tick.C:
			}
			status, _, d, err := s.request("GET", "/api/conversations", "")
			lat = append(lat, d)
			if err != nil || status != 200 || d > time.Second {
				t.Errorf("an authorised GET during the attack: status %d, %v, after %v", status, err, d.Round(time.Millisecond))
			}
		}
	}()
	return out
}

func summary(lat []time.Duration) string {
	if len(lat) == 0 {
		return "no requests"
	}
	s := slices.Clone(lat)
	slices.Sort(s)
	return fmt.Sprintf("%d requests, p50 %v, p99 %v, max %v", len(s), s[len(s)/2].Round(time.Microsecond),
		s[min(len(s)-1, len(s)*99/100)].Round(time.Microsecond), s[len(s)-1].Round(time.Microsecond))
}

// raiseFileLimit raises this process's soft open-file limit to its hard limit (Go starts at the
// hard limit less one) and returns it.
func raiseFileLimit(t testing.TB) uint64 {
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		t.Fatal(err)
	}
	if lim.Cur < lim.Max {
		lim.Cur = lim.Max
		if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
			t.Fatal(err)
		}
	}
	return uint64(lim.Cur)
}

// idleConns holds bare TCP connections to addr, each read until the host closes it.
type idleConns struct {
	addr                string
	open, dials, failed atomic.Int64
	stop                chan struct{}
	wg                  sync.WaitGroup
}

// hold opens one connection, takes a token from dialling once it is open, and waits until the host
// closes it or the attack stops; with again, it opens another each time the host closes one, until
// the attack stops.
func (a *idleConns) hold(again bool, dialling <-chan struct{}) {
	defer a.wg.Done()
	for first := true; ; first = false {
		select {
		case <-a.stop:
			return
		default:
		}
		c, err := net.DialTimeout("tcp", a.addr, 5*time.Second)
		a.dials.Add(1)
		if err != nil {
			a.failed.Add(1)
		} else {
			a.open.Add(1)
		}
		if first {
			<-dialling
		}
		if err == nil {
			closed := make(chan struct{})
			go func() {
				io.Copy(io.Discard, c) // until the host closes it
				close(closed)
			}()
			select {
			case <-closed:
			case <-a.stop:
			}
			c.Close()
			a.open.Add(-1)
		}
		if !again {
			<-a.stop
			return
		}
	}
}

// TestServeIdleConnections opens 5,000 idle TCP connections to `rein serve` while a person's
// authorised request is timed every 50 ms, each on a new connection of its own: each must be
// answered within a second. The host keeps the connections without the token within its cap,
// closing the oldest at once to make room, so the person's connection gets in and is answered.
// Then the attack turns into a storm from a process of its own, each connection the host closes
// opened again at once: a person's client already connected, and one connecting in the storm, are
// each answered within a second. (The one connecting may retry a GET whose connection the host
// closed before its request arrived, as browsers do: the host cannot tell its connection from the
// storm's until then. The count of retries is reported.)
// stormBound is the longest an authorised GET may wait while the host is stormed: a person's
// request is answered in the storm, not after it (most are in milliseconds; the bound leaves room
// for a machine busy with other tests).
const stormBound = 3 * time.Second

func TestServeIdleConnections(t *testing.T) {
	n, storm := 5000, 3*time.Second
	if testing.Short() {
		n, storm = 1000, time.Second
	}
	if nofile := raiseFileLimit(t); nofile < uint64(n)+256 {
		t.Logf("this process may open only %d files: %d idle connections instead of %d", nofile, nofile-256, n)
		n = int(nofile) - 256
	}
	sb := newSandbox(t)
	s := sb.startServe(t)
	if s.hard > 1025 && s.nofile+1 < s.hard {
		t.Fatalf("rein serve, started with a soft limit of 1024, reports an open-file limit of %d: it was not raised to the hard limit %d", s.nofile, s.hard)
	}

	// 5,000 idle connections, opened by 50 dialers as fast as the host accepts them.
	a := &idleConns{addr: s.addr, stop: make(chan struct{})}
	probing := make(chan struct{})
	lat := s.probe(t, 50*time.Millisecond, probing)
	start := time.Now()
	opened := make(chan struct{}, 50) // 50 dialling at once
	for range n {
		opened <- struct{}{}
		a.wg.Add(1)
		go a.hold(false, opened)
	}
	for range cap(opened) {
		opened <- struct{}{}
	}
	openedIn := time.Since(start)
	// Hold them a second more, probing, and then until the connections the host closed to keep
	// within its cap are seen closed here: at the latest 4 s after the first was opened, inside the
	// header timeout (5 s from each connection's start) that would close the rest anyway.
	hold := time.Now().Add(time.Second)
	deadline := start.Add(4 * time.Second)
	if deadline.Before(hold) {
		deadline = hold
	}
	held := a.open.Load()
	for ; ; time.Sleep(10 * time.Millisecond) { // polling the count: the host's closes are seen one by one
		held = a.open.Load()
		if now := time.Now(); !now.Before(deadline) || !now.Before(hold) && held <= int64(s.maxUnauth()) {
			break
		}
	}
	close(probing)
	during := <-lat
	t.Logf("idle: %d connections opened in %v (%d failed to connect); %d still open a second later, the rest closed by the host "+
		"to make room; authorised GET on a new connection meanwhile: %s", n, openedIn.Round(time.Millisecond), a.failed.Load(), held, summary(during))
	if held > int64(s.maxUnauth()) {
		t.Errorf("%d idle connections still open, over the host's cap of %d without the token", held, s.maxUnauth())
	}
	close(a.stop)
	a.wg.Wait()
	if t.Failed() {
		return
	}

	// A person's client already connected (its connection authorised and kept alive), and one
	// arriving in the storm on a new connection, which retries a GET whose connection was closed
	// before its request was read, as browsers do.
	kept := &http.Client{Transport: &http.Transport{MaxConnsPerHost: 1}, Timeout: 10 * time.Second}
	get := func(hc *http.Client) (int, time.Duration, error) {
		req, _ := http.NewRequest("GET", "http://"+s.addr+"/api/conversations", nil)
		req.Header.Set("Authorization", "Bearer "+s.token)
		start := time.Now()
		resp, err := hc.Do(req)
		if err != nil {
			return 0, time.Since(start), err
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp.StatusCode, time.Since(start), nil
	}
	if status, _, err := get(kept); err != nil || status != 200 {
		t.Fatalf("before the storm: %d %v", status, err)
	}
	// The storm, from a process of its own, as an attacker's is: every connection the host closes
	// is opened again at once.
	storm1 := exec.Command(os.Args[0], "-test.run=^TestStormHelper$")
	storm1.Env = append(os.Environ(), "REIN_STORM_ADDR="+s.addr, fmt.Sprintf("REIN_STORM_CONNS=%d", n))
	stormIn, err := storm1.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stormOut, err := storm1.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	storm1.Stderr = os.Stderr
	if err := storm1.Start(); err != nil {
		t.Fatal(err)
	}
	defer storm1.Process.Kill()
	stormLines := bufio.NewScanner(stormOut)
	for stormLines.Scan() && stormLines.Text() != "storming" {
	}
	stormStart := time.Now()
	var keptLat, freshLat []time.Duration
	retried := 0
	for time.Since(stormStart) < storm {
		status, d, err := get(kept)
		if err != nil || status != 200 || d > stormBound {
			t.Errorf("an authorised GET in the storm, on a kept-alive connection: status %d, %v, after %v", status, err, d.Round(time.Millisecond))
		}
		keptLat = append(keptLat, d)
		var total time.Duration
		for try := 1; ; try++ {
			status, _, d, err := s.request("GET", "/api/conversations", "")
			total += d
			if err == nil && status == 200 {
				if total > stormBound {
					t.Errorf("an authorised GET in the storm, on a new connection, answered after %v (%d tries)", total.Round(time.Millisecond), try)
				}
				break
			}
			if try == 3 || err == nil {
				t.Errorf("an authorised GET in the storm, on a new connection, try %d: status %d, %v, after %v", try, status, err, total.Round(time.Millisecond))
				break
			}
			retried++
		}
		freshLat = append(freshLat, total)
	}
	stormIn.Close()
	stormed := "?"
	for stormLines.Scan() {
		if c, ok := strings.CutPrefix(stormLines.Text(), "stormed: "); ok {
			stormed = c
		}
	}
	storm1.Wait()
	t.Logf("storm: %s over %v; authorised GET on the kept-alive connection: %s; on a new connection: %s (%d retried after the host closed the connection before reading the request)",
		stormed, time.Since(stormStart).Round(time.Millisecond), summary(keptLat), summary(freshLat), retried)

	// After the attack.
	status, _, d, err := s.request("GET", "/api/conversations", "")
	if err != nil || status != 200 || d > time.Second {
		t.Fatalf("an authorised GET after the attack: status %d, %v, after %v", status, err, d)
	}
}

// TestStormHelper is the storm of TestServeIdleConnections, run by it in a process of its own: it
// holds REIN_STORM_CONNS connections to REIN_STORM_ADDR, each opened again at once when the host
// closes it; prints "storming" once each has opened its first; and stops when its standard input
// closes, printing what it did.
func TestStormHelper(t *testing.T) {
	addr := os.Getenv("REIN_STORM_ADDR")
	if addr == "" {
		t.Skip("the storm of TestServeIdleConnections, run by it in a process of its own")
	}
	n, _ := strconv.Atoi(os.Getenv("REIN_STORM_CONNS"))
	raiseFileLimit(t)
	a := &idleConns{addr: addr, stop: make(chan struct{})}
	opened := make(chan struct{}, n)
	for range n {
		opened <- struct{}{}
		a.wg.Add(1)
		go a.hold(true, opened)
	}
	for range cap(opened) {
		opened <- struct{}{} // each send waits for a dialler to take its token: until each has dialled once
	}
	fmt.Println("storming")
	start := time.Now()
	io.Copy(io.Discard, os.Stdin)
	close(a.stop)
	a.wg.Wait()
	fmt.Printf("stormed: %d connects in %v (%d failed)\n", a.dials.Load(), time.Since(start).Round(time.Millisecond), a.failed.Load())
}

// TestServeSlowLoris sends a request's header a byte a second: the host closes the connection at
// its header timeout (5 s), having read five bytes.
func TestServeSlowLoris(t *testing.T) {
	t.Parallel()
	sb := newSandbox(t)
	s := sb.startServe(t)
	c, err := net.Dial("tcp", s.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	header := "GET /api/conversations HTTP/1.1\r\nHost: " + s.addr + "\r\nAuthorization: Bearer " + s.token + "\r\n\r\n"
	start := time.Now()
	closed := make(chan time.Duration, 1)
	go func() {
		io.Copy(io.Discard, c)
		closed <- time.Since(start)
	}()
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for sent := 0; ; {
		select {
		case d := <-closed:
			t.Logf("a header sent a byte a second was cut off after %d bytes, %v", sent, d.Round(time.Millisecond))
			if d < 4500*time.Millisecond || d > 8*time.Second {
				t.Fatalf("closed after %v; the header timeout is 5s", d)
			}
			return
		case <-tick.C:
			if sent == len(header) {
				t.Fatal("the whole header was sent before the host closed the connection")
			}
			c.Write([]byte{header[sent]})
			sent++
		}
	}
}

// TestServeCreateFlood makes 10,000 create attempts, 200 at a time, as fast as the host answers,
// while a person's authorised GET is timed every 50 ms: each must be answered within a second,
// during the flood and after it. With the default caps, creates over the rate are refused with 429
// rate_limited; with no rate limit, those over the cap on conversations are refused with 503
// too_many_conversations, and the open ones beyond the cap on open conversations rest. Every
// refused create leaves nothing behind: the session directories on disk, the conversations the API
// lists, and the creates accepted are the same count.
func TestServeCreateFlood(t *testing.T) {
	raiseFileLimit(t)
	for _, c := range []struct {
		name    string
		args    []string
		refusal string // the code of a refused create
		status  int
	}{
		{"the default rate", nil, "rate_limited", 429},
		{"no rate limit, 1000 conversations", []string{"--create-rate", "0", "--max-conversations", "1000", "--max-open-conversations", "64"}, "too_many_conversations", 503},
	} {
		t.Run(c.name, func(t *testing.T) { createFlood(t, c.args, c.refusal, c.status) })
	}
}

func createFlood(t *testing.T, args []string, refusal string, refusedStatus int) {
	attempts, workers := 10_000, 200
	if testing.Short() {
		attempts = 2000
	}
	sb := newSandbox(t)
	s := sb.startServe(t, args...)

	var next, created, limited, other atomic.Int64
	var otherMu sync.Mutex
	var others []string
	stop := make(chan struct{})
	lat := s.probe(t, 50*time.Millisecond, stop)
	start := time.Now()
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			hc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 1}, Timeout: 30 * time.Second}
			defer hc.CloseIdleConnections()
			for {
				i := next.Add(1)
				if i > int64(attempts) || time.Since(start) > 2*time.Minute {
					return
				}
				req, _ := http.NewRequest("POST", "http://"+s.addr+"/api/conversations",
					strings.NewReader(fmt.Sprintf(`{"op_id":"flood-%d","title":"flood %d"}`, i, i)))
				req.Header.Set("Authorization", "Bearer "+s.token)
				req.Header.Set("Content-Type", "application/json")
				resp, err := hc.Do(req)
				if err != nil {
					other.Add(1)
					otherMu.Lock()
					others = append(others, err.Error())
					otherMu.Unlock()
					continue
				}
				b, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				switch {
				case resp.StatusCode == 201:
					created.Add(1)
				case resp.StatusCode == refusedStatus && strings.Contains(string(b), `"code":"`+refusal+`"`):
					limited.Add(1)
				default:
					other.Add(1)
					otherMu.Lock()
					others = append(others, fmt.Sprintf("%d %s", resp.StatusCode, b))
					otherMu.Unlock()
				}
			}
		}()
	}
	wg.Wait()
	took := time.Since(start)
	close(stop)
	during := <-lat
	t.Logf("%d create attempts in %v: %d created, %d refused %s, %d otherwise; authorised GET during: %s",
		attempts, took.Round(time.Millisecond), created.Load(), limited.Load(), refusal, other.Load(), summary(during))
	if int(next.Load()) <= attempts {
		t.Fatalf("only %d of %d attempts were made within two minutes", next.Load()-1, attempts)
	}
	if other.Load() > 0 {
		t.Fatalf("%d creates neither created nor refused %s, e.g. %q", other.Load(), refusal, others[0])
	}
	if created.Load()+limited.Load() != int64(attempts) {
		t.Fatalf("%d created + %d refused != %d attempts", created.Load(), limited.Load(), attempts)
	}
	// After the flood: still answered, and exactly the conversations created are there.
	status, body, d, err := s.request("GET", "/api/conversations", "")
	if err != nil || status != 200 || d > time.Second {
		t.Fatalf("an authorised GET after the flood: status %d, %v, after %v", status, err, d)
	}
	var list struct {
		Conversations []json.RawMessage `json:"conversations"`
	}
	if err := json.Unmarshal(body, &list); err != nil {
		t.Fatal(err)
	}
	dirs, err := filepath.Glob(filepath.Join(sb.home, "sessions", "*", "*", ""))
	if err != nil {
		t.Fatal(err)
	}
	var sessions int
	for _, d := range dirs {
		if fi, err := os.Stat(d); err == nil && fi.IsDir() {
			sessions++
		}
	}
	t.Logf("after: %d session directories, %d conversations listed (the GET took %v)", sessions, len(list.Conversations), d.Round(time.Microsecond))
	if sessions != int(created.Load()) || len(list.Conversations) != int(created.Load()) {
		t.Fatalf("%d creates accepted, but %d session directories and %d conversations listed", created.Load(), sessions, len(list.Conversations))
	}
}

// TestServeLimits checks how serve's flags become the host's caps: 0 sizes a cap from the
// open-file limit, a bad value is refused naming the flag, and caps that need more files than the
// limit allows are refused.
func TestServeLimits(t *testing.T) {
	def := serveFlags{maxConvs: 10_000, createRate: 5, createBurst: 60}
	for _, c := range []struct {
		name    string
		f       func(*serveFlags)
		nofile  uint64
		conns   int
		unauth  int
		open    int
		refusal string
	}{
		{"defaults, a large limit", nil, 20000, 4096, 1024, 512, ""},
		{"defaults, a limit of 1024", nil, 1024, 448, 112, 56, ""},
		{"connections set", func(f *serveFlags) { f.maxConns = 100 }, 20000, 100, 25, 512, ""},
		{"both set", func(f *serveFlags) { f.maxConns, f.maxUnauth, f.maxOpen = 100, 90, 10 }, 20000, 100, 90, 10, ""},
		{"negative", func(f *serveFlags) { f.maxOpen = -1 }, 20000, 0, 0, 0, "--max-open-conversations is -1"},
		{"no conversations", func(f *serveFlags) { f.maxConvs = 0 }, 20000, 0, 0, 0, "--max-conversations is 0"},
		{"a negative rate", func(f *serveFlags) { f.createRate = -1 }, 20000, 0, 0, 0, "--create-rate is -1"},
		{"more unauthenticated than all", func(f *serveFlags) { f.maxConns, f.maxUnauth = 10, 20 }, 20000, 0, 0, 0, "--max-unauthenticated (20) is over --max-connections (10)"},
		{"more than the files", func(f *serveFlags) { f.maxConns = 30000 }, 20000, 0, 0, 0, "need more files than this process may open (20000"},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := def
			if c.f != nil {
				c.f(&f)
			}
			lim, open, err := f.limits(c.nofile)
			if c.refusal != "" {
				if err == nil || !strings.Contains(err.Error(), c.refusal) {
					t.Fatalf("refused %v, want %q", err, c.refusal)
				}
				return
			}
			if err != nil || lim.MaxConns != c.conns || lim.MaxUnauthenticated != c.unauth || open != c.open {
				t.Fatalf("%+v, %d open, %v; want %d connections (%d without the token), %d open", lim, open, err, c.conns, c.unauth, c.open)
			}
		})
	}
}

// TestServeStopsOnHangup: a host started in a terminal that closes (SIGHUP) shuts down as on
// SIGTERM — its conversations closed, exit 0 — rather than dying on the signal.
func TestServeStopsOnHangup(t *testing.T) {
	sb := newSandbox(t)
	s := sb.startServe(t)
	if code, body, _, err := s.request("POST", "/api/conversations", `{"op_id":"hangup-1","title":"before the hangup"}`); err != nil || code != 201 {
		t.Fatalf("create a conversation: %d %s %v", code, body, err)
	}
	s.cmd.Process.Signal(syscall.SIGHUP)
	select {
	case <-s.done:
	case <-time.After(15 * time.Second):
		t.Fatalf("rein serve did not end within 15s of SIGHUP\n%s", s.stderr)
	}
	if st := s.cmd.ProcessState; !st.Exited() || st.ExitCode() != 0 {
		t.Fatalf("rein serve ended %v on SIGHUP, want exit 0\n%s", st, s.stderr)
	}
	if res := sb.rein(t, "doctor", "newest"); res.code != 0 || !strings.Contains(res.stdout, "admissible") {
		t.Fatalf("the conversation's record after the hangup:\n%s", res)
	}
}
