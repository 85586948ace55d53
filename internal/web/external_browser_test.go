package web_test

import (
	"context"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/reinhq/rein/internal/agent"
	"github.com/reinhq/rein/internal/api"
	"github.com/reinhq/rein/internal/external"
	"github.com/reinhq/rein/internal/external/claude"
	"github.com/reinhq/rein/internal/external/claude/claudetest"
	"github.com/reinhq/rein/internal/host"
	"github.com/reinhq/rein/internal/procs"
	"github.com/reinhq/rein/internal/record"
	"github.com/reinhq/rein/internal/session"
)

// testClaudePicker: a host that offers Claude Code shows a picker beside New conversation; a
// conversation created on Claude Code runs its turns there, the page shows what Claude Code did
// (its tool call and result) and its reply, and Stop ends a turn running a command. Skipped
// where Claude Code is not installed.
func testClaudePicker(t *testing.T, browser context.Context) {
	path := claudetest.Find(t)
	r := newRig(t, browser, `[{"text":"Let me look.","tool_calls":[{"name":"Bash","arguments":{"command":"echo hi-from-claude"}}]},{"text":"One file, a.txt."},`+
		`{"text":"Running it.","tool_calls":[{"name":"Bash","arguments":{"command":"echo begun; sleep 30.4242; echo done"}}]}]`)
	door := httptest.NewServer(r.sim)
	t.Cleanup(door.Close)
	env := claudetest.Env(t, door.URL)
	own := r.cfg.NewAgentFor
	r.cfg.Backends = []string{api.BackendClaude}
	r.cfg.NewAgentFor = func(sess *session.Session, s host.Setup) (*agent.Agent, error) {
		if s.Backend != api.BackendClaude {
			return own(sess, s)
		}
		return agent.New(agent.Config{Session: sess, Provider: "claude", External: &agent.External{
			Backend: claude.New(claude.Options{Path: path}), Approver: s.Approver,
			Turn: external.Turn{Cwd: r.ws, Model: "claude-sonnet-4-5", Mode: "full", Env: env}}}), nil
	}
	r.restart()
	w := claudetest.Watch(t)
	r.open()
	r.wait("the picker", `return vis("#backend") && [...document.querySelectorAll("#backend option")].map((o) => o.value).join() === "rein,claude"`)
	r.evalBool(`const b = document.getElementById("backend"); b.value = "claude"; b.dispatchEvent(new Event("change")); document.getElementById("new-conv").click(); return true`)
	var id string
	r.waitHost("a conversation on Claude Code", func() bool {
		list, _ := r.h.List()
		for _, v := range list {
			if v.Backend == api.BackendClaude {
				id = v.ID
				return true
			}
		}
		return false
	})
	r.do(chromedp.SendKeys(chromedp.ID("input"), "list the files"))
	r.evalBool(`document.getElementById("send").click(); return true`)
	r.wait("Claude Code's call, its result and its reply", `const t = document.getElementById("timeline").textContent;
		return !!document.querySelector(".ext-call") && t.includes("hi-from-claude") && t.includes("One file, a.txt.") && vis("#send")`)
	c, err := r.h.Get(id)
	if err != nil {
		t.Fatal(err)
	}
	r.do(chromedp.SendKeys(chromedp.ID("input"), "run the slow thing"))
	r.evalBool(`document.getElementById("send").click(); return true`)
	r.wait("the slow command's call", `return [...document.querySelectorAll(".ext-call")].some((n) => n.textContent.includes("30.4242"))`)
	at := time.Now()
	r.do(chromedp.Click(chromedp.ID("stop")))
	r.wait("Send back after Stop", `return vis("#send") && !vis("#stop")`)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := c.Wait(ctx); err != nil {
		t.Fatal(err)
	}
	t.Logf("Stop (click) to quiesced: %s", time.Since(at))
	var left []procs.Proc
	for _, p := range w.Left() {
		if !strings.HasPrefix(p.Comm, "chrom") { // the test's browser
			left = append(left, p)
		}
	}
	if len(left) > 0 {
		t.Fatalf("processes of Claude Code's tree left: %+v", left)
	}
	if m := claudetest.Marked("30.4242"); len(m) > 0 {
		t.Fatalf("the command is still running: %v", m)
	}
	sub, err := c.Subscribe(0)
	if err != nil {
		t.Fatal(err)
	}
	defer sub.End()
	var reasons []string
	for _, rec := range sub.Records {
		if q, ok := rec.Body.(*record.Quiesced); ok {
			reasons = append(reasons, q.Reason)
		}
	}
	if got := strings.Join(reasons, ","); got != "replied,cancelled" {
		t.Fatalf("the exchanges ended %s", got)
	}
}
