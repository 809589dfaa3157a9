package mcpapi

import (
	"encoding/json"

	"github.com/mark3labs/mcp-go/mcp"
)

// listedTool is t as tools/list announces it, kept small (docs/TOOLS.md,
// "What tools/list carries"): without its output schema (results are still
// checked against it on every call, and it is in docs/TOOLS.md and
// testdata/tools), without what the call says better than the listing
// (listedInput), without a copy of its title in annotations, and
// without the destructive and idempotent hints of a
// read-only tool (the specification gives them meaning only when
// readOnlyHint is false).
func listedTool(t mcp.Tool) mcp.Tool {
	t.RawOutputSchema = nil
	t.RawInputSchema = listedInput(t.RawInputSchema)
	if t.Annotations.Title == t.Title {
		t.Annotations.Title = "" // said once, as the tool's title
	}
	if a := t.Annotations; a.ReadOnlyHint != nil && *a.ReadOnlyHint {
		t.Annotations.DestructiveHint, t.Annotations.IdempotentHint = nil, nil
	}
	return t
}

// listedInput is an input schema without additionalProperties: false at
// the top (bindStrict refuses an unknown argument by name, with the valid
// ones and the closest) and without an empty required list.
func listedInput(raw json.RawMessage) json.RawMessage {
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		panic("mcpapi: input schema: " + err.Error())
	}
	delete(m, "additionalProperties")
	if r, ok := m["required"].([]any); ok && len(r) == 0 {
		delete(m, "required")
	}
	out, err := json.Marshal(m)
	if err != nil {
		panic("mcpapi: input schema: " + err.Error())
	}
	return out
}
