package mcpapi

import (
	"encoding/json"
	"reflect"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"
)

// schemaFor returns the JSON schema of T as mcp-go generates it from struct
// tags, with json.RawMessage fields (which mcp-go renders as byte arrays)
// turned into "any JSON value" schemas that keep their description, and
// the enum of every field whose type has EnumValues (filter ops and
// aggregate functions: their values come from the function registry), and
// the items of every list type with ItemSchema (group_by).
func schemaFor[T any]() json.RawMessage {
	raw := mcp.NewTool("schema", mcp.WithInputSchema[T]()).RawInputSchema
	var node any
	if err := json.Unmarshal(raw, &node); err != nil {
		panic("mcpapi: cannot generate schema: " + err.Error())
	}
	node = fixRaw(node)
	applyEnums(reflect.TypeFor[T](), node)
	if m, ok := node.(map[string]any); ok {
		m["type"] = "object" // MCP requires object schemas; pointer types come out as ["null","object"]
		shareDefs(reflect.TypeFor[T](), m)
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

// enumer is a type whose valid values are listed at run time (funcs.Op,
// funcs.AggFn): the schema of a field of that type gets them as its enum.
type enumer interface{ EnumValues() []string }

var enumerType = reflect.TypeFor[enumer]()

// itemSchemer is a list type whose elements take more than one JSON shape
// (planner.GroupKeys: a string or an object): the schema of a field of that
// type gets ItemSchema as its items.
type itemSchemer interface{ ItemSchema() map[string]any }

var itemSchemerType = reflect.TypeFor[itemSchemer]()

// applyEnums walks the Go type t alongside its schema n and sets the enum
// of every enumer-typed value and the items of every itemSchemer.
func applyEnums(t reflect.Type, n any) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	m, ok := n.(map[string]any)
	if !ok {
		return
	}
	if t.Implements(enumerType) {
		var vals []any
		for _, v := range reflect.Zero(t).Interface().(enumer).EnumValues() {
			vals = append(vals, v)
		}
		m["enum"] = vals
		return
	}
	if t.Implements(itemSchemerType) {
		m["items"] = reflect.Zero(t).Interface().(itemSchemer).ItemSchema()
		return
	}
	switch t.Kind() {
	case reflect.Slice, reflect.Array:
		applyEnums(t.Elem(), m["items"])
	case reflect.Struct:
		props, _ := m["properties"].(map[string]any)
		for i := range t.NumField() {
			f := t.Field(i)
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			switch {
			case !f.IsExported() || name == "-":
			case f.Anonymous && name == "":
				applyEnums(f.Type, m) // embedded struct: its fields are ours
			default:
				if name == "" {
					name = f.Name
				}
				applyEnums(f.Type, props[name])
			}
		}
	}
}
