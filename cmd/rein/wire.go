package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/reinhq/rein/internal/agent"
	"github.com/reinhq/rein/internal/provider"
	"github.com/reinhq/rein/internal/provider/anthropic"
	"github.com/reinhq/rein/internal/provider/openai"
	"github.com/reinhq/rein/internal/provider/sim"
)

// providerFlags are the flags every command that talks to a model takes.
type providerFlags struct {
	provider  string
	model     string
	baseURL   string
	window    int64
	simDelay  time.Duration
	simScript string
	// recorded: provider, model and base URL come from a resumed session's record, which comes
	// before the config file and the environment.
	recorded bool
}

func (f *providerFlags) register(fl interface {
	StringVar(*string, string, string, string)
	Int64Var(*int64, string, int64, string)
	DurationVar(*time.Duration, string, time.Duration, string)
}) {
	fl.StringVar(&f.provider, "provider", "", "anthropic, openai, openai-responses, openrouter or sim (default: the first whose key is set)")
	fl.StringVar(&f.model, "model", "", "the model (default: a sensible one for the provider)")
	fl.StringVar(&f.baseURL, "base-url", "", "the API base URL, for any OpenAI-compatible server (Ollama, vLLM, llama.cpp) or a proxy")
	fl.Int64Var(&f.window, "context-window", 0, "the model's context window in tokens (default: known per model)")
	fl.DurationVar(&f.simDelay, "sim-delay", 15*time.Millisecond, "with --provider sim: the delay between streamed chunks")
	fl.StringVar(&f.simScript, "sim-script", "", "with --provider sim: a JSON script for the simulator to play")
}

// wiring is a resolved provider: the loop's wire, and what the record says about it.
type wiring struct {
	name    string
	model   string
	baseURL string // as given (empty: the provider's public endpoint)
	window  int64
	wire    agent.Wire
	close   func()
}

type funcWire struct {
	encode   func(provider.Request) ([]byte, error)
	validate func([]byte) *provider.Violation
	send     func(context.Context, []byte, func(provider.Event)) (provider.Reply, error)
}

func (w funcWire) Encode(r provider.Request) ([]byte, error) { return w.encode(r) }
func (w funcWire) Validate(b []byte) *provider.Violation     { return w.validate(b) }
func (w funcWire) Send(ctx context.Context, b []byte, on func(provider.Event)) (provider.Reply, error) {
	return w.send(ctx, b, on)
}

// noProvider is the message a newcomer without a key sees.
const noProvider = `no model provider is configured.
Set one of ANTHROPIC_API_KEY, OPENAI_API_KEY or OPENROUTER_API_KEY (or pass --provider and --base-url
for a local OpenAI-compatible server), or try rein offline against its simulator:

  rein run --provider sim "list the files here"`

