package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/quarrydb/quarry/internal/qerr"
	"github.com/quarrydb/quarry/planner"
	"github.com/quarrydb/quarry/sqlfront"
)

// h2oJoinTables is the catalog of the H2O join questions: the columns of
// bench/h2o/joingen's tables (id1..id3 integers, id4..id6 strings, v1/v2
// floats) and their rows at N = 10M.
type h2oJoinTables struct{}

func (h2oJoinTables) Input(_ context.Context, name string) (planner.Input, error) {
	cols := map[string]string{"x": "id1,id2,id3,id4,id5,id6,v1", "small": "id1,id4,v2", "medium": "id1,id2,id4,id5,v2", "big": "id1,id2,id3,id4,id5,id6,v2"}[name]
	rows := map[string]int64{"x": 10_000_000, "small": 10, "medium": 10_000, "big": 10_000_000}[name]
	if cols == "" {
		return planner.Input{}, qerr.NotFound(qerr.CodeDatasetNotFound, "dataset %q not found", name)
	}
	var fields []arrow.Field
	for _, c := range strings.Split(cols, ",") {
		typ := arrow.DataType(arrow.PrimitiveTypes.Int64)
		switch c {
		case "id4", "id5", "id6":
			typ = arrow.BinaryTypes.String
		case "v1", "v2":
			typ = arrow.PrimitiveTypes.Float64
		}
		fields = append(fields, arrow.Field{Name: c, Type: typ, Nullable: true})
	}
	return planner.Input{Dataset: name, Schema: arrow.NewSchema(fields, nil), RowCount: rows, RowCountExact: true}, nil
}

// TestH2OJoinSQLPlans: each H2O join question of bench/h2o/join, as the
// benchmark runs it through advanced_query, compiles to the same optimized
// plan as its knob form (query_data with join[]), so SQL costs the join
// questions nothing but parsing.
func TestH2OJoinSQLPlans(t *testing.T) {
	x := `"id1", "id2", "id3", "id4", "id5", "id6", "v1"`
	knobs := map[string]string{
		"q01": `{"join": [{"dataset": "small", "on": [{"left": "id1", "right": "id1"}]}],
			"columns": [` + x + `, "\"small.id4\" AS small_id4", "\"small.v2\" AS v2"]}`,
		"q02": `{"join": [{"dataset": "medium", "on": [{"left": "id2", "right": "id2"}]}],
			"columns": [` + x + `, "\"medium.id1\" AS medium_id1", "\"medium.id4\" AS medium_id4", "\"medium.id5\" AS medium_id5", "\"medium.v2\" AS v2"]}`,
		"q03": `{"join": [{"dataset": "medium", "type": "left", "on": [{"left": "id2", "right": "id2"}]}],
			"columns": [` + x + `, "\"medium.id1\" AS medium_id1", "\"medium.id4\" AS medium_id4", "\"medium.id5\" AS medium_id5", "\"medium.v2\" AS v2"]}`,
		"q04": `{"join": [{"dataset": "medium", "on": [{"left": "id5", "right": "id5"}]}],
			"columns": [` + x + `, "\"medium.id1\" AS medium_id1", "\"medium.id2\" AS medium_id2", "\"medium.id4\" AS medium_id4", "\"medium.v2\" AS v2"]}`,
		"q05": `{"join": [{"dataset": "big", "on": [{"left": "id3", "right": "id3"}]}],
			"columns": [` + x + `, "\"big.id1\" AS big_id1", "\"big.id2\" AS big_id2", "\"big.id4\" AS big_id4", "\"big.id5\" AS big_id5", "\"big.id6\" AS big_id6", "\"big.v2\" AS v2"]}`,
	}
	files, _ := filepath.Glob("../../bench/h2o/join/q*.sql")
	if len(files) != len(knobs) {
		t.Fatalf("found %d join questions, want %d", len(files), len(knobs))
	}
	ctx := context.Background()
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".sql")
		text, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		st, err := sqlfront.Parse(strings.TrimSuffix(strings.TrimSpace(string(text)), ";"))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		c, err := st.Compile(ctx, h2oJoinTables{}, nil)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		got, err := planner.Optimize(c.Plan, planner.OptimizeOptions{})
		if err != nil {
			t.Fatal(err)
		}
		var sp planner.Spec
		if err := json.Unmarshal([]byte(knobs[name]), &sp); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		in, _ := h2oJoinTables{}.Input(ctx, "x")
		for _, j := range sp.Join {
			jin, _ := h2oJoinTables{}.Input(ctx, j.Dataset)
			in.Joins = append(in.Joins, jin)
		}
		want, err := specPlan(sp, in)
		if err != nil {
			t.Fatalf("%s knobs: %v", name, err)
		}
		if g, w := planner.String(got), planner.String(want); g != w {
			t.Errorf("%s: the SQL plan differs from the knob plan\nSQL:\n%s\nknobs:\n%s", name, g, w)
		}
	}
}
