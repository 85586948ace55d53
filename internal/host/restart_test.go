package host_test

import (
	"io"
	"io/fs"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"

	"github.com/reinhq/rein/internal/api"
	"github.com/reinhq/rein/internal/client"
	"github.com/reinhq/rein/internal/fold"
	"github.com/reinhq/rein/internal/provider/sim"
	"github.com/reinhq/rein/internal/record"
)

// crash copies the rig's root as it is now — every byte written, synced or not, as a killed
// process leaves it — and opens a second host on the copy, with a fresh simulator. The first host
// keeps running untouched until the test ends; the copy is the crashed host's disk.
func (r *rig) crash() *rig { return r.crashCopyWith(nil) }

// crashCopyWith is crash with damage: edit changes the copied root before the host opens it.
func (r *rig) crashCopyWith(edit func(root string)) *rig {
	r.t.Helper()
	root := r.t.TempDir()
	err := filepath.WalkDir(r.root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(r.root, p)
		dst := filepath.Join(root, rel)
		if d.IsDir() {
			return os.MkdirAll(dst, 0o700)
		}
		in, err := os.Open(p)
		if err != nil {
			return err
		}
		defer in.Close()
		out, err := os.Create(dst)
		if err != nil {
			return err
		}
		defer out.Close()
		_, err = io.Copy(out, in)
		return err
	})
	if err != nil {
		r.t.Fatalf("copy the root: %v", err)
	}
	if edit != nil {
		edit(root)
	}
	r2 := &rig{t: r.t, opts: r.opts, root: root, ws: r.ws, gate: &gate{}}
	r2.sim = sim.New(sim.Options{})
	r2.simSrv = httptest.NewServer(r2.sim)
	r.t.Cleanup(r2.simSrv.Close)
	r2.open()
	r.t.Cleanup(r2.finish)
	return r2
}

// restartSetup makes four conversations, one per submission state, and returns their ids and
// message ids: alpha has a message delivered mid-exchange and one accepted behind it; bravo one
// delivered mid-exchange; charlie one answered; delta one cancelled and one withdrawn by a Stop.
func restartSetup(t *testing.T) (*rig, map[string]string, map[string]string) {
	r := newRig(t, rigOptions{script: `{"steps":[` + slowText("alpha first", 2000, 50) + `,` + slowText("bravo first", 2000, 50) + `,` +
		slowText("delta first", 2000, 50) + `]}`})
	ids, msgs := map[string]string{}, map[string]string{}
	for _, n := range []string{"alpha", "bravo", "charlie", "delta"} {
		ids[n] = r.create(n)
	}
	wa, wb, wc, wd := r.events(ids["alpha"], 0), r.events(ids["bravo"], 0), r.events(ids["charlie"], 0), r.events(ids["delta"], 0)
	msgs["alpha1"] = r.send(ids["alpha"], "alpha first").MessageID
	msgs["bravo1"] = r.send(ids["bravo"], "bravo first").MessageID
	msgs["charlie1"] = r.send(ids["charlie"], "charlie first").MessageID
	msgs["delta1"] = r.send(ids["delta"], "delta first").MessageID
	wa.live("text")
	wb.live("text")
	wd.live("text")
	res, err := r.c.Send(ctxT(t), ids["alpha"], clientMsg("alpha second", true))
	if err != nil {
		t.Fatal(err)
	}
	msgs["alpha2"] = res.MessageID
	res, err = r.c.Send(ctxT(t), ids["delta"], clientMsg("delta second", true))
	if err != nil {
		t.Fatal(err)
	}
	msgs["delta2"] = res.MessageID
	if st := r.stop(ids["delta"]); len(st.Withdrawn) != 1 {
		t.Fatalf("delta's Stop answered %+v", st)
	}
	wd.idle()
	wc.idle()
	return r, ids, msgs
}

