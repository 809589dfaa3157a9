package e2e

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
)

// toolsListBudget is the most bytes of compact JSON tools/list may take:
// a client puts the whole list in the model's context on every turn (#17).
// export is listed only with --export-dir (this server has none).
const toolsListBudget = 16 << 10

// TestToolsListBytes: tools/list (the result as compact JSON) stays under
// toolsListBudget, shares the query spec's definitions ($defs/$ref) instead of
// repeating them, and every $ref resolves within its tool's schema.
func TestToolsListBytes(t *testing.T) {
	c := startStdio(t)
	res, err := c.ListTools(context.Background(), mcp.ListToolsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	raw, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("tools/list: %d tools, %d bytes", len(res.Tools), len(raw))
	if len(raw) >= toolsListBudget {
		t.Fatalf("tools/list is %d bytes, want < %d", len(raw), toolsListBudget)
	}
	for _, tl := range res.Tools {
		b, err := json.Marshal(tl.InputSchema)
		if err != nil {
			t.Fatal(err)
		}
		schema := string(b)
		if tl.Description == "" || tl.Title == "" {
			t.Errorf("%s lacks a title or description", tl.Name)
		}
		if strings.Count(schema, `"enum":["eq","neq"`) > 1 {
			t.Errorf("%s repeats the filter operators instead of sharing them: %s", tl.Name, schema)
		}
		var s struct {
			Defs map[string]json.RawMessage `json:"$defs"`
		}
		if err := json.Unmarshal(b, &s); err != nil {
			t.Fatal(err)
		}
		for _, part := range strings.Split(schema, `"$ref":"#/$defs/`)[1:] {
			name, _, _ := strings.Cut(part, `"`)
			if _, ok := s.Defs[name]; !ok {
				t.Errorf("%s: $ref to missing $defs/%s", tl.Name, name)
			}
		}
	}
}
