package colcache

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/quarrydb/quarry/catalog"
	"github.com/quarrydb/quarry/catalog/csv"
	"github.com/quarrydb/quarry/engine"
	"github.com/quarrydb/quarry/internal/testutil/plantest"
	"github.com/quarrydb/quarry/planner"
)

// TestQueriesThroughCache runs queries over a dataset whose columns the
// catalog kept in the cache while opening it (low-cardinality strings
// dictionary-encoded), planned against PlanSchema, and checks the results
// and their types equal those of the plain file read.
func TestQueriesThroughCache(t *testing.T) {
	var sb strings.Builder
	sb.WriteString("id,region,note,price,qty\n")
	for i := range 5000 {
		note := fmt.Sprintf("note %d", i)
		if i%17 == 0 {
			note = ""
		}
		region := []string{"north", "south", "café", ""}[i%4]
		fmt.Fprintf(&sb, "%d,%s,%s,%d.%02d,%d\n", i, region, note, i%50, i%100, i%7)
	}
	c, ds, src, mem := openCachedCSV(t, "s", sb.String(), 64<<20)
	ps := src.PlanSchema()
	if dt, ok := ps.Field(1).Type.(*arrow.DictionaryType); !ok || dt.IndexType.ID() != arrow.INT16 || ps.Field(2).Type.ID() != arrow.STRING {
		t.Fatalf("plan schema %v", ps)
	}
	raw := func(s string) json.RawMessage { return json.RawMessage(s) }
	i64 := func(v int64) *int64 { return &v }
	specs := []planner.Spec{
		{},
		{Columns: []string{"region", "note"}, Limit: i64(50), Offset: i64(10)},
		{Filters: []planner.FilterSpec{{Col: "region", Op: planner.OpEq, Value: raw(`"café"`)}}, Aggs: []planner.AggSpec{{Col: "*", Fn: planner.AggCount}}},
		{GroupBy: []string{"region"}, Aggs: []planner.AggSpec{{Col: "price", Fn: planner.AggSum}, {Col: "*", Fn: planner.AggCount}}, OrderBy: []planner.OrderSpec{{Col: "region"}}},
		{Columns: []string{"region", "id"}, OrderBy: []planner.OrderSpec{{Col: "region", Desc: true}, {Col: "id"}}, Limit: i64(20)},
		{Columns: []string{"region"}, Distinct: true, OrderBy: []planner.OrderSpec{{Col: "region"}}},
		{Filters: []planner.FilterSpec{{Col: "region", Op: planner.OpIsNull}}, Columns: []string{"id", "note"}},
	}
	compareThroughCache(t, c, ds, src, mem, specs)
}

// TestJSONQueriesThroughCache: the columns of a newline-delimited JSON
// file kept while the catalog opened it (ints that become floats in a
// later chunk, repeating strings the cache shares one dictionary for,
// timestamps, arrays, a key missing from most records) answer queries as
// the file does.
func TestJSONQueriesThroughCache(t *testing.T) {
	var sb strings.Builder
	const rows = 80_000 // two ~4 MB chunks, enough rows for a shared dictionary
	for i := range rows {
		price := fmt.Sprintf("%d", i%50)
		if i == rows-3 {
			price = "2.5"
		}
		fmt.Fprintf(&sb, `{"id":%d,"region":"%s","price":%s,"ts":"2024-01-%02d 10:00:%02d","tags":[%d,"x"],"note":"note %d"`,
			i, []string{"north", "south", "café"}[i%3], price, 1+i%28, i%60, i%5, i)
		if i%1000 == 0 {
			sb.WriteString(`,"rare":true`)
		}
		sb.WriteString("}\n")
	}
	c, ds, src, mem := openCached(t, "s", ".jsonl", sb.String(), 256<<20,
		func(c *Cache) catalog.Format { return catalog.NewJSONFormatWith(catalog.JSONOptions{Keeper: c}) })
	if ps := src.PlanSchema(); ps.Field(1).Type.ID() != arrow.DICTIONARY || ps.Field(2).Type.ID() != arrow.FLOAT64 {
		t.Fatalf("plan schema %v", ps)
	}
	raw := func(s string) json.RawMessage { return json.RawMessage(s) }
	i64 := func(v int64) *int64 { return &v }
	compareThroughCache(t, c, ds, src, mem, []planner.Spec{
		{Columns: []string{"id", "region", "price", "ts", "tags", "note", "rare"}, Offset: i64(79_990)},
		{GroupBy: []string{"region"}, Aggs: []planner.AggSpec{{Col: "price", Fn: planner.AggSum}, {Col: "*", Fn: planner.AggCount}}, OrderBy: []planner.OrderSpec{{Col: "region"}}},
		{Filters: []planner.FilterSpec{{Col: "rare", Op: planner.OpIsNotNull}}, Aggs: []planner.AggSpec{{Col: "ts", Fn: planner.AggMax}, {Col: "*", Fn: planner.AggCount}}},
		{Filters: []planner.FilterSpec{{Col: "note", Op: planner.OpEq, Value: raw(`"note 77777"`)}}, Columns: []string{"id", "tags", "price"}},
	})
}

