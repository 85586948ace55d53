package mcp

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/reinhq/rein/internal/provider"
	"github.com/reinhq/rein/internal/record"
	"github.com/reinhq/rein/internal/tool"
)

// Tool is one tool of an MCP server, as a session offers it. It implements tool.Tool,
// tool.ArgChecker (its arguments are checked against the server's inputSchema before the call)
// and tool.Accessor (a tool the server marks read-only reads; any other is of unknown effect, so
// asked in mode workspace and refused in read-only).
type Tool struct {
	conn     *conn
	name     string // in the session
	remote   string // on the server
	desc     string
	schema   json.RawMessage
	resolved *jsonschema.Resolved
	readOnly bool
}

func newTool(c *conn, t *sdk.Tool) (*Tool, error) {
	raw, err := json.Marshal(t.InputSchema)
	if err != nil || len(raw) == 0 || string(raw) == "null" {
		raw = json.RawMessage(`{"type":"object"}`)
	}
	var s jsonschema.Schema
	if err := json.Unmarshal(raw, &s); err != nil {
		return nil, fmt.Errorf("tool %s: its inputSchema does not read as JSON Schema: %v", t.Name, err)
	}
	if s.Type != "object" {
		return nil, fmt.Errorf("tool %s: its inputSchema is of type %q; a tool's arguments are an object", t.Name, s.Type)
	}
	res, err := s.Resolve(&jsonschema.ResolveOptions{ValidateDefaults: false})
	if err != nil {
		return nil, fmt.Errorf("tool %s: its inputSchema does not resolve: %v", t.Name, err)
	}
	desc := t.Description
	if desc == "" {
		desc = t.Title
	}
	if desc == "" && t.Annotations != nil {
		desc = t.Annotations.Title
	}
	desc = strings.TrimSpace(desc + fmt.Sprintf("\n\n(A tool of the MCP server %s.)", c.srv.Name))
	return &Tool{conn: c, name: ToolName(c.srv.Name, t.Name), remote: t.Name, desc: desc, schema: raw,
		resolved: res, readOnly: t.Annotations != nil && t.Annotations.ReadOnlyHint}, nil
}

// Spec is the tool as the model is offered it.
func (t *Tool) Spec() provider.Tool {
	return provider.Tool{Name: t.name, Description: t.desc, Schema: t.schema}
}

// Server is the name of the server the tool belongs to.
func (t *Tool) Server() string { return t.conn.srv.Name }

// CheckArgs checks args against the server's inputSchema.
func (t *Tool) CheckArgs(args json.RawMessage) error {
	var v any
	if err := json.Unmarshal(args, &v); err != nil {
		return fmt.Errorf("the arguments are not JSON: %v", err)
	}
	if _, ok := v.(map[string]any); !ok {
		return errors.New("the arguments must be a JSON object")
	}
	if err := t.resolved.Validate(v); err != nil {
		return errors.New(strings.TrimPrefix(err.Error(), "validating root: "))
	}
	return nil
}

// Access says what a call may do: a tool the server marks read-only reads; any other tool's
// effects are unknown to rein.
func (t *Tool) Access(json.RawMessage) tool.Access {
	if t.readOnly {
		return tool.Access{Effect: tool.EffectRead}
	}
	return tool.Access{Effect: tool.EffectUnknown}
}

// Run calls the tool. A Stop (ctx ended) answers interrupted at once, while the SDK tells the
// server to cancel; the server's tool_timeout gives timed_out; a server that fails or goes away
// mid-call gives error.
func (t *Tool) Run(ctx context.Context, call tool.Call) tool.Result {
	var args map[string]any
	if err := json.Unmarshal(call.Args, &args); err != nil {
		return tool.Failure("the arguments are not a JSON object: %v", err)
	}
	cctx, cancel := context.WithTimeout(ctx, t.conn.srv.ToolRun)
	defer cancel()
	start := time.Now()
	res, err := t.conn.session.CallTool(cctx, &sdk.CallToolParams{Name: t.remote, Arguments: args})
	switch {
	case ctx.Err() != nil:
		return tool.Result{Content: fmt.Sprintf("interrupted: the call was stopped after %s; the MCP server %s was told to cancel it, and what it had done by then is unknown", time.Since(start).Round(time.Millisecond), t.conn.srv.Name), IsError: true, Outcome: record.Interrupted}
	case cctx.Err() != nil:
		return tool.Result{Content: fmt.Sprintf("timed out: the MCP server %s did not answer within %s (its tool_timeout_sec); it was told to cancel the call, and what it had done by then is unknown", t.conn.srv.Name, t.conn.srv.ToolRun), IsError: true, Outcome: record.TimedOut}
	case err != nil:
		msg := err.Error()
		if errors.Is(err, io.EOF) || errors.Is(err, sdk.ErrConnectionClosed) {
			msg = "the server closed its connection mid-call (it may have exited): " + msg
			if st := strings.TrimSpace(t.conn.stderr.String()); st != "" {
				msg += "; its stderr ends: " + lastLines(st, 5)
			}
		}
		return tool.Result{Content: fmt.Sprintf("the MCP server %s failed the call: %s", t.conn.srv.Name, msg), IsError: true, Outcome: record.Failed}
	}
	return Result(res, t.conn.images.Load())
}

