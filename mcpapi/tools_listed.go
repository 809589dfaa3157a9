package mcpapi

import (
	"github.com/mark3labs/mcp-go/mcp"
)

// listedTool is t as tools/list announces it, kept small (docs/TOOLS.md,
// "What tools/list carries"): without its output schema (results are still
// checked against it on every call, and it is in docs/TOOLS.md and
// testdata/tools), without a copy of its title in annotations, and
// without the destructive and idempotent hints of a
// read-only tool (the specification gives them meaning only when
// readOnlyHint is false).
func listedTool(t mcp.Tool) mcp.Tool {
	t.RawOutputSchema = nil
	if t.Annotations.Title == t.Title {
		t.Annotations.Title = "" // said once, as the tool's title
	}
	if a := t.Annotations; a.ReadOnlyHint != nil && *a.ReadOnlyHint {
		t.Annotations.DestructiveHint, t.Annotations.IdempotentHint = nil, nil
	}
	return t
}
