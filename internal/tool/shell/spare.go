package shell

import (
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// A spare is a shell started ahead of the Tool's next call: held on the lifeline, confined by the
// sandbox, parked at its gate with bash's start-up (its exec, its dynamic linking, its locale)
// already paid, so that the call only writes its command and opens the gate (see directScript).
// Under a sandbox that contains each command in a PID namespace of its own through rein's helper,
// the spare is the command's supervisor (see supervisor), and what it has paid ahead is most of
// a call's start where rein is not root: the helper's execution of rein, the namespaces and the
// confinement. That namespace is still the command's alone: nothing ran in it before the gate.
// A call that takes the spare starts the next one beside its command; a call that finds none
// starts its shell as before. A sandbox that confines each command as the workspace is when it
// starts (--protect-git binds the .git there is then) has no spares: one started beside the
// previous command would not see the .git that command made.
//
// A spare is an idle bash process, a few hundred kilobytes of its own. A Tool keeps at most one
// and ends it once it has waited spareIdle; the process keeps at most maxSpares, the Tool that
// needs one taking the longest-waiting spare's place, so a host with a thousand conversations
// keeps a handful, for those that ran a command last. Like every shell rein starts, a spare is
// held on the lifeline from its start: rein's death, however it comes, ends it.
var (
	spareIdle = 2 * time.Minute // vars for the tests
	maxSpares = int32(8)
)

var (
	spares   atomic.Int32 // the spares of this process, waiting or being started
	sparesMu sync.Mutex
	waiting  []*Tool // the Tools holding a spare, the longest-waiting first
)

// take returns a shell for a command to begin: the Tool's spare, if it has one, waiting for one
// being started if need be, or nil. (One that died waiting is found out by begin.)
func (t *Tool) take() *proc {
	t.spareMu.Lock()
	defer t.spareMu.Unlock()
	return t.forget()
}

// forget takes the Tool's spare from it and from the count, and returns it. t.spareMu is held.
func (t *Tool) forget() *proc {
	p := t.spare
	if p == nil {
		return nil
	}
	t.spare = nil
	t.spareTimer.Stop()
	spares.Add(-1)
	sparesMu.Lock()
	if i := slices.Index(waiting, t); i >= 0 {
		waiting = slices.Delete(waiting, i, i+1)
	}
	sparesMu.Unlock()
	return p
}

// refill starts a spare for the Tool's next call, unless it has one or is closed.
func (t *Tool) refill() {
	if !t.spares() {
		return
	}
	t.spareMu.Lock()
	has := t.spare != nil || t.closed
	t.spareMu.Unlock()
	if has || !reserve(t) {
		return
	}
	t.spareMu.Lock()
	defer t.spareMu.Unlock()
	if t.spare != nil || t.closed {
		spares.Add(-1)
		return
	}
	p, err := spawn(t.bash, t.root, t.env, t.opts.Grace, t.ctl, t.opts.Sandbox)
	if err != nil || p.refused != nil {
		spares.Add(-1)
		if p != nil {
			p.discard(nil)
		}
		return
	}
	t.spare = p
	t.spareTimer = time.AfterFunc(spareIdle, func() { t.drop(p) })
	sparesMu.Lock()
	waiting = append(waiting, t)
	sparesMu.Unlock()
}

// reserve counts a spare about to be started for t, ending another Tool's longest-waiting spare
// if the process has its fill. It reports false if it could not.
func reserve(t *Tool) bool {
	for range 2 {
		if spares.Add(1) <= maxSpares {
			return true
		}
		spares.Add(-1)
		sparesMu.Lock()
		var other *Tool
		for _, o := range waiting {
			if o != t {
				other = o
				break
			}
		}
		sparesMu.Unlock()
		if other == nil {
			return false
		}
		other.drop(nil)
	}
	return false
}

// drop ends the Tool's spare if it is p (or, p nil, whichever it has).
func (t *Tool) drop(p *proc) {
	t.spareMu.Lock()
	defer t.spareMu.Unlock()
	if t.spare == nil || p != nil && t.spare != p {
		return
	}
	t.forget().discard(nil)
}

// Close ends the Tool's spare shell, if it has one, and starts no other. Calls already running
// go on; a call made after Close starts its shell as it comes.
func (t *Tool) Close() error {
	t.spareMu.Lock()
	t.closed = true
	t.spareMu.Unlock()
	t.drop(nil)
	return nil
}
