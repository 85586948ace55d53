package host

import (
	"net/http"

	"github.com/reinhq/rein/internal/catalog"
)

// modelsAnswer is GET /api/models: the host's provider and model, and every provider's known
// models with their windows and prices (internal/catalog), dated.
type modelsAnswer struct {
	Provider   string                     `json:"provider"`
	Model      string                     `json:"model"`
	PricesAsOf string                     `json:"prices_as_of"`
	Providers  map[string][]catalog.Model `json:"providers"`
}

func (s *Server) modelRoutes() {
	s.mux.Handle("GET /api/models", s.guard(func(w http.ResponseWriter, r *http.Request) error {
		a := modelsAnswer{Provider: s.h.cfg.Provider, Model: s.h.cfg.Model, PricesAsOf: catalog.PricesAsOf, Providers: map[string][]catalog.Model{}}
		for _, p := range catalog.Providers() {
			a.Providers[p] = catalog.Models(p)
		}
		writeJSON(w, 200, a)
		return nil
	}))
}
