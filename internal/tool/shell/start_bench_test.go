package shell

import (
	"context"
	"testing"

	"github.com/reinhq/rein/internal/record"
	"github.com/reinhq/rein/internal/sandbox"
)

// BenchmarkTrueSandboxed is BenchmarkTrue under each sandbox this machine can apply: Landlock and
// seccomp alone ("confined": the shell starts directly, through the sandbox's helper), with a
// PID namespace per command too ("contained": the helper and a supervisor), and started from the
// sandbox's confined thread in a cgroup per command ("held").
func BenchmarkTrueSandboxed(b *testing.B) {
	for _, mode := range []string{"confined", "contained", "held"} {
		b.Run(mode, func(b *testing.B) {
			requireSandbox(b, mode != "confined")
			if mode == "held" && sandbox.Check().Cgroups == "" {
				b.Skip(sandbox.Check().CgroupsWhy)
			}
			testSandbox = mode
			sh, _ := newTool(b, Options{})
			testSandbox = ""
			call := bashCall("true", 0)
			for b.Loop() {
				if r := sh.Run(context.Background(), call); r.Outcome != record.OK {
					b.Fatal(r.Content)
				}
			}
		})
	}
}
