package catalog_test

import (
	"context"
	"encoding/json"
	"errors"
	"math/rand/v2"
	"runtime"
	"slices"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/quarrydb/quarry/catalog"
	"github.com/quarrydb/quarry/catalog/internal/cattest"
	"github.com/quarrydb/quarry/engine"
	"github.com/quarrydb/quarry/internal/testutil/leaktest"
	"github.com/quarrydb/quarry/internal/testutil/plantest"
	"github.com/quarrydb/quarry/planner"
)

// readAheadFile catalogs a 6,000-row file of 20 row groups (nulls, NaN,
// a dictionary string column, a plain one) and returns its dataset.
func readAheadFile(t *testing.T) *catalog.Dataset {
	t.Helper()
	rec := randomParquetRecord(t, memory.NewGoAllocator(), rand.New(rand.NewPCG(3, 4)), 6000)
	defer rec.Release()
	root := t.TempDir()
	cattest.WriteRaw(t, root, "ahead.parquet", string(parquetBytes(t, rec, 300)))
	c := cattest.NewCatalog(t, root, catalog.NewParquetFormat(catalog.Limits{}))
	if len(c.Datasets()) != 1 {
		t.Fatalf("not cataloged: %+v", c.Diagnostics())
	}
	return c.Datasets()[0]
}

// TestParquetReadAheadSameScan: a scan whose row groups after the first
// are read ahead by workers returns the same batches, cells and order as
// the serial scan, for every column set and batch size tried, and under
// pushed filters the same rows as the engine's filters over a serial
// scan; nothing is left in the allocator.
func TestParquetReadAheadSameScan(t *testing.T) {
	ds := readAheadFile(t)
	cols := cattest.FieldNames(ds.Schema)
	for _, opts := range []catalog.ScanOptions{{}, {BatchSize: 64}, {BatchSize: 1000}, {Columns: []string{"note", "k"}, BatchSize: 77},
		{Columns: cols[2:3]}} {
		restore := catalog.SetParquetReadAhead(0)
		want := scanText(t, ds, opts, true, false)
		restore()
		for _, w := range []int{2, 3, 4} {
			restore := catalog.SetParquetReadAhead(w)
			n0 := catalog.ParquetReadAheads()
			got := scanText(t, ds, opts, true, false)
			n1 := catalog.ParquetReadAheads()
			restore()
			diffScans(t, "read ahead", got, want)
			if !slices.Equal(got.batches, want.batches) {
				t.Fatalf("%d workers, %+v: batches %v, serial %v", w, opts, got.batches, want.batches)
			}
			if n1-n0 != 1 {
				t.Fatalf("%d workers: the scan did not read ahead", w)
			}
		}
	}
	src := ds.Source.(planner.FilterPushdowner)
	for _, fs := range [][]planner.FilterSpec{
		{{Col: "x", Op: planner.OpRange, Value: json.RawMessage(`{"min": 10, "max": 20}`)}},
		{{Col: "x", Op: planner.OpGt, Value: json.RawMessage(`5`)}, {Col: "note", Op: planner.OpContains, Value: json.RawMessage(`"a"`)}},
		{{Col: "grp", Op: planner.OpEq, Value: json.RawMessage(`"west"`)}},
		{{Col: "id", Op: planner.OpIsNull}},
	} {
		plan, err := planner.Build(planner.Spec{Filters: fs}, planner.Input{Dataset: ds.ID, Schema: ds.Schema})
		if err != nil {
			t.Fatal(err)
		}
		mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
		opts := engine.Options{Alloc: mem, BatchSize: 100}
		restore := catalog.SetParquetReadAhead(0)
		want, _ := plantest.Run(t, plan, ds.Source, planner.OptimizeOptions{}, opts)
		restore()
		restore = catalog.SetParquetReadAhead(3)
		got, opt := plantest.Run(t, plan, ds.Source, planner.OptimizeOptions{Pushdown: src}, opts)
		restore()
		if scan := planner.ScanOf(opt); scan == nil || len(scan.Filters) == 0 {
			t.Fatalf("filters %s were not pushed into the scan", specText(fs))
		}
		if got != want {
			t.Fatalf("filters %s: read ahead with pushed filters\n%s\nserial, engine filters\n%s", specText(fs), head(got), head(want))
		}
		mem.AssertSize(t, 0)
	}
}

// TestParquetReadAheadStops: a scan released after its first read-ahead
// batch, or whose query is cancelled, stops its workers (no goroutine
// left), releases the batches in flight and reports the cancellation.
func TestParquetReadAheadStops(t *testing.T) {
	ds := readAheadFile(t)
	defer catalog.SetParquetReadAhead(3)()
	base := runtime.NumGoroutine()
	for _, cancelFirst := range []bool{false, true} {
		mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
		ctx, cancel := context.WithCancel(context.Background())
		n0 := catalog.ParquetReadAheads()
		rr, err := ds.Source.Scan(ctx, catalog.ScanOptions{Alloc: mem, BatchSize: 100})
		if err != nil {
			t.Fatal(err)
		}
		rows := int64(0)
		for rows <= 400 && rr.Next() { // the first row group (300 rows), then read-ahead batches
			rows += rr.RecordBatch().NumRows()
		}
		if catalog.ParquetReadAheads() != n0+1 {
			t.Fatal("the scan did not read ahead")
		}
		if cancelFirst {
			cancel()
			for rr.Next() {
			}
			if !errors.Is(rr.Err(), context.Canceled) {
				t.Fatalf("after cancel: %v", rr.Err())
			}
		}
		rr.Release()
		cancel()
		mem.AssertSize(t, 0)
	}
	leaktest.Goroutines(t, base)
}
