package session

import (
	"bufio"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/reinhq/rein/internal/journal"
)

// Root returns rein's state directory: $REIN_HOME, else $XDG_STATE_HOME/rein, else
// ~/.local/state/rein. getenv is os.Getenv in production; cmd passes it in.
func Root(getenv func(string) string) (string, error) {
	if h := getenv("REIN_HOME"); h != "" {
		return h, nil
	}
	if x := getenv("XDG_STATE_HOME"); x != "" {
		return filepath.Join(x, "rein"), nil
	}
	home := getenv("HOME")
	if home == "" {
		return "", errors.New("cannot find a state directory: set REIN_HOME or HOME")
	}
	return filepath.Join(home, ".local", "state", "rein"), nil
}

// Slug names a workspace's directory of sessions: its absolute path with separators as dashes.
// A path whose name would pass the file system's limit (maxSlug) is named by its tail and a
// digest of the whole path, so that a workspace of any depth has sessions. Two paths can share a
// name (/x/a/b-c and /x/a-b/c); List tells their sessions apart.
func Slug(cwd string) string {
	clean := filepath.Clean(cwd)
	s := strings.Trim(strings.ReplaceAll(clean, string(filepath.Separator), "-"), "-")
	if s == "" {
		return "root"
	}
	if len(s) <= maxSlug {
		return s
	}
	sum := sha256.Sum256([]byte(clean))
	i := len(s) - longTail
	for i < len(s) && !utf8.RuneStart(s[i]) {
		i++
	}
	return hex.EncodeToString(sum[:8]) + "-" + s[i:]
}

const (
	maxSlug  = 255 // the longest file name most file systems allow
	longTail = 150 // the tail of a path too long for a name that its name keeps
)

// ProjectDir is where a workspace's sessions live.
func ProjectDir(root, cwd string) string { return filepath.Join(root, "sessions", Slug(cwd)) }

// NewID mints a session id that sorts by creation time to the microsecond, so listings and
// "the newest session" follow the order sessions were started in: 20261129-194512-038211-3f9a.
// Within one process ids are strictly increasing even when minted in the same microsecond; the
// random tail keeps two processes starting sessions at once apart.
func NewID(now time.Time) string {
	idMu.Lock()
	us := now.UTC().Truncate(time.Microsecond)
	if !us.After(idLast) {
		us = idLast.Add(time.Microsecond)
	}
	idLast = us
	idMu.Unlock()
	var b [2]byte
	_, _ = rand.Read(b[:])
	return fmt.Sprintf("%s-%06d-%s", us.Format("20060102-150405"), us.Nanosecond()/1000, hex.EncodeToString(b[:]))
}

var (
	idMu   sync.Mutex
	idLast time.Time // the time of the last id minted in this process
)

// Entry is one session found on disk.
type Entry struct {
	ID      string
	Dir     string
	Path    string // its record.jsonl
	ModTime time.Time
}

// List returns a workspace's sessions, newest first.
func List(root, cwd string) ([]Entry, error) {
	dir := ProjectDir(root, cwd)
	des, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list sessions: %w", err)
	}
	var out []Entry
	for _, de := range des {
		if !de.IsDir() {
			continue
		}
		p := filepath.Join(dir, de.Name(), journal.FileName)
		fi, err := os.Stat(p)
		if err != nil {
			continue
		}
		if other(p, cwd) {
			continue
		}
		out = append(out, Entry{ID: de.Name(), Dir: filepath.Join(dir, de.Name()), Path: p, ModTime: fi.ModTime()})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID > out[j].ID })
	return out, nil
}

// other reports whether the record at p was begun in another workspace than cwd whose path has
// the same Slug, as its first record (session_started) says. A record whose first line cannot be
// read is not judged: it stays where it lies.
func other(p, cwd string) bool {
	f, err := os.Open(p)
	if err != nil {
		return false
	}
	defer f.Close()
	line, err := bufio.NewReaderSize(f, 16<<10).ReadSlice('\n')
	if err != nil {
		return false
	}
	var first struct {
		Kind    string
		Payload struct{ Cwd string }
	}
	if json.Unmarshal(line, &first) != nil || first.Kind != "session_started" || first.Payload.Cwd == "" {
		return false
	}
	was, here := filepath.Clean(first.Payload.Cwd), filepath.Clean(cwd)
	return was != here && Slug(was) == Slug(here)
}

