package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/quarrydb/quarry/catalog"
	"github.com/quarrydb/quarry/catalog/csv"
	"github.com/quarrydb/quarry/engine"
	"github.com/quarrydb/quarry/planner"
)

// TestDuckDBSetOps compares random set operations (UNION [ALL], INTERSECT
// [ALL], EXCEPT [ALL], nested, with integer/float widening, nulls and
// duplicates) over generated CSVs read by the real catalog, planned with
// planner.NewSetOp and run by the engine, with DuckDB's answers to the
// same SQL. There is no knob for set operations yet (the SQL front-end
// will lower to them), so the plans are built directly.
func TestDuckDBSetOps(t *testing.T) {
	r := rand.New(rand.NewPCG(2026, 15))
	root := t.TempDir()
	gen := func(name string, n int, cols [3]string, floatSecond bool) {
		var b strings.Builder
		b.WriteString(strings.Join(cols[:], ",") + "\n")
		for range n {
			cell := func(v string) string {
				if r.IntN(7) == 0 {
					return ""
				}
				return v
			}
			second := fmt.Sprint(r.IntN(4))
			if floatSecond {
				second = []string{"0.5", "1", "2.25", "3"}[r.IntN(4)]
			}
			fmt.Fprintf(&b, "%s,%s,%s\n", cell(fmt.Sprint(r.IntN(5))), cell(second), cell(fmt.Sprintf("s%d", r.IntN(4))))
		}
		if err := os.WriteFile(filepath.Join(root, name+".csv"), []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	gen("l", 60, [3]string{"a", "f", "s"}, true)
	gen("r", 50, [3]string{"b", "g", "t"}, false)
	c, err := catalog.New(context.Background(), catalog.Options{Formats: []catalog.Format{csv.NewFormat()}, Root: root, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	sets := map[string]*catalog.Dataset{}
	srcs := map[string]catalog.Source{}
	for _, d := range c.Datasets() {
		sets[d.ID], srcs[d.ID] = d, d.Source
	}
	if sets["l"] == nil || sets["r"] == nil {
		t.Fatalf("datasets: %v", sets)
	}
	// side is one SELECT of cols from dataset ds.
	side := func(ds string, cols []int) (planner.Node, string) {
		d := sets[ds]
		scan := &planner.Scan{Dataset: ds, Out: d.Schema, RowCount: d.RowCount}
		p := &planner.Project{Input: scan}
		var fields []arrow.Field
		var names []string
		for _, k := range cols {
			f := d.Schema.Field(k)
			p.Columns, p.Indices, fields = append(p.Columns, f.Name), append(p.Indices, k), append(fields, f)
			names = append(names, f.Name)
		}
		p.Out = arrow.NewSchema(fields, nil)
		return p, fmt.Sprintf("SELECT %s FROM %s", strings.Join(names, ", "), ds)
	}
	kinds := []planner.SetOpKind{planner.SetUnion, planner.SetIntersect, planner.SetExcept}
	var plans []planner.Node
	var sqls []string
	for range 60 {
		cols := [][]int{{0, 2}, {1}, {0, 1, 2}, {2}, {0}}[r.IntN(5)]
		if r.IntN(3) == 0 { // first column of l (int) against second of r (int) or first of r
			cols = []int{0}
		}
		pick := func() string { return []string{"l", "r"}[r.IntN(2)] }
		op := func(l planner.Node, lsql string, rt planner.Node, rsql string) (planner.Node, string) {
			k, all := kinds[r.IntN(3)], r.IntN(2) == 0
			so, err := planner.NewSetOp(k, all, l, rt)
			if err != nil {
				t.Fatal(err)
			}
			return so, fmt.Sprintf("(%s) %s (%s)", lsql, so.Name(), rsql)
		}
		l, lsql := side(pick(), cols)
		rt, rsql := side(pick(), cols)
		plan, sql := op(l, lsql, rt, rsql)
		if r.IntN(3) == 0 {
			x, xsql := side(pick(), cols)
			if r.IntN(2) == 0 {
				plan, sql = op(plan, sql, x, xsql)
			} else {
				plan, sql = op(x, xsql, plan, sql)
			}
		}
		if plan, err = planner.Optimize(plan, planner.OptimizeOptions{}); err != nil {
			t.Fatal(err)
		}
		plans, sqls = append(plans, plan), append(sqls, "SELECT * FROM ("+sql+")")
	}
	specPath := writeSpec(t, map[string]any{
		"tables": map[string]any{
			"l": map[string]any{"csv": filepath.Join(root, "l.csv"), "columns": [][2]string{{"a", "BIGINT"}, {"f", "DOUBLE"}, {"s", "VARCHAR"}}},
			"r": map[string]any{"csv": filepath.Join(root, "r.csv"), "columns": [][2]string{{"b", "BIGINT"}, {"g", "BIGINT"}, {"t", "VARCHAR"}}},
		},
		"queries": sqls,
	})
	var duck struct {
		DuckDB string        `json:"duckdb"`
		Rows   [][][]*string `json:"rows"`
	}
	if out := duckdbScript(t, "joins.js", specPath); json.Unmarshal(out, &duck) != nil || len(duck.Rows) != len(sqls) {
		t.Fatalf("joins.js output: %s", out)
	}
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	for i, plan := range plans {
		got := setOpText(t, plan, srcs, mem)
		g, _ := json.Marshal(sortText(got))
		w, _ := json.Marshal(sortText(duck.Rows[i]))
		if string(g) != string(w) {
			t.Errorf("SQL: %s\nplan:\n%s\nQuarry: %s\nDuckDB: %s", sqls[i], planner.String(plan), g, w)
		}
	}
	t.Logf("%d random set operations agree with DuckDB %s", len(plans), duck.DuckDB)
}

// setOpText runs plan with the engine and returns its rows as text (as
// DuckDB's node client prints them).
func setOpText(t *testing.T, plan planner.Node, srcs map[string]catalog.Source, mem memory.Allocator) [][]*string {
	t.Helper()
	rr, err := engine.Execute(context.Background(), plan, srcs[planner.ScanOf(plan).Dataset], engine.Options{Alloc: mem, BatchSize: 7, Sources: srcs})
	if err != nil {
		t.Fatal(err)
	}
	defer rr.Release()
	rows := [][]*string{}
	for rr.Next() {
		b := rr.RecordBatch()
		for i := range int(b.NumRows()) {
			row := make([]*string, b.NumCols())
			for c, col := range b.Columns() {
				if col.IsNull(i) {
					continue
				}
				var s string
				switch a := col.(type) {
				case *array.Int64:
					s = strconv.FormatInt(a.Value(i), 10)
				case *array.Float64:
					s = strconv.FormatFloat(a.Value(i), 'f', -1, 64)
				default:
					s = a.ValueStr(i)
				}
				row[c] = &s
			}
			rows = append(rows, row)
		}
	}
	if err := rr.Err(); err != nil {
		t.Fatal(err)
	}
	return rows
}
