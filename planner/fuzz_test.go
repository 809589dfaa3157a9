package planner_test

import (
	"encoding/json"
	"testing"

	"github.com/quarrydb/quarry/internal/qerr"
	"github.com/quarrydb/quarry/planner"
)

// FuzzBuild feeds arbitrary JSON query specs to Build and Optimize: they must
// never panic, and every rejection must be a structured *qerr.Error with a
// stable code (what the model sees).
func FuzzBuild(f *testing.F) {
	for _, s := range []string{
		`{}`,
		`{"columns":["region","qty"],"filters":[{"col":"qty","op":"gt","value":2}],"limit":3}`,
		`{"filters":[{"col":"price","op":"range","value":{"min":1,"max":"9"}}]}`,
		`{"filters":[{"col":"region","op":"in","value":["a",1,true,null]}]}`,
		`{"filters":[{"col":"ordered_at","op":"gte","value":"2024-01-01T00:00:00+04:00"}]}`,
		`{"group_by":["region"],"aggs":[{"col":"*","fn":"count"},{"col":"qty","fn":"sum","as":"n"}],"order_by":[{"col":"n","desc":true}]}`,
		`{"distinct":true,"columns":["region"],"offset":2}`,
		`{"filters":[{"col":"day","op":"eq","value":"2024-02-30"}]}`,
		`{"filters":[{"col":"qty","op":"eq","value":1e400}]}`,
		`{"filters":[{"expr":"lower(region) LIKE 'a%' AND qty BETWEEN 1 AND 3"}],"columns":["region || '-' || qty AS k"]}`,
		`{"filters":[{"expr":"qty"}],"aggs":[{"col":"CASE WHEN qty > 2 THEN 1 ELSE 0 END","fn":"sum"}]}`,
	} {
		f.Add(s)
	}
	in := testInput()
	f.Fuzz(func(t *testing.T, js string) {
		var s planner.Spec
		if json.Unmarshal([]byte(js), &s) != nil {
			return
		}
		n, err := planner.Build(s, in)
		if err != nil {
			if qerr.As(err).Code == qerr.CodeInternal {
				t.Fatalf("Build(%s) returned an internal error: %v", js, err)
			}
			return
		}
		o, err := planner.Optimize(n, planner.OptimizeOptions{Pushdown: pushAll{}})
		if err != nil {
			t.Fatalf("Optimize(%s): %v", js, err)
		}
		_ = planner.String(o)
	})
}
