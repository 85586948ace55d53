package sandbox

import (
	"bytes"
	"encoding/binary"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	seccomp "github.com/elastic/go-seccomp-bpf"
	"github.com/elastic/go-seccomp-bpf/arch"
	"golang.org/x/net/bpf"
	"golang.org/x/sys/unix"
)

// TestRightsFor: what Landlock is asked to handle at each ABI. Writes always; TCP from ABI 4
// unless the network is allowed; signals from ABI 6, abstract sockets with them unless the
// network is allowed.
func TestRightsFor(t *testing.T) {
	for _, tt := range []struct {
		abi     int
		network bool
		want    rights
	}{
		{3, false, rights{FS: writeRights}},
		{4, false, rights{FS: writeRights, Net: netRights}},
		{4, true, rights{FS: writeRights}},
		{6, false, rights{FS: writeRights, Net: netRights, Scoped: unix.LANDLOCK_SCOPE_SIGNAL | unix.LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET}},
		{7, true, rights{FS: writeRights, Scoped: unix.LANDLOCK_SCOPE_SIGNAL}},
	} {
		if got := rightsFor(tt.abi, Policy{Mode: WorkspaceWrite, Network: tt.network}); got != tt.want {
			t.Errorf("ABI %d, network %v: %+v, want %+v", tt.abi, tt.network, got, tt.want)
		}
	}
	if writeRights&(unix.LANDLOCK_ACCESS_FS_READ_FILE|unix.LANDLOCK_ACCESS_FS_READ_DIR|unix.LANDLOCK_ACCESS_FS_EXECUTE) != 0 {
		t.Error("reading or executing is handled: a command could not read everywhere")
	}
}

// TestFilterAssembles: the seccomp policy assembles for every architecture rein builds for on
// Linux, and the socket rule refuses every family but AF_UNIX (run through a BPF interpreter).
func TestFilterAssembles(t *testing.T) {
	for _, a := range []*arch.Info{arch.X86_64, arch.AARCH64} {
		for _, network := range []bool{false, true} {
			p := filterPolicy(a, network)
			insts, err := p.Assemble()
			if err != nil {
				t.Fatalf("%s, network %v: %v", a.Name, network, err)
			}
			if a.Name != arch.X86_64.Name {
				continue // the interpreter below feeds x86-64's numbers
			}
			vm, err := bpf.NewVM(insts)
			if err != nil {
				t.Fatal(err)
			}
			for _, tt := range []struct {
				call   string
				family uint64
				denied bool
			}{
				{"socket", unix.AF_UNIX, false},
				{"socket", unix.AF_INET, !network},
				{"socket", unix.AF_INET6, !network},
				{"socket", unix.AF_NETLINK, !network},
				{"socket", unix.AF_UNIX | 1<<32, !network}, // a high word set is not AF_UNIX
				{"socketpair", unix.AF_INET, !network},
				{"io_uring_setup", 0, true},
				{"finit_module", 0, true},
				{"read", 0, false},
			} {
				ret, err := vm.Run(seccompData(a, tt.call, tt.family))
				if err != nil {
					t.Fatal(err)
				}
				if denied := uint32(ret) != uint32(seccomp.ActionAllow); denied != tt.denied {
					t.Errorf("network %v: %s(%#x) denied %v, want %v", network, tt.call, tt.family, denied, tt.denied)
				}
			}
		}
	}
}

// seccompData is struct seccomp_data for a call with a first argument, as x/net/bpf's VM reads
// it: the kernel loads 32-bit words in the machine's order, the VM in network order, so each word
// is written big-endian at the place a little-endian machine has it (an argument's low word
// first).
func seccompData(a *arch.Info, call string, arg0 uint64) []byte {
	b := make([]byte, 64)
	binary.BigEndian.PutUint32(b[0:], uint32(a.SyscallNames[call]))
	binary.BigEndian.PutUint32(b[4:], uint32(a.ID))
	binary.BigEndian.PutUint32(b[16:], uint32(arg0))
	binary.BigEndian.PutUint32(b[20:], uint32(arg0>>32))
	return b
}

