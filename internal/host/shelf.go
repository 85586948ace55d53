package host

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/reinhq/rein/internal/api"
)

// ShelfFile is the workspace's log of conversations archived, deleted and restored, beside the
// index. It is append-only JSON lines: the last line about a conversation is its place.
const ShelfFile = "shelf.jsonl"

// DeleteAfter is how long a deleted conversation can be restored: the first host to start after
// that removes its files.
const DeleteAfter = 7 * 24 * time.Hour

// The places a conversation can be shelved in; "" is the list.
const (
	Archived = "archived"
	Deleted  = "deleted"
)

// shelfEntry is one line of the shelf log.
type shelfEntry struct {
	Conv  string    `json:"conv"`
	Shelf string    `json:"shelf"` // archived, deleted, or "" (restored)
	Op    string    `json:"op"`
	At    time.Time `json:"at"`
}

// shelf is the log and what it says now. Archiving and deleting are a person's sorting of the
// list: they are kept beside the records (a conversation's record stays what the agent did) and
// can be undone by restoring, a deletion until DeleteAfter has passed.
type shelf struct {
	mu    sync.Mutex
	path  string
	now   map[string]shelfEntry
	byOp  map[string]shelfEntry
	purge []string // conversations deleted long enough ago to remove
}

func openShelf(dir string, now time.Time) (*shelf, error) {
	s := &shelf{path: filepath.Join(dir, ShelfFile), now: map[string]shelfEntry{}, byOp: map[string]shelfEntry{}}
	data, err := os.ReadFile(s.path)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("read the shelf: %w", err)
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 4096), 1<<20)
	for sc.Scan() {
		var e shelfEntry
		if json.Unmarshal(sc.Bytes(), &e) != nil || e.Conv == "" {
			continue // a torn last line: the operation it held never answered
		}
		s.now[e.Conv] = e
		if e.Op != "" {
			s.byOp[e.Op] = e
		}
	}
	for id, e := range s.now {
		if e.Shelf == Deleted && now.Sub(e.At) >= DeleteAfter {
			s.purge = append(s.purge, id)
		}
	}
	return s, nil
}

// place returns where a conversation is, and since when.
func (s *shelf) place(id string) (string, time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	e := s.now[id]
	return e.Shelf, e.At
}

// put records a conversation's new place; an op already recorded answers as it did.
func (s *shelf) put(e shelfEntry) (shelfEntry, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if prev, ok := s.byOp[e.Op]; ok {
		if prev.Conv != e.Conv || prev.Shelf != e.Shelf {
			return shelfEntry{}, errf(api.OpConflict, "op_id %s was used for another change", e.Op)
		}
		return prev, nil
	}
	line, err := json.Marshal(e)
	if err != nil {
		return shelfEntry{}, err
	}
	f, err := os.OpenFile(s.path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return shelfEntry{}, fmt.Errorf("record the shelf: %w", err)
	}
	if _, err := f.Write(append(line, '\n')); err != nil {
		f.Close()
		return shelfEntry{}, fmt.Errorf("record the shelf: %w", err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return shelfEntry{}, fmt.Errorf("record the shelf: %w", err)
	}
	if err := f.Close(); err != nil {
		return shelfEntry{}, fmt.Errorf("record the shelf: %w", err)
	}
	s.now[e.Conv] = e
	s.byOp[e.Op] = e
	return e, nil
}

// purgeDeleted removes the files of conversations deleted more than DeleteAfter ago, before the
// host lists what is on disk. A directory that does not hold a record is left alone.
func (h *Host) purgeDeleted() error {
	for _, id := range h.shelf.purge {
		if id == "" || strings.ContainsAny(id, `/\`) || id == "." || id == ".." {
			continue
		}
		dir := filepath.Join(h.dir, id)
		if _, err := os.Stat(filepath.Join(dir, "record.jsonl")); err != nil {
			continue
		}
		if err := os.RemoveAll(dir); err != nil {
			return fmt.Errorf("remove the deleted conversation %s: %w", id, err)
		}
		if err := h.ix.Remove([]string{id}); err != nil {
			return err
		}
	}
	h.shelf.purge = nil
	return nil
}

// Shelve moves a conversation to the archive, to the deleted, or ("") back to the list. Deleting
// stops whatever the conversation runs.
func (h *Host) Shelve(id, op, place string) (api.View, error) {
	if op == "" {
		return api.View{}, errf(api.BadRequest, "op_id is required")
	}
	if place != "" && place != Archived && place != Deleted {
		return api.View{}, errf(api.BadRequest, "shelf must be %q, %q or \"\" (back to the list), not %q", Archived, Deleted, place)
	}
	c, err := h.Get(id)
	if err != nil {
		return api.View{}, err
	}
	if place == Deleted {
		if _, err := c.Stop(op+"/stop", 0); err != nil {
			return api.View{}, err
		}
	}
	if _, err := h.shelf.put(shelfEntry{Conv: id, Shelf: place, Op: op, At: h.cfg.Now().UTC()}); err != nil {
		return api.View{}, err
	}
	v, err := c.view()
	if err != nil {
		return api.View{}, err
	}
	out := v.View
	h.placeView(&out)
	return out, nil
}

// placeView fills in where a view's conversation is shelved.
func (h *Host) placeView(v *api.View) {
	place, at := h.shelf.place(v.ID)
	v.Shelf = place
	if place == Deleted {
		v.PurgeAt = at.Add(DeleteAfter).Format(time.RFC3339)
	}
}

func (s *Server) shelfRoutes() {
	s.mux.Handle("POST /api/conversations/{id}/shelf", s.guard(func(w http.ResponseWriter, r *http.Request) error {
		var req struct {
			Op    string `json:"op_id"`
			Shelf string `json:"shelf"`
		}
		if err := decode(r, &req); err != nil {
			return err
		}
		v, err := s.h.Shelve(r.PathValue("id"), req.Op, req.Shelf)
		if err != nil {
			return err
		}
		writeJSON(w, 200, v)
		return nil
	}))
	s.mux.Handle("GET /api/search", s.guard(s.search))
}
