package colcache

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"path/filepath"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/parquet-go/parquet-go"

	"github.com/quarrydb/quarry/catalog"
	"github.com/quarrydb/quarry/planner"
)

// A filtered query of a Parquet file is pushed into the file (its scan
// decodes the other columns for the passing rows only) and fills nothing;
// the second filtered query of the file takes no filters and fills the
// cache; later ones read memory. The answers are the same every time.
func TestParquetFilteredQueriesFillOnSecond(t *testing.T) {
	type row struct {
		ID    int64   `parquet:"id"`
		Price float64 `parquet:"price"`
		Note  string  `parquet:"note,dict"` // (plain strings: DELTA_LENGTH_BYTE_ARRAY, whose pqarrow decoder leaks 64 bytes)
	}
	rows := make([]row, 20_000)
	for i := range rows {
		rows[i] = row{ID: int64(i), Price: float64(i%97) / 4, Note: fmt.Sprintf("note %d", i%1000)}
	}
	root := t.TempDir()
	if err := parquet.WriteFile(filepath.Join(root, "s.parquet"), rows); err != nil {
		t.Fatal(err)
	}
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	c := New(Options{Budget: 64 << 20, Alloc: mem})
	defer c.Purge()
	cat, err := catalog.New(context.Background(), catalog.Options{Root: root, Logger: slog.New(slog.DiscardHandler),
		Formats: []catalog.Format{catalog.NewParquetFormat(catalog.Limits{})}})
	if err != nil {
		t.Fatal(err)
	}
	ds, err := cat.Lookup("s")
	if err != nil {
		t.Fatal(err)
	}
	spec := planner.Spec{Filters: []planner.FilterSpec{{Col: "price", Op: planner.OpGt, Value: json.RawMessage("20")}},
		Columns: []string{"id", "note"}, OrderBy: []planner.OrderSpec{{Col: "id"}}}
	cols := []string{"id", "price", "note"}
	want, _ := runSpec(t, spec, ds.Schema, ds.Source)
	for i, wantCached := range []bool{false, true, true} {
		src := c.Wrap(ds).(*Source)
		plan, err := planner.Build(spec, planner.Input{Dataset: "s", Schema: ds.Schema})
		if err != nil {
			t.Fatal(err)
		}
		if plan, err = planner.Optimize(plan, planner.OptimizeOptions{Pushdown: src}); err != nil {
			t.Fatal(err)
		}
		if pushed := len(planner.ScanOf(plan).Filters) > 0; pushed != (i == 0) {
			t.Fatalf("query %d: filter pushed %v", i+1, pushed)
		}
		got, _ := runSpecWith(t, spec, ds.Schema, src, planner.OptimizeOptions{Pushdown: src})
		if got != want {
			t.Fatalf("query %d: answer differs", i+1)
		}
		if cached := c.Wrap(ds).(*Source).Cached(cols); cached != wantCached {
			t.Fatalf("after query %d: cached %v, want %v", i+1, cached, wantCached)
		}
	}
}
