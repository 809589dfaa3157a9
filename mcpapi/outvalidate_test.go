package mcpapi

import (
	"encoding/json"
	"testing"

	"github.com/quarrydb/quarry/materialize"
	"github.com/quarrydb/quarry/service"
)

func TestOutputCheck(t *testing.T) {
	c := newOutputCheck("query_next_page", schemaFor[*materialize.Result]())
	if !c.free["data"] || !c.free["preview"] || c.free["method"] || c.free["row_count"] {
		t.Fatalf("free fields: %v", c.free)
	}
	ok := `{"method":"direct","data":[{"a":1}],"row_count":1,"total_rows":1,"truncated":false,"warnings":[]}`
	if err := c.validate([]byte(ok)); err != nil {
		t.Fatalf("valid result rejected: %v", err)
	}
	for name, bad := range map[string]string{
		"wrong type":    `{"method":"direct","data":[],"row_count":"one","total_rows":1,"truncated":false,"warnings":[]}`,
		"missing field": `{"method":"direct","data":[],"total_rows":1,"truncated":false,"warnings":[]}`,
		"unknown field": `{"method":"direct","data":[],"row_count":1,"total_rows":1,"truncated":false,"warnings":[],"extra":1}`,
		"not an object": `[1,2]`,
		"bad page_info": `{"method":"handle","row_count":1,"total_rows":1,"truncated":true,"warnings":[],"page_info":{"offset":"x"}}`,
		"null warnings": `{"method":"direct","row_count":1,"total_rows":1,"truncated":false,"warnings":7}`,
	} {
		if err := c.validate([]byte(bad)); err == nil {
			t.Errorf("%s: accepted %s", name, bad)
		}
	}
	// Schemas with anyOf branches (query_data answers a result or a
	// needs_confirmation status) compile and keep their free fields.
	q := newOutputCheck("query_data", schemaFor[*service.QueryResponse]())
	res, _ := json.Marshal(map[string]any{"method": "direct", "data": []any{}, "row_count": 0, "total_rows": 0, "truncated": false, "warnings": []string{}})
	if err := q.validate(res); err != nil {
		t.Fatalf("query_data result rejected: %v", err)
	}
}
