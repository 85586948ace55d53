package tool

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/reinhq/rein/internal/provider"
)

// Registry is the ordered set of tools offered to the model. It is immutable once built, so it
// may be shared between goroutines; to change the set, build another.
type Registry struct {
	tools   []Tool
	specs   []provider.Tool
	schemas map[string]*Schema
	checks  map[string]ArgChecker
	index   map[string]int
}

// ArgChecker is a tool that checks its arguments itself, against a schema outside the subset
// Schema compiles (an MCP server's inputSchema, which may use any JSON Schema keyword). Its
// error is worded for the model, as Schema's are.
type ArgChecker interface {
	CheckArgs(args json.RawMessage) error
}

// NewRegistry builds a registry of tools in the order given. It fails if two tools share a name or
// a tool's schema is outside the subset Schema checks.
func NewRegistry(tools ...Tool) (*Registry, error) {
	r := &Registry{schemas: make(map[string]*Schema, len(tools)), checks: map[string]ArgChecker{}, index: make(map[string]int, len(tools))}
	for _, t := range tools {
		spec := t.Spec()
		if spec.Name == "" {
			return nil, fmt.Errorf("register tool %T: it has no name", t)
		}
		if _, dup := r.index[spec.Name]; dup {
			return nil, fmt.Errorf("register tool %s: the name is already taken", spec.Name)
		}
		if c, ok := t.(ArgChecker); ok {
			r.index[spec.Name] = len(r.tools)
			r.tools = append(r.tools, t)
			r.specs = append(r.specs, spec)
			r.checks[spec.Name] = c
			continue
		}
		s, err := CompileSchema(spec.Schema)
		if err != nil {
			return nil, fmt.Errorf("register tool %s: %w", spec.Name, err)
		}
		if s.typ != "object" {
			return nil, fmt.Errorf("register tool %s: its schema must be of type object, not %s", spec.Name, s.typ)
		}
		r.index[spec.Name] = len(r.tools)
		r.tools = append(r.tools, t)
		r.specs = append(r.specs, spec)
		r.schemas[spec.Name] = s
	}
	return r, nil
}

// Specs returns the tools' specs in registration order, as a request offers them.
func (r *Registry) Specs() []provider.Tool {
	return append([]provider.Tool(nil), r.specs...)
}

// Get returns the tool called name.
func (r *Registry) Get(name string) (Tool, bool) {
	i, ok := r.index[name]
	if !ok {
		return nil, false
	}
	return r.tools[i], true
}

// Names returns the tools' names in registration order.
func (r *Registry) Names() []string {
	names := make([]string, len(r.specs))
	for i, s := range r.specs {
		names[i] = s.Name
	}
	return names
}

// Check reports why call cannot be run as made: an unknown tool or arguments that do not match
// the tool's schema. The error is worded for the model.
func (r *Registry) Check(call Call) error {
	s, ok := r.schemas[call.Name]
	c, checks := r.checks[call.Name]
	if !ok && !checks {
		return fmt.Errorf("there is no tool named %q; the tools are %s", call.Name, strings.Join(r.Names(), ", "))
	}
	args := call.Args
	if len(args) == 0 {
		args = json.RawMessage("{}")
	}
	if checks {
		if err := c.CheckArgs(args); err != nil {
			return fmt.Errorf("invalid arguments for %s: %w", call.Name, err)
		}
		return nil
	}
	if err := s.Check(args); err != nil {
		return fmt.Errorf("invalid arguments for %s: %w", call.Name, err)
	}
	return nil
}
