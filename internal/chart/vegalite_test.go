package chart

import (
	"encoding/json"
	"testing"
)

// TestVegaLite checks each kind's spec: v5 schema, one data value per
// frame row, the fields the kind encodes, and the facet operator.
func TestVegaLite(t *testing.T) {
	for _, k := range Kinds {
		t.Run(string(k), func(t *testing.T) {
			s, f := fixture(k)
			raw, err := VegaLite(s, f, Fields{X: "a.b", Y: "y", Color: "region", Facet: "region"})
			if err != nil {
				t.Fatal(err)
			}
			var spec map[string]any
			if err := json.Unmarshal(raw, &spec); err != nil {
				t.Fatal(err)
			}
			if spec["$schema"] != VegaLiteSchema || spec["title"] != s.Title {
				t.Fatalf("schema/title: %v %v", spec["$schema"], spec["title"])
			}
			values := spec["data"].(map[string]any)["values"].([]any)
			if len(values) != f.Len() {
				t.Fatalf("%d values for %d rows", len(values), f.Len())
			}
			body := spec
			if len(f.Facet) > 0 {
				if spec["facet"] == nil || spec["spec"] == nil {
					t.Fatalf("faceted chart without the facet operator: %s", raw)
				}
				body = spec["spec"].(map[string]any)
			}
			if body["mark"] == nil && body["layer"] == nil {
				t.Fatalf("no mark: %s", raw)
			}
			enc := body["encoding"].(map[string]any)
			x := enc["x"].(map[string]any)
			want := map[Kind]string{Bar: `a\.b`, Line: `a\.b`, Area: `a\.b`, Scatter: `a\.b`, Histogram: "bin_start", Box: `a\.b`, Heatmap: `a\.b`}[k]
			if x["field"] != want {
				t.Fatalf("x field %v, want %v", x["field"], want)
			}
			if k == Line && x["type"] != "temporal" {
				t.Fatalf("a time axis is %v", x["type"])
			}
			if k == Line && values[0].(map[string]any)["a.b"] != "2024-01-01" {
				t.Fatalf("dates are written as dates: %v", values[0])
			}
		})
	}
	if _, err := VegaLite(Spec{Kind: Bar}, &Frame{}, Fields{}); err != ErrEmpty {
		t.Fatalf("empty frame: %v", err)
	}
}
