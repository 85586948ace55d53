package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"syscall"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// The test binary is also a real MCP server, built with the same SDK: with REIN_MCP_TEST_SERVER
// set it serves on stdio instead of running tests (so a stdio server is a real process, started
// as rein starts any other). REIN_MCP_TEST_SERVER=junk first writes a line that is not JSON-RPC
// to stdout; REIN_MCP_MARK names a file the server writes its events to (a cancellation seen, its
// process group).
func TestMain(m *testing.M) {
	if mode := os.Getenv("REIN_MCP_TEST_SERVER"); mode != "" {
		serveStdio(mode)
		return
	}
	os.Exit(m.Run())
}

func serveStdio(mode string) {
	if mode == "junk" {
		fmt.Println("starting the test server, version 1")
	}
	if mode == "silent" {
		time.Sleep(time.Hour)
	}
	mark := os.Getenv("REIN_MCP_MARK")
	note := func(s string) {
		if mark == "" {
			return
		}
		f, err := os.OpenFile(mark, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
		if err == nil {
			fmt.Fprintln(f, s)
			f.Close()
		}
	}
	pgid, _ := syscall.Getpgid(0)
	note("pgid " + strconv.Itoa(pgid))
	s := testServer(note)
	_ = s.Run(context.Background(), &sdk.StdioTransport{})
}

// testServer is the server every transport of the tests serves.
func testServer(note func(string)) *sdk.Server {
	s := sdk.NewServer(&sdk.Implementation{Name: "rein-test", Version: "1"}, nil)
	obj := func(props string, required ...string) json.RawMessage {
		req, _ := json.Marshal(required)
		if required == nil {
			req = []byte("[]")
		}
		return json.RawMessage(`{"type":"object","properties":{` + props + `},"required":` + string(req) + `}`)
	}
	s.AddTool(&sdk.Tool{Name: "echo", Description: "Echo the text.", InputSchema: obj(`"text":{"type":"string","minLength":1}`, "text"),
		Annotations: &sdk.ToolAnnotations{ReadOnlyHint: true}},
		func(_ context.Context, r *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			var in struct{ Text string }
			_ = json.Unmarshal(r.Params.Arguments, &in)
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: in.Text}}}, nil
		})
	s.AddTool(&sdk.Tool{Name: "wait", Description: "Wait until cancelled.", InputSchema: obj("")},
		func(ctx context.Context, _ *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			note("waiting")
			<-ctx.Done()
			note(fmt.Sprintf("cancelled %d", time.Now().UnixNano()))
			return nil, ctx.Err()
		})
	s.AddTool(&sdk.Tool{Name: "stubborn", Description: "Ignore cancellation for a while.", InputSchema: obj("")},
		func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			time.Sleep(3 * time.Second)
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "late"}}}, nil
		})
	s.AddTool(&sdk.Tool{Name: "die", Description: "Exit mid-call.", InputSchema: obj("")},
		func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			fmt.Fprintln(os.Stderr, "the test server is going away now")
			os.Exit(3)
			return nil, nil
		})
	s.AddTool(&sdk.Tool{Name: "spawn", Description: "Start a long sleep in the server's process group.", InputSchema: obj("")},
		func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			cmd := exec.Command("sleep", "300")
			if err := cmd.Start(); err != nil {
				return nil, err
			}
			note("child " + strconv.Itoa(cmd.Process.Pid))
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: strconv.Itoa(cmd.Process.Pid)}}}, nil
		})
	s.AddTool(&sdk.Tool{Name: "kinds", Description: "Return every kind of content.", InputSchema: obj("")},
		func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			return &sdk.CallToolResult{Content: []sdk.Content{
				&sdk.TextContent{Text: "some text"},
				&sdk.ImageContent{Data: []byte("\x89PNG\r\n\x1a\nfake"), MIMEType: "image/png"},
				&sdk.ResourceLink{URI: "file:///tmp/a.txt", Name: "a.txt"},
				&sdk.EmbeddedResource{Resource: &sdk.ResourceContents{URI: "mem://note", MIMEType: "text/plain", Text: "embedded words"}},
			}}, nil
		})
	s.AddTool(&sdk.Tool{Name: "structured", Description: "Return structured content only.", InputSchema: obj("")},
		func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			return &sdk.CallToolResult{StructuredContent: map[string]any{"count": 3}}, nil
		})
	s.AddTool(&sdk.Tool{Name: "broken", Description: "Fail as a tool.", InputSchema: obj("")},
		func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			return &sdk.CallToolResult{IsError: true, Content: []sdk.Content{&sdk.TextContent{Text: "the widget is broken"}}}, nil
		})
	s.AddTool(&sdk.Tool{Name: "empty", Description: "Return nothing.", InputSchema: obj("")},
		func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			return &sdk.CallToolResult{}, nil
		})
	s.AddTool(&sdk.Tool{Name: "grow", Description: "Add a tool.", InputSchema: obj("")},
		func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			s.AddTool(&sdk.Tool{Name: "grown", Description: "A tool added at run time.", InputSchema: obj("")},
				func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
					return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "grown"}}}, nil
				})
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "added"}}}, nil
		})
	return s
}
