package fold

import (
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"unsafe"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/reinhq/rein/internal/record"
	"pgregory.net/rapid"
)

// container is what persist.go's vec, flat and table have in common, for these tests.
type container interface {
	contents() any
	isShared() bool
}

// sameState compares two states field by field, every unexported field included, each container
// by what it holds (not by how it is laid out or shared).
func sameState(a, b *State) string {
	return cmp.Diff(a, b,
		cmp.Exporter(func(reflect.Type) bool { return true }),
		cmp.Transformer("contents", func(c container) any { return c.contents() }),
		cmp.FilterPath(func(p cmp.Path) bool {
			f, ok := p.Last().(cmp.StructField)
			return ok && f.Name() == "frozen"
		}, cmp.Ignore()),
		cmpopts.EquateEmpty(),
	)
}

// A snapshot never changes, and a clone goes its own way: random live behaviour — the property
// test's agent, and the host model with its submissions, hands, Stops and approvals — takes a
// snapshot after every step and, now and then, goes on in a clone of the state, leaving the
// original behind. At the end every snapshot and every original left behind must equal, field by
// field, the replay of the records it had seen — however the state they were taken from went on
// (later records, evictions, rewinds, steering on a shared turn, submissions changing state,
// crashes).
func TestSnapshotsNeverChange(t *testing.T) {
	t.Run("agent", func(t *testing.T) {
		rapid.Check(t, func(rt *rapid.T) {
			a := &agent{t: rt, l: newLog(rt)}
			neverChange(rt, a.l, rapid.IntRange(1, 80).Draw(rt, "steps"), a.step)
		})
	})
	t.Run("host", func(t *testing.T) {
		rapid.Check(t, func(rt *rapid.T) {
			h := &hostModel{t: rt, l: newLog(rt)}
			h.l.add(&record.System{Text: "sys"})
			neverChange(rt, h.l, rapid.IntRange(1, 60).Draw(rt, "steps"), h.step)
		})
	})
}

// neverChange plays n steps on l, keeping a snapshot after each and now and then a state left
// behind for a clone, then holds each to the replay of its records.
func neverChange(rt *rapid.T, l *log, n int, step func()) {
	type kept struct {
		s    *State
		recs []record.Record
		what string
	}
	var all []kept
	for i := 0; i < n; i++ {
		step()
		all = append(all, kept{l.s.Snapshot(), slices.Clone(l.recs), fmt.Sprintf("the snapshot after step %d", i)})
		if rapid.IntRange(0, 5).Draw(rt, "clone") == 0 {
			all = append(all, kept{l.s, slices.Clone(l.recs), fmt.Sprintf("the state cloned after step %d", i)})
			l.s = l.s.Clone()
		}
	}
	for _, k := range all {
		if d := sameState(k.s, replay(rt, k.recs)); d != "" {
			rt.Fatalf("%s changed after it was taken (-it +its records' replay):\n%s", k.what, d)
		}
	}
}

// Every field of State is a scalar, a value struct, a persistent container (persist.go) or a slice
// replaced whole; Clone shares every container. A new field that is a plain map, a pointer or a
// slice edited in place would let a snapshot change under its reader: this test names it.
func TestStateIsAValue(t *testing.T) {
	// Slices that are replaced whole on every change, never written in place.
	replacedWhole := map[string]bool{"owed": true, "asked": true, "grants": true, "open": true}
	typ := reflect.TypeFor[State]()
	ctype := reflect.TypeFor[container]()
	for i := range typ.NumField() {
		f := typ.Field(i)
		switch {
		case f.Type.Implements(ctype):
		case f.Type.Kind() == reflect.Slice && replacedWhole[f.Name]:
		case !mutableInside(f.Type):
		default:
			t.Errorf("State.%s is a %s, which a write could change under a snapshot: make it a vec, flat or table (persist.go), or replace it whole on every change and list it here", f.Name, f.Type)
		}
	}

	// A state with something in every container, a tool batch in hand.
	l := newLog(t)
	l.add(&record.SessionStarted{Session: "s"})
	l.add(&record.Submission{ID: "m1", Op: "op-1", State: "accepted", Text: "go"})
	l.add(&record.UserPrompt{Turn: 1, Text: "go", Submission: "m1"})
	l.reply(call("c1", "bash", `{}`))
	l.results(record.OK)
	l.reply(text("done"))
	l.add(&record.Evicted{From: 1, To: 2, Note: "the start", By: record.ByModel, Op: "op-e"})
	l.add(&record.Stop{Op: "op-s"})
	l.add(&record.ModelChanged{Provider: "sim", Model: "sim-2", Op: "op-m"})
	l.prompt("more")
	l.reply(call("c2", "bash", `{}`))
	l.add(&record.ToolStarted{CallID: "c2", Name: "bash"})
	l.add(&record.Approval{CallID: "c2", Name: "bash", State: record.ApprovalAsked})
	l.add(&record.Approval{CallID: "c2", Name: "bash", State: record.ApprovalAllowed, Op: "op-a"})
	l.add(&record.ToolFinished{CallID: "c2", Content: "out", Outcome: record.OK})
	s := l.s
	_ = s.Clone()
	v := reflect.ValueOf(s).Elem()
	for i := range typ.NumField() {
		f := typ.Field(i)
		if !f.Type.Implements(ctype) {
			continue
		}
		fv := v.Field(i) // unexported: read through its address
		c := reflect.NewAt(fv.Type(), unsafe.Pointer(fv.UnsafeAddr())).Elem().Interface().(container)
		if reflect.ValueOf(c.contents()).Len() == 0 {
			t.Errorf("the fixture leaves State.%s empty: give it something, so that Clone's sharing of it is tested", f.Name)
		}
		if !c.isShared() {
			t.Errorf("Clone left State.%s unshared: add it to Clone", f.Name)
		}
	}
}

