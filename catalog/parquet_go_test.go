package catalog_test

import (
	"context"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/quarrydb/quarry/catalog"
	"github.com/quarrydb/quarry/catalog/internal/cattest"
)

// scanned is one scan's result as text: the reader's column types and
// every cell (ValueStr; nullCell for null), or the scan's error; and the
// lengths of its batches.
type scanned struct {
	types   []string
	cells   [][]string
	batches []int64 // the batches' lengths
	err     error
}

const nullCell = "\x00null"

// scanText scans ds with the parquet-go path on or off, with a checked
// allocator: nothing may be left, except, when pqarrowMayLeak, by a scan
// that pqarrow read (some or all of): arrow-go v18.8's decoder of
// DELTA_BINARY_PACKED pages allocates its miniblock widths from the
// allocator and never frees them (parquet/internal/encoding/
// delta_bit_packing.go, initBlock: 64 bytes a decoder). A scan that
// parquet-go read alone is always held to zero.
func scanText(t *testing.T, ds *catalog.Dataset, opts catalog.ScanOptions, parquetGo, pqarrowMayLeak bool) scanned {
	t.Helper()
	defer catalog.SetParquetGo(parquetGo)()
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	used0, fell0 := catalog.ParquetGoRowGroups()
	defer func() {
		used1, fell1 := catalog.ParquetGoRowGroups()
		if pqarrowMayLeak && (used1 == used0 || fell1 != fell0) && mem.CurrentAlloc() != 0 {
			t.Logf("%d bytes left by a scan pqarrow read (arrow-go's delta decoder)", mem.CurrentAlloc())
			return
		}
		mem.AssertSize(t, 0)
	}()
	opts.Alloc = mem
	rr, err := ds.Source.Scan(context.Background(), opts)
	if err != nil {
		return scanned{err: err}
	}
	defer rr.Release()
	sc := rr.Schema()
	out := scanned{types: cattest.TypeNames(sc), cells: make([][]string, sc.NumFields())}
	for rr.Next() {
		rec := rr.RecordBatch()
		out.batches = append(out.batches, rec.NumRows())
		for i := range sc.NumFields() {
			col := rec.Column(i)
			if !arrow.TypeEqual(col.DataType(), sc.Field(i).Type) {
				t.Fatalf("column %s is %s in a batch, %s in the schema", sc.Field(i).Name, col.DataType(), sc.Field(i).Type)
			}
			for r := range col.Len() {
				if col.IsNull(r) {
					out.cells[i] = append(out.cells[i], nullCell)
				} else {
					out.cells[i] = append(out.cells[i], col.ValueStr(r))
				}
			}
		}
	}
	out.err = rr.Err()
	return out
}

// diffScans fails unless the two scans agree: both fail, or both read the
// same types and cells.
func diffScans(t *testing.T, what string, got, want scanned) int {
	t.Helper()
	if (got.err == nil) != (want.err == nil) {
		t.Fatalf("%s: parquet-go error %v, pqarrow error %v", what, got.err, want.err)
	}
	if got.err != nil {
		return 0
	}
	if !slices.Equal(got.types, want.types) {
		t.Fatalf("%s: types %v, pqarrow %v", what, got.types, want.types)
	}
	n := 0
	for i := range want.cells {
		if len(got.cells[i]) != len(want.cells[i]) {
			t.Fatalf("%s: column %d has %d rows, pqarrow %d", what, i, len(got.cells[i]), len(want.cells[i]))
		}
		for r := range want.cells[i] {
			if got.cells[i][r] != want.cells[i][r] {
				t.Fatalf("%s: column %d (%s) row %d: %q, pqarrow %q", what, i, want.types[i], r, got.cells[i][r], want.cells[i][r])
			}
		}
		n += len(want.cells[i])
	}
	return n
}

// parquetGoFiles are the differential test's files: those written by
// other tools (testdata/parquet, see its README) and files pqarrow writes
// here with every flat type, nulls, v1 and v2 pages, several codecs,
// small pages, dictionaries that fall back to plain pages mid-chunk, and
// nested columns.
func parquetGoFiles(t testing.TB) map[string][]byte {
	t.Helper()
	files := map[string][]byte{}
	paths, err := filepath.Glob("testdata/parquet/*.parquet")
	if err != nil || len(paths) < 20 {
		t.Fatalf("testdata/parquet: %d files (%v)", len(paths), err)
	}
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		files[filepath.Base(p)] = b
	}
	mem := memory.NewGoAllocator()
	rec := sampleRecord(t, mem)
	files["pqarrow_sample.parquet"] = parquetBytes(t, rec, 4)
	rec.Release()
	rec = randomParquetRecord(t, mem, rand.New(rand.NewPCG(1, 2)), 3000)
	files["pqarrow_random.parquet"] = parquetBytes(t, rec, 700)
	rec.Release()
	rec = widthsRecord(t, mem, 700)
	for name, props := range map[string][]parquet.WriterProperty{
		"pqarrow_widths_v1_snappy.parquet": {parquet.WithCompression(compress.Codecs.Snappy), parquet.WithDataPageSize(700)},
		"pqarrow_widths_v2_zstd.parquet": {parquet.WithCompression(compress.Codecs.Zstd), parquet.WithDataPageVersion(parquet.DataPageV2),
			parquet.WithDataPageSize(300)},
		"pqarrow_widths_plain.parquet": {parquet.WithDictionaryDefault(false), parquet.WithCompression(compress.Codecs.Gzip)},
		// dictionaries over 200 bytes fall back to plain pages mid-chunk
		"pqarrow_widths_dictfallback.parquet": {parquet.WithDictionaryPageSizeLimit(200), parquet.WithDataPageSize(256),
			parquet.WithBatchSize(32)},
	} {
		files[name] = parquetWith(t, rec, 300, props...)
	}
	rec.Release()
	return files
}

