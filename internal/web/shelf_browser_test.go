package web_test

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/reinhq/rein/internal/host"
	"github.com/reinhq/rein/internal/session"
)

// TestWebConversations: New conversation leaves no empty conversation behind; search finds a
// conversation by its title and by its text; archive, delete and restore move it between the
// list's views, recorded by the host; and a deletion older than host.DeleteAfter is removed when
// the host next starts.
func TestWebConversations(t *testing.T) {
	b := startBrowser(t)
	r := newRig(t, b, `[{"text":"The zebra is striped."},{"text":"Noted."}]`)
	r.open()
	r.wait("one conversation", `return document.querySelectorAll(".conv").length === 1`)
	for i := 0; i < 3; i++ {
		r.do(chromedp.Click(chromedp.ID("new-conv")))
	}
	r.wait("the page settled", `return document.documentElement.dataset.ready === "1"`)
	if vs, _ := r.h.List(); len(vs) != 1 {
		t.Fatalf("three New conversation clicks on an empty conversation left %d conversations", len(vs))
	}
	first := r.view().ID
	r.do(chromedp.SendKeys(chromedp.ID("input"), "tell me about the walrus"+kb.Enter))
	r.wait("the reply", `return document.querySelector(".timeline").textContent.includes("The zebra is striped.")`)
	r.do(chromedp.Click(chromedp.ID("new-conv")))
	r.wait("two conversations", `return document.querySelectorAll(".conv").length === 2`)
	r.do(chromedp.SendKeys(chromedp.ID("input"), "another topic"+kb.Enter))
	r.wait("the second reply", `return document.querySelector(".timeline").textContent.includes("Noted.")`)
	r.wait("both titled", `return [...document.querySelectorAll(".conv-title")].every((t) => t.textContent !== "New conversation")`)

	// Search: by the title, and by a reply's text with the words around it.
	r.search("walrus")
	r.wait("the title found", `const c = document.querySelectorAll(".conv"); return c.length === 1 && c[0].dataset.id === `+jsString(first))
	r.search("ZEBRA")
	r.wait("the text found", `const c = document.querySelectorAll(".conv"); return c.length === 1 && c[0].dataset.id === `+jsString(first)+` && !!c[0].querySelector(".conv-snippet") && c[0].querySelector(".conv-snippet").textContent.includes("zebra is striped")`)
	r.search("nothing-like-this")
	r.wait("nothing found", `return document.querySelectorAll(".conv").length === 0 && !!document.querySelector(".conv-none")`)
	r.search("")
	r.wait("the whole list again", `return document.querySelectorAll(".conv").length === 2`)

	// Archive the first: gone from the list, under Archived, restored from there.
	row := `[...document.querySelectorAll(".conv-list li")].find((li) => li.querySelector(".conv").dataset.id === ` + jsString(first) + `)`
	r.evalBool(`` + row + `.querySelector(".row-act.archive").click(); return true`)
	r.wait("archived", `return document.querySelectorAll(".conv").length === 1 && !`+row)
	r.waitHost("the archive recorded", func() bool { return r.shelfOf(first) == host.Archived })
	r.do(chromedp.Click(chromedp.CSS(`.shelf-tab[data-view="archived"]`)))
	r.wait("under Archived", `return document.querySelectorAll(".conv").length === 1 && !!`+row)
	r.evalBool(row + `.querySelector(".row-act.restore").click(); return true`)
	r.waitHost("the restore recorded", func() bool { return r.shelfOf(first) == "" })
	r.do(chromedp.Click(chromedp.CSS(`.shelf-tab[data-view="list"]`)))
	r.wait("back in the list", `return document.querySelectorAll(".conv").length === 2`)

	// Delete it: under Deleted, with the host's date of removal.
	r.evalBool(row + `.querySelector(".row-act.delete").click(); return true`)
	r.waitHost("the deletion recorded", func() bool { return r.shelfOf(first) == host.Deleted })
	r.do(chromedp.Click(chromedp.CSS(`.shelf-tab[data-view="deleted"]`)))
	r.wait("under Deleted", `return document.querySelectorAll(".conv").length === 1 && !!`+row)
	if v := r.viewOf(first); v.PurgeAt == "" {
		t.Errorf("a deleted conversation's view has no purge_at: %+v", v)
	}
	log, err := os.ReadFile(filepath.Join(session.ProjectDir(r.cfg.Root, r.cfg.Cwd), host.ShelfFile))
	if err != nil || len(splitLines(string(log))) != 3 {
		t.Errorf("the shelf log holds %q (%v), want three lines: archived, restored, deleted", log, err)
	}

	// A host started after DeleteAfter removes it for good.
	dir := filepath.Join(session.ProjectDir(r.cfg.Root, r.cfg.Cwd), first)
	if _, err := os.Stat(dir); err != nil {
		t.Fatalf("the deleted conversation's files went before their time: %v", err)
	}
	r.cfg.Now = func() time.Time { return time.Now().Add(host.DeleteAfter + time.Hour) }
	r.restart()
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("after DeleteAfter the files are still there: %v", err)
	}
	if vs, _ := r.h.List(); len(vs) != 1 || vs[0].ID == first {
		t.Errorf("after the purge the host lists %+v", vs)
	}
}

func (r *rig) viewOf(id string) (v struct{ Shelf, PurgeAt string }) {
	vs, err := r.h.List()
	if err != nil {
		r.t.Fatal(err)
	}
	for _, x := range vs {
		if x.ID == id {
			v.Shelf, v.PurgeAt = x.Shelf, x.PurgeAt
		}
	}
	return v
}

func (r *rig) shelfOf(id string) string { return r.viewOf(id).Shelf }

func splitLines(s string) []string {
	var out []string
	for len(s) > 0 {
		i := 0
		for i < len(s) && s[i] != '\n' {
			i++
		}
		out = append(out, s[:i])
		if i < len(s) {
			i++
		}
		s = s[i:]
	}
	return out
}

// search types q into the list's search field, as one input.
func (r *rig) search(q string) {
	r.t.Helper()
	r.evalBool(`const i = document.getElementById("conv-search"); i.value = ` + jsString(q) + `; i.dispatchEvent(new Event("input")); return true`)
}
