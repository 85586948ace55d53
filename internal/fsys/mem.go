package fsys

import (
	"errors"
	"io"
	"io/fs"
	"path"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Mem is an in-memory filesystem for tests that can lose power. For every file it keeps the
// content as last synced and the writes and truncations since; for every directory, its entries
// as last synced and the changes since. Crash throws away a random part of what was not synced
// (see Crash), and FailSync and FailWrite inject the errors a disk can return.
//
// Its locks behave as flock does: each Lock is its own holder, refused while another holds the
// file, and a Crash releases them all, as the death of their processes would.
//
// Names are slash-separated and rooted at "/"; a relative name is taken from the root. Mem is safe
// for concurrent use. Rename within one directory is atomic across a crash; Rename across
// directories is refused, since nothing in rein needs it and it cannot be modelled simply.
type Mem struct {
	mu          sync.Mutex
	root        *node
	gen         uint64 // bumped by Crash; handles from an older generation are dead
	syncFaults  map[string]error
	writeFaults map[string]writeFault
	locks       map[string]*memLock // held locks, by clean path
	holder      Holder              // who this Mem's locks say holds them; zero: this process
}

type writeFault struct {
	keep int
	err  error
}

// ErrCrashed is returned by a Mem file handle opened before the last Crash: after a power cut
// there are no open files.
var ErrCrashed = errors.New("file handle opened before a simulated crash")

// node is a file or a directory.
type node struct {
	dir bool

	// A directory's live entries, its entries as last synced, and the changes since, in order.
	entries map[string]*node
	durEnts map[string]*node
	dirOps  []dirOp

	// A file's live content, its content as last synced, and the changes since, in order.
	// Writes only append, and a truncation replaces data with a fresh copy, so durable and the
	// bytes of write ops may share data's backing array: nothing ever writes over them.
	data    []byte
	durable []byte
	fileOps []fileOp
	mtime   time.Time
}

type dirOp struct {
	name, to string // to is set for a rename
	n        *node  // the node set or renamed; nil for a removal
}

type fileOp struct {
	write    []byte // appended bytes, or nil for a truncation
	truncate int64
}

// NewMem returns an empty filesystem holding only its root directory, durably.
func NewMem() *Mem {
	return &Mem{
		root:        newDir(),
		syncFaults:  map[string]error{},
		writeFaults: map[string]writeFault{},
		locks:       map[string]*memLock{},
	}
}

func newDir() *node {
	return &node{dir: true, entries: map[string]*node{}, durEnts: map[string]*node{}}
}

var _ FS = (*Mem)(nil)

// FailSync makes the next Sync of the file named name, or the next SyncDir of the directory,
// fail with err. The failed sync makes nothing durable. A nil err disarms the fault.
func (m *Mem) FailSync(name string, err error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if err == nil {
		delete(m.syncFaults, clean(name))
		return
	}
	m.syncFaults[clean(name)] = err
}

// FailWrite makes the next Write to the file named name append only its first keep bytes and
// return err, as a full disk or an I/O error can. A nil err disarms the fault.
func (m *Mem) FailWrite(name string, keep int, err error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if err == nil {
		delete(m.writeFaults, clean(name))
		return
	}
	m.writeFaults[clean(name)] = writeFault{keep, err}
}

// clean turns a name into an absolute slash path.
func clean(name string) string {
	return path.Clean("/" + filepath.ToSlash(name))
}

func parts(p string) []string {
	if p == "/" {
		return nil
	}
	return strings.Split(p[1:], "/")
}

func pathErr(op, name string, err error) error {
	return &fs.PathError{Op: op, Path: name, Err: err}
}

// lookup finds the node at a clean path, or returns an error for op.
func (m *Mem) lookup(op, p string) (*node, error) {
	n := m.root
	for _, part := range parts(p) {
		if !n.dir {
			return nil, pathErr(op, p, syscall.ENOTDIR)
		}
		c, ok := n.entries[part]
		if !ok {
			return nil, pathErr(op, p, fs.ErrNotExist)
		}
		n = c
	}
	return n, nil
}

// parent finds the directory that holds a clean path, and the path's last element.
func (m *Mem) parent(op, p string) (*node, string, error) {
	if p == "/" {
		return nil, "", pathErr(op, p, fs.ErrInvalid)
	}
	dir, base := path.Split(p)
	d, err := m.lookup(op, path.Clean(dir))
	if err != nil {
		return nil, "", pathErr(op, p, fs.ErrNotExist)
	}
	if !d.dir {
		return nil, "", pathErr(op, p, syscall.ENOTDIR)
	}
	return d, base, nil
}

func (d *node) set(name string, n *node) {
	d.entries[name] = n
	d.dirOps = append(d.dirOps, dirOp{name: name, n: n})
}

func (d *node) remove(name string) {
	delete(d.entries, name)
	d.dirOps = append(d.dirOps, dirOp{name: name})
}

// Create creates a new empty file, failing with fs.ErrExist if name exists.
func (m *Mem) Create(name string) (File, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	p := clean(name)
	d, base, err := m.parent("open", p)
	if err != nil {
		return nil, err
	}
	if _, ok := d.entries[base]; ok {
		return nil, pathErr("open", p, fs.ErrExist)
	}
	n := &node{mtime: time.Now()}
	d.set(base, n)
	return &memFile{m: m, n: n, name: p, gen: m.gen, write: true}, nil
}

// OpenAppend opens an existing file for reading and appending.
func (m *Mem) OpenAppend(name string) (File, error) { return m.open(name, true) }

// Open opens an existing file for reading.
func (m *Mem) Open(name string) (File, error) { return m.open(name, false) }

func (m *Mem) open(name string, write bool) (File, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	p := clean(name)
	n, err := m.lookup("open", p)
	if err != nil {
		return nil, err
	}
	if n.dir {
		return nil, pathErr("open", p, syscall.EISDIR)
	}
	return &memFile{m: m, n: n, name: p, gen: m.gen, write: write}, nil
}

// ReadFile returns a copy of a file's content.
func (m *Mem) ReadFile(name string) ([]byte, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	p := clean(name)
	n, err := m.lookup("open", p)
	if err != nil {
		return nil, err
	}
	if n.dir {
		return nil, pathErr("read", p, syscall.EISDIR)
	}
	return append([]byte(nil), n.data...), nil
}

// Stat describes a file or directory.
func (m *Mem) Stat(name string) (fs.FileInfo, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	p := clean(name)
	n, err := m.lookup("stat", p)
	if err != nil {
		return nil, err
	}
	return n.info(path.Base(p)), nil
}

// Rename moves a file or directory within its directory, replacing any file at newname.
func (m *Mem) Rename(oldname, newname string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	op, np := clean(oldname), clean(newname)
	od, obase, err := m.parent("rename", op)
	if err != nil {
		return err
	}
	nd, nbase, err := m.parent("rename", np)
	if err != nil {
		return err
	}
	n, ok := od.entries[obase]
	if !ok {
		return pathErr("rename", op, fs.ErrNotExist)
	}
	if od != nd {
		return pathErr("rename", op, errors.New("fsys.Mem does not model a rename across directories"))
	}
	if op == np {
		return nil
	}
	if old, ok := nd.entries[nbase]; ok {
		if old.dir != n.dir || old.dir && len(old.entries) > 0 {
			return pathErr("rename", np, fs.ErrExist)
		}
	}
	od.entries[nbase] = n
	delete(od.entries, obase)
	od.dirOps = append(od.dirOps, dirOp{name: obase, to: nbase, n: n})
	return nil
}

// Remove removes a file or an empty directory. Open handles to a removed file keep working.
func (m *Mem) Remove(name string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	p := clean(name)
	d, base, err := m.parent("remove", p)
	if err != nil {
		return err
	}
	n, ok := d.entries[base]
	if !ok {
		return pathErr("remove", p, fs.ErrNotExist)
	}
	if n.dir && len(n.entries) > 0 {
		return pathErr("remove", p, syscall.ENOTEMPTY)
	}
	d.remove(base)
	return nil
}

// RemoveAll removes a file or a directory and everything in it; a missing name is not an error.
// Open handles to a removed file keep working.
func (m *Mem) RemoveAll(name string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	p := clean(name)
	d, base, err := m.parent("removeall", p)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if _, ok := d.entries[base]; ok {
		d.remove(base)
	}
	return nil
}

// MkdirAll creates a directory and any missing parents.
func (m *Mem) MkdirAll(dir string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	p := clean(dir)
	n := m.root
	for _, part := range parts(p) {
		c, ok := n.entries[part]
		if !ok {
			c = newDir()
			c.mtime = time.Now()
			n.set(part, c)
		} else if !c.dir {
			return pathErr("mkdir", p, syscall.ENOTDIR)
		}
		n = c
	}
	return nil
}

// SyncDir makes a directory's entries durable.
func (m *Mem) SyncDir(dir string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	p := clean(dir)
	n, err := m.lookup("sync", p)
	if err != nil {
		return err
	}
	if !n.dir {
		return pathErr("sync", p, syscall.ENOTDIR)
	}
	if err := m.takeSyncFault(p); err != nil {
		return err
	}
	n.durEnts = cloneEntries(n.entries)
	n.dirOps = nil
	return nil
}

func (m *Mem) takeSyncFault(p string) error {
	if err, ok := m.syncFaults[p]; ok {
		delete(m.syncFaults, p)
		return pathErr("sync", p, err)
	}
	return nil
}

func cloneEntries(e map[string]*node) map[string]*node {
	c := make(map[string]*node, len(e))
	for k, v := range e {
		c[k] = v
	}
	return c
}

// memFile is an open handle on a Mem file.
type memFile struct {
	m      *Mem
	n      *node
	name   string
	gen    uint64
	write  bool
	closed bool
}

// check reports why the handle cannot be used for op, with m.mu held.
func (f *memFile) check(op string) error {
	switch {
	case f.closed:
		return pathErr(op, f.name, fs.ErrClosed)
	case f.gen != f.m.gen:
		return pathErr(op, f.name, ErrCrashed)
	}
	return nil
}

func (f *memFile) Write(p []byte) (int, error) {
	f.m.mu.Lock()
	defer f.m.mu.Unlock()
	if err := f.check("write"); err != nil {
		return 0, err
	}
	if !f.write {
		return 0, pathErr("write", f.name, syscall.EBADF)
	}
	var ferr error
	if wf, ok := f.m.writeFaults[f.name]; ok {
		delete(f.m.writeFaults, f.name)
		if wf.keep < len(p) {
			p = p[:max(wf.keep, 0)]
		}
		ferr = pathErr("write", f.name, wf.err)
	}
	n := f.n
	start := len(n.data)
	n.data = append(n.data, p...)
	if len(p) > 0 {
		n.fileOps = append(n.fileOps, fileOp{write: n.data[start:len(n.data):len(n.data)]})
	}
	n.mtime = time.Now()
	return len(p), ferr
}

func (f *memFile) ReadAt(p []byte, off int64) (int, error) {
	f.m.mu.Lock()
	defer f.m.mu.Unlock()
	if err := f.check("read"); err != nil {
		return 0, err
	}
	if off < 0 {
		return 0, pathErr("read", f.name, fs.ErrInvalid)
	}
	d := f.n.data
	if off >= int64(len(d)) {
		return 0, io.EOF
	}
	n := copy(p, d[off:])
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

func (f *memFile) Sync() error {
	f.m.mu.Lock()
	defer f.m.mu.Unlock()
	if err := f.check("sync"); err != nil {
		return err
	}
	if err := f.m.takeSyncFault(f.name); err != nil {
		return err
	}
	n := f.n
	n.durable = n.data[:len(n.data):len(n.data)]
	n.fileOps = nil
	return nil
}

func (f *memFile) Truncate(size int64) error {
	f.m.mu.Lock()
	defer f.m.mu.Unlock()
	if err := f.check("truncate"); err != nil {
		return err
	}
	if !f.write {
		return pathErr("truncate", f.name, syscall.EBADF)
	}
	if size < 0 {
		return pathErr("truncate", f.name, fs.ErrInvalid)
	}
	n := f.n
	n.data = resize(n.data, size)
	n.fileOps = append(n.fileOps, fileOp{truncate: size})
	n.mtime = time.Now()
	return nil
}

// resize returns a fresh copy of b cut or zero-extended to size.
func resize(b []byte, size int64) []byte {
	c := make([]byte, size)
	copy(c, b)
	return c
}

func (f *memFile) Stat() (fs.FileInfo, error) {
	f.m.mu.Lock()
	defer f.m.mu.Unlock()
	if err := f.check("stat"); err != nil {
		return nil, err
	}
	return f.n.info(path.Base(f.name)), nil
}

func (f *memFile) Close() error {
	f.m.mu.Lock()
	defer f.m.mu.Unlock()
	if f.closed {
		return pathErr("close", f.name, fs.ErrClosed)
	}
	f.closed = true
	return nil
}

func (n *node) info(name string) fs.FileInfo {
	i := memInfo{name: name, mtime: n.mtime, mode: 0o600}
	if n.dir {
		i.mode = fs.ModeDir | 0o700
	} else {
		i.size = int64(len(n.data))
	}
	return i
}

type memInfo struct {
	name  string
	size  int64
	mode  fs.FileMode
	mtime time.Time
}

func (i memInfo) Name() string       { return i.name }
func (i memInfo) Size() int64        { return i.size }
func (i memInfo) Mode() fs.FileMode  { return i.mode }
func (i memInfo) ModTime() time.Time { return i.mtime }
func (i memInfo) IsDir() bool        { return i.mode.IsDir() }
func (i memInfo) Sys() any           { return nil }

// SetHolder sets who the locks taken from now on say holds them, as if another process took them;
// the zero Holder (the default) names this process.
func (m *Mem) SetHolder(h Holder) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.holder = h
}

// memLock is a held Mem lock.
type memLock struct {
	m    *Mem
	name string
	n    *node
}

// Lock takes the lock of the file name, creating it if it is missing, and writes the holder into
// it, unsynced, as OS does.
func (m *Mem) Lock(name string) (Lock, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	p := clean(name)
	d, base, err := m.parent("open", p)
	if err != nil {
		return nil, err
	}
	n, ok := d.entries[base]
	switch {
	case ok && n.dir:
		return nil, pathErr("open", p, syscall.EISDIR)
	case !ok:
		n = &node{mtime: time.Now()}
		d.set(base, n)
	}
	if _, held := m.locks[p]; held {
		return nil, &LockedError{Path: p, Holder: decodeHolder(n.data)}
	}
	h := m.holder
	if !h.Known() {
		h = self(time.Now())
	}
	n.replace(encodeHolder(h))
	l := &memLock{m: m, name: p, n: n}
	m.locks[p] = l
	return l, nil
}

// Probe reports whether the lock of the file name is held, and by whom.
func (m *Mem) Probe(name string) (Holder, bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	p := clean(name)
	n, err := m.lookup("open", p)
	if errors.Is(err, fs.ErrNotExist) {
		return Holder{}, false, nil
	}
	if err != nil {
		return Holder{}, false, err
	}
	if _, held := m.locks[p]; !held {
		return Holder{}, false, nil
	}
	return decodeHolder(n.data), true, nil
}

// Unlock empties the lock file and releases the lock, unless a Crash released it already.
func (l *memLock) Unlock() error {
	l.m.mu.Lock()
	defer l.m.mu.Unlock()
	if l.m.locks[l.name] == l {
		delete(l.m.locks, l.name)
		l.n.replace(nil)
	}
	return nil
}

// replace truncates a file and writes b, unsynced.
func (n *node) replace(b []byte) {
	n.data = append(resize(n.data, 0), b...)
	n.fileOps = append(n.fileOps, fileOp{truncate: 0})
	if len(b) > 0 {
		n.fileOps = append(n.fileOps, fileOp{write: n.data[:len(b):len(b)]})
	}
	n.mtime = time.Now()
}
