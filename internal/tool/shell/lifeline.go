package shell

import (
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"syscall"
)

// keeperScript is the lifeline's keeper: one bash process per rein process, started with the
// first command, that outlives rein by the moment it takes to end what rein leaves running. It
// reads the lifeline, a pipe whose only write end rein holds, on which rein names each command's
// process group as it starts ("+pgid") and as it is done with it ("-pgid"), and the cgroup under
// which a sandbox makes its commands' cgroups ("c" and the path, before the first), and at end of
// file — rein is gone, however it died — it SIGKILLs every group still named and every process
// under those cgroups (their cgroup.kill), removes those cgroups once empty, then exits. No
// signal is involved, so no interleaving of a Stop, a timeout and rein's death can get past it:
// every catchable signal that could reach it is ignored by the kernel (a trap with an empty
// action is SIG_IGN), and the read is a blocking read on a pipe. It leads a session of its own,
// outside every command's group, and holds no descriptor of any command.
//
// A group whose processes are all gone has nothing left to kill; a group with a live process
// keeps its id (POSIX reuses a process group id only once the group is empty), so the SIGKILL
// reaches every process that is still there. A cgroup named is rein's alone (named for rein's
// pid), so its cgroup.kill reaches only rein's commands.
const keeperScript = `trap '' HUP INT QUIT TERM USR1 USR2 PIPE ALRM TSTP TTIN TTOU XCPU XFSZ VTALRM PROF
__rein_groups=' '
__rein_roots=()
while IFS= read -r __rein_l; do
	case $__rein_l in
	+*) __rein_groups="$__rein_groups${__rein_l#+} " ;;
	-*) __rein_groups=${__rein_groups/ ${__rein_l#-} / } ;;
	c*) __rein_roots+=("${__rein_l#c}") ;;
	esac
done
for __rein_g in $__rein_groups; do kill -KILL -- "-$__rein_g" 2>/dev/null; done
for __rein_r in "${__rein_roots[@]}"; do echo 1 2>/dev/null >"$__rein_r/cgroup.kill"; done
for __rein_r in "${__rein_roots[@]}"; do
	for __rein_i in 1 2 3 4 5 6 7 8 9 10; do
		for __rein_c in "$__rein_r"/*/; do rmdir -- "$__rein_c" 2>/dev/null; done
		rmdir -- "$__rein_r" 2>/dev/null && break
		[ -d "$__rein_r" ] || break
		sleep 0.05 2>/dev/null || break
	done
done
`

// lifeline is rein's side of the keeper: the lifeline's write end and the groups named on it.
// Should the keeper die while rein lives, a new one is started and told every group still held.
type lifeline struct {
	mu     sync.Mutex
	bash   string
	w      *os.File        // the lifeline's write end, nil while no keeper runs
	gen    int             // counts the keepers started, so a late exit does not retire a newer one
	pid    int             // the current keeper's pid (tests)
	groups map[int]bool    // the groups held: started and not yet released
	roots  map[string]bool // the cgroups named, under which commands' cgroups are made
	exited chan struct{}   // closed when the current keeper exits (tests)
}

// keeper is the process's one lifeline: every command started directly (startDirect) is held on
// it, whichever Tool started it.
var keeper = &lifeline{groups: map[int]bool{}, roots: map[string]bool{}}

// hold names group pgid on the lifeline, starting a keeper with bash if none runs. When it
// returns nil, the group is killed if rein dies, however it dies.
func (l *lifeline) hold(bash string, pgid int) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.groups[pgid] = true
	if err := l.sendOrStart(bash, "+"+strconv.Itoa(pgid)); err != nil {
		delete(l.groups, pgid)
		return err
	}
	return nil
}

// holdCgroups names the cgroup root under which commands' cgroups are made, starting a keeper
// with bash if none runs, before the first is made. When it returns nil, every process under
// root is killed if rein dies, however it dies, and the cgroups removed.
func (l *lifeline) holdCgroups(bash, root string) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.roots[root] && l.w != nil {
		return nil
	}
	l.roots[root] = true
	if err := l.sendOrStart(bash, "c"+root); err != nil {
		delete(l.roots, root)
		return err
	}
	return nil
}

// sendOrStart writes line on the lifeline, or starts a keeper (which is told everything held,
// line included). l.mu is held.
func (l *lifeline) sendOrStart(bash, line string) error {
	if l.w != nil {
		if err := l.send(line); err == nil {
			return nil
		}
		l.retire()
	}
	if l.bash == "" {
		l.bash = bash
	}
	return l.start()
}

// release takes group pgid off the lifeline. It is called after the group's last SIGKILL and
// before its leader is reaped, so the keeper never signals a group id rein gave up.
func (l *lifeline) release(pgid int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.groups, pgid)
	if l.w != nil && l.send("-"+strconv.Itoa(pgid)) != nil {
		l.retire()
	}
}

func (l *lifeline) send(line string) error {
	_, err := l.w.Write([]byte(line + "\n"))
	return err
}

// retire forgets a keeper that cannot be written to; it ends by itself at end of file.
func (l *lifeline) retire() {
	l.w.Close()
	l.w = nil
}

// start starts a keeper and names every group held on its lifeline. l.mu is held.
func (l *lifeline) start() error {
	// Created close-on-exec: no other process rein starts holds the write end.
	r, w, err := os.Pipe()
	if err != nil {
		return fmt.Errorf("create the lifeline: %w", err)
	}
	cmd := exec.Command(l.bash, "-c", keeperScript, "rein-keeper")
	cmd.Stdin = r
	cmd.Env = []string{}
	cmd.Dir = "/"
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	err = cmd.Start()
	r.Close()
	if err != nil {
		w.Close()
		return fmt.Errorf("start the lifeline's keeper: %w", err)
	}
	l.w, l.pid = w, cmd.Process.Pid
	l.gen++
	gen, exited := l.gen, make(chan struct{})
	l.exited = exited
	go func() {
		cmd.Wait()
		close(exited)
		l.mu.Lock()
		defer l.mu.Unlock()
		if l.gen != gen {
			return
		}
		// The keeper died while rein lives (someone killed it): the groups it held need another.
		if l.w != nil {
			l.retire()
		}
		if len(l.groups) > 0 || len(l.roots) > 0 {
			l.start()
		}
	}()
	for r := range l.roots {
		if err := l.send("c" + r); err != nil {
			l.retire()
			return fmt.Errorf("write the lifeline: %w", err)
		}
	}
	for g := range l.groups {
		if err := l.send("+" + strconv.Itoa(g)); err != nil {
			l.retire()
			return fmt.Errorf("write the lifeline: %w", err)
		}
	}
	return nil
}
