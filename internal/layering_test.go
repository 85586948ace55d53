// Package internal_test holds the layering of rein's packages (DESIGN §2) as a test: every arrow
// the design allows and forbids, checked against what `go list -deps` says each package links.
package internal_test

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/reinhq/rein/"

// rule is one statement of the layering. Patterns name packages relative to the module
// ("internal/fold"), a subtree with "/..." ("internal/provider/..."), every package with "...",
// and a package outside the module by its full path ("modernc.org/sqlite/...").
type rule struct {
	who    string   // the packages the rule is about
	except []string // packages among them it is not about
	not    []string // what none of them may link, directly or through another package
	only   []string // when set, the only packages outside the standard library they may link
	direct []string // standard packages they may not import themselves
	why    string
}

// layers is DESIGN §2, arrow by arrow.
var layers = []rule{
	{who: "internal/record", only: []string{}, direct: impure,
		why: "the record is the vocabulary: the standard library only, and pure"},
	{who: "internal/fold", only: []string{"internal/record"}, direct: impure,
		why: "the fold is pure: the standard library and the record only"},
	{who: "internal/api", only: []string{"internal/record"},
		why: "the wire is what a client links: the record vocabulary and the standard library"},
	{who: "internal/journal", not: []string{"internal/fold", "internal/session", "internal/agent", "internal/host", "internal/tool/...", "internal/provider/...", "internal/api"},
		why: "the journal knows bytes and files, not meaning"},
	{who: "internal/session", not: []string{"internal/agent", "internal/host", "internal/tool/...", "internal/provider/...", "internal/api"},
		why: "the session is the single writer under the agent: it knows the fold and the journal, not the loop or the host"},
	{who: "internal/provider/...", not: []string{"internal/agent", "internal/session", "internal/host", "internal/tool/...", "internal/journal", "internal/fold"},
		why: "a provider adapter translates between neutral types and a vendor's wire; it knows no loop, session or tool"},
	{who: "internal/tool/...", not: []string{"internal/agent", "internal/host"},
		why: "tools are run by the agent; they do not reach back up into it or the host"},
	{who: "internal/mcp", not: []string{"internal/agent", "internal/host", "internal/session", "internal/journal", "internal/fold"},
		why: "MCP servers are tools: they know the tool layer and the record's vocabulary, not the loop, the session or the host"},
	{who: "...", except: []string{"internal/mcp", "cmd/..."}, not: []string{"github.com/modelcontextprotocol/go-sdk/..."},
		why: "the MCP SDK stays behind internal/mcp"},
	{who: "internal/external/...", not: []string{"internal/agent", "internal/host", "internal/session", "internal/journal", "internal/fold", "internal/tool/..."},
		why: "a back-end drives one agent program's protocol and reports what it does; the agent records it"},
	{who: "internal/agent", not: []string{"internal/host"},
		why: "the agent runs one conversation; the host runs the agents"},
	{who: "internal/host", not: []string{"internal/tui", "internal/client", "internal/web", "cmd/..."},
		why: "the host serves clients; it does not link them (cmd/rein hands it the web chat's files)"},
	{who: "internal/console", not: []string{"internal/host", "internal/client", "internal/tui", "internal/web", "internal/api", "modernc.org/sqlite/..."},
		why: "the console prints sessions in-process for rein run, show and sessions; it reaches no host, client or UI"},
	{who: "internal/client", not: []string{"internal/host", "internal/agent", "internal/session", "internal/journal", "internal/fold", "internal/tool/...", "internal/fsys", "modernc.org/sqlite/..."},
		why: "the client speaks HTTP in the wire's types (internal/api)"},
	{who: "internal/tui", not: []string{"internal/host", "internal/agent", "internal/session", "internal/journal", "internal/fold", "internal/tool/...", "internal/fsys", "modernc.org/sqlite/..."},
		why: "a UI reaches the host only through internal/client and internal/api"},
	{who: "internal/web", not: []string{"internal/host", "internal/agent", "internal/session", "internal/journal", "internal/fold", "internal/tool/...", "internal/fsys", "modernc.org/sqlite/..."},
		why: "a UI reaches the host only through the API"},
	{who: "...", except: []string{"internal/host", "cmd/..."}, not: []string{"modernc.org/sqlite/..."},
		why: "SQLite is the host's conversation index, nobody else's"},
	{who: "...", except: []string{"internal/store/pgstore", "internal/store/pgtest", "cmd/..."}, not: []string{"github.com/jackc/pgx/v5/..."},
		why: "the PostgreSQL driver stays behind the store that keeps conversations there (and the test server's helper)"},
	{who: "internal/store", only: []string{},
		why: "what the host and the stores agree on is plain data and errors"},
	{who: "...", not: []string{"cmd/..."},
		why: "cmd/rein wires everything; nothing imports it"},
}