// runSpec executes spec and returns its rows and output type names as text.
func runSpec(t *testing.T, spec planner.Spec, schema *arrow.Schema, src catalog.Source) (string, string) {
	t.Helper()
	return runSpecWith(t, spec, schema, src, planner.OptimizeOptions{})
}

// runSpecWith is runSpec with the given optimizer options.
func runSpecWith(t *testing.T, spec planner.Spec, schema *arrow.Schema, src catalog.Source, opts planner.OptimizeOptions) (string, string) {
	t.Helper()
	plan, err := planner.Build(spec, planner.Input{Dataset: "s", Schema: schema})
	if err != nil {
		t.Fatal(err)
	}
	rows, plan := plantest.Run(t, plan, src, opts, engine.Options{})
	var types []string
	for _, f := range plan.Schema().Fields() {
		types = append(types, planner.TypeName(f.Type))
	}
	return rows, strings.Join(types, ",")
}

// TestManyDistinctThroughCache: a column cached dictionary-encoded with
// int16 indices (each chunk within the index's range) but with far more
// distinct values overall than int16 addresses; a sort and top-k that
// gathers rows of every chunk into new dictionaries give the plain read's
// results and types.
func TestManyDistinctThroughCache(t *testing.T) {
	var sb strings.Builder
	sb.WriteString("id,g,r\n")
	const rows = 600_000 // 75,000 distinct g, 8 rows each; a few ~4 MB parse chunks
	for i := range rows {
		fmt.Fprintf(&sb, "%d,g%06d,%d\n", i, i/8, i%8)
	}
	c, ds, src, mem := openCachedCSV(t, "m", sb.String(), 256<<20)
	if dt, ok := src.PlanSchema().Field(1).Type.(*arrow.DictionaryType); !ok || dt.IndexType.ID() != arrow.INT16 {
		t.Fatalf("plan schema %v: g not dictionary<int16>", src.PlanSchema())
	}
	i64 := func(v int64) *int64 { return &v }
	// Each result holds 40,000 distinct g, more than int16 addresses, from
	// rows of more than one chunk (larger limits cost seconds of top-k
	// compaction in the race-instrumented test and check nothing more).
	compareThroughCache(t, c, ds, src, mem, []planner.Spec{
		// the first row of every g first: 40,000 distinct values among 40,000 rows
		{Columns: []string{"id", "g", "r"}, OrderBy: []planner.OrderSpec{{Col: "r"}, {Col: "id"}}, Limit: i64(40_000)},
		{Columns: []string{"g", "id"}, OrderBy: []planner.OrderSpec{{Col: "r", Desc: true}, {Col: "g", Desc: true}}, Limit: i64(40_000)},
		{Columns: []string{"g"}, Distinct: true, OrderBy: []planner.OrderSpec{{Col: "g"}}, Limit: i64(40_000)},
	})
}

// openCachedCSV writes content as <name>.csv in a new data root and opens it with
// a column cache of the given budget (on a checked allocator) as the CSV
// format's keeper; every column must be cached on open.
func openCachedCSV(t *testing.T, name, content string, budget int64) (*Cache, *catalog.Dataset, *Source, *memory.CheckedAllocator) {
	t.Helper()
	return openCached(t, name, ".csv", content, budget, func(c *Cache) catalog.Format { return csv.NewFormatWith(csv.Options{Keeper: c}) })
}

// openCached is openCachedCSV for a file <name><ext> of the format
// format makes with the cache as its keeper.
func openCached(t *testing.T, name, ext, content string, budget int64, format func(*Cache) catalog.Format) (*Cache, *catalog.Dataset, *Source, *memory.CheckedAllocator) {
	t.Helper()
	root := t.TempDir()
	if err := os.WriteFile(filepath.Join(root, name+ext), []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	c := New(Options{Budget: budget, Alloc: mem})
	cat, err := catalog.New(context.Background(), catalog.Options{Root: root, Logger: slog.New(slog.DiscardHandler),
		Formats: []catalog.Format{format(c)}})
	if err != nil {
		t.Fatal(err)
	}
	ds, err := cat.Lookup(name)
	if err != nil {
		t.Fatal(err)
	}
	src := c.Wrap(ds).(*Source)
	if !src.Cached(nil) {
		t.Fatalf("not cached on open: %+v", c.Stats())
	}
	return c, ds, src, mem
}

// compareThroughCache runs every spec on the plain file and through the
// cache: results and output types must be identical. It then purges the
// cache and checks that no Arrow memory is left.
func compareThroughCache(t *testing.T, c *Cache, ds *catalog.Dataset, src *Source, mem *memory.CheckedAllocator, specs []planner.Spec) {
	t.Helper()
	for i, spec := range specs {
		want, wantTypes := runSpec(t, spec, ds.Schema, ds.Source)
		got, gotTypes := runSpec(t, spec, src.PlanSchema(), c.Wrap(ds))
		if want != got {
			t.Errorf("spec %d: results differ\n got %.300s\nwant %.300s", i, got, want)
		}
		if wantTypes != gotTypes {
			t.Errorf("spec %d: output types %s, want %s", i, gotTypes, wantTypes)
		}
	}
	c.Purge()
	mem.AssertSize(t, 0)
}
