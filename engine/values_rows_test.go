package engine

import (
	"testing"

	"github.com/quarrydb/quarry/planner"
)

// TestValuesAlone: a plan of constant rows needs no source (SELECT 1, 'a'
// without FROM), types a column from its non-null rows, batches the rows
// by the batch size, and frees everything.
func TestValuesAlone(t *testing.T) {
	mem := newAlloc()
	defer mem.AssertSize(t, 0)
	var rows [][]planner.Expr
	var want [][]any
	for i := range 5 {
		row := []string{"1 + 2", "'x' || 'y'", "2.5"}
		if i == 3 {
			row = []string{"NULL", "NULL", "-1"}
		}
		var es []planner.Expr
		for _, text := range row {
			e, _, err := planner.ParseExpr(text)
			if err != nil {
				t.Fatal(err)
			}
			es = append(es, e)
		}
		rows = append(rows, es)
		if i == 3 {
			want = append(want, []any{nil, nil, -1.0})
		} else {
			want = append(want, []any{int64(3), "xy", 2.5})
		}
	}
	v, err := planner.NewValues([]string{"a", "b", "d"}, rows)
	if err != nil {
		t.Fatal(err)
	}
	got, err := run(t, v, nil, Options{Alloc: mem, BatchSize: 2})
	if err != nil {
		t.Fatal(err)
	}
	if !rowsEq(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	ex, err := Explain(v, nil, Options{})
	if err != nil || ex.Name != "values" {
		t.Fatalf("explain: %v %v", ex, err)
	}
}
