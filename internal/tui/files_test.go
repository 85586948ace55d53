package tui

import (
	"context"
	"testing"

	"github.com/reinhq/rein/internal/api"
)

// filesHost is the fake host with rewinds that take the files too.
type filesHost struct{ *fakeHost }

func (f filesHost) RewindFiles(ctx context.Context, id, op string, turn int64) (api.Survey, *api.FilesRestored, error) {
	f.log("rewind-files %s %s %d", id, op, turn)
	return api.Survey{Bytes: 40}, &api.FilesRestored{Changed: []string{"keep.txt"}, Removed: []string{"made.txt"},
		NotCovered: []api.NotCovered{{Path: "x.log", Reason: "ignored"}}, Outside: "effects outside the workspace are not undone"}, nil
}

// /rewind <turn> files asks a host that takes checkpoints to rewind the files too, and shows what
// the restore wrote, removed and left alone; a host without the capability is said to lack it.
func TestSlashRewindFiles(t *testing.T) {
	f := newFake()
	f.caps = append(f.caps, api.CapFiles)
	d := newDriver(t, filesHost{f}, Options{})
	d.until("capabilities", func() bool { return d.m.capsKnown })
	sendFirst(t, d, "go")
	s := &stream{}
	f.push(exchange(s, "op-2", "go")...)
	d.until("settled", func() bool { return !d.m.working() && d.m.seq == s.seq })
	slashCmd(d, "/rewind 2 files")
	d.waitCall("rewind-files c-new op-3 2")
	d.waitScreen("Files restored: 1 written, 1 removed")
	d.waitScreen("removed  made.txt")
	d.waitScreen("x.log (ignored)")

	plain, _ := withConversation(t, newFake())
	slashCmd(plain, "/rewind 2 files")
	plain.waitScreen("/rewind files is not supported")
}
