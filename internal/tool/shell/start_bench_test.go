package shell

import (
	"context"
	"testing"

	"github.com/reinhq/rein/internal/record"
)

// BenchmarkTrueSandboxed is BenchmarkTrue under each sandbox this machine can apply: Landlock and
// seccomp alone ("confined": the shell starts directly, through the sandbox's helper) and with a
// PID namespace per command too ("contained": the helper and a supervisor).
func BenchmarkTrueSandboxed(b *testing.B) {
	for _, mode := range []string{"confined", "contained"} {
		b.Run(mode, func(b *testing.B) {
			requireSandbox(b, mode == "contained")
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
