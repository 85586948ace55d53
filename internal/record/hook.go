package record

// KindHook is the event of one hook's answer (see Hook).
const KindHook Kind = "hook"

// Hook events: the points of the loop at which the person's hooks run.
const (
	HookPreTool  = "pre_tool"
	HookPostTool = "post_tool"
	HookPrompt   = "prompt"
	HookStop     = "stop"
)

// Hook answers: what a hook decided. Continue is a stop hook's only answer besides pass.
const (
	HookPass     = "pass"
	HookRefuse   = "refuse"
	HookAsk      = "ask"
	HookHold     = "hold"
	HookContinue = "continue"
)

// Hook records what one hook decided: which hook (its event, command and the file it came from),
// for which call, its answer and its reason, the line it added for the model, and how long it
// took. A hook that failed (it could not start, crashed, timed out, or answered what rein cannot
// read) says why in Failed, and its Decision is what rein made of that: never a silent pass.
type Hook struct {
	Event      string `json:"event"`
	Command    string `json:"command"`
	Source     string `json:"source,omitempty"`
	CallID     string `json:"call_id,omitempty"`
	Tool       string `json:"tool,omitempty"`
	Decision   string `json:"decision"`
	Reason     string `json:"reason,omitempty"`
	Context    string `json:"context,omitempty"`
	Error      bool   `json:"error,omitempty"`
	Failed     string `json:"failed,omitempty"`
	ExitCode   *int   `json:"exit_code,omitempty"`
	DurationMs int64  `json:"duration_ms"`
}

// Kind answers KindHook.
func (*Hook) Kind() Kind { return KindHook }

func (p *Hook) members() (f fields) {
	f.add("event", &p.Event)
	f.add("command", &p.Command)
	f.add("source", &p.Source)
	f.add("call_id", &p.CallID)
	f.add("tool", &p.Tool)
	f.add("decision", &p.Decision)
	f.add("reason", &p.Reason)
	f.add("context", &p.Context)
	f.add("error", &p.Error)
	f.add("failed", &p.Failed)
	f.add("exit_code", &p.ExitCode)
	f.add("duration_ms", &p.DurationMs)
	return f
}

func (p *Hold) members() (f fields) {
	f.add("call_id", &p.CallID)
	f.add("reason", &p.Reason)
	f.add("by", &p.By)
	return f
}

func (p *Released) members() (f fields) {
	f.add("by", &p.By)
	f.add("op", &p.Op)
	return f
}
