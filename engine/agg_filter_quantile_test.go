package engine

import (
	"testing"

	"github.com/quarrydb/quarry/planner"
)

// Two quantiles of one column, one with a per-aggregate filter, each see
// their own rows (found by the DuckDB vocabulary differential: they shared
// one value collector, so the unfiltered median saw the filtered rows).
func TestQuantilesWithAndWithoutFilter(t *testing.T) {
	data := []tcol{
		{name: "g", typ: tStr, vals: vals("a", "a", "a", "b")},
		{name: "x", typ: tF64, vals: vals(1.0, 2.0, 9.0, 4.0)},
	}
	var spec planner.Spec
	spec.GroupBy = planner.GroupKeys{"g"}
	spec.Aggs = []planner.AggSpec{
		{Col: "x", Fn: "median", As: "filtered", Filter: []planner.FilterSpec{{Col: "x", Op: planner.OpLt, Value: []byte("5")}}},
		{Col: "x", Fn: "median", As: "all"},
	}
	spec.OrderBy = []planner.OrderSpec{{Col: "g"}}
	plan, err := planner.Build(spec, planner.Input{Dataset: "t", Schema: schemaOf(data)})
	if err != nil {
		t.Fatal(err)
	}
	alloc := newAlloc()
	src := newSource(alloc, data)
	got, err := run(t, plan, src, Options{Alloc: alloc})
	src.release()
	alloc.AssertSize(t, 0)
	if err != nil {
		t.Fatal(err)
	}
	want := [][]any{{"a", 1.5, 2.0}, {"b", 4.0, 4.0}}
	if !rowsEq(got, want) {
		t.Fatalf("got %s, want %s", fmtRows(got), fmtRows(want))
	}
}
