package host

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"path/filepath"
	"strings"
	"sync"

	"github.com/reinhq/rein/internal/fsys"
	"github.com/reinhq/rein/internal/journal"
	"github.com/reinhq/rein/internal/store"
)

// A record names each turn it inherited (a fork's, a child's) by a pointer into the record file
// the turn was first written in (record.Pointer): a path on the host that made the fork. With a
// store, that file is another host's copy, or a copy this host never wrote out, and the turn must
// still be read back anywhere — to fork the fork, to read an evicted turn back — so the sessions of
// a host over a store read through pointerFS.
//
// pointerFS opens for reading the record file of a conversation this host does not hold — at a
// path outside its conversations (another host's state directory), or at its own path, where its
// copy is as old as the last time this host held the conversation, if it ever did — from a copy of
// the conversation's rows kept under <dir>/.pointers/<id>/, with its blobs. The rows only grow,
// and every line keeps its bytes and its place, so the copy's byte ranges are the ones any
// pointer measured, wherever it was made; a read past the copy's end writes it out again, once,
// from the rows as they are now. The record of a conversation this host holds is its own, read as
// it is; every other access goes to the file system underneath, unchanged.

// pointerDir is where a host over a store keeps the copies it reads pointers through.
const pointerDir = ".pointers"

type pointerFS struct {
	fsys.FS
	h  *Host
	mu sync.Mutex // serialises writing the copies
}

// remap says where a read of name is answered from: the copy of conversation id's rows when name
// is a record file or a blob of a conversation this host does not hold.
func (p *pointerFS) remap(name string) (id, copy string, ok bool) {
	name = filepath.Clean(name)
	var dir, rel string
	switch {
	case filepath.Base(name) == journal.FileName:
		dir, rel = filepath.Dir(name), journal.FileName
	case filepath.Base(filepath.Dir(name)) == journal.BlobDir:
		dir, rel = filepath.Dir(filepath.Dir(name)), filepath.Join(journal.BlobDir, filepath.Base(name))
	default:
		return "", "", false
	}
	id = filepath.Base(dir)
	if id == "" || id == "." || id == ".." || strings.HasPrefix(id, ".") || filepath.Dir(dir) == filepath.Join(p.h.dir, pointerDir) {
		return "", "", false
	}
	if _, held := p.h.cfg.Store.Holds(id); held && filepath.Dir(dir) == p.h.dir {
		return "", "", false // this host's own record, which it writes
	}
	return id, filepath.Join(p.h.dir, pointerDir, id, rel), true
}

// refresh writes the copy of conversation id out from its rows. It wraps store.ErrNoConversation
// when the store has no such conversation.
func (p *pointerFS) refresh(id string) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	st := p.h.cfg.Store
	ctx, cancel := context.WithTimeout(p.h.ctx, st.Lease())
	defer cancel()
	if _, err := st.Owner(ctx, id); err != nil {
		return err
	}
	return st.Materialize(ctx, p.FS, id, filepath.Join(p.h.dir, pointerDir, id, journal.FileName))
}

// Refresh writes the copy of conversation id out from its rows now, for a reader that must see
// all of them.
func (p *pointerFS) Refresh(id string) error { return p.refresh(id) }

// ensure writes the copy of conversation id out if it is not there yet.
func (p *pointerFS) ensure(id string) error {
	if _, err := p.FS.Stat(filepath.Join(p.h.dir, pointerDir, id, journal.FileName)); err == nil {
		return nil
	}
	return p.refresh(id)
}

// Open opens a record file for reading, from the copy of its rows when this host does not hold
// it. A record the store does not have (one made outside it) is read where it is.
func (p *pointerFS) Open(name string) (fsys.File, error) {
	id, copy, ok := p.remap(name)
	if !ok {
		return p.FS.Open(name)
	}
	if err := p.ensure(id); errors.Is(err, store.ErrNoConversation) {
		return p.FS.Open(name)
	} else if err != nil {
		return nil, &fs.PathError{Op: "open", Path: name, Err: err}
	}
	f, err := p.FS.Open(copy)
	if err != nil {
		return nil, err
	}
	return &pointerFile{File: f, fs: p, id: id, path: copy}, nil
}

// Stat describes a file, a blob of a conversation this host does not have from its copy.
func (p *pointerFS) Stat(name string) (fs.FileInfo, error) {
	id, copy, ok := p.remap(name)
	if !ok || filepath.Base(name) == journal.FileName {
		return p.FS.Stat(name)
	}
	if err := p.ensure(id); errors.Is(err, store.ErrNoConversation) {
		return p.FS.Stat(name)
	} else if err != nil {
		return nil, &fs.PathError{Op: "stat", Path: name, Err: err}
	}
	return p.FS.Stat(copy)
}

// ReadFile reads a file, a blob of a conversation this host does not have from its copy.
func (p *pointerFS) ReadFile(name string) ([]byte, error) {
	id, copy, ok := p.remap(name)
	if !ok || filepath.Base(name) == journal.FileName {
		return p.FS.ReadFile(name)
	}
	if err := p.ensure(id); errors.Is(err, store.ErrNoConversation) {
		return p.FS.ReadFile(name)
	} else if err != nil {
		return nil, &fs.PathError{Op: "read", Path: name, Err: err}
	}
	return p.FS.ReadFile(copy)
}

// pointerFile is a copy opened for reading: a read past its end writes the copy out again from
// the rows, once, and reads on from the new one.
type pointerFile struct {
	fsys.File
	fs        *pointerFS
	id, path  string
	mu        sync.Mutex
	refreshed bool
}

func (f *pointerFile) ReadAt(b []byte, off int64) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	n, err := f.File.ReadAt(b, off)
	if n == len(b) || err != io.EOF || f.refreshed {
		return n, err
	}
	f.refreshed = true
	if rerr := f.fs.refresh(f.id); rerr != nil {
		return n, err
	}
	nf, oerr := f.fs.FS.Open(f.path)
	if oerr != nil {
		return n, err
	}
	f.File.Close()
	f.File = nf
	return f.File.ReadAt(b, off)
}

func (f *pointerFile) Close() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.File.Close()
}