// impure are the standard packages the fold and the record never import: no I/O, clock,
// randomness, logging or locks (time and ids arrive inside records).
var impure = []string{"os", "net", "time", "math/rand", "math/rand/v2", "log", "log/slog", "sync"}

// pkg is one package as go list describes it.
type pkg struct {
	path    string
	imports []string
	std     bool
}

// graph lists the module's packages and everything they link, with their imports.
func graph(t *testing.T) map[string]pkg {
	t.Helper()
	cmd := exec.Command("go", "list", "-deps", "-f", "{{.ImportPath}}\t{{.Standard}}\t{{join .Imports \" \"}}\t{{.Dir}}", "./...")
	cmd.Dir = ".." // the module's root
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, stderr.String())
	}
	g := map[string]pkg{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		f := strings.Split(sc.Text(), "\t")
		if len(f) != 4 {
			t.Fatalf("go list said %q", sc.Text())
		}
		g[f[0]] = pkg{path: f[0], std: f[1] == "true", imports: strings.Fields(f[2])}
		if strings.HasPrefix(f[0], module) {
			watch(t, f[3])
		}
	}
	return g
}

// watch reads a package's directory and stats its Go files, so that go test's cache, which
// knows nothing of what go list read, reruns this test when a file is added, removed or edited.
func watch(t *testing.T, dir string) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".go") {
			if _, err := os.Stat(filepath.Join(dir, e.Name())); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// matches reports whether package path p matches pattern pat.
func matches(pat, p string) bool {
	if pat == "..." {
		return strings.HasPrefix(p, module)
	}
	if !strings.Contains(strings.SplitN(pat, "/", 2)[0], ".") {
		pat = module + pat
	}
	if base, ok := strings.CutSuffix(pat, "/..."); ok {
		return p == base || strings.HasPrefix(p, base+"/")
	}
	return p == pat
}

func matchesAny(pats []string, p string) bool {
	return slices.ContainsFunc(pats, func(pat string) bool { return matches(pat, p) })
}

// path returns the chain of imports from a to b, for a refusal that says how b is reached.
func path(g map[string]pkg, a, b string) []string {
	prev := map[string]string{a: ""}
	queue := []string{a}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		if p == b {
			var chain []string
			for ; p != ""; p = prev[p] {
				chain = append([]string{strings.TrimPrefix(p, module)}, chain...)
			}
			return chain
		}
		for _, i := range g[p].imports {
			if _, seen := prev[i]; !seen {
				prev[i] = p
				queue = append(queue, i)
			}
		}
	}
	return nil
}

// violations checks every rule against g, saying for each wrong arrow which rule it breaks and
// by which chain of imports.
func violations(g map[string]pkg, rules []rule) []string {
	var out []string
	var paths []string
	for p := range g {
		paths = append(paths, p)
	}
	slices.Sort(paths)
	for _, r := range rules {
		for _, p := range paths {
			if !strings.HasPrefix(p, module) || !matches(r.who, p) || matchesAny(r.except, p) {
				continue
			}
			name := strings.TrimPrefix(p, module)
			for _, dep := range paths {
				if dep == p || g[dep].std || path(g, p, dep) == nil {
					continue
				}
				bad := matchesAny(r.not, dep) || (r.only != nil && !matchesAny(r.only, dep))
				if bad {
					out = append(out, name+" links "+strings.TrimPrefix(dep, module)+" ("+strings.Join(path(g, p, dep), " → ")+"): "+r.why)
				}
			}
			for _, i := range g[p].imports {
				if slices.Contains(r.direct, i) {
					out = append(out, name+" imports "+i+": "+r.why)
				}
			}
		}
	}
	return out
}

// TestLayering: the module's packages link only what DESIGN §2 lets them.
func TestLayering(t *testing.T) {
	g := graph(t)
	for _, want := range []string{"internal/record", "internal/fold", "internal/api", "internal/journal", "internal/session", "internal/agent",
		"internal/host", "internal/client", "internal/tui", "internal/web", "internal/provider", "internal/tool", "internal/console", "cmd/rein"} {
		if _, ok := g[module+want]; !ok {
			t.Errorf("go list did not list %s: the rules about it check nothing", want)
		}
	}
	for _, v := range violations(g, layers) {
		t.Error(v)
	}
}

