package tui

import (
	"bytes"
	"context"
	"io/fs"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"

	tea "charm.land/bubbletea/v2"
)

// Tab completes the word the composer ends with: a slash command at the start, or an @-mention
// of a workspace file. One candidate is taken whole; several are cut to what they share, and
// listed in the status line.

// filesMsg carries the workspace's files for @-mentions.
type filesMsg struct {
	files []string
	err   error
}

// mentionable is how many files the mention list holds at most.
const mentionable = 20000

// listFiles lists the workspace's files as git sees them — tracked, and untracked but not
// ignored — so .gitignore is respected; outside a git repository, a walk that skips hidden
// directories.
func listFiles(ctx context.Context, dir string) tea.Cmd {
	return func() tea.Msg {
		cmd := exec.CommandContext(ctx, "git", "-C", dir, "ls-files", "--cached", "--others", "--exclude-standard", "-z")
		if out, err := cmd.Output(); err == nil {
			var files []string
			for _, f := range bytes.Split(out, []byte{0}) {
				if len(f) > 0 && len(files) < mentionable {
					files = append(files, string(f))
				}
			}
			sort.Strings(files)
			return filesMsg{files: files}
		}
		var files []string
		err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return nil
			}
			if d.IsDir() && path != dir && strings.HasPrefix(d.Name(), ".") {
				return filepath.SkipDir
			}
			if !d.IsDir() {
				rel, _ := filepath.Rel(dir, path)
				files = append(files, filepath.ToSlash(rel))
				if len(files) >= mentionable {
					return filepath.SkipAll
				}
			}
			return nil
		})
		sort.Strings(files)
		return filesMsg{files: files, err: err}
	}
}

// complete handles Tab in the composer.
func (m *Model) complete() tea.Cmd {
	v := m.composer.Value()
	start := strings.LastIndexAny(v, " \n\t") + 1
	word := v[start:]
	var cands []string
	switch {
	case start == 0 && strings.HasPrefix(word, "/"):
		for _, c := range commands {
			if strings.HasPrefix("/"+c.name, word) {
				cands = append(cands, "/"+c.name)
			}
		}
	case strings.HasPrefix(word, "@"):
		if m.files == nil {
			if m.opt.Workspace == "" {
				m.flash = "@-mentions need the workspace (not known over --connect)"
				return nil
			}
			m.completeAfterList = true
			return listFiles(m.ctx, m.opt.Workspace)
		}
		cands = matchFiles(m.files, word[1:])
		for i := range cands {
			cands[i] = "@" + cands[i]
		}
	default:
		return nil
	}
	switch len(cands) {
	case 0:
		m.flash = "no completion for " + word
		return nil
	case 1:
		m.composer.SetValue(v[:start] + cands[0] + " ")
	default:
		if p := commonPrefix(cands); len(p) > len(word) {
			m.composer.SetValue(v[:start] + p)
		}
		shown := cands[:min(len(cands), 6)]
		m.flash = strings.Join(shown, "  ")
		if len(cands) > len(shown) {
			m.flash += "  …"
		}
	}
	m.composer.MoveToEnd()
	m.layout()
	return nil
}

// filesListed takes the workspace's files, and finishes the completion that asked for them.
func (m *Model) filesListed(msg filesMsg) tea.Cmd {
	m.files = msg.files
	if m.files == nil {
		m.files = []string{}
	}
	if m.completeAfterList {
		m.completeAfterList = false
		return m.complete()
	}
	return nil
}

// matchFiles returns the files whose path starts with q, else those whose name starts with q,
// else those whose path holds q.
func matchFiles(files []string, q string) []string {
	var byPath, byName, byPart []string
	lq := strings.ToLower(q)
	for _, f := range files {
		lf := strings.ToLower(f)
		switch {
		case strings.HasPrefix(f, q):
			byPath = append(byPath, f)
		case strings.HasPrefix(strings.ToLower(filepath.Base(f)), lq):
			byName = append(byName, f)
		case strings.Contains(lf, lq):
			byPart = append(byPart, f)
		}
	}
	switch {
	case len(byPath) > 0:
		return byPath
	case len(byName) > 0:
		return byName
	}
	return byPart
}

func commonPrefix(ss []string) string {
	p := ss[0]
	for _, s := range ss[1:] {
		for !strings.HasPrefix(s, p) {
			p = p[:len(p)-1]
		}
	}
	return p
}
