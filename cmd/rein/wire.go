package main

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strconv"
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
	thinking  string // a budget in tokens, "off", or "" (not given)
	effort    string
	// recorded: provider, model and base URL come from a resumed session's record, which comes
	// before the config file and the environment.
	recorded bool
	// file is the configuration, loaded once (runFlags.configure) and applied in resolveProvider.
	file config
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
	fl.StringVar(&f.thinking, "thinking", "", "Anthropic extended thinking: a budget in tokens (at least 1024, below --max-tokens), or off")
	fl.StringVar(&f.effort, "effort", "", "the reasoning effort of OpenAI reasoning models: low, medium or high")
}

// efforts are the reasoning efforts --effort takes.
var efforts = []string{"low", "medium", "high"}

// wiring is a resolved provider: its client, and what the record says about it.
type wiring struct {
	name     string
	model    string
	baseURL  string // as given (empty: the provider's public endpoint)
	window   int64
	thinking int    // the extended-thinking budget, 0 for off
	effort   string // the reasoning effort, "" for the model's default
	client   provider.Model
	close    func()
}

// noProvider is the message a newcomer without a key sees.
const noProvider = `no model provider is configured.
Set one of ANTHROPIC_API_KEY, OPENAI_API_KEY or OPENROUTER_API_KEY (or pass --provider and --base-url
for a local OpenAI-compatible server), or try rein offline against its simulator:

  rein run --provider sim "list the files here"`

// resolveProvider turns flags and the environment into a provider's client and its settings.
// getenv is environ.
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
	var err error
	if w.thinking, w.effort, err = reasoning(name, f); err != nil {
		return nil, err
	}
	stall, err := stallAfter(getenv("REIN_STALL_TIMEOUT"), f.baseURL)
	if err != nil {
		return nil, err
	}
	client := &http.Client{Transport: provider.Guard(&http.Transport{Proxy: http.ProxyFromEnvironment, MaxIdleConnsPerHost: 4, IdleConnTimeout: 90 * time.Second, ForceAttemptHTTP2: true}, stall)}
	switch name {
	case "anthropic":
		key := getenv("ANTHROPIC_API_KEY")
		if key == "" && f.baseURL == "" {
			return nil, exitf(exitUsage, "--provider anthropic needs ANTHROPIC_API_KEY in the environment (or --provider sim to try rein offline)")
		}
		if w.model == "" {
			w.model = anthropic.DefaultModel
		}
		w.client = anthropic.New(anthropic.Config{BaseURL: f.baseURL, APIKey: key, HTTPClient: client})
	case "openai", "openrouter", "openai-responses":
		key := getenv("OPENAI_API_KEY")
		base := f.baseURL
		var headers http.Header
		if name == "openrouter" {
			key = getenv("OPENROUTER_API_KEY")
			if base == "" {
				base = openai.OpenRouterBaseURL
			}
			headers = openai.OpenRouterHeaders()
			if w.model == "" {
				w.model = openai.OpenRouterDefaultModel
			}
		}
		if key == "" && base == "" {
			return nil, exitf(exitUsage, "--provider %s needs %s in the environment, or --base-url for a local server (or --provider sim to try rein offline)", name, map[bool]string{true: "OPENROUTER_API_KEY", false: "OPENAI_API_KEY"}[name == "openrouter"])
		}
		if w.model == "" {
			w.model = openai.DefaultModel
		}
		cfg := openai.Config{BaseURL: base, APIKey: key, HTTPClient: client, Headers: headers,
			Compat: openai.Compat{Reasoning: name == "openrouter"}}
		if name == "openai-responses" {
			w.client = openai.NewResponses(cfg)
		} else {
			w.client = openai.NewChat(cfg)
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
		w.client = anthropic.New(anthropic.Config{BaseURL: base, APIKey: "sim", HTTPClient: client})
	default:
		return nil, exitf(exitUsage, "unknown provider %q: use anthropic, openai, openai-responses, openrouter or sim", name)
	}
	w.window = f.window
	if w.window == 0 {
		w.window = contextWindow(w.model)
	}
	return w, nil
}

