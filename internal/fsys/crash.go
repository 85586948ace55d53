package fsys

import (
	"math/rand/v2"
	"slices"
)

// Crash simulates a power cut and the reboot after it. Every handle open before it is dead
// (ErrCrashed) and every lock is released. Then, drawing every choice from rng so that a seed replays the same crash:
//
//   - each directory keeps its synced entries plus a random prefix of the creations, renames and
//     removals made in it since, so an entry whose parent was never synced may vanish, with all
//     beneath it, and a removed one may come back;
//   - each file keeps its synced content plus a random prefix of the writes and truncations made
//     since, the last write kept possibly cut short. For some files the unsynced bytes kept are
//     zeros instead, all of them or from some point on, as ext4 can leave a file whose length
//     reached the disk before its data did.
//
// What survives is durable: a second Crash straight after the first changes nothing.
func (m *Mem) Crash(rng *rand.Rand) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.gen++
	clear(m.locks) // the processes that held them are gone
	seen := map[*node]bool{}
	m.root.crash(rng, seen)
}

func (n *node) crash(rng *rand.Rand, seen map[*node]bool) {
	if seen[n] {
		return // a node reached twice (a rename kept in both places) is settled once
	}
	seen[n] = true
	if !n.dir {
		n.crashFile(rng)
		return
	}
	ents := cloneEntries(n.durEnts)
	for _, op := range n.dirOps[:rng.IntN(len(n.dirOps)+1)] {
		switch {
		case op.to != "":
			ents[op.to] = op.n
			delete(ents, op.name)
		case op.n == nil:
			delete(ents, op.name)
		default:
			ents[op.name] = op.n
		}
	}
	n.entries, n.durEnts, n.dirOps = ents, cloneEntries(ents), nil
	// Visit children in name order: map order is random, and a seed must replay exactly.
	names := make([]string, 0, len(ents))
	for name := range ents {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		ents[name].crash(rng, seen)
	}
}

// How a crash treats the unsynced bytes a file keeps.
const (
	keepData  = iota // as written
	keepZeros        // all zeros
	keepMixed        // as written up to a point, zeros after it
)

func (n *node) crashFile(rng *rand.Rand) {
	ops := n.fileOps
	k := rng.IntN(len(ops) + 1)
	kept := slices.Clone(ops[:k])
	if k < len(ops) && ops[k].write != nil {
		w := ops[k].write
		kept = append(kept, fileOp{write: w[:rng.IntN(len(w)+1)]})
	}

	mode := keepData
	switch rng.IntN(8) {
	case 0:
		mode = keepZeros
	case 1:
		mode = keepMixed
	}
	var total int
	for _, op := range kept {
		total += len(op.write)
	}
	realUpTo := total // how many of the kept unsynced bytes stay as written
	switch mode {
	case keepZeros:
		realUpTo = 0
	case keepMixed:
		realUpTo = rng.IntN(total + 1)
	}

	img := n.durable[:len(n.durable):len(n.durable)]
	done := 0
	for _, op := range kept {
		if op.write == nil {
			img = resize(img, op.truncate)
			continue
		}
		for _, c := range op.write {
			if done >= realUpTo {
				c = 0
			}
			img = append(img, c)
			done++
		}
	}
	n.data = img
	n.durable = img[:len(img):len(img)]
	n.fileOps = nil
}
