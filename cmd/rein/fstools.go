package main

import (
	"github.com/reinhq/rein/internal/tool"
	fstool "github.com/reinhq/rein/internal/tool/fs"
)

// workspaceTools are the file tools (read_file, write_file, edit_file, glob, grep), confined to
// the workspace with os.Root.
func workspaceTools(ws string) ([]tool.Tool, error) {
	w, err := fstool.Open(ws)
	if err != nil {
		return nil, err
	}
	return w.Tools(), nil
}
