package engine

import (
	"testing"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/quarrydb/quarry/planner"
)

// TestJoinValuesRight: the right input of a join may be constant rows
// (a SQL VALUES list joined in): it reads no source.
func TestJoinValuesRight(t *testing.T) {
	mem := newAlloc()
	defer mem.AssertSize(t, 0)
	src := newSource(mem, []tcol{
		{"k", arrow.PrimitiveTypes.Int64, vals(int64(1), int64(2), nil, int64(3))},
		{"v", arrow.BinaryTypes.String, vals("a", "b", "c", "d")},
	})
	defer src.release()
	var rows [][]planner.Expr
	for _, r := range [][2]string{{"1", "'one'"}, {"3", "'three'"}, {"3", "'drei'"}} {
		k, _, err := planner.ParseExpr(r[0])
		if err != nil {
			t.Fatal(err)
		}
		l, _, err := planner.ParseExpr(r[1])
		if err != nil {
			t.Fatal(err)
		}
		rows = append(rows, []planner.Expr{k, l})
	}
	vn, err := planner.NewValues([]string{"k", "label"}, rows)
	if err != nil {
		t.Fatal(err)
	}
	in := planner.Input{Dataset: "t", Schema: src.schema, RowCount: 4, RowCountExact: true,
		Joins: []planner.Input{{Dataset: "v", Schema: vn.Schema(), Node: vn}}}
	spec := planner.Spec{Join: []planner.JoinSpec{{Dataset: "v", As: "v", Type: planner.JoinLeft, On: []planner.JoinOn{{Left: "k", Right: "k"}},
		Where: "v <> 'd'"}}, Columns: []string{"v", "\"v.label\" AS label"}}
	plan, err := planner.Build(spec, in)
	if err != nil {
		t.Fatal(err)
	}
	got, err := run(t, plan, src, Options{Alloc: mem, BatchSize: 2})
	if err != nil {
		t.Fatal(err)
	}
	want := [][]any{{"a", "one"}, {"b", nil}, {"c", nil}, {"d", nil}}
	if !rowsEq(sortRows(got), sortRows(want)) {
		t.Fatalf("got %v, want %v", got, want)
	}
}
