package main

import (
	"github.com/reinhq/rein/internal/provider/anthropic"
	"github.com/reinhq/rein/internal/provider/openai"
	"github.com/reinhq/rein/internal/tool"
)

// takesImages says whether model, reached through provider, reads images: read_file then answers
// an image file with the picture; else with a line saying what the file is. The simulator speaks
// Anthropic's wire and validates images as Anthropic does.
func takesImages(provider, model string) bool {
	switch provider {
	case "anthropic", "sim":
		return anthropic.TakesImages(model)
	case "openai", "openai-responses", "openrouter":
		return openai.TakesImages(model)
	}
	return false
}

// showImages tells the tools of runner that can return pictures (read_file, MCP tools) whether
// its session's model takes images.
func showImages(runner *tool.Runner, provider, model string) {
	on := takesImages(provider, model)
	for _, name := range runner.Tools.Names() {
		t, _ := runner.Tools.Get(name)
		if s, ok := t.(interface{ SetImages(bool) }); ok {
			s.SetImages(on)
		}
	}
}
