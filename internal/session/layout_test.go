package session

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reinhq/rein/internal/journal"
	"github.com/reinhq/rein/internal/record"
)

// TestSlugOfALongPath: a workspace deeper than a file name can be long still gets a directory of
// sessions — a name within the file system's limit, its path's tail for a person to read, and a
// digest of the whole path, so two long paths that share their tail stay apart.
func TestSlugOfALongPath(t *testing.T) {
	base := t.TempDir()
	var deep, other strings.Builder
	deep.WriteString(filepath.Join(base, "me", "src"))
	other.WriteString(filepath.Join(base, "you", "src"))
	for i := range 20 {
		deep.WriteString(string(filepath.Separator) + "component-" + strings.Repeat("x", i))
		other.WriteString(string(filepath.Separator) + "component-" + strings.Repeat("x", i))
	}
	a, b := Slug(deep.String()), Slug(other.String())
	if len(a) > maxSlug || len(b) > maxSlug || a == b {
		t.Fatalf("slugs of %d and %d bytes, equal %v: want each at most %d and apart", len(a), len(b), a == b, maxSlug)
	}
	if !strings.Contains(a, "component-xxxxxxxxxxxxxxxxxxx") {
		t.Errorf("the slug %q does not keep the path's tail", a)
	}
	// Paths that fit keep the name they always had: their sessions are where they were.
	short := filepath.Join(base, "src", "app")
	if got, want := Slug(short), strings.Trim(strings.ReplaceAll(short, string(filepath.Separator), "-"), "-"); got != want {
		t.Errorf("Slug(%s) = %q, want %q", short, got, want)
	}
	root := t.TempDir()
	s, err := Start(ProjectDir(root, deep.String()), Options{Now: clock()}, *withCwd(deep.String()))
	must(t, err)
	must(t, s.Close())
	if all, err := List(root, deep.String()); err != nil || len(all) != 1 {
		t.Fatalf("List of the deep workspace: %v, %v", all, err)
	}
}

// TestListKeepsCollidingWorkspacesApart: <dir>/a/b-c and <dir>/a-b/c have one slug, so their
// sessions share a directory. Each workspace's list, newest and prefix lookups hold only the
// sessions started in it, as the session's first record says; a record with no first line yet
// (a crash at creation) stays listed where it lies.
func TestListKeepsCollidingWorkspacesApart(t *testing.T) {
	root, x := t.TempDir(), t.TempDir()
	one, two := filepath.Join(x, "a", "b-c"), filepath.Join(x, "a-b", "c")
	if Slug(one) != Slug(two) {
		t.Fatalf("the test wants colliding slugs: %s, %s", Slug(one), Slug(two))
	}
	ids := map[string][]string{}
	opts := Options{Now: clock()} // ids in the order started (and not past TestNewIDSortsByCreation's)
	for _, ws := range []string{one, two, one, two} {
		s, err := Start(ProjectDir(root, ws), opts, *withCwd(ws))
		must(t, err)
		ids[ws] = append(ids[ws], s.ID())
		must(t, s.Close())
	}
	empty := filepath.Join(ProjectDir(root, one), "20991231-000000-000000-0000")
	must(t, os.MkdirAll(empty, 0o700))
	must(t, os.WriteFile(filepath.Join(empty, journal.FileName), nil, 0o600))
	for _, ws := range []string{one, two} {
		all, err := List(root, ws)
		must(t, err)
		var got []string
		for _, e := range all {
			got = append(got, e.ID)
		}
		want := []string{"20991231-000000-000000-0000", ids[ws][1], ids[ws][0]}
		if strings.Join(got, " ") != strings.Join(want, " ") {
			t.Errorf("List(%s) = %v, want %v", ws, got, want)
		}
		other := ids[one][1]
		if ws == one {
			other = ids[two][1]
		}
		if e, err := Find(root, ws, other[:len(other)-2]); err == nil && e.ID == other {
			t.Errorf("a prefix in %s found %s, a session of the other workspace", ws, other)
		}
	}
}

// withCwd is a session_started record for a session begun in the workspace ws.
func withCwd(ws string) *record.SessionStarted {
	s := started("")
	s.Cwd = ws
	return s
}
