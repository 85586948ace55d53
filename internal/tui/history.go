package tui

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// historyKept is how many prompts the history file keeps; older ones are dropped when it is
// rewritten.
const historyKept = 1000

// HistoryPath is where a workspace's prompt history lives: under rein's state directory, one
// file per workspace, named as the workspace's sessions directory is.
func HistoryPath(root, slug string) string {
	return filepath.Join(root, "history", slug+".jsonl")
}

// loadHistory reads a prompt history: one JSON string per line, oldest first. A missing file is
// an empty history; a line that is not a JSON string (a torn last write) is skipped.
func loadHistory(path string) ([]string, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read the prompt history: %w", err)
	}
	var out []string
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 64*1024), 16<<20)
	for sc.Scan() {
		var s string
		if json.Unmarshal(sc.Bytes(), &s) == nil && s != "" {
			out = append(out, s)
		}
	}
	if len(out) > historyKept {
		out = out[len(out)-historyKept:]
	}
	return out, nil
}

// appendHistory adds one prompt to the history file, rewriting the file without its oldest
// prompts when it has grown past twice what is kept.
func appendHistory(path string, text string, all []string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fmt.Errorf("keep the prompt history: %w", err)
	}
	line, err := json.Marshal(text)
	if err != nil {
		return fmt.Errorf("keep the prompt history: %w", err)
	}
	if fi, err := os.Stat(path); err == nil && fi.Size() > 0 && len(all) >= historyKept && fi.Size() > int64(2*historyKept*64) {
		var b strings.Builder
		for _, s := range all[max(0, len(all)-historyKept):] {
			l, _ := json.Marshal(s)
			b.Write(l)
			b.WriteByte('\n')
		}
		tmp := path + ".tmp"
		if err := os.WriteFile(tmp, []byte(b.String()), 0o600); err != nil {
			return fmt.Errorf("keep the prompt history: %w", err)
		}
		if err := os.Rename(tmp, path); err != nil {
			return fmt.Errorf("keep the prompt history: %w", err)
		}
		return nil
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return fmt.Errorf("keep the prompt history: %w", err)
	}
	if _, err := f.Write(append(line, '\n')); err != nil {
		f.Close()
		return fmt.Errorf("keep the prompt history: %w", err)
	}
	return f.Close()
}

// search is a reverse search of the history (Ctrl+R): the query typed so far and the match shown.
type search struct {
	query string
	at    int    // index in history of the match shown, or -1
	draft string // the composer before the search, restored on cancel
}

// find looks for the newest prompt before index from that holds the query.
func (m *Model) find(from int) int {
	q := strings.ToLower(m.search.query)
	for i := min(from, len(m.history)-1); i >= 0; i-- {
		if strings.Contains(strings.ToLower(m.history[i]), q) {
			return i
		}
	}
	return -1
}

// searchKey handles a key while the reverse search is open. Enter takes the match into the
// composer, Esc or Ctrl+G puts back what was there, Ctrl+R looks further back.
func (m *Model) searchKey(s string, text string) {
	sr := m.search
	switch s {
	case "ctrl+r":
		if sr.at > 0 {
			if i := m.find(sr.at - 1); i >= 0 {
				sr.at = i
			}
		}
	case "enter", "right", "end", "tab":
		if sr.at >= 0 {
			m.composer.SetValue(m.history[sr.at])
		}
		m.search = nil
		m.composer.MoveToEnd()
		m.layout()
		return
	case "esc", "ctrl+g", "ctrl+c":
		m.composer.SetValue(sr.draft)
		m.search = nil
		m.layout()
		return
	case "backspace":
		if sr.query != "" {
			r := []rune(sr.query)
			sr.query = string(r[:len(r)-1])
			sr.at = m.find(len(m.history) - 1)
		}
	default:
		if text == "" {
			return
		}
		sr.query += text
		start := len(m.history) - 1
		if sr.at >= 0 {
			start = sr.at // the match shown stays while it still holds the longer query
		}
		sr.at = m.find(start)
	}
	if sr.at >= 0 {
		m.composer.SetValue(m.history[sr.at])
	} else {
		m.composer.SetValue("")
	}
	m.layout()
}

// searchLine is the status line's left side during a search.
func (m *Model) searchLine() string {
	if m.search.at < 0 && m.search.query != "" {
		return fmt.Sprintf("search %q: none · Esc", m.search.query)
	}
	return fmt.Sprintf("search %q · Ctrl+R older · Enter · Esc", m.search.query)
}