// checkRestarted checks the four conversations after a restart: nothing running, nothing
// delivered again, nothing dropped without a word.
func checkRestarted(t *testing.T, r *rig, ids, msgs map[string]string, crashed bool, before int) {
	t.Helper()
	want := map[string]struct{ state, reason string }{
		"alpha1":   {api.Cancelled, "host_restarted"},
		"alpha2":   {api.Rejected, "host_restarted"},
		"bravo1":   {api.Cancelled, "host_restarted"},
		"charlie1": {api.Answered, fold.Replied},
		"delta1":   {api.Cancelled, fold.Cancelled},
		"delta2":   {api.Withdrawn, "cancelled before it started"},
	}
	if !crashed {
		// A clean shutdown stops the running exchanges itself; only what was still waiting is
		// rejected at the next start.
		want["alpha1"] = struct{ state, reason string }{api.Cancelled, fold.Cancelled}
		want["bravo1"] = struct{ state, reason string }{api.Cancelled, fold.Cancelled}
	}
	for key, w := range want {
		conv := ids[key[:len(key)-1]]
		s := submission(r.records(conv), msgs[key])
		if s == nil || string(s.State) != w.state || s.Reason != w.reason {
			t.Errorf("%s ended %+v, want %s (%s)", key, s, w.state, w.reason)
		}
	}
	for _, n := range []string{"alpha", "bravo"} {
		recs := r.records(ids[n])
		q, _ := lastOf[*record.Quiesced](recs)
		if wantReason := map[bool]string{true: fold.Crashed, false: fold.Cancelled}[crashed]; q.Reason != wantReason {
			t.Errorf("%s quiesced %+v, want %s", n, q, wantReason)
		}
		prompts := 0
		for _, rec := range recs {
			if p, ok := rec.Body.(*record.UserPrompt); ok && p.Submission != "" {
				prompts++
			}
		}
		if prompts != 1 {
			t.Errorf("%s has %d prompts, want the one delivered before the restart", n, prompts)
		}
	}
	for n, id := range ids {
		if v := r.get(id); v.State.Working || len(v.State.Submissions) != 0 {
			t.Errorf("%s after the restart: %+v", n, v.State)
		}
	}
	all, err := r.c.List(ctxT(t))
	if err != nil || len(all) != 4 {
		t.Fatalf("list after the restart: %d, %v", len(all), err)
	}
	for _, v := range all {
		if v.State.Working {
			t.Errorf("%s lists as working after the restart", v.ID)
		}
	}
	// Nothing is taken up again on its own; the conversations take new messages.
	if n := len(r.sim.Requests()) - before; n != 0 {
		t.Errorf("the restarted host made %d provider requests on its own", n)
	}
	w := r.events(ids["alpha"], 0)
	m := r.send(ids["alpha"], "after the restart")
	w.idle()
	if s := submission(r.records(ids["alpha"]), m.MessageID); s.State != api.Answered {
		t.Errorf("a message after the restart ended %+v", s)
	}
}

// TestRestartClean closes the host with a submission in every state and opens it again.
func TestRestartClean(t *testing.T) {
	r, ids, msgs := restartSetup(t)
	before := len(r.sim.Requests())
	r.restart()
	checkRestarted(t, r, ids, msgs, false, before)
}

// TestRestartCrash opens a second host on a copy of the disk taken mid-flight, as a killed host
// leaves it; bravo's record also has a torn last line, as a crash mid-write leaves it.
func TestRestartCrash(t *testing.T) {
	r, ids, msgs := restartSetup(t)
	r2 := r.crashCopyWith(func(root string) {
		p := filepath.Join(root, relRecord(r, ids["bravo"]))
		f, err := os.OpenFile(p, os.O_APPEND|os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		f.WriteString(`{"v":1,"seq":99,"ti`)
		f.Close()
	})
	checkRestarted(t, r2, ids, msgs, true, 0)
	if _, err := os.Stat(r2.path(ids["bravo"]) + ".torn"); err != nil {
		t.Errorf("the torn tail was not quarantined: %v", err)
	}
}

func relRecord(r *rig, id string) string {
	rel, _ := filepath.Rel(r.root, r.path(id))
	return rel
}

func clientMsg(text string, queue bool) api.Message {
	return api.Message{Op: client.NewOp(), Text: text, Queue: queue}
}
