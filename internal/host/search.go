package host

import (
	"bufio"
	"encoding/json"
	"net/http"
	"os"
	"strings"
	"unicode/utf8"

	"github.com/reinhq/rein/internal/api"
	"github.com/reinhq/rein/internal/record"
)

// searchHit is one conversation a search found: its view and a line of the text that matched.
type searchHit struct {
	Conversation api.View `json:"conversation"`
	Snippet      string   `json:"snippet,omitempty"`
}

// searchMax is how many conversations a search answers at most.
const searchMax = 50

// search answers GET /api/search?q=: the conversations whose title or text (the person's prompts
// and the replies) holds q, any case, newest first, deleted ones left out.
func (s *Server) search(w http.ResponseWriter, r *http.Request) error {
	q := strings.TrimSpace(r.URL.Query().Get("q"))
	if q == "" {
		return errf(api.BadRequest, "q is required: the words to look for in titles and text")
	}
	views, err := s.h.List()
	if err != nil {
		return err
	}
	lq := strings.ToLower(q)
	hits := []searchHit{}
	for _, v := range views {
		if v.Shelf == Deleted {
			continue
		}
		if strings.Contains(strings.ToLower(v.Title), lq) {
			hits = append(hits, searchHit{Conversation: v})
		} else if c, err := s.h.Get(v.ID); err == nil {
			if snip, ok := textMatch(c.path, lq); ok {
				hits = append(hits, searchHit{Conversation: v, Snippet: snip})
			}
		}
		if len(hits) == searchMax {
			break
		}
	}
	writeJSON(w, 200, map[string]any{"query": q, "results": hits})
	return nil
}

// textMatch scans a record file's prompts and replies for lq, and returns the words around the
// first match.
func textMatch(path, lq string) (string, bool) {
	f, err := os.Open(path)
	if err != nil {
		return "", false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64*1024), 64<<20)
	var line struct {
		Kind    string          `json:"kind"`
		Payload json.RawMessage `json:"payload"`
	}
	for sc.Scan() {
		b := sc.Bytes()
		kind := ""
		switch {
		case strings.Contains(string(b[:min(len(b), 120)]), `"kind":"user_prompt"`):
			kind = string(record.KindUserPrompt)
		case strings.Contains(string(b[:min(len(b), 120)]), `"kind":"assistant_message"`):
			kind = string(record.KindAssistantMessage)
		case strings.Contains(string(b[:min(len(b), 120)]), `"kind":"steering"`):
			kind = string(record.KindSteering)
		default:
			continue
		}
		if json.Unmarshal(b, &line) != nil || line.Kind != kind {
			continue
		}
		var p struct {
			Text  string `json:"text"`
			Parts []struct {
				Type string `json:"type"`
				Text string `json:"text"`
			} `json:"parts"`
		}
		if json.Unmarshal(line.Payload, &p) != nil {
			continue
		}
		texts := []string{p.Text}
		for _, part := range p.Parts {
			if part.Type == string(record.PartText) {
				texts = append(texts, part.Text)
			}
		}
		for _, t := range texts {
			if i := strings.Index(strings.ToLower(t), lq); i >= 0 {
				return snippet(t, i, len(lq)), true
			}
		}
	}
	return "", false
}

// snippet is about 80 characters of t around [i, i+n), on one line.
func snippet(t string, i, n int) string {
	from, to := max(0, i-40), min(len(t), i+n+40)
	for from > 0 && !utf8.RuneStart(t[from]) {
		from--
	}
	for to < len(t) && !utf8.RuneStart(t[to]) {
		to++
	}
	s := strings.Join(strings.Fields(t[from:to]), " ")
	if from > 0 {
		s = "…" + s
	}
	if to < len(t) {
		s += "…"
	}
	return s
}
