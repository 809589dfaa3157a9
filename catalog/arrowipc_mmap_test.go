package catalog_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"sync/atomic"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/quarrydb/quarry/catalog"
	"github.com/quarrydb/quarry/catalog/internal/cattest"
	"github.com/quarrydb/quarry/internal/qerr"
)

// salesRecord is n rows shaped like the peer harness's sales data: an
// int64 id, a float64 price, an int32 qty, an 8-value region, a note
// string (every 7th null), and with nested a list of ints and a struct.
func salesRecord(t testing.TB, mem memory.Allocator, n, from int, nested bool) arrow.RecordBatch {
	t.Helper()
	fields := []arrow.Field{
		{Name: "id", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		{Name: "price", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
		{Name: "qty", Type: arrow.PrimitiveTypes.Int32, Nullable: true},
		{Name: "region", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "note", Type: arrow.BinaryTypes.String, Nullable: true},
	}
	if nested {
		fields = append(fields, arrow.Field{Name: "tags", Type: arrow.ListOf(arrow.PrimitiveTypes.Int32), Nullable: true},
			arrow.Field{Name: "pos", Type: arrow.StructOf(arrow.Field{Name: "a", Type: arrow.PrimitiveTypes.Int32, Nullable: true}), Nullable: true})
	}
	b := array.NewRecordBuilder(mem, arrow.NewSchema(fields, nil))
	defer b.Release()
	regions := []string{"north", "south", "east", "west", "northeast", "northwest", "southeast", "southwest"}
	for k := range n {
		i := from + k
		b.Field(0).(*array.Int64Builder).Append(3_000_000_000 + int64(i))
		b.Field(1).(*array.Float64Builder).Append(float64(i%10_000) / 100)
		b.Field(2).(*array.Int32Builder).Append(int32(i%20 + 1))
		b.Field(3).(*array.StringBuilder).Append(regions[i*7%8])
		if i%7 == 0 {
			b.Field(4).AppendNull()
		} else {
			b.Field(4).(*array.StringBuilder).Append(fmt.Sprintf("note %d with some words", i))
		}
		if !nested {
			continue
		}
		lb := b.Field(5).(*array.ListBuilder)
		lb.Append(true)
		for j := range i % 3 {
			lb.ValueBuilder().(*array.Int32Builder).Append(int32(i + j))
		}
		sb := b.Field(6).(*array.StructBuilder)
		sb.Append(true)
		sb.FieldBuilder(0).(*array.Int32Builder).Append(int32(-i))
	}
	return b.NewRecordBatch()
}

// writeSalesArrow writes batches × rows rows of salesRecord as an
// uncompressed Arrow IPC file at path.
func writeSalesArrow(t testing.TB, path string, batches, rows int, nested bool) {
	t.Helper()
	mem := memory.NewGoAllocator()
	recs := make([]arrow.RecordBatch, batches)
	for i := range recs {
		recs[i] = salesRecord(t, mem, rows, i*rows, nested)
		defer recs[i].Release()
	}
	if err := os.WriteFile(path, arrowBytes(t, nil, recs...), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestArrowMmapScan: scans of an uncompressed Arrow file map it (the
// mapped path runs) and read exactly what the ReadAt path reads, for
// every projection, with batches sliced across the file's batches.
func TestArrowMmapScan(t *testing.T) {
	root := t.TempDir()
	writeSalesArrow(t, filepath.Join(root, "sales.arrow"), 3, 1000, true)
	c := cattest.NewCatalog(t, root, catalog.NewArrowFormat(catalog.Limits{}))
	ds := cattest.Lookup(t, c, "sales")
	for _, cols := range [][]string{nil, {"note", "id"}, {"tags"}, {"pos", "region", "price"}} {
		before := catalog.ArrowMappedScans()
		_, mapped := cattest.ScanAll(t, ds, catalog.ScanOptions{Columns: cols, BatchSize: 700})
		if catalog.ArrowMappedScans() != before+1 {
			t.Fatalf("%v: the scan did not map the file", cols)
		}
		restore := catalog.SetArrowMmap(false)
		_, read := cattest.ScanAll(t, ds, catalog.ScanOptions{Columns: cols, BatchSize: 700})
		restore()
		if catalog.ArrowMappedScans() != before+1 {
			t.Fatalf("%v: mapped with mapping off", cols)
		}
		if len(mapped) == 0 || len(mapped[0]) != 3000 || !reflect.DeepEqual(mapped, read) {
			t.Fatalf("%v: mapped scan differs from the ReadAt scan (%d columns)", cols, len(mapped))
		}
	}
}

// TestArrowSkipRows: an offset over an unfiltered scan skips the leading
// record batches it covers, unread, and counts their rows.
func TestArrowSkipRows(t *testing.T) {
	root := t.TempDir()
	writeSalesArrow(t, filepath.Join(root, "sales.arrow"), 3, 1000, false)
	ds := cattest.Lookup(t, cattest.NewCatalog(t, root, catalog.NewArrowFormat(catalog.Limits{})), "sales")
	for _, tc := range []struct{ skip, skipped int64 }{{999, 0}, {1000, 1000}, {2500, 2000}, {5000, 3000}} {
		var skipped atomic.Int64
		_, cols := cattest.ScanAll(t, ds, catalog.ScanOptions{Columns: []string{"id"}, SkipRows: tc.skip, Skipped: &skipped})
		if skipped.Load() != tc.skipped || int64(len(cols[0])) != 3000-tc.skipped ||
			(len(cols[0]) > 0 && cols[0][0] != int64(3_000_000_000)+tc.skipped) {
			t.Fatalf("skip %d: skipped %d, %d rows", tc.skip, skipped.Load(), len(cols[0]))
		}
	}
}

// TestArrowMmapTruncated: a mapped file truncated in the middle of a
// scan (its later pages gone: touching them raises SIGBUS) fails the
// scan with a structured "file changed" error, frees everything, and the
// process goes on.
func TestArrowMmapTruncated(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	root := t.TempDir()
	path := filepath.Join(root, "sales.arrow")
	writeSalesArrow(t, path, 16, 8192, true)
	c := cattest.NewCatalog(t, root, catalog.NewArrowFormat(catalog.Limits{}))
	ds := cattest.Lookup(t, c, "sales")
	before := catalog.ArrowMappedScans()
	rr, err := ds.Source.Scan(context.Background(), catalog.ScanOptions{Alloc: mem, BatchSize: 8192})
	if err != nil {
		t.Fatal(err)
	}
	if catalog.ArrowMappedScans() != before+1 {
		t.Fatal("the scan did not map the file")
	}
	if !rr.Next() {
		t.Fatalf("first batch: %v", rr.Err())
	}
	st, _ := os.Stat(path)
	if err := os.Truncate(path, st.Size()/3); err != nil {
		t.Fatal(err)
	}
	n := rr.RecordBatch().NumRows()
	for rr.Next() {
		n += rr.RecordBatch().NumRows()
	}
	err = rr.Err()
	rr.Release()
	if err == nil || n >= ds.RowCount {
		t.Fatalf("read %d of %d rows after the truncation, error %v", n, ds.RowCount, err)
	}
	if !errors.Is(err, catalog.ErrFileChanged) {
		t.Fatalf("error %v does not say the file changed", err)
	}
	cattest.AssertCode(t, err, qerr.ErrNotFound, qerr.CodeDatasetNotFound)
	t.Logf("read %d rows, then: %v", n, err)
}

// BenchmarkArrowScan scans a 2M-row uncompressed Arrow file (the flat
// sales shape of salesRecord, 16 batches, in the page cache) through the
// catalog, mapped and with ReadAt, all columns and one column.
//
//	go test ./catalog -run '^$' -bench ArrowScan -benchtime 5x -count 3
func BenchmarkArrowScan(b *testing.B) {
	root := b.TempDir()
	writeSalesArrow(b, filepath.Join(root, "sales.arrow"), 16, 1<<17, false)
	c := cattest.NewCatalog(b, root, catalog.NewArrowFormat(catalog.Limits{}))
	ds := cattest.Lookup(b, c, "sales")
	for _, proj := range []struct {
		name string
		cols []string
	}{{"all", nil}, {"price", []string{"price"}}, {"note", []string{"note"}}} {
		for _, mapped := range []bool{false, true} {
			name := proj.name + "/readat"
			if mapped {
				name = proj.name + "/mmap"
			}
			b.Run(name, func(b *testing.B) {
				defer catalog.SetArrowMmap(mapped)()
				for b.Loop() {
					rr, err := ds.Source.Scan(context.Background(), catalog.ScanOptions{Columns: proj.cols})
					if err != nil {
						b.Fatal(err)
					}
					var n int64
					for rr.Next() {
						n += rr.RecordBatch().NumRows()
					}
					if err := rr.Err(); err != nil || n != ds.RowCount {
						b.Fatalf("%d rows: %v", n, err)
					}
					rr.Release()
				}
			})
		}
	}
}
