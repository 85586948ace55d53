package main

import (
	"github.com/reinhq/rein/internal/external"
	"github.com/reinhq/rein/internal/external/codex"
)

// newCodex builds the Codex back-end (codex app-server, internal/external/codex).
func newCodex(path string) (external.Backend, error) {
	return codex.New(codex.Options{Path: path}), nil
}
