package main

import (
	"bytes"
	"os"
	"strings"
	"testing"
)

// A crash on a filesystem that writes pages out of order can leave zeros inside the unsynced
// tail, followed by lines that did reach the disk. rein refuses such a record and leaves it
// untouched; `doctor --repair` moves the damaged line and everything after it aside, keeps every
// line before it, and the session resumes and goes on.
func TestDoctorRepair(t *testing.T) {
	sb := newSandbox(t)
	if r := sb.rein(t, "run", "--provider", "sim", "--sim-delay", "0", "run `echo one` please"); r.code != 0 {
		t.Fatalf("run: %s", r)
	}
	path := sb.records(t)[0]
	orig, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	ls := bytes.SplitAfter(orig, []byte("\n"))
	ls = ls[:len(ls)-1] // the empty piece after the last newline
	bad := len(ls) - 3
	damaged := bytes.Join(ls[:bad], nil)
	damaged = append(damaged, bytes.Repeat([]byte{0}, len(ls[bad])-1)...)
	damaged = append(damaged, '\n')
	damaged = append(damaged, bytes.Join(ls[bad+1:], nil)...)
	if err := os.WriteFile(path, damaged, 0o600); err != nil {
		t.Fatal(err)
	}

	r := sb.rein(t, "doctor", path)
	if r.code != exitFailed || !strings.Contains(r.stdout, "--repair would move") {
		t.Fatalf("doctor on a damaged tail: %s", r)
	}
	if after, _ := os.ReadFile(path); !bytes.Equal(after, damaged) {
		t.Fatal("doctor without --repair changed the record")
	}
	if r := sb.rein(t, "resume", path, "go on"); r.code == 0 || !strings.Contains(r.stderr, "doctor --repair") {
		t.Fatalf("resume of a damaged record should refuse and point at doctor --repair: %s", r)
	}

	r = sb.rein(t, "doctor", "--repair", path)
	if r.code != 0 || !strings.Contains(r.stdout, "repaired: moved") || !strings.Contains(r.stdout, "admissible") {
		t.Fatalf("doctor --repair: %s", r)
	}
	kept, _ := os.ReadFile(path)
	if !bytes.Equal(kept, bytes.Join(ls[:bad], nil)) {
		t.Fatal("the repaired record is not exactly the lines before the damage")
	}
	torn, _ := os.ReadFile(path + ".torn")
	if !bytes.Equal(append(append([]byte(nil), kept...), torn...), damaged) {
		t.Fatal("the record and its .torn do not hold every byte the damaged record held")
	}
	if r := sb.rein(t, "resume", path, "go on"); r.code != 0 {
		t.Fatalf("resume after the repair: %s", r)
	}
	if r := sb.rein(t, "doctor", path); r.code != 0 {
		t.Fatalf("doctor after the resume: %s", r)
	}
}