// resolveProvider turns flags and the environment into a wire. getenv is environ.
func resolveProvider(f providerFlags, getenv func(string) string, log io.Writer) (*wiring, error) {
	f = withSettings(f)
	addURLSecrets("base URL", f.baseURL)
	name := f.provider
	if name == "" {
		switch {
		case f.baseURL != "":
			name = "openai"
		case getenv("ANTHROPIC_API_KEY") != "":
			name = "anthropic"
		case getenv("OPENAI_API_KEY") != "":
			name = "openai"
		case getenv("OPENROUTER_API_KEY") != "":
			name = "openrouter"
		default:
			return nil, exitf(exitUsage, "%s", noProvider)
		}
	}
	w := &wiring{name: name, model: f.model, baseURL: f.baseURL, close: func() {}}
	client := &http.Client{Transport: &http.Transport{Proxy: http.ProxyFromEnvironment, MaxIdleConnsPerHost: 4, IdleConnTimeout: 90 * time.Second, ForceAttemptHTTP2: true}}
	switch name {
	case "anthropic":
		key := getenv("ANTHROPIC_API_KEY")
		if key == "" && f.baseURL == "" {
			return nil, exitf(exitUsage, "--provider anthropic needs ANTHROPIC_API_KEY in the environment (or --provider sim to try rein offline)")
		}
		if w.model == "" {
			w.model = "claude-sonnet-4-5"
		}
		c := anthropic.New(anthropic.Config{BaseURL: f.baseURL, APIKey: key, HTTPClient: client})
		w.wire = funcWire{anthropic.Encode, anthropic.Validate, c.Send}
	case "openai", "openrouter", "openai-responses":
		key := getenv("OPENAI_API_KEY")
		base := f.baseURL
		var headers http.Header
		if name == "openrouter" {
			key = getenv("OPENROUTER_API_KEY")
			if base == "" {
				base = "https://openrouter.ai/api/v1"
			}
			headers = openai.OpenRouterHeaders()
			if w.model == "" {
				w.model = "anthropic/claude-sonnet-4.5"
			}
		}
		if key == "" && base == "" {
			return nil, exitf(exitUsage, "--provider %s needs %s in the environment, or --base-url for a local server (or --provider sim to try rein offline)", name, map[bool]string{true: "OPENROUTER_API_KEY", false: "OPENAI_API_KEY"}[name == "openrouter"])
		}
		if w.model == "" {
			w.model = "gpt-5"
		}
		cfg := openai.Config{BaseURL: base, APIKey: key, HTTPClient: client, Headers: headers}
		if name == "openai-responses" {
			c := openai.NewResponses(cfg)
			w.wire = funcWire{openai.EncodeResponses, openai.ValidateResponses, c.Send}
		} else {
			c := openai.NewChat(cfg)
			w.wire = funcWire{openai.EncodeChat, openai.ValidateChat, c.Send}
		}
	case "sim":
		base, stop, err := startSim(f, log)
		if err != nil {
			return nil, err
		}
		w.close = stop
		if w.model == "" {
			w.model = sim.DefaultModel
		}
		c := anthropic.New(anthropic.Config{BaseURL: base, APIKey: "sim", HTTPClient: client})
		w.wire = funcWire{anthropic.Encode, anthropic.Validate, c.Send}
	default:
		return nil, exitf(exitUsage, "unknown provider %q: use anthropic, openai, openai-responses, openrouter or sim", name)
	}
	w.window = f.window
	if w.window == 0 {
		w.window = contextWindow(w.model)
	}
	return w, nil
}

// startSim starts the simulator in-process on a loopback port: a real HTTP server, so the
// session goes through the same client and wire bytes as with a real provider.
func startSim(f providerFlags, log io.Writer) (string, func(), error) {
	opts := sim.Options{Delay: f.simDelay}
	if f.simScript != "" {
		s, err := sim.LoadScript(f.simScript)
		if err != nil {
			return "", nil, exitf(exitUsage, "%v", err)
		}
		opts.Script = s
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, fmt.Errorf("start the simulator: %w", err)
	}
	srv := &http.Server{Handler: sim.New(opts).Handler(), ReadHeaderTimeout: 10 * time.Second}
	go srv.Serve(ln)
	return "http://" + ln.Addr().String(), func() { srv.Close() }, nil
}

// contextWindow knows the context windows of common models, in tokens.
func contextWindow(model string) int64 {
	m := strings.ToLower(model)
	switch {
	case strings.HasPrefix(m, "sim"):
		return 200_000
	case strings.Contains(m, "claude"):
		return 200_000
	case strings.HasPrefix(m, "gpt-5"), strings.HasPrefix(m, "gpt-4.1"):
		if strings.HasPrefix(m, "gpt-4.1") {
			return 1_047_576
		}
		return 400_000
	case strings.HasPrefix(m, "gpt-4o"), strings.HasPrefix(m, "o1"), strings.HasPrefix(m, "o3"), strings.HasPrefix(m, "o4"):
		return 128_000
	case strings.Contains(m, "gemini"):
		return 1_000_000
	}
	return 128_000
}
