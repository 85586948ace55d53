package record

// KindMCPServer records a state change of one MCP server a session uses.
const KindMCPServer Kind = "mcp_server"

// MCP server states.
const (
	MCPStarting = "starting"
	MCPReady    = "ready"
	MCPFailed   = "failed"
	MCPChanged  = "tools_changed" // the server's tools changed (list_changed), picked up at a turn boundary
	MCPStopped  = "stopped"
)

// MCPServer records one step of an MCP server's life in a session: starting, ready (with the
// names its tools have in the session), failed (with why), tools_changed, stopped. The tools
// offered to the model at any turn are what the last ready or tools_changed line of each server
// says, so a reader of the record knows what the model was offered.
type MCPServer struct {
	Name  string   `json:"name"`
	State string   `json:"state"`
	Tools []string `json:"tools,omitempty"`
	Error string   `json:"error,omitempty"`
}

// Kind answers mcp_server.
func (*MCPServer) Kind() Kind { return KindMCPServer }

func (p *MCPServer) members() (f fields) {
	f.add("name", &p.Name)
	f.add("state", &p.State)
	f.add("tools", &p.Tools)
	f.add("error", &p.Error)
	return f
}
