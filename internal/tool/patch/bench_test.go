package patch

import (
	"context"
	"fmt"
	"strings"
	"testing"
)

// BenchmarkApply parses and applies a patch of 20 hunks to a 5,000-line file.
func BenchmarkApply(b *testing.B) {
	var file strings.Builder
	for i := range 5000 {
		fmt.Fprintf(&file, "line %d of the file\n", i)
	}
	var p strings.Builder
	p.WriteString("*** Begin Patch\n*** Update File: f\n")
	for h := range 20 {
		n := 100 + h*240
		fmt.Fprintf(&p, "@@\n line %d of the file\n-line %d of the file\n+line %d, changed\n line %d of the file\n", n, n+1, n+1, n+2)
	}
	p.WriteString("*** End Patch\n")
	text := file.String()
	b.SetBytes(int64(len(text)))
	b.ReportAllocs()
	for b.Loop() {
		pp, err := Parse(p.String())
		if err != nil {
			b.Fatal(err)
		}
		files := &memFiles{files: map[string]string{"f": text}}
		if _, err := Apply(context.Background(), files, pp); err != nil {
			b.Fatal(err)
		}
	}
}
