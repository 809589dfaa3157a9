package mcpapi_test

import (
	"context"
	"encoding/json"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/quarrydb/quarry/internal/app"
	"github.com/quarrydb/quarry/mcpapi"
)

// initInstructions connects a new in-process client to s and returns the
// instructions its initialize answer carries.
func initInstructions(t *testing.T, s *server.MCPServer) string {
	t.Helper()
	c, err := client.NewInProcessClient(s)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx := context.Background()
	if err := c.Start(ctx); err != nil {
		t.Fatal(err)
	}
	req := mcp.InitializeRequest{}
	req.Params.ProtocolVersion = mcp.LATEST_PROTOCOL_VERSION
	req.Params.ClientInfo = mcp.Implementation{Name: "instructions-test", Version: "1"}
	res, err := c.Initialize(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	return res.Instructions
}

// namedTools are the tool names (of every tool Quarry has) that text
// mentions as words.
func namedTools(text string) []string {
	var out []string
	for _, c := range mcpapi.Tools {
		tool, _ := c(nil)
		if regexp.MustCompile(`\b` + tool.Name + `\b`).MatchString(text) {
			out = append(out, tool.Name)
		}
	}
	return out
}

// TestInstructionsFollowTools: the instructions name exactly the tools
// listed among those they speak of: without an export directory export is
// not mentioned, with one it is; tools removed after start (serve --tools)
// leave the instructions too, at the next initialize and server/discover.
func TestInstructionsFollowTools(t *testing.T) {
	for _, c := range []struct {
		name   string
		export bool
		remove []string
		want   []string // named
		gone   []string // not named
	}{
		{"no export dir", false, nil, []string{"get_catalog", "get_schema", "distinct_values", "estimate_query", "query_data", "aggregate", "query_next_page", "read_result", "pattern_filter"}, []string{"export"}},
		{"export dir", true, nil, []string{"export", "read_result", "query_data"}, nil},
		{"tools removed", true, []string{"aggregate", "export", "distinct_values"}, []string{"query_data", "estimate_query", "read_result"}, []string{"aggregate", "export", "distinct_values"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			cfg := app.Config{}
			if c.export {
				cfg.ExportDir = t.TempDir()
			}
			f := open(t, cfg)
			f.app.MCP.DeleteTools(c.remove...)
			text := initInstructions(t, f.app.MCP)
			named := namedTools(text)
			listed := listedNames(t, f)
			for _, n := range named {
				if !slices.Contains(listed, n) {
					t.Errorf("the instructions name %s, which is not listed (%v):\n%s", n, listed, text)
				}
			}
			for _, n := range c.want {
				if !slices.Contains(named, n) {
					t.Errorf("the instructions do not name %s:\n%s", n, text)
				}
			}
			for _, n := range c.gone {
				if slices.Contains(named, n) {
					t.Errorf("the instructions name %s:\n%s", n, text)
				}
			}
			if !strings.Contains(text, "Typical flow: get_catalog -> get_schema") || strings.Contains(text, "-> ->") || strings.Contains(text, "or .") {
				t.Errorf("flow:\n%s", text)
			}
			// server/discover (protocol 2026-07-28) says the same.
			msg := f.app.MCP.HandleMessage(context.Background(), json.RawMessage(`{"jsonrpc":"2.0","id":7,"method":"server/discover","params":{"_meta":{`+
				`"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},`+
				`"io.modelcontextprotocol/clientInfo":{"name":"instructions-test","version":"1"}}}}`))
			b, _ := json.Marshal(msg)
			var disc struct {
				Result struct {
					Instructions string `json:"instructions"`
				} `json:"result"`
			}
			if err := json.Unmarshal(b, &disc); err != nil || disc.Result.Instructions != text {
				t.Errorf("server/discover: %v %s", err, b)
			}
		})
	}
}

// listedNames are the names tools/list gives f's client.
func listedNames(t *testing.T, f *fixture) []string {
	t.Helper()
	res, err := f.c.ListTools(context.Background(), mcp.ListToolsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, tool := range res.Tools {
		out = append(out, tool.Name)
	}
	return out
}