// reasoning resolves --thinking and --effort for provider name, flags first (a resumed
// session's recorded settings among them), then the configuration file, which a resumed session
// does not read. A flag the provider cannot honour is refused; a file's value that does not
// apply to it is passed over, since one file serves every provider. Anthropic (and the
// simulator, which speaks its wire) takes a thinking budget; OpenAI's wires take an effort;
// OpenRouter takes either, not both.
func reasoning(name string, f providerFlags) (int, string, error) {
	thinks := name == "anthropic" || name == "sim" || name == "openrouter"
	reasons := name != "anthropic" && name != "sim"
	file := f.file
	if f.recorded {
		file = config{}
	}
	budget, effort := 0, ""
	switch f.thinking {
	case "":
		if thinks {
			budget = file.Thinking
		}
	case "off", "0":
	default:
		n, err := strconv.Atoi(f.thinking)
		if err != nil || n < 0 {
			return 0, "", exitf(exitUsage, "--thinking takes a budget in tokens (e.g. --thinking 8000) or off, not %q", f.thinking)
		}
		if !thinks {
			return 0, "", exitf(exitUsage, "--thinking sets Anthropic's extended-thinking budget; --provider %s takes --effort %s instead", name, strings.Join(efforts, "|"))
		}
		if n < agent.MinThinking {
			return 0, "", exitf(exitUsage, "--thinking %d is below the least budget Anthropic accepts, %d tokens: give --thinking %d or more, or --thinking off", n, agent.MinThinking, agent.MinThinking)
		}
		budget = n
	}
	switch {
	case f.effort == "":
		if reasons && (budget == 0 || name != "openrouter") {
			effort = file.Effort
		}
	case !slices.Contains(efforts, f.effort):
		return 0, "", exitf(exitUsage, "--effort takes %s, not %q", strings.Join(efforts, ", "), f.effort)
	case !reasons:
		return 0, "", exitf(exitUsage, "--effort sets the reasoning effort of OpenAI reasoning models; --provider %s takes a thinking budget instead: --thinking 8000", name)
	default:
		effort = f.effort
	}
	if name == "openrouter" && budget > 0 && effort != "" {
		if f.thinking != "" && f.effort != "" {
			return 0, "", exitf(exitUsage, "OpenRouter takes a thinking budget or an effort, not both: give --thinking or --effort")
		}
		budget = 0 // an effort given by flag wins over the file's budget
	}
	return budget, effort, nil
}

// checkThinking refuses a thinking budget (from --thinking, the configuration file or a resumed
// session's record) the replies cannot hold: Anthropic requires it below max_tokens, which is
// --max-tokens, or less under a small context window.
func (w *wiring) checkThinking(maxTokens int) error {
	if w.thinking == 0 {
		return nil
	}
	if w.thinking >= maxTokens {
		return exitf(exitUsage, "the thinking budget, %d tokens, must be below --max-tokens %d: it is spent within each reply's output limit; raise --max-tokens or lower --thinking", w.thinking, maxTokens)
	}
	if lim := agent.OutputLimit(maxTokens, w.window); w.thinking >= lim {
		return exitf(exitUsage, "the thinking budget, %d tokens, does not fit: a context window of %d tokens holds replies of at most %d tokens, and the budget must be below that; lower --thinking or give a larger --context-window", w.thinking, w.window, lim)
	}
	return nil
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

// localStallAfter is how long a server on this machine or its network may send nothing: a local
// model on a processor can take many minutes over a long prompt before its first token.
const localStallAfter = 30 * time.Minute

// stallAfter is how long the provider at baseURL may send nothing before rein gives up on a
// request and retries it (provider.Guard): REIN_STALL_TIMEOUT's duration (setting, "off" or
// 0 for never), else provider.DefaultStallAfter, or localStallAfter for a server on a loopback or
// private address.
func stallAfter(setting, baseURL string) (time.Duration, error) {
	switch setting {
	case "":
	case "off", "0":
		return 0, nil
	default:
		d, err := time.ParseDuration(setting)
		if err != nil || d < 0 {
			return 0, exitf(exitUsage, "REIN_STALL_TIMEOUT=%q is not a duration: give one such as 10m or 90s (or off), how long a provider may send nothing before rein retries", setting)
		}
		return d, nil
	}
	if u, err := url.Parse(baseURL); err == nil && u.Hostname() != "" {
		host := u.Hostname()
		ip := net.ParseIP(host)
		if host == "localhost" || ip != nil && (ip.IsLoopback() || ip.IsPrivate() || ip.IsLinkLocalUnicast()) {
			return localStallAfter, nil
		}
	}
	return provider.DefaultStallAfter, nil
}

// contextWindow is a model's context window in tokens, as the adapter that knows the model says
// (a model's window is its own, whichever wire serves it), or provider.DefaultContextWindow.
func contextWindow(model string) int64 {
	for _, known := range []func(string) int64{sim.ContextWindow, anthropic.ContextWindow, openai.ContextWindow} {
		if w := known(model); w > 0 {
			return w
		}
	}
	return provider.DefaultContextWindow
}