// TestLayeringCatchesWrongArrows: each rule refuses the arrow it forbids, in a graph made to
// break it, and names the chain of imports.
func TestLayeringCatchesWrongArrows(t *testing.T) {
	m := func(s string) string {
		if strings.Contains(strings.SplitN(s, "/", 2)[0], ".") {
			return s
		}
		return module + s
	}
	build := func(arrows ...[2]string) map[string]pkg {
		g := map[string]pkg{}
		for _, std := range []string{"fmt", "os", "sync", "encoding/json"} {
			g[std] = pkg{path: std, std: true}
		}
		for _, a := range arrows {
			from, to := m(a[0]), a[1]
			if _, ok := g[to]; !ok || !g[to].std {
				to = m(to)
				if _, ok := g[to]; !ok {
					g[to] = pkg{path: to}
				}
			}
			p := g[from]
			p.path = from
			p.imports = append(p.imports, to)
			g[from] = p
		}
		return g
	}
	for _, c := range []struct {
		name   string
		arrows [][2]string
		want   string
	}{
		{"the record links the fold", [][2]string{{"internal/record", "internal/fold"}}, "internal/record links internal/fold"},
		{"the record opens files", [][2]string{{"internal/record", "os"}}, "internal/record imports os"},
		{"the fold takes a lock", [][2]string{{"internal/fold", "sync"}}, "internal/fold imports sync"},
		{"the fold links a module", [][2]string{{"internal/fold", "example.com/x"}}, "internal/fold links example.com/x"},
		{"the wire links the fold", [][2]string{{"internal/api", "internal/fold"}}, "internal/api links internal/fold"},
		{"the journal links the fold", [][2]string{{"internal/journal", "internal/fold"}}, "internal/journal links internal/fold"},
		{"the session links the agent", [][2]string{{"internal/session", "internal/agent"}}, "internal/session links internal/agent"},
		{"the session links the host", [][2]string{{"internal/session", "internal/host"}}, "internal/session links internal/host"},
		{"an adapter links a tool", [][2]string{{"internal/provider/openai", "internal/tool/shell"}}, "internal/provider/openai links internal/tool/shell"},
		{"an adapter links the session", [][2]string{{"internal/provider", "internal/session"}}, "internal/provider links internal/session"},
		{"a tool links the agent", [][2]string{{"internal/tool/fs", "internal/agent"}}, "internal/tool/fs links internal/agent"},
		{"the agent links the host", [][2]string{{"internal/agent", "internal/host"}}, "internal/agent links internal/host"},
		{"the host links the client", [][2]string{{"internal/host", "internal/client"}}, "internal/host links internal/client"},
		{"the host links the tui", [][2]string{{"internal/host", "internal/tui"}}, "internal/host links internal/tui"},
		{"the client links the host through another package", [][2]string{{"internal/client", "internal/api"}, {"internal/api", "internal/host"}},
			"internal/client links internal/host (internal/client → internal/api → internal/host)"},
		{"the client links the journal", [][2]string{{"internal/client", "internal/journal"}}, "internal/client links internal/journal"},
		{"the tui links the session", [][2]string{{"internal/tui", "internal/session"}}, "internal/tui links internal/session"},
		{"the tui links the fold", [][2]string{{"internal/tui", "internal/fold"}}, "internal/tui links internal/fold"},
		{"the web chat links the agent", [][2]string{{"internal/web", "internal/agent"}}, "internal/web links internal/agent"},
		{"the client links SQLite", [][2]string{{"internal/client", "modernc.org/sqlite"}}, "internal/client links modernc.org/sqlite"},
		{"the session links SQLite", [][2]string{{"internal/session", "modernc.org/sqlite/lib"}}, "internal/session links modernc.org/sqlite/lib"},
		{"a package links cmd", [][2]string{{"internal/redact", "cmd/rein"}}, "internal/redact links cmd/rein"},
	} {
		got := violations(build(c.arrows...), layers)
		if !slices.ContainsFunc(got, func(v string) bool { return strings.HasPrefix(v, c.want) }) {
			t.Errorf("%s: no violation starting %q in %q", c.name, c.want, got)
		}
	}
	// The allowed arrows are allowed.
	ok := build([2]string{"internal/fold", "internal/record"}, [2]string{"internal/api", "internal/record"}, [2]string{"internal/client", "internal/api"},
		[2]string{"internal/tui", "internal/client"}, [2]string{"internal/host", "internal/session"}, [2]string{"internal/host", "modernc.org/sqlite"},
		[2]string{"cmd/rein", "internal/host"}, [2]string{"cmd/rein", "internal/tui"}, [2]string{"internal/record", "fmt"})
	if got := violations(ok, layers); len(got) != 0 {
		t.Errorf("allowed arrows refused: %q", got)
	}
}
