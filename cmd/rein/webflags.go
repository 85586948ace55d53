package main

import (
	"github.com/reinhq/rein/internal/tool/fetch"
	"github.com/spf13/pflag"

	osbox "github.com/reinhq/rein/internal/sandbox"
)

// webFlags are the settings of the model's reach onto the web: web_fetch (whether it may run when
// the sandbox keeps commands off the network, and whether it may reach private addresses) and
// the provider's own web search.
type webFlags struct {
	fetchAllowed bool // --allow-web-fetch: web_fetch runs even when the sandbox has no network
	fetchPrivate bool // --web-fetch-private: web_fetch may reach loopback, private and link-local addresses
	search       bool // --web-search: offer the provider's server-side web search tool
}

func (f *webFlags) register(fs *pflag.FlagSet) {
	fs.BoolVar(&f.fetchAllowed, "allow-web-fetch", false, "let the web_fetch tool reach the web even when the sandbox keeps commands off the network")
	fs.BoolVar(&f.fetchPrivate, "web-fetch-private", false, "let web_fetch reach loopback, private and link-local addresses (refused by default)")
	fs.BoolVar(&f.search, "web-search", false, "offer the provider's own web search (Anthropic's web search tool, the Responses API's web_search) where the provider has one")
}

// fetchOptions are web_fetch's options under the sandbox box: offline when the sandbox keeps
// commands off the network and neither --allow-network nor --allow-web-fetch lets it through.
func (f webFlags) fetchOptions(box osbox.Policy) fetch.Options {
	o := fetch.Options{AllowPrivate: f.fetchPrivate}
	if box.Mode != osbox.Off && box.Mode != "" && !box.Network && !f.fetchAllowed {
		o.Offline = "the sandbox (" + box.String() + ") keeps this session off the network, web_fetch included; " +
			"the person can allow it with --allow-web-fetch (or --allow-network, which lets commands out too)"
	}
	return o
}

// check refuses --web-search for a provider with no web search tool of its own.
func (f webFlags) check(provider string) error {
	switch {
	case !f.search:
		return nil
	case provider == "anthropic", provider == "openai-responses", provider == "sim":
		return nil
	}
	return exitf(exitUsage, "--web-search: provider %s has no web search tool of its own (Chat Completions has none); "+
		"use --provider anthropic or openai-responses, or drop --web-search (web_fetch still reads pages)", provider)
}