// mutableInside reports whether a value of type t holds something a write could change in place
// behind a copy of it: a map, a slice, a pointer, a channel or a function.
func mutableInside(t reflect.Type) bool {
	switch t.Kind() {
	case reflect.Map, reflect.Slice, reflect.Pointer, reflect.Chan, reflect.Func, reflect.Interface, reflect.UnsafePointer:
		return true
	case reflect.Struct:
		for i := range t.NumField() {
			if mutableInside(t.Field(i).Type) {
				return true
			}
		}
	case reflect.Array:
		return mutableInside(t.Elem())
	}
	return false
}

func TestStepRefusesASnapshot(t *testing.T) {
	l := newLog(t)
	l.prompt("go")
	snap := l.s.Snapshot()
	err := snap.Step(record.Record{Seq: snap.Seq() + 1, Body: &record.Renamed{Title: "t"}})
	if !errors.Is(err, ErrSnapshot) {
		t.Fatalf("Step on a snapshot answered %v, want ErrSnapshot", err)
	}
	c := snap.Clone()
	if err := c.Step(record.Record{Seq: c.Seq() + 1, Body: &record.Renamed{Title: "t"}}); err != nil {
		t.Fatalf("a clone of a snapshot refused a record: %v", err)
	}
	if snap.Meta().Title != "" || c.Meta().Title != "t" {
		t.Fatalf("titles: snapshot %q, clone %q", snap.Meta().Title, c.Meta().Title)
	}
}

// Readers on other goroutines hold snapshots while the owner applies records and publishes a new
// snapshot after each, as a session does. Under the race detector (CI runs this package with
// -race) any write the owner makes to memory a snapshot reads is reported; without it the readers
// still check that what they hold does not move.
func TestSnapshotsAcrossGoroutines(t *testing.T) {
	l := newLog(t)
	var pub atomic.Pointer[State]
	pub.Store(l.s.Snapshot())
	const readers = 4
	turns := 300
	if testing.Short() {
		turns = 60
	}
	var wg sync.WaitGroup
	done := make(chan struct{})
	errs := make(chan error, readers)
	for r := range readers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-done:
					return
				default:
				}
				s := pub.Load()
				ctx := s.Context()
				before := len(ctx)
				var bytes int64
				for _, m := range ctx {
					bytes += MessageSize(m)
				}
				sv := s.Survey()
				for _, t := range s.Turns() {
					_ = t.Label
				}
				_ = s.Submissions()
				_, _ = s.StopByOp("op")
				if items := s.Frontier(); len(items) > 2 && s.Phase() != AwaitingToolResults && r%2 == 0 {
					_, _ = s.PreviewEviction(items[0].From, items[0].To, "a reader's preview")
				}
				var again int64
				for _, m := range s.Context() {
					again += MessageSize(m)
				}
				if len(s.Context()) != before || again != bytes || s.Survey().Bytes != sv.Bytes {
					errs <- fmt.Errorf("a snapshot changed while reader %d read it", r)
					return
				}
			}
		}()
	}
	out := strings.Repeat("output line\n", 20)
	for i := 0; i < turns; i++ {
		l.add(&record.Submission{ID: fmt.Sprintf("m%d", i), Op: fmt.Sprintf("op%d", i), State: "accepted", Text: "step"})
		pub.Store(l.s.Snapshot())
		l.add(&record.UserPrompt{Turn: l.s.Next(), Text: "step", Submission: fmt.Sprintf("m%d", i)})
		pub.Store(l.s.Snapshot())
		id := l.s.Next()
		l.reply(call(fmt.Sprintf("c%d", id), "bash", `{"command":"make"}`))
		pub.Store(l.s.Snapshot())
		l.add(&record.ToolStarted{CallID: fmt.Sprintf("c%d", id), Name: "bash"})
		pub.Store(l.s.Snapshot())
		l.add(&record.ToolResults{Results: []record.ToolResult{{CallID: fmt.Sprintf("c%d", id), Content: out + Trailer(id), Outcome: record.OK}}})
		pub.Store(l.s.Snapshot())
		l.add(&record.Steering{Text: "and then"})
		pub.Store(l.s.Snapshot())
		l.reply(text("done"))
		pub.Store(l.s.Snapshot())
		if i%10 == 9 {
			items := l.s.Frontier()
			l.add(&record.Evicted{From: items[0].From, To: items[len(items)-4].To, Note: "older steps", By: record.ByHarness})
			pub.Store(l.s.Snapshot())
		}
		if i%50 == 49 {
			l.add(&record.Rewound{Anchor: l.s.High() - 2})
			pub.Store(l.s.Snapshot())
		}
	}
	close(done)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}
