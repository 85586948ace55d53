// Package web is rein's web chat: static files embedded in the binary and served by the host at
// /. It needs no build step: plain HTML, CSS and JavaScript modules that talk to the host API
// (docs/api.md).
package web

import (
	"embed"
	"io/fs"
)

//go:embed static
var static embed.FS

// Files returns the web chat's files, rooted at the directory that holds index.html.
func Files() fs.FS {
	sub, err := fs.Sub(static, "static")
	if err != nil {
		panic(err) // the embedded tree is fixed at build time
	}
	return sub
}