// TestArchGuard: a call made with another architecture's convention is refused.
func TestArchGuard(t *testing.T) {
	raw, err := archGuard(arch.X86_64)
	if err != nil {
		t.Fatal(err)
	}
	insts := make([]bpf.Instruction, len(raw))
	for i, r := range raw {
		insts[i] = r.Disassemble()
	}
	vm, err := bpf.NewVM(insts)
	if err != nil {
		t.Fatal(err)
	}
	if ret, _ := vm.Run(seccompData(arch.X86_64, "read", 0)); uint32(ret) != unix.SECCOMP_RET_ALLOW {
		t.Errorf("a native call: %#x", ret)
	}
	if ret, _ := vm.Run(seccompData(arch.I386, "socketcall", 1)); uint32(ret) == unix.SECCOMP_RET_ALLOW {
		t.Errorf("an i386 call passed the guard")
	}
}

// TestCheckThisMachine reports what this machine supports; with REIN_REQUIRE_SANDBOX set (CI on a
// kernel with Landlock) it must support the default sandbox.
func TestCheckThisMachine(t *testing.T) {
	s := Check()
	var b bytes.Buffer
	s.Report(&b)
	t.Logf("\n%s", b.String())
	if err := s.Enforce(Policy{Mode: WorkspaceWrite}); err != nil && os.Getenv("REIN_REQUIRE_SANDBOX") != "" {
		t.Fatalf("REIN_REQUIRE_SANDBOX is set, and %v", err)
	}
}

// TestProbeOfAProgramThatIsNoHelper: a program that does not call Main first (here, a script that
// sleeps) is not taken for the helper: the probe gives up after probeWait, and what it started
// ends with its namespace.
func TestProbeOfAProgramThatIsNoHelper(t *testing.T) {
	if Check().Contain == "" {
		t.Skipf("no PID namespace here: %s", Check().ContainWhy)
	}
	exe := filepath.Join(t.TempDir(), "not-rein")
	if err := os.WriteFile(exe, []byte("#!/bin/sh\nsleep 1000 & wait\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	defer func(d time.Duration) { probeWait = d }(probeWait)
	probeWait = 200 * time.Millisecond
	start := time.Now()
	why := probe(exe, Check().userNS)
	if !strings.Contains(why, "did not answer") || time.Since(start) > 5*time.Second {
		t.Errorf("after %v: %q", time.Since(start), why)
	}
}

// TestNamespacesProbedWhenNeeded: making a sandbox, and Quick (what the default mode needs), start
// no probe of the namespaces on the way — a session's first request does not wait for a helper
// process — while the first question only the probe answers (Contains, as a command's start
// asks) has it made, once, with Check's answer; Quick's background probe is that one.
func TestNamespacesProbedWhenNeeded(t *testing.T) {
	checkOnce, quickOnce = sync.Once{}, sync.Once{}
	t.Cleanup(func() { Check() }) // leave the package's answer for the tests after
	before := probes.Load()
	box, err := New(Policy{Mode: WorkspaceWrite}, Config{Workspace: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer box.Close()
	if n := probes.Load() - before; n != 0 {
		t.Fatalf("New probed the namespaces %d times; want none until a command needs them", n)
	}
	got := box.Contains()
	if n := probes.Load() - before; n != 1 {
		t.Fatalf("Contains probed the namespaces %d times; want once", n)
	}
	if want := Check().Contain != ""; got != want {
		t.Fatalf("Contains = %v, Check's Contain %q", got, Check().Contain)
	}
	box.Contains()
	if n := probes.Load() - before; n != 1 {
		t.Fatalf("a second question probed again (%d probes)", n)
	}

	checkOnce, quickOnce = sync.Once{}, sync.Once{}
	before = probes.Load()
	q := Quick()
	if q.Contain != "" || q.Namespaces {
		t.Fatalf("Quick answered what only the probe knows: %+v", q)
	}
	if q.Default() != Check().Default() {
		t.Fatalf("Quick's default mode %s, Check's %s", q.Default(), Check().Default())
	}
	if n := probes.Load() - before; n != 1 {
		t.Fatalf("Quick then Check probed %d times; want once (Quick's in the background, which Check waits for)", n)
	}
}