// SetImages says whether the session's model takes images (cmd/rein's showImages): the server's
// pictures then reach it as image parts.
func (t *Tool) SetImages(on bool) { t.conn.images.Store(on) }

// maxImage bounds a picture sent on to the model, in encoded bytes (under every provider's limit
// once in base64).
const maxImage = 3 << 20

// imageTypes are the pictures every provider that takes images reads.
var imageTypes = map[string]bool{"image/png": true, "image/jpeg": true, "image/gif": true, "image/webp": true}

// Result maps an MCP tool result to rein's: the text the model reads, every kind of content
// told faithfully, pictures as image parts when images is set (the model takes them) and as a
// line saying what they were otherwise, and isError as an error outcome.
func Result(res *sdk.CallToolResult, images bool) tool.Result {
	var parts []string
	var pics []record.Part
	for _, c := range res.Content {
		switch c := c.(type) {
		case *sdk.TextContent:
			parts = append(parts, c.Text)
		case *sdk.ImageContent:
			switch {
			case !images:
				parts = append(parts, fmt.Sprintf("[an image (%s, %d bytes) the tool returned; the model of this session does not take images, so it is not shown]", c.MIMEType, len(c.Data)))
			case !imageTypes[c.MIMEType]:
				parts = append(parts, fmt.Sprintf("[an image of type %q the tool returned; only PNG, JPEG, GIF and WebP are sent to a model, so it is not shown]", c.MIMEType))
			case len(c.Data) > maxImage:
				parts = append(parts, fmt.Sprintf("[an image (%s, %d bytes) the tool returned, over the %d MiB a model is sent, so it is not shown]", c.MIMEType, len(c.Data), maxImage>>20))
			default:
				name := fmt.Sprintf("image %d", len(pics)+1)
				parts = append(parts, fmt.Sprintf("[%s: %s, %d bytes, follows]", name, c.MIMEType, len(c.Data)))
				pics = append(pics, record.Part{Type: record.PartImage, MediaType: c.MIMEType, Data: base64.StdEncoding.EncodeToString(c.Data), Name: name})
			}
		case *sdk.AudioContent:
			parts = append(parts, fmt.Sprintf("[audio (%s, %d bytes) the tool returned, which rein cannot show a model]", c.MIMEType, len(c.Data)))
		case *sdk.ResourceLink:
			line := "resource link: " + c.URI
			if c.Name != "" {
				line += " (" + c.Name + ")"
			}
			if c.Description != "" {
				line += " — " + c.Description
			}
			parts = append(parts, line)
		case *sdk.EmbeddedResource:
			parts = append(parts, embedded(c.Resource))
		default:
			b, _ := json.Marshal(c)
			parts = append(parts, "content rein does not know: "+string(b))
		}
	}
	if res.StructuredContent != nil && len(parts) == 0 {
		b, err := json.Marshal(res.StructuredContent)
		if err == nil {
			parts = append(parts, string(b))
		}
	}
	text := strings.Join(parts, "\n")
	if len(parts) == 0 {
		text = "(the tool returned an empty result)"
	}
	if res.IsError {
		return tool.Result{Content: text, IsError: true, Outcome: record.Failed, Images: pics}
	}
	return tool.Result{Content: text, Outcome: record.OK, Images: pics}
}

func embedded(r *sdk.ResourceContents) string {
	if r == nil {
		return "an embedded resource with no contents"
	}
	head := "resource " + r.URI
	if r.MIMEType != "" {
		head += " (" + r.MIMEType + ")"
	}
	if r.Text != "" {
		return head + ":\n" + r.Text
	}
	if len(r.Blob) > 0 {
		return fmt.Sprintf("%s: %d bytes of binary data, not shown", head, len(r.Blob))
	}
	return head + ": empty"
}

func lastLines(s string, n int) string {
	lines := strings.Split(s, "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, " | ")
}
