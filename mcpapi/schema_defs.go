package mcpapi

import (
	"encoding/json"
	"reflect"
	"slices"
	"strings"

	"github.com/quarrydb/quarry/planner"
)

// Shared definitions: a tool's input schema names each query-spec type
// once under $defs and refers to it with $ref wherever it is used
// (filters, having and aggs[].filter are all lists of #/$defs/filter), so
// tools/list carries one copy of each definition per tool instead of one
// per use (docs/TOOLS.md, "Schemas").

// sharedDefs names the types whose schema goes to $defs.
var sharedDefs = map[reflect.Type]string{
	reflect.TypeFor[planner.FilterSpec]():       "filter",
	reflect.TypeFor[planner.FilterCond]():       "cond",
	reflect.TypeFor[planner.AggSpec]():          "agg",
	reflect.TypeFor[planner.OrderSpec]():        "order",
	reflect.TypeFor[planner.WindowSpec]():       "window",
	reflect.TypeFor[planner.JoinSpec]():         "join",
	reflect.TypeFor[planner.TopNPerGroupSpec](): "top_n_per_group",
	reflect.TypeFor[planner.Op]():               "op",
	reflect.TypeFor[planner.AggFn]():            "fn",
}

// compactTypes are the advanced parts of the query spec whose schema in
// tools/list is only their signature ({fn, col?, order_by?: [{col,
// desc?}], ...}, "?" marking optional fields); their fields are described
// at length in docs/QUERY.md, and arguments are still checked in full when
// a call is bound.
var compactTypes = map[reflect.Type]bool{
	reflect.TypeFor[planner.WindowSpec]():       true,
	reflect.TypeFor[planner.JoinSpec]():         true,
	reflect.TypeFor[planner.TopNPerGroupSpec](): true,
}

// signature is the compact form of t: {field, optional?, list: [item],
// nested: {...}}.
func signature(t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.Slice, reflect.Array:
		if t.Elem().Kind() == reflect.Struct || t.Elem().Kind() == reflect.Pointer {
			return "[" + signature(t.Elem()) + "]"
		}
		return ""
	case reflect.Struct:
		var parts []string
		for i := range t.NumField() {
			f := t.Field(i)
			name, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
			if !f.IsExported() || name == "-" || name == "" || f.Tag.Get("compact") == "-" {
				continue // compact:"-": a field the compact types refuse (order's nulls_first in windows)
			}
			if strings.Contains(opts, "omitempty") {
				name += "?"
			}
			if sub := signature(f.Type); sub != "" {
				name += ": " + sub
			}
			parts = append(parts, name)
		}
		return "{" + strings.Join(parts, ", ") + "}"
	}
	return ""
}

// defsPrefix is the start of a $ref to a shared definition.
const defsPrefix = "#/$defs/"

// shareDefs moves the schema of every sharedDefs type used in schema
// (generated from t) to schema's $defs, leaving a $ref (and the use's
// description) in its place; a definition used only once is put back
// inline. It also drops "null" from type lists (optional fields are
// omitted, not sent as null) and additionalProperties below the top level
// (bindStrict refuses unknown fields at any depth, with the field's path).
func shareDefs(t reflect.Type, schema map[string]any) {
	defs := map[string]any{}
	uses := map[string]int{}
	walkDefs(t, schema, defs, uses, true)
	for name, n := range uses {
		if n == 1 {
			body := defs[name]
			delete(defs, name)
			inlineDef(schema, name, body)
			inlineDef(defs, name, body) // a use inside another definition
		}
	}
	pruneDefs(schema, defs)
	if len(defs) > 0 {
		schema["$defs"] = defs
	}
}

// pruneDefs drops the definitions nothing in schema refers to, directly or
// through another definition (a field whose listed schema was replaced, as
// plot's spec, leaves its types collected but unused).
func pruneDefs(schema map[string]any, defs map[string]any) {
	used := map[string]bool{}
	var mark func(n any)
	mark = func(n any) {
		switch x := n.(type) {
		case map[string]any:
			if ref, ok := x["$ref"].(string); ok && strings.HasPrefix(ref, defsPrefix) {
				name := strings.TrimPrefix(ref, defsPrefix)
				if !used[name] {
					used[name] = true
					mark(defs[name])
				}
			}
			for k, v := range x {
				if k != "$defs" {
					mark(v)
				}
			}
		case []any:
			for _, v := range x {
				mark(v)
			}
		}
	}
	mark(schema)
	for name := range defs {
		if !used[name] {
			delete(defs, name)
		}
	}
}

