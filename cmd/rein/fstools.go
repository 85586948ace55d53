package main

import "github.com/reinhq/rein/internal/tool"

// workspaceTools are the file tools, confined to the workspace.
func workspaceTools(ws string) ([]tool.Tool, error) { return nil, nil }
