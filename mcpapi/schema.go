package mcpapi

import (
	"encoding/json"

	"github.com/mark3labs/mcp-go/mcp"
)

// schemaFor returns the JSON schema of T as mcp-go generates it from struct
// tags, with json.RawMessage fields (which mcp-go renders as byte arrays)
// turned into "any JSON value" schemas that keep their description.
func schemaFor[T any]() json.RawMessage {
	raw := mcp.NewTool("schema", mcp.WithInputSchema[T]()).RawInputSchema
	var node any
	if err := json.Unmarshal(raw, &node); err != nil {
		panic("mcpapi: cannot generate schema: " + err.Error())
	}
	node = fixRaw(node)
	if m, ok := node.(map[string]any); ok {
		m["type"] = "object" // MCP requires object schemas; pointer types come out as ["null","object"]
	}
	out, err := json.Marshal(node)
	if err != nil {
		panic("mcpapi: cannot marshal schema: " + err.Error())
	}
	return out
}

func fixRaw(n any) any {
	switch x := n.(type) {
	case map[string]any:
		if isByteArray(x) {
			out := map[string]any{}
			if d, ok := x["description"]; ok {
				out["description"] = d
			}
			return out
		}
		for k, v := range x {
			x[k] = fixRaw(v)
		}
		return x
	case []any:
		for i, v := range x {
			x[i] = fixRaw(v)
		}
	}
	return n
}

// isByteArray matches the schema jsonschema-go emits for []byte.
func isByteArray(m map[string]any) bool {
	items, ok := m["items"].(map[string]any)
	if !ok {
		return false
	}
	return items["type"] == "integer" && items["minimum"] == 0.0 && items["maximum"] == 255.0
}
