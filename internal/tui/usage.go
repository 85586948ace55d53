package tui

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/reinhq/rein/internal/catalog"
	"github.com/reinhq/rein/internal/record"
)

// tally is the conversation's token usage, exchange by exchange, from the records that carry it
// (an assistant message's usage, or a usage record for a request that left no message), with the
// cost where the catalog knows the model's price.
type tally struct {
	exchanges []spent
	total     spent
}

// spent is the usage of one exchange, or of the conversation.
type spent struct {
	prompt string
	u      catalog.Usage
	cost   float64
	priced bool // every request counted had a known price
	n      int  // requests counted
}

func (s *spent) add(provider, model string, u record.Usage) {
	cu := catalog.Usage{Input: u.Input, Output: u.Output, CacheRead: u.CacheRead, CacheWrite: u.CacheWrite}
	c, ok := catalog.Cost(provider, model, cu)
	if s.n == 0 {
		s.priced = true
	}
	s.n++
	s.u.Input += cu.Input
	s.u.Output += cu.Output
	s.u.CacheRead += cu.CacheRead
	s.u.CacheWrite += cu.CacheWrite
	s.cost += c
	s.priced = s.priced && ok
}

// take counts what a record says.
func (t *tally) take(p any, provider, model string) {
	switch b := p.(type) {
	case *record.UserPrompt:
		t.exchanges = append(t.exchanges, spent{prompt: b.Text})
	case *record.AssistantMessage:
		if b.Model != "" {
			model = b.Model
		}
		t.count(provider, model, b.Usage)
	case *record.UsageReported:
		t.count(provider, model, b.Usage)
	}
}

func (t *tally) count(provider, model string, u record.Usage) {
	if u == (record.Usage{}) {
		return
	}
	if len(t.exchanges) == 0 {
		t.exchanges = append(t.exchanges, spent{})
	}
	t.exchanges[len(t.exchanges)-1].add(provider, model, u)
	t.total.add(provider, model, u)
}

func (t *tally) reset() { *t = tally{} }

// money shows a cost in dollars, to a tenth of a cent under a dollar.
func money(c float64) string {
	if c < 1 {
		return "$" + strconv.FormatFloat(c, 'f', 3, 64)
	}
	return "$" + strconv.FormatFloat(c, 'f', 2, 64)
}

// summary is a usage in a few words: tokens in (with the cache's share), out, and the cost.
func (s spent) summary() string {
	in := s.u.Input + s.u.CacheRead + s.u.CacheWrite
	out := fmt.Sprintf("%s in", compact(in))
	if s.u.CacheRead+s.u.CacheWrite > 0 {
		out += fmt.Sprintf(" (cache %s read, %s written)", compact(s.u.CacheRead), compact(s.u.CacheWrite))
	}
	out += fmt.Sprintf(" · %s out", compact(s.u.Output))
	if s.priced {
		out += " · " + money(s.cost)
	}
	return out
}

// usageLines is /usage: each exchange's usage, and the conversation's.
func (m *Model) usageLines() []string {
	t := &m.tally
	if t.total.n == 0 {
		return []string{sty.dim.Render("no usage recorded yet in this conversation")}
	}
	out := []string{sty.bold.Render("Usage")}
	for i, x := range t.exchanges {
		if x.n == 0 {
			continue
		}
		p := strings.ReplaceAll(x.prompt, "\n", " ")
		if p == "" {
			p = "(before the first prompt)"
		}
		out = append(out, fmt.Sprintf("  %3d  %s", i+1, truncate(p, 60)), "       "+x.summary())
	}
	reqs := fmt.Sprintf("%d requests", t.total.n)
	if t.total.n == 1 {
		reqs = "1 request"
	}
	out = append(out, "  all  "+reqs, "       "+t.total.summary())
	if t.total.priced {
		out = append(out, sty.dim.Render("  prices as of "+catalog.PricesAsOf+" (internal/catalog)"))
	} else {
		out = append(out, sty.dim.Render("  no cost shown: "+m.model+" has no price in the catalog"))
	}
	return out
}

func truncate(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}

// modelLines is /model without a name: the model in use and the provider's known models, numbered
// for /model <n>.
func (m *Model) modelLines() []string {
	out := []string{fmt.Sprintf("model: %s %s · context window %s tokens", m.provider, m.model, compact(m.window))}
	known := catalog.Models(m.provider)
	if len(known) == 0 {
		return append(out, sty.dim.Render("  the catalog knows no models of "+m.provider+"; /model <name> switches to any"))
	}
	for i, k := range known {
		mark := "  "
		if k.ID == m.model {
			mark = "● "
		}
		price := "no price known"
		if k.Price != nil {
			price = fmt.Sprintf("$%g in · $%g out per Mtok", k.Price.Input, k.Price.Output)
		}
		line := fmt.Sprintf("  %s%d  %-30s %6s  %s", mark, i+1, k.ID, compact(k.Window), sty.dim.Render(price))
		if k.Note != "" {
			line += sty.dim.Render(" · " + k.Note)
		}
		out = append(out, line)
	}
	return append(out, sty.dim.Render("  /model <n> or /model <name> switches this conversation (prices as of "+catalog.PricesAsOf+")"))
}

// modelArg turns /model's argument into a model name: a number picks from the known models.
func (m *Model) modelArg(arg string) string {
	if n, err := strconv.Atoi(arg); err == nil {
		if known := catalog.Models(m.provider); n >= 1 && n <= len(known) {
			return known[n-1].ID
		}
	}
	return arg
}
