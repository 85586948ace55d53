package main

import (
	"errors"

	"github.com/reinhq/rein/internal/external"
)

// newCodex builds the Codex back-end (codex app-server). The back-end lives in
// internal/external/codex; this is the one line that connects it:
//
//	return codex.New(codex.Options{Path: path}), nil
func newCodex(path string) (external.Backend, error) {
	_ = path
	return nil, errors.New("this build of rein has no Codex back-end yet")
}
