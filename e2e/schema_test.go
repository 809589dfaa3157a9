package e2e

import (
	"bytes"
	"context"
	"encoding/json"
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
// against the tool's declared outputSchema. The server does not validate
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
