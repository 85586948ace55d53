package checkpoint

import (
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// BenchmarkCheckpoint100k measures the operations the wiring puts on a turn's path, on a generated
// tree of 100,000 files in 1,000 directories (and 1,000 ignored files):
//
//	first        a session's first snapshot in a new shadow repository: every file hashed and stored
//	first-seeded another session's first snapshot, its index copied from the first's
//	nochange     a snapshot of an unchanged tree (the goal: under 0.5 s)
//	change12     12 files changed, then a snapshot
//	restore      a restore to a checkpoint 12 files away (safety snapshot included)
//
// Besides the wall time per operation it reports cpu-ms/op, the CPU time git used (user and
// system, from the children's rusage), which says more than the wall time on a busy machine.
// It generates the tree once (a minute or more on a slow disk) and is skipped under -short.
func BenchmarkCheckpoint100k(b *testing.B) {
	if testing.Short() {
		b.Skip("generates a 100,000-file tree")
	}
	ws := b.TempDir()
	start := time.Now()
	generate(b, ws, 1000, 100)
	b.Logf("generated 100,000 files in %v", time.Since(start).Round(time.Millisecond))

	var r *Repo
	states := b.TempDir() // the state directories outlive the sub-benchmark that makes them
	b.Run("first", func(b *testing.B) {
		for b.Loop() {
			state, err := os.MkdirTemp(states, "state-")
			if err != nil {
				b.Fatal(err)
			}
			if r, err = Open(state, ws, Options{}); err != nil {
				b.Fatal(err)
			}
			cpu := childCPU()
			if _, err := r.Snapshot(ctx, "s1", 1); err != nil {
				b.Fatal(err)
			}
			b.ReportMetric(float64((childCPU() - cpu).Milliseconds()), "cpu-ms/op")
		}
	})
	b.Run("first-seeded", func(b *testing.B) {
		i := 0
		cpu := childCPU()
		for b.Loop() {
			i++
			if _, err := r.Snapshot(ctx, fmt.Sprintf("seeded-%d", i), 1); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64((childCPU()-cpu).Milliseconds())/float64(i), "cpu-ms/op")
	})
	b.Run("nochange", func(b *testing.B) {
		n := 0
		cpu := childCPU()
		for b.Loop() {
			n++
			cp, err := r.Snapshot(ctx, "s1", 2)
			if err != nil {
				b.Fatal(err)
			}
			if cp.Changed {
				b.Fatal("an unchanged tree made a commit")
			}
		}
		b.ReportMetric(float64((childCPU()-cpu).Milliseconds())/float64(n), "cpu-ms/op")
	})
	b.Run("change12", func(b *testing.B) {
		n := 0
		cpu := childCPU()
		for b.Loop() {
			n++
			for f := range 12 {
				write(b, ws, fmt.Sprintf("d%03d/f%03d.txt", f*83, f), fmt.Sprintf("change %d of file %d\n", n, f))
			}
			cp, err := r.Snapshot(ctx, "s1", int64(10+n))
			if err != nil {
				b.Fatal(err)
			}
			if !cp.Changed {
				b.Fatal("12 changed files made no commit")
			}
		}
		b.ReportMetric(float64((childCPU()-cpu).Milliseconds())/float64(n), "cpu-ms/op")
	})
	b.Run("restore", func(b *testing.B) {
		a, err := r.Snapshot(ctx, "s1", 1000)
		if err != nil {
			b.Fatal(err)
		}
		for f := range 12 {
			write(b, ws, fmt.Sprintf("d%03d/f%03d.txt", 500+f*41, f), "changed for the restore\n")
		}
		c, err := r.Snapshot(ctx, "s1", 1001)
		if err != nil {
			b.Fatal(err)
		}
		targets := []string{a.Commit, c.Commit}
		n := 0
		cpu := childCPU()
		for b.Loop() {
			res, err := r.Restore(ctx, "s1", targets[n%2])
			if err != nil {
				b.Fatal(err)
			}
			if len(res.Changed) != 12 {
				b.Fatalf("restored %d files, want 12", len(res.Changed))
			}
			n++
		}
		b.ReportMetric(float64((childCPU()-cpu).Milliseconds())/float64(n), "cpu-ms/op")
	})
}

// generate writes dirs directories of files files each, small and varied, plus an ignored file
// per directory and a .gitignore.
func generate(b *testing.B, root string, dirs, files int) {
	write(b, root, ".gitignore", "*.o\n")
	for d := range dirs {
		dir := filepath.Join(root, fmt.Sprintf("d%03d", d))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			b.Fatal(err)
		}
		for f := range files {
			body := fmt.Appendf(nil, "package p%d\n\n// file %d of directory %d\nvar x = %d\n", d, f, d, d*files+f)
			if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("f%03d.txt", f)), body, 0o644); err != nil {
				b.Fatal(err)
			}
		}
		if err := os.WriteFile(filepath.Join(dir, "build.o"), []byte("ignored"), 0o644); err != nil {
			b.Fatal(err)
		}
	}
}

// childCPU is the user and system time the process's waited-for children have used.
func childCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_CHILDREN, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkSnapshotSmall measures a tool turn's snapshot in a project-sized workspace: 1,000
// files in 50 directories, the files old enough for the snapshot to trust their stat data.
//
//	nochange  a snapshot of an unchanged tree (the common turn: echo, ls, cat, grep)
//	change1   one file changed, then a snapshot
//
// cpu-ms/op is the CPU time of git's processes per snapshot.
func BenchmarkSnapshotSmall(b *testing.B) {
	ws := b.TempDir()
	generate(b, ws, 50, 20)
	time.Sleep(100 * time.Millisecond) // past the racy window of every file
	r, err := Open(b.TempDir(), ws, Options{})
	if err != nil {
		b.Fatal(err)
	}
	if _, err := r.Snapshot(ctx, "s", 1); err != nil {
		b.Fatal(err)
	}
	b.Run("nochange", func(b *testing.B) {
		n := 0
		cpu := childCPU()
		for b.Loop() {
			n++
			cp, err := r.Snapshot(ctx, "s", int64(1+n))
			if err != nil {
				b.Fatal(err)
			}
			if cp.Changed {
				b.Fatal("an unchanged tree made a commit")
			}
		}
		b.ReportMetric(float64((childCPU()-cpu).Microseconds())/1000/float64(n), "cpu-ms/op")
	})
	b.Run("change1", func(b *testing.B) {
		n := 0
		cpu := childCPU()
		for b.Loop() {
			n++
			write(b, ws, "d007/f007.txt", fmt.Sprintf("change %d\n", n))
			cp, err := r.Snapshot(ctx, "s", int64(1000+n))
			if err != nil {
				b.Fatal(err)
			}
			if !cp.Changed {
				b.Fatal("a changed file made no commit")
			}
		}
		b.ReportMetric(float64((childCPU()-cpu).Microseconds())/1000/float64(n), "cpu-ms/op")
	})
}