// parquetWith writes rec with pqarrow (dictionaries on, decimals as
// integers where they fit) and the given properties.
func parquetWith(t testing.TB, rec arrow.RecordBatch, rowGroup int64, props ...parquet.WriterProperty) []byte {
	t.Helper()
	props = append([]parquet.WriterProperty{parquet.WithMaxRowGroupLength(rowGroup), parquet.WithDictionaryDefault(true),
		parquet.WithStoreDecimalAsInteger(true)}, props...)
	return parquetBytesWith(t, rec, pqarrow.DefaultWriterProps(), props...)
}

// widthsRecord is n rows of every flat type the parquet-go path reads,
// nullable (with nulls in runs and alone) and required.
func widthsRecord(t testing.TB, mem memory.Allocator, n int) arrow.RecordBatch {
	t.Helper()
	sc := arrow.NewSchema([]arrow.Field{
		{Name: "i8", Type: arrow.PrimitiveTypes.Int8, Nullable: true},
		{Name: "i16", Type: arrow.PrimitiveTypes.Int16, Nullable: true},
		{Name: "i32", Type: arrow.PrimitiveTypes.Int32, Nullable: true},
		{Name: "u8", Type: arrow.PrimitiveTypes.Uint8, Nullable: true},
		{Name: "u16", Type: arrow.PrimitiveTypes.Uint16, Nullable: true},
		{Name: "u32", Type: arrow.PrimitiveTypes.Uint32, Nullable: true},
		{Name: "u64", Type: arrow.PrimitiveTypes.Uint64, Nullable: true},
		{Name: "f32", Type: arrow.PrimitiveTypes.Float32, Nullable: true},
		{Name: "f64", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
		{Name: "ok", Type: arrow.FixedWidthTypes.Boolean, Nullable: true},
		{Name: "day", Type: arrow.FixedWidthTypes.Date32, Nullable: true},
		{Name: "ts_ms", Type: &arrow.TimestampType{Unit: arrow.Millisecond}, Nullable: true},
		{Name: "ts_ns", Type: &arrow.TimestampType{Unit: arrow.Nanosecond, TimeZone: "UTC"}, Nullable: true},
		{Name: "dec9", Type: &arrow.Decimal128Type{Precision: 9, Scale: 2}, Nullable: true},
		{Name: "dec18", Type: &arrow.Decimal128Type{Precision: 18, Scale: 4}, Nullable: true},
		{Name: "grp", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "text", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "bin", Type: arrow.BinaryTypes.Binary, Nullable: true},
		{Name: "req_id", Type: arrow.PrimitiveTypes.Int64},
		{Name: "req_name", Type: arrow.BinaryTypes.String},
		{Name: "req_ok", Type: arrow.FixedWidthTypes.Boolean},
	}, nil)
	b := array.NewRecordBuilder(mem, sc)
	defer b.Release()
	rng := rand.New(rand.NewPCG(5, 9))
	groups := []string{"north", "south", "east", "west", "", "Zürich 東京"}
	for i := range n {
		null := func(k int) bool { return (i/50)%7 == 3 || rng.IntN(k) == 0 } // runs and singles
		for f := range 18 {
			if null(4 + f) {
				b.Field(f).AppendNull()
				continue
			}
			v := rng.Int64()
			switch fb := b.Field(f).(type) {
			case *array.Int8Builder:
				fb.Append(int8(v))
			case *array.Int16Builder:
				fb.Append(int16(v))
			case *array.Int32Builder:
				fb.Append(int32(v))
			case *array.Uint8Builder:
				fb.Append(uint8(v))
			case *array.Uint16Builder:
				fb.Append(uint16(v))
			case *array.Uint32Builder:
				fb.Append(uint32(v))
			case *array.Uint64Builder:
				fb.Append(uint64(v) | 1<<63)
			case *array.Float32Builder:
				fb.Append(float32(v%100000) / 7)
			case *array.Float64Builder:
				fb.Append([]float64{float64(v) / 3, 0, math.Copysign(0, -1), 1e300}[i%4])
			case *array.BooleanBuilder:
				fb.Append(v%3 == 0)
			case *array.Date32Builder:
				fb.Append(arrow.Date32(v % 40000))
			case *array.TimestampBuilder:
				fb.Append(arrow.Timestamp(v % 4_000_000_000_000))
			case *array.Decimal128Builder:
				fb.Append(decimal128.FromI64(v % 999_999_999))
			case *array.StringBuilder:
				if f == 15 {
					fb.Append(groups[int(uint64(v)%uint64(len(groups)))])
				} else {
					fb.Append(strings.Repeat("x", int(uint64(v)%20)) + string(rune('a'+i%26)))
				}
			case *array.BinaryBuilder:
				fb.Append([]byte{byte(v), 0, byte(v >> 8)})
			}
		}
		b.Field(18).(*array.Int64Builder).Append(int64(i) * 1_000_003)
		b.Field(19).(*array.StringBuilder).Append(groups[i%len(groups)])
		b.Field(20).(*array.BooleanBuilder).Append(i%5 == 0)
	}
	return b.NewRecordBatch()
}

// deltaFiles hold DELTA_BINARY_PACKED pages, on which pqarrow leaks (see
// scanText).
var deltaFiles = map[string]bool{"datapage_v2.snappy.parquet": true, "delta_byte_array.parquet": true,
	"delta_encoding_optional_column.parquet": true, "delta_encoding_required_column.parquet": true,
	"delta_length_byte_array.parquet": true, "duckdb_types_zstd_v2.parquet": true}

// TestParquetGoDifferential: every file (other writers' and pqarrow's),
// every column alone, all columns, a reversed projection, small batches
// and a leading skip read the same through the parquet-go path as through
// pqarrow, leaking nothing; and the parquet-go path reads what it should
// (flat columns) and leaves to pqarrow the row groups it should (a
// dictionary column with plain pages).
func TestParquetGoDifferential(t *testing.T) {
	files := parquetGoFiles(t)
	names := make([]string, 0, len(files))
	for name := range files {
		names = append(names, name)
	}
	slices.Sort(names)
	mustUse := []string{"duckdb_types.parquet", "duckdb_types_zstd_v2.parquet", "polars_types.parquet", "alltypes_plain.parquet",
		"alltypes_dictionary.parquet", "datapage_v2.snappy.parquet", "delta_byte_array.parquet", "pqarrow_sample.parquet",
		"pqarrow_random.parquet", "pqarrow_widths_v1_snappy.parquet", "pqarrow_widths_v2_zstd.parquet", "pqarrow_widths_plain.parquet",
		"pqarrow_widths_dictfallback.parquet"}
	cells := 0
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			root := t.TempDir()
			cattest.WriteRaw(t, root, name, string(files[name]))
			c := cattest.NewCatalog(t, root, catalog.NewParquetFormat(catalog.Limits{}))
			if len(c.Datasets()) == 0 {
				t.Logf("not cataloged: %+v", c.Diagnostics())
				if slices.Contains(mustUse, name) {
					t.Fatal("a file the test needs was not cataloged")
				}
				return
			}
			ds := c.Datasets()[0]
			cols := cattest.FieldNames(ds.Schema)
			var reversed []string
			for i := len(cols) - 1; i >= 0; i -= 2 {
				reversed = append(reversed, cols[i])
			}
			type scan struct {
				what string
				opts func() catalog.ScanOptions
			}
			scans := []scan{
				{"all", func() catalog.ScanOptions { return catalog.ScanOptions{} }},
				{"all, batches of 50", func() catalog.ScanOptions { return catalog.ScanOptions{BatchSize: 50} }},
				{"reversed", func() catalog.ScanOptions { return catalog.ScanOptions{Columns: reversed, BatchSize: 1000} }},
				{"skip half", func() catalog.ScanOptions {
					return catalog.ScanOptions{SkipRows: ds.RowCount / 2, Skipped: new(atomic.Int64)}
				}},
			}
			for _, col := range cols {
				scans = append(scans, scan{col, func() catalog.ScanOptions { return catalog.ScanOptions{Columns: []string{col}, BatchSize: 333} }})
			}
			used0, fell0 := catalog.ParquetGoRowGroups()
			for _, s := range scans {
				got := scanText(t, ds, s.opts(), true, deltaFiles[name])
				want := scanText(t, ds, s.opts(), false, deltaFiles[name])
				cells += diffScans(t, name+": "+s.what, got, want)
			}
			used1, fell1 := catalog.ParquetGoRowGroups()
			t.Logf("%d rows, %d columns; row groups read by parquet-go %d, left to pqarrow %d", ds.RowCount, len(cols), used1-used0, fell1-fell0)
			if slices.Contains(mustUse, name) && used1 == used0 {
				t.Error("the parquet-go path read nothing of this file")
			}
			if name == "pqarrow_widths_dictfallback.parquet" && fell1 == fell0 {
				t.Error("no row group with plain pages in a dictionary column was left to pqarrow")
			}
		})
	}
	if cells < 50_000 {
		t.Fatalf("only %d cells compared", cells)
	}
}