// ErrNotFound is wrapped by the refusals of Find, Resolve and Newest when no session bears the
// name given (or, for Newest, the workspace has none); ErrAmbiguous when a prefix names more
// than one.
var (
	ErrNotFound  = errors.New("no such session")
	ErrAmbiguous = errors.New("more than one session has that prefix")
)

// lookupError is a refusal of a name for a session: its words for a person, its class for a
// caller (ErrNotFound, ErrAmbiguous) and the error behind it, if any.
type lookupError struct {
	msg   string
	class error
	err   error
}

func (e *lookupError) Error() string   { return e.msg }
func (e *lookupError) Unwrap() []error { return []error{e.class, e.err} }

// Newest returns a workspace's newest session, or a refusal wrapping ErrNotFound when it has none.
func Newest(root, cwd string) (Entry, error) {
	all, err := List(root, cwd)
	if err != nil {
		return Entry{}, err
	}
	if len(all) == 0 {
		return Entry{}, &lookupError{msg: fmt.Sprintf("there is no session in %s yet", cwd), class: ErrNotFound}
	}
	return all[0], nil
}

// NewestRef is what a person names the workspace's newest session by, wherever a session is named.
const NewestRef = "newest"

// Resolve finds the session a person names: "newest", the workspace's newest (Newest); a record
// file or a session directory that exists; else what Find finds for ref.
func Resolve(root, cwd, ref string) (Entry, error) {
	if ref == NewestRef {
		return Newest(root, cwd)
	}
	if fi, err := os.Stat(ref); err == nil {
		p := ref
		if fi.IsDir() {
			p = filepath.Join(ref, journal.FileName)
		}
		return at(p), nil
	}
	return Find(root, cwd, ref)
}

// at is the entry of the record at path p.
func at(p string) Entry {
	e := Entry{ID: filepath.Base(filepath.Dir(p)), Dir: filepath.Dir(p), Path: p}
	if fi, err := os.Stat(p); err == nil {
		e.ModTime = fi.ModTime()
	}
	return e
}

// Find resolves a session id (or a unique prefix of one) in a workspace, or, when ref is a path
// to a record file or a session directory, that. A refusal wraps ErrNotFound or ErrAmbiguous.
func Find(root, cwd, ref string) (Entry, error) {
	if strings.ContainsRune(ref, filepath.Separator) || strings.HasSuffix(ref, ".jsonl") {
		p := ref
		if fi, err := os.Stat(p); err == nil && fi.IsDir() {
			p = filepath.Join(p, journal.FileName)
		}
		if _, err := os.Stat(p); err != nil {
			return Entry{}, &lookupError{msg: "no record at " + ref, class: ErrNotFound, err: err}
		}
		return at(p), nil
	}
	all, err := List(root, cwd)
	if err != nil {
		return Entry{}, err
	}
	var hits []Entry
	for _, e := range all {
		if e.ID == ref {
			return e, nil
		}
		if strings.HasPrefix(e.ID, ref) {
			hits = append(hits, e)
		}
	}
	switch len(hits) {
	case 0:
		// A whole id names one session wherever it lives: its workspace is then the caller's to
		// judge (a session belongs to the workspace it was started in).
		if elsewhere, err := filepath.Glob(filepath.Join(root, "sessions", "*", ref, journal.FileName)); err == nil && len(elsewhere) == 1 && !strings.ContainsAny(ref, "*?[") {
			return Entry{ID: ref, Dir: filepath.Dir(elsewhere[0]), Path: elsewhere[0]}, nil
		}
		return Entry{}, &lookupError{msg: fmt.Sprintf("no session %q in this workspace (%s); `rein sessions` lists them", ref, cwd), class: ErrNotFound}
	case 1:
		return hits[0], nil
	}
	return Entry{}, &lookupError{msg: fmt.Sprintf("%q names %d sessions; give more of the id", ref, len(hits)), class: ErrAmbiguous}
}
