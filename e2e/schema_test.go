package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

// outputSchemas caches, per client, each tool's compiled outputSchema as
// the server announced it in tools/list.
var outputSchemas sync.Map // *client.Client -> map[string]*jsonschema.Schema

// checkOutputSchema validates a successful tool result's structuredContent
// against the tool's declared outputSchema (tools/list leaves it out to
// stay small: then the one in the tool's snapshot, mcpapi/testdata/tools). The server does not validate
// at run time (it costs a full decode of every result), so every e2e call
// does it here instead.
func checkOutputSchema(t *testing.T, c *client.Client, tool string, res *mcp.CallToolResult) {
	t.Helper()
	if res.IsError || res.StructuredContent == nil {
		return
	}
	m, ok := outputSchemas.Load(c)
	if !ok {
		tools, err := c.ListTools(context.Background(), mcp.ListToolsRequest{})
		if err != nil {
			t.Fatalf("tools/list: %v", err)
		}
		compiled := map[string]*jsonschema.Schema{}
		for _, tl := range tools.Tools {
			raw, err := json.Marshal(tl.OutputSchema)
			if len(tl.RawOutputSchema) > 0 {
				raw, err = tl.RawOutputSchema, nil
			} else if tl.OutputSchema.Type == "" {
				raw, err = snapshotOutputSchema(tl.Name)
			}
			if err != nil {
				t.Fatal(err)
			}
			doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
			if err != nil {
				t.Fatalf("%s outputSchema: %v", tl.Name, err)
			}
			comp := jsonschema.NewCompiler()
			if err := comp.AddResource(tl.Name+".json", doc); err != nil {
				t.Fatal(err)
			}
			s, err := comp.Compile(tl.Name + ".json")
			if err != nil {
				t.Fatalf("%s outputSchema does not compile: %v", tl.Name, err)
			}
			compiled[tl.Name] = s
		}
		m, _ = outputSchemas.LoadOrStore(c, compiled)
	}
	s := m.(map[string]*jsonschema.Schema)[tool]
	if s == nil {
		t.Fatalf("tool %s has no outputSchema", tool)
	}
	raw, err := json.Marshal(res.StructuredContent)
	if err != nil {
		t.Fatal(err)
	}
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Validate(v); err != nil {
		t.Fatalf("%s result does not match its outputSchema: %v\n%.2000s", tool, err, raw)
	}
}

// snapshotOutputSchema is the outputSchema of tool's snapshot
// (mcpapi/testdata/tools/<tool>.json, written by go test ./mcpapi -update
// from the same registry the server lists).
func snapshotOutputSchema(tool string) (json.RawMessage, error) {
	b, err := os.ReadFile(filepath.Join("..", "mcpapi", "testdata", "tools", tool+".json"))
	if err != nil {
		return nil, err
	}
	var snap struct {
		OutputSchema json.RawMessage `json:"outputSchema"`
	}
	if err := json.Unmarshal(b, &snap); err != nil {
		return nil, err
	}
	if len(snap.OutputSchema) == 0 {
		return nil, fmt.Errorf("snapshot of %s has no outputSchema", tool)
	}
	return snap.OutputSchema, nil
}
