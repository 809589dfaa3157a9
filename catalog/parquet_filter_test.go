package catalog_test

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/quarrydb/quarry/catalog"
	"github.com/quarrydb/quarry/catalog/internal/cattest"
	"github.com/quarrydb/quarry/engine"
	"github.com/quarrydb/quarry/internal/testutil/plantest"
	"github.com/quarrydb/quarry/planner"
)

// TestParquetFilterDifferential: queries whose filters are pushed into
// the Parquet scan (tested while reading, plain strings copied for the
// passing rows only) return what the engine's filters return over a
// normal scan, for the differential test's files (other tools' files,
// dictionaries falling back to plain pages, v2 pages, nulls in runs and
// alone, batches of 50 rows), filter by filter and combined with a
// string filter on another column.
func TestParquetFilterDifferential(t *testing.T) {
	files := parquetGoFiles(t)
	names := make([]string, 0, len(files))
	for name := range files {
		names = append(names, name)
	}
	slices.Sort(names)
	pushed, rows := 0, 0
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			root := t.TempDir()
			cattest.WriteRaw(t, root, name, string(files[name]))
			c := cattest.NewCatalog(t, root, catalog.NewParquetFormat(catalog.Limits{}))
			if len(c.Datasets()) == 0 {
				return
			}
			ds := c.Datasets()[0]
			src := ds.Source.(planner.FilterPushdowner)
			var filters []planner.FilterSpec
			var text string // a string column, for the combined filters
			for _, col := range cattest.FieldNames(ds.Schema) {
				dt := ds.Schema.Field(ds.Schema.FieldIndices(col)[0]).Type
				filters = append(filters, planner.FilterSpec{Col: col, Op: planner.OpIsNull}, planner.FilterSpec{Col: col, Op: planner.OpIsNotNull})
				switch dt.ID() {
				case arrow.INT64:
					filters = append(filters, planner.FilterSpec{Col: col, Op: planner.OpGt, Value: json.RawMessage(`3`)},
						planner.FilterSpec{Col: col, Op: planner.OpRange, Value: json.RawMessage(`{"min": -100, "max": 1000}`)})
				case arrow.FLOAT64:
					filters = append(filters, planner.FilterSpec{Col: col, Op: planner.OpLte, Value: json.RawMessage(`0.5`)},
						planner.FilterSpec{Col: col, Op: planner.OpRange, Value: json.RawMessage(`{"min": -10, "max": 20}`)})
				case arrow.STRING:
					text = col
					for _, op := range []planner.Op{planner.OpContains, planner.OpStartsWith, planner.OpEndsWith, planner.OpEq, planner.OpNeq} {
						filters = append(filters, planner.FilterSpec{Col: col, Op: op, Value: json.RawMessage(`"a"`)})
					}
					if vs := firstValues(t, ds, col, 1); len(vs) == 1 {
						v, _ := json.Marshal(vs[0])
						filters = append(filters, planner.FilterSpec{Col: col, Op: planner.OpEq, Value: v})
					}
				}
			}
			var specs [][]planner.FilterSpec
			for _, f := range filters {
				specs = append(specs, []planner.FilterSpec{f})
				if text != "" && f.Col != text {
					specs = append(specs, []planner.FilterSpec{f, {Col: text, Op: planner.OpContains, Value: json.RawMessage(`"e"`)}})
				}
			}
			if step := len(specs)/25 + 1; step > 1 { // about 25 queries a file
				var some [][]planner.FilterSpec
				for i := 0; i < len(specs); i += step {
					some = append(some, specs[i])
				}
				specs = some
			}
			for _, fs := range specs {
				plan, err := planner.Build(planner.Spec{Filters: fs}, planner.Input{Dataset: ds.ID, Schema: ds.Schema})
				if err != nil {
					t.Fatal(err)
				}
				opts := engine.Options{Alloc: memory.NewGoAllocator(), BatchSize: 50} // pqarrow's delta decoders leak (not checked)
				if strings.HasPrefix(name, "pqarrow_") {
					mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
					defer mem.AssertSize(t, 0)
					opts.Alloc = mem
				}
				want, _ := plantest.Run(t, plan, ds.Source, planner.OptimizeOptions{}, opts)
				got, opt := plantest.Run(t, plan, ds.Source, planner.OptimizeOptions{Pushdown: src}, opts)
				if got != want {
					t.Fatalf("filters %s: pushed into the scan\n%s\nengine\n%s", specText(fs), head(got), head(want))
				}
				if scan := planner.ScanOf(opt); scan != nil && len(scan.Filters) > 0 {
					pushed++
					rows += strings.Count(got, "\n")
				}
			}
		})
	}
	t.Logf("%d filtered queries pushed, %d rows", pushed, rows)
	if pushed < 200 || rows < 10_000 {
		t.Fatalf("only %d filtered queries pushed (%d rows)", pushed, rows)
	}
}

func specText(fs []planner.FilterSpec) string {
	var out []string
	for _, f := range fs {
		out = append(out, fmt.Sprintf("%s %s %s", f.Col, f.Op, f.Value))
	}
	return strings.Join(out, " and ")
}

// head is the first lines of rows.
func head(rows string) string {
	lines := strings.SplitN(rows, "\n", 8)
	return strings.Join(lines[:min(len(lines), 7)], "\n")
}