// walkDefs walks the Go type t alongside its schema node n (as applyEnums
// does) and returns the node to use in n's place.
func walkDefs(t reflect.Type, n any, defs map[string]any, uses map[string]int, root bool) any {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	m, ok := n.(map[string]any)
	if !ok {
		return n
	}
	dropNullType(m)
	if !root {
		delete(m, "additionalProperties") // bindStrict refuses unknown fields at any depth
	}
	if compactTypes[t] && !root {
		out := map[string]any{"type": "object", "description": signature(t)}
		if d, ok := m["description"].(string); ok {
			out["description"] = d + " " + signature(t)
		}
		return out
	}
	if name, shared := sharedDefs[t]; shared && !root {
		uses[name]++
		if _, done := defs[name]; !done {
			defs[name] = m // marks name as in progress: a recursive type meets it below and refers to it instead of expanding again
			body := map[string]any{}
			for k, v := range m {
				if k != "description" {
					body[k] = v
				}
			}
			walkFields(t, body, defs, uses)
			defs[name] = body
		}
		ref := map[string]any{"$ref": defsPrefix + name}
		if d, ok := m["description"]; ok {
			ref["description"] = d
		}
		return ref
	}
	walkFields(t, m, defs, uses)
	return m
}

// walkFields applies walkDefs to the items of a list and the properties
// of a struct.
func walkFields(t reflect.Type, m map[string]any, defs map[string]any, uses map[string]int) {
	switch t.Kind() {
	case reflect.Slice, reflect.Array:
		if it, ok := m["items"]; ok {
			m["items"] = walkDefs(t.Elem(), it, defs, uses, false)
		}
	case reflect.Struct:
		props, _ := m["properties"].(map[string]any)
		for i := range t.NumField() {
			f := t.Field(i)
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			switch {
			case !f.IsExported() || name == "-":
			case f.Anonymous && name == "":
				walkFields(f.Type, m, defs, uses)
			default:
				if name == "" {
					name = f.Name
				}
				if p, ok := props[name]; ok {
					props[name] = walkDefs(f.Type, p, defs, uses, false)
				}
			}
		}
	}
}

// dropNullType turns "type": ["null", X] into "type": X.
func dropNullType(m map[string]any) {
	ts, ok := m["type"].([]any)
	if !ok {
		return
	}
	var keep []any
	for _, x := range ts {
		if x != "null" {
			keep = append(keep, x)
		}
	}
	if len(keep) == 1 {
		m["type"] = keep[0]
	} else {
		m["type"] = keep
	}
}

// inlineDef replaces the $ref to name in n by the definition body (with
// the use's description).
func inlineDef(n any, name string, body any) {
	switch x := n.(type) {
	case map[string]any:
		for k, v := range x {
			if c, ok := v.(map[string]any); ok && c["$ref"] == defsPrefix+name {
				out := map[string]any{}
				for bk, bv := range body.(map[string]any) {
					out[bk] = bv
				}
				if d, ok := c["description"]; ok {
					out["description"] = d
				}
				x[k] = out
				continue
			}
			inlineDef(v, name, body)
		}
	case []any:
		for _, v := range x {
			inlineDef(v, name, body)
		}
	}
}

// sameArgsAs rewrites the input schema raw of a tool whose arguments other
// than own are those of the tool named other: each is listed as {} (any
// JSON; the call is still bound strictly), so the long definitions are in
// tools/list once. Unchanged when other is "".
func sameArgsAs(raw json.RawMessage, own []string, other string) json.RawMessage {
	if other == "" {
		return raw
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		panic("mcpapi: input schema: " + err.Error())
	}
	props, _ := m["properties"].(map[string]any)
	for k := range props {
		if !slices.Contains(own, k) {
			props[k] = map[string]any{}
		}
	}
	delete(m, "$defs")
	out, err := json.Marshal(m)
	if err != nil {
		panic("mcpapi: input schema: " + err.Error())
	}
	if strings.Contains(string(out), defsPrefix) {
		panic("mcpapi: " + other + "-style schema keeps a $ref among its own arguments")
	}
	return out
}
