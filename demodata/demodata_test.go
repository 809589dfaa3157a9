package demodata_test

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/quarrydb/quarry/catalog"
	"github.com/quarrydb/quarry/catalog/csv"
	"github.com/quarrydb/quarry/demodata"
)

// demoTables is what the catalog must list over the extracted demo data.
var demoTables = []struct {
	id    string
	rows  int64
	cols  int
	types map[string]string // spot checks
}{
	{"budget/2024/expenses", 600, 5, map[string]string{"program": "utf8", "allocated": "int64", "actual": "float64"}},
	{"sales/orders", 1500, 10, map[string]string{"order_id": "int64", "ordered_at": "timestamp[ms, tz=UTC]", "discount": "float64", "note": "utf8"}},
	{"sensors/readings", 100000, 5, map[string]string{"id": "int64", "ts": "timestamp[ms]", "value": "float64"}},
	{"survey/wide", 500, 60, map[string]string{"submitted_on": "date32", "consent": "bool", "referral_code": "utf8", "unused": "utf8", "q42": "int64"}},
	{"weather/daily", 3680, 6, map[string]string{"date": "date32", "precip_mm": "float64", "snow": "bool"}},
	{"weather/stations", 40, 7, map[string]string{"name": "utf8", "elevation_m": "int64", "opened": "date32"}},
}

func TestExtractIdempotent(t *testing.T) {
	dir := t.TempDir()
	p1, err := demodata.Extract(dir)
	if err != nil {
		t.Fatal(err)
	}
	h, _ := demodata.Hash()
	if filepath.Dir(p1) != dir || filepath.Base(p1) != h || len(h) != 16 {
		t.Fatalf("path %s (hash %s)", p1, h)
	}
	marker := filepath.Join(p1, "weather", "daily.csv")
	st1, err := os.Stat(marker)
	if err != nil {
		t.Fatal(err)
	}
	p2, err := demodata.Extract(dir)
	if err != nil || p2 != p1 {
		t.Fatalf("second Extract = %s, %v", p2, err)
	}
	st2, _ := os.Stat(marker)
	if !st2.ModTime().Equal(st1.ModTime()) {
		t.Error("complete copy was rewritten")
	}
	// Only the hash directory is left behind (no temp dirs).
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("dir holds %v", entries)
	}

	// A damaged copy is replaced.
	if err := os.Remove(marker); err != nil {
		t.Fatal(err)
	}
	p3, err := demodata.Extract(dir)
	if err != nil || p3 != p1 {
		t.Fatalf("repair Extract = %s, %v", p3, err)
	}
	if _, err := os.Stat(marker); err != nil {
		t.Fatal("damaged copy not repaired")
	}
	entries, _ = os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("dir holds %v after repair", entries)
	}
}

func TestExtractConcurrent(t *testing.T) {
	dir := t.TempDir()
	var wg sync.WaitGroup
	paths := make([]string, 8)
	for i := range paths {
		wg.Go(func() {
			p, err := demodata.Extract(dir)
			if err != nil {
				t.Error(err)
			}
			paths[i] = p
		})
	}
	wg.Wait()
	for _, p := range paths[1:] {
		if p != paths[0] {
			t.Fatalf("paths differ: %v", paths)
		}
	}
}

func TestDefaultDir(t *testing.T) {
	d := demodata.DefaultDir()
	if !filepath.IsAbs(d) || !strings.HasSuffix(filepath.ToSlash(d), "quarry/demo") {
		t.Errorf("DefaultDir() = %q", d)
	}
}

func TestCatalogOverDemoData(t *testing.T) {
	dir, err := demodata.Extract(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	c, err := catalog.New(context.Background(), catalog.Options{Formats: []catalog.Format{csv.NewFormat()}, Root: dir, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	if d := c.Diagnostics(); len(d) != 0 {
		t.Fatalf("diagnostics %v", d)
	}
	var ids []string
	for _, ds := range c.Datasets() {
		ids = append(ids, ds.ID)
	}
	var want []string
	for _, tt := range demoTables {
		want = append(want, tt.id)
	}
	if !reflect.DeepEqual(ids, want) {
		t.Fatalf("ids %v, want %v", ids, want)
	}
	for _, tt := range demoTables {
		t.Run(tt.id, func(t *testing.T) {
			ds, err := c.Lookup(tt.id)
			if err != nil {
				t.Fatal(err)
			}
			if ds.RowCount != tt.rows || !ds.RowCountExact || ds.Schema.NumFields() != tt.cols {
				t.Fatalf("rows %d exact %v cols %d", ds.RowCount, ds.RowCountExact, ds.Schema.NumFields())
			}
			for name, typ := range tt.types {
				idx := ds.Schema.FieldIndices(name)
				if len(idx) != 1 || ds.Schema.Field(idx[0]).Type.String() != typ {
					t.Errorf("column %s: %v, want %s", name, idx, typ)
				}
			}
			mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
			defer mem.AssertSize(t, 0)
			rr, err := ds.Source.Scan(context.Background(), catalog.ScanOptions{BatchSize: 4096, Alloc: mem})
			if err != nil {
				t.Fatal(err)
			}
			defer rr.Release()
			var n int64
			for rr.Next() {
				n += rr.RecordBatch().NumRows()
			}
			if err := rr.Err(); err != nil {
				t.Fatal(err)
			}
			if n != tt.rows {
				t.Errorf("scanned %d rows, want %d", n, tt.rows)
			}
		})
	}

	// sensors/readings: ids are exactly 1..100000.
	ds, _ := c.Lookup("sensors/readings")
	rr, err := ds.Source.Scan(context.Background(), catalog.ScanOptions{Columns: []string{"id"}})
	if err != nil {
		t.Fatal(err)
	}
	defer rr.Release()
	next := int64(1)
	for rr.Next() {
		col := rr.RecordBatch().Column(0).(*array.Int64)
		for i := range col.Len() {
			if col.Value(i) != next {
				t.Fatalf("id %d at position %d", col.Value(i), next)
			}
			next++
		}
	}
	if rr.Err() != nil || next != 100001 {
		t.Fatalf("ids end at %d: %v", next-1, rr.Err())
	}
}
