package web_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/reinhq/rein/internal/record"
	"github.com/reinhq/rein/internal/web"
)

// TestWebPlan: the web chat's plan.js follows a record's todo calls exactly as record.Plan does,
// and the plan panel shows the agent's plan live, above the composer, while it has steps to do.
func TestWebPlan(t *testing.T) {
	browser := startBrowser(t)
	t.Run("PlanJSAgreesWithRecordPlan", func(t *testing.T) { testPlanModule(t, browser) })
	t.Run("PanelFollowsThePlan", func(t *testing.T) { testPlanPanel(t, browser) })
}

// testPlanModule feeds the same records to plan.js and to record.Plan, and compares the plan in
// force and the changed flag after each.
func testPlanModule(t *testing.T, browser context.Context) {
	mux := http.NewServeMux()
	mux.Handle("/", http.FileServerFS(web.Files()))
	mux.HandleFunc("/blank", func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, "<!doctype html><title>plan</title>") })
	srv := httptest.NewServer(mux)
	defer srv.Close()
	tab, cancel := chromedp.NewContext(browser)
	defer cancel()
	if err := chromedp.Do(tab, chromedp.Navigate(srv.URL+"/blank")); err != nil {
		t.Fatal(err)
	}
	call := func(turn int64, id, args string) record.Payload {
		return &record.AssistantMessage{Turn: turn, Parts: []record.Part{{Type: record.PartToolCall, CallID: id, Name: "todo", Args: json.RawMessage(args)}}}
	}
	answer := func(id string, o record.Outcome) record.Payload {
		return &record.ToolResults{Results: []record.ToolResult{{CallID: id, Outcome: o, IsError: o != record.OK, Content: "x"}}}
	}
	bodies := []record.Payload{
		call(2, "a", `{"items":[{"content":"one","status":"in_progress","active_form":"doing one"},{"content":"two","status":"pending"}]}`),
		answer("a", record.OK),
		call(4, "b", `{"items":[{"content":"x","status":"in_progress"},{"content":"y","status":"in_progress"}]}`),
		answer("b", record.OK),
		call(4, "c", `{"items":[{"content":" ","status":"pending"}]}`),
		answer("c", record.OK),
		call(4, "d", `{"items":[{"content":"x","status":"pending","extra":true}]}`),
		answer("d", record.OK),
		call(4, "e", `{"items":[{"content":"x","status":"done"}]}`),
		answer("e", record.OK),
		call(6, "f", `{"items":[{"content":"one","status":"completed"},{"content":"two","status":"in_progress"}]}`),
		answer("f", record.Denied),
		call(8, "g", `{"items":null}`),
		answer("g", record.OK),
		call(10, "h", `{"items":[{"content":"three","status":"pending"}]}`),
		answer("h", record.OK),
		&record.Rewound{Anchor: 9},
		&record.Rewound{Anchor: 20},
		&record.Cleared{},
	}
	type step struct {
		Changed bool              `json:"changed"`
		Items   []record.PlanItem `json:"items"`
	}
	var p record.Plan
	var want []step
	type ev struct {
		Kind    record.Kind    `json:"kind"`
		Payload record.Payload `json:"payload"`
	}
	var evs []ev
	for _, b := range bodies {
		changed := p.Apply(b)
		items := p.Items()
		if items == nil {
			items = []record.PlanItem{}
		}
		want = append(want, step{changed, items})
		evs = append(evs, ev{b.Kind(), b})
	}
	in, _ := json.Marshal(evs)
	ctx, cancel2 := context.WithTimeout(tab, 10*time.Second)
	defer cancel2()
	got, err := chromedp.Run(ctx, chromedp.Evaluate[string](`import("/plan.js").then(({ Plan }) => { const p = new Plan();
		return JSON.stringify(`+string(in)+`.map((e) => ({ changed: p.apply(e.kind, e.payload), items: p.items().map((it) => it.active_form ? it : { content: it.content, status: it.status }) }))); })`, chromedp.EvalAwaitPromise))
	if err != nil {
		t.Fatal(err)
	}
	wantJSON, _ := json.Marshal(want)
	if got != string(wantJSON) {
		t.Errorf("plan.js and record.Plan disagree:\n js: %s\ngo: %s", got, wantJSON)
	}
}

// testPlanPanel: a conversation whose model sets a plan and updates it shows the panel, its steps
// marked, while the work goes on; once every step is done the panel goes.
func testPlanPanel(t *testing.T, browser context.Context) {
	words := strings.Repeat("working on the plan ", 60)
	r := newRig(t, browser, `[
		{"text":"A plan.","tool_calls":[{"name":"todo","arguments":{"items":[{"content":"Read the code","status":"in_progress","active_form":"Reading the code"},{"content":"Fix the bug","status":"pending"}]}}]},
		{"text":"Read.","tool_calls":[{"name":"todo","arguments":{"items":[{"content":"Read the code","status":"completed"},{"content":"Fix the bug","status":"in_progress","active_form":"Fixing the bug"}]}}]},
		{"text":"Fixing: `+words+`","delay_ms":20},
		{"text":"Done.","tool_calls":[{"name":"todo","arguments":{"items":[{"content":"Read the code","status":"completed"},{"content":"Fix the bug","status":"completed"}]}}]},
		{"text":"All fixed."}]`)
	r.open()
	r.do(chromedp.SendKeys(chromedp.ID("input"), "fix the bug"+kb.Enter))
	r.wait("the plan with one step done and one in hand, while working", `const items = [...document.querySelectorAll("#plan .plan-item")];
		return vis("#plan") && vis("#stop") && document.querySelector("#plan .plan-head").textContent === "Plan · 1/2 done" && items.length === 2 &&
			items[0].dataset.status === "completed" && items[0].textContent.includes("Read the code") &&
			items[1].dataset.status === "in_progress" && items[1].textContent.includes("Fixing the bug")`)
	// The panel sits between the timeline and the composer.
	if !r.evalBool(`const p = document.querySelector("#plan").getBoundingClientRect(), c = document.querySelector("#composer").getBoundingClientRect(); return p.bottom <= c.top + 1`) {
		t.Errorf("the plan panel is not above the composer\n%s", r.dump())
	}
	r.wait("the reply", `return vis("#send") && !vis("#stop")`)
	r.do(chromedp.SendKeys(chromedp.ID("input"), "finish"+kb.Enter))
	r.wait("every step done: the panel gone", `return [...document.querySelectorAll(".msg.assistant")].some((m) => m.textContent.includes("All fixed.")) && !vis("#plan")`)
	// A reload rebuilds the plan from the record: still none to show; the record holds both plans.
	if n := r.count(record.KindToolResults, func(record.Record) bool { return true }); n != 3 {
		t.Errorf("%d tool_results records, want 3", n)
	}
}
