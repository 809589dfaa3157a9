package mcpapi

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// outputCheck validates a tool's structured results against the tool's
// declared outputSchema, at run time, on every call.
//
// It replaces server.WithOutputSchemaValidation, which decodes the whole
// result into map[string]any first: for a slice or a page of rows that
// decode was 31% of the round trip (docs/BENCHMARKS.md), and it checks
// nothing, because the bulk fields (data, preview, sample_rows) are
// declared as "any JSON" — they hold records whose columns depend on the
// query. outputCheck decodes every other top-level field and validates the
// whole envelope, with the unconstrained fields present but not decoded.
type outputCheck struct {
	schema *jsonschema.Schema
	// free are the top-level properties whose schema constrains nothing.
	free map[string]bool
}

// newOutputCheck compiles schema (a tool's outputSchema). A schema that
// does not compile is a programming error caught by the snapshot tests.
func newOutputCheck(name string, schema json.RawMessage) *outputCheck {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(schema))
	if err != nil {
		panic(fmt.Sprintf("mcpapi: %s outputSchema: %v", name, err))
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource(name+".output.json", doc); err != nil {
		panic(fmt.Sprintf("mcpapi: %s outputSchema: %v", name, err))
	}
	s, err := c.Compile(name + ".output.json")
	if err != nil {
		panic(fmt.Sprintf("mcpapi: %s outputSchema does not compile: %v", name, err))
	}
	return &outputCheck{schema: s, free: freeProperties(doc)}
}

// freeProperties lists the top-level properties (of the schema and of its
// anyOf/oneOf branches) whose schema has no constraint but a description,
// wherever they appear.
func freeProperties(doc any) map[string]bool {
	free, bound := map[string]bool{}, map[string]bool{}
	var visit func(node any)
	visit = func(node any) {
		m, ok := node.(map[string]any)
		if !ok {
			return
		}
		if props, ok := m["properties"].(map[string]any); ok {
			for k, v := range props {
				if unconstrained(v) {
					free[k] = true
				} else {
					bound[k] = true
				}
			}
		}
		for _, key := range []string{"anyOf", "oneOf", "allOf"} {
			if branches, ok := m[key].([]any); ok {
				for _, b := range branches {
					visit(b)
				}
			}
		}
	}
	visit(doc)
	for k := range bound {
		delete(free, k)
	}
	return free
}

func unconstrained(schema any) bool {
	m, ok := schema.(map[string]any)
	if !ok {
		return schema == true
	}
	for k := range m {
		if k != "description" && k != "title" {
			return false
		}
	}
	return true
}

// validate checks one structured result (its JSON bytes).
func (c *outputCheck) validate(structured []byte) error {
	var top map[string]json.RawMessage
	if err := json.Unmarshal(structured, &top); err != nil {
		return fmt.Errorf("structured content is not a JSON object: %w", err)
	}
	v := make(map[string]any, len(top))
	for k, raw := range top {
		if c.free[k] {
			v[k] = nil // present, not decoded: its schema accepts any value
			continue
		}
		x, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
		if err != nil {
			return fmt.Errorf("field %s: %w", k, err)
		}
		v[k] = x
	}
	return c.schema.Validate(v)
}

// enveloper is implemented by results that carry bulk pre-encoded rows:
// Envelope is their JSON without those fields, which is what outputCheck
// validates (the bulk fields' schema accepts any JSON).
type enveloper interface {
	Envelope() ([]byte, error)
}
