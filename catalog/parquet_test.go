package catalog_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/quarrydb/quarry/catalog"
	"github.com/quarrydb/quarry/catalog/internal/cattest"
	"github.com/quarrydb/quarry/internal/qerr"
	"github.com/quarrydb/quarry/internal/testutil/arrowfile"
	"github.com/quarrydb/quarry/planner"
)

// parquetBytes writes rec as a Parquet file (arrow-go's pqarrow writer)
// with row groups of rowGroup rows.
func parquetBytes(t testing.TB, rec arrow.RecordBatch, rowGroup int64) []byte {
	t.Helper()
	return parquetBytesWith(t, rec, pqarrow.NewArrowWriterProperties(pqarrow.WithStoreSchema()),
		parquet.WithMaxRowGroupLength(rowGroup), parquet.WithDictionaryDefault(true))
}

// parquetBytesWith writes rec as a Parquet file with pqarrow's writer and
// the given properties.
func parquetBytesWith(t testing.TB, rec arrow.RecordBatch, arrowProps pqarrow.ArrowWriterProperties, props ...parquet.WriterProperty) []byte {
	t.Helper()
	return arrowfile.Parquet(t, parquet.NewWriterProperties(props...), arrowProps, rec)
}

// sampleRecord is a table of every kind of column a Parquet file may
// hold: kept types, converted ones and nested ones, with nulls.
func sampleRecord(t testing.TB, mem memory.Allocator) arrow.RecordBatch {
	t.Helper()
	dec := &arrow.Decimal128Type{Precision: 9, Scale: 2}
	wide := &arrow.Decimal128Type{Precision: 30, Scale: 3}
	sc := arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		{Name: "small", Type: arrow.PrimitiveTypes.Int32, Nullable: true},
		{Name: "x", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
		{Name: "name", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "ok", Type: arrow.FixedWidthTypes.Boolean, Nullable: true},
		{Name: "day", Type: arrow.FixedWidthTypes.Date32, Nullable: true},
		{Name: "ts", Type: &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"}, Nullable: true},
		{Name: "price", Type: dec, Nullable: true},
		{Name: "big", Type: wide, Nullable: true},
		{Name: "tags", Type: arrow.ListOf(arrow.BinaryTypes.String), Nullable: true},
		{Name: "pt", Type: arrow.StructOf(arrow.Field{Name: "a", Type: arrow.PrimitiveTypes.Int64, Nullable: true}), Nullable: true},
	}, nil)
	b := array.NewRecordBuilder(mem, sc)
	defer b.Release()
	for i := range 10 {
		b.Field(0).(*array.Int64Builder).Append(int64(i))
		b.Field(1).(*array.Int32Builder).Append(int32(-i))
		b.Field(2).(*array.Float64Builder).Append(float64(i) / 4)
		if i%3 == 0 {
			b.Field(3).AppendNull()
		} else {
			b.Field(3).(*array.StringBuilder).Append([]string{"a", "b"}[i%2] + "00501")
		}
		b.Field(4).(*array.BooleanBuilder).Append(i%2 == 0)
		b.Field(5).(*array.Date32Builder).Append(arrow.Date32(18000 + i))
		b.Field(6).(*array.TimestampBuilder).Append(arrow.Timestamp(1_700_000_000_000_000 + int64(i)))
		b.Field(7).(*array.Decimal128Builder).Append(decimal128.FromI64(int64(i*100 + 5)))
		bi, _ := decimal128.FromString("123456789012345678901234567.891", 30, 3)
		b.Field(8).(*array.Decimal128Builder).Append(bi)
		lb := b.Field(9).(*array.ListBuilder)
		lb.Append(true)
		lb.ValueBuilder().(*array.StringBuilder).Append("t")
		sb := b.Field(10).(*array.StructBuilder)
		sb.Append(true)
		sb.FieldBuilder(0).(*array.Int64Builder).Append(int64(i))
	}
	return b.NewRecordBatch()
}

func TestParquetDataset(t *testing.T) {
	ds, _ := sampleParquet(t, 4, "sub/t.parquet")
	if ds.Kind != catalog.KindParquet || !ds.RowCountExact || ds.RowCount != 10 {
		t.Fatalf("kind %s rows %d exact %v", ds.Kind, ds.RowCount, ds.RowCountExact)
	}
	if got := ds.Attributes["row_groups"]; got != 3 {
		t.Errorf("row_groups %v", got)
	}
	want := []string{"int64", "int32", "float64", "utf8", "bool", "date32", "timestamp[us, tz=UTC]", "float64", "utf8", "utf8", "utf8"}
	if got := cattest.TypeNames(ds.Schema); !reflect.DeepEqual(got, want) {
		t.Fatalf("types %v, want %v", got, want)
	}
	for col, part := range map[string]string{"price": "read as float64", "big": "kept as text", "tags": "JSON text", "pt": "JSON text"} {
		if h := ds.ColumnNotes[col].Hint; !strings.Contains(h, part) {
			t.Errorf("%s: hint %q, want %q", col, h, part)
		}
	}

	// Projection in another order than the file's, small batches.
	sc, cols := cattest.ScanAll(t, ds, catalog.ScanOptions{Columns: []string{"pt", "name", "id", "big", "price", "tags"}, BatchSize: 3})
	if got := cattest.FieldNames(sc); !reflect.DeepEqual(got, []string{"pt", "name", "id", "big", "price", "tags"}) {
		t.Fatalf("columns %v", got)
	}
	if len(cols[0]) != 10 {
		t.Fatalf("%d rows", len(cols[0]))
	}
	if cols[0][3] != `{"a":3}` || cols[1][0] != nil || cols[1][1] != "b00501" || cols[2][9] != int64(9) ||
		cols[3][0] != "123456789012345678901234567.891" || cols[4][2] != 2.05 || cols[5][0] != `["t"]` {
		t.Errorf("values: pt %v name %v id %v big %v price %v tags %v", cols[0][3], cols[1][:2], cols[2][9], cols[3][0], cols[4][2], cols[5][0])
	}
	// Every column, whole file: the kept types read back as written.
	_, all := cattest.ScanAll(t, ds, catalog.ScanOptions{})
	if all[1][4] != "-4" || all[4][1] != false || all[5][2] != "2019-04-16" {
		t.Errorf("values: small %v ok %v day %v", all[1][4], all[4][1], all[5][2])
	}
}

// TestParquetEmpty: a file with a schema and no rows is a dataset of 0 rows.
func TestParquetEmpty(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	sc := arrow.NewSchema([]arrow.Field{{Name: "a", Type: arrow.PrimitiveTypes.Int64, Nullable: true}}, nil)
	rec := array.NewRecordBatch(sc, []arrow.Array{array.NewInt64Builder(mem).NewArray()}, 0)
	defer rec.Release()
	defer rec.Column(0).Release()
	ds, _ := parquetDataset(t, rec, 4, "e.PARQUET")
	if ds.RowCount != 0 || !ds.RowCountExact {
		t.Fatalf("rows %d", ds.RowCount)
	}
	if _, cols := cattest.ScanAll(t, ds, catalog.ScanOptions{}); len(cols[0]) != 0 {
		t.Fatalf("rows %v", cols)
	}
}

// TestParquetHostile: files that are not Parquet, are cut short, carry a
// corrupt or oversized footer, or more columns than allowed are
// diagnostics naming the problem; nothing panics.
func TestParquetHostile(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	rec := sampleRecord(t, mem)
	defer rec.Release()
	good := parquetBytes(t, rec, 4)
	footer := func(n uint32, tail string) string {
		return "PAR1" + string([]byte{byte(n), byte(n >> 8), byte(n >> 16), byte(n >> 24)}) + tail
	}
	corrupt := append([]byte(nil), good...)
	for i := len(corrupt) - 200; i < len(corrupt)-8; i++ {
		corrupt[i] ^= 0x5a
	}
	cases := []struct {
		name, data, reason string
		lim                catalog.Limits
	}{
		{"empty.parquet", "", "too short", catalog.Limits{}},
		{"text.parquet", "a,b\n1,2\n3,4\n5,6\n", "magic bytes", catalog.Limits{}},
		{"cut.parquet", string(good[:len(good)/2]), "magic bytes", catalog.Limits{}},
		{"claims.parquet", "PAR1" + strings.Repeat("x", 20) + footer(1<<31, "PAR1"), "more than the file holds", catalog.Limits{}},
		{"garbage.parquet", "PAR1" + strings.Repeat("\xff", 64) + footer(64, "PAR1"), "footer", catalog.Limits{}},
		{"corrupt.parquet", string(corrupt), "", catalog.Limits{}},
		{"encrypted.parquet", "PARE" + strings.Repeat("x", 20) + footer(20, "PARE"), "encrypted", catalog.Limits{}},
		{"wide.parquet", string(good), "more than the limit of 5", catalog.Limits{MaxColumns: 5}},
		{"meta.parquet", string(good), "Parquet footer is", catalog.Limits{MaxMetadataBytes: 100}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			cattest.WriteRaw(t, root, tc.name, tc.data)
			c := cattest.NewCatalog(t, root, catalog.NewParquetFormat(tc.lim))
			ds := c.Datasets()
			if tc.name == "corrupt.parquet" && len(ds) == 1 {
				// The flipped bytes may only hit page data: the scan must fail cleanly then.
				mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
				defer mem.AssertSize(t, 0)
				rr, err := ds[0].Source.Scan(context.Background(), catalog.ScanOptions{Alloc: mem})
				if err == nil {
					for rr.Next() {
					}
					err = rr.Err()
					rr.Release()
				}
				t.Logf("corrupt file scan: %v", err)
				return
			}
			diags := c.Diagnostics()
			if len(ds) != 0 || len(diags) != 1 || !strings.Contains(diags[0].Reason, tc.reason) {
				t.Fatalf("datasets %v, diagnostics %+v, want one with %q", cattest.IDs(c), diags, tc.reason)
			}
		})
	}
}

// TestParquetChangedFile: a file rewritten with another schema after it
// was cataloged is an error for a scan that still holds the old dataset,
// never a wrong read.
func TestParquetChangedFile(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	rec := sampleRecord(t, mem)
	defer rec.Release()
	ds, root := parquetDataset(t, rec, 4, "t.parquet")
	other := rec.NewSlice(0, 2)
	defer other.Release()
	if err := os.WriteFile(filepath.Join(root, "t.parquet"), parquetBytes(t, other, 4), 0o644); err != nil {
		t.Fatal(err)
	}
	rr, err := ds.Source.Scan(context.Background(), catalog.ScanOptions{Alloc: mem})
	if err == nil {
		rr.Release()
		t.Fatal("scan of a replaced file succeeded")
	}
	if !errors.Is(err, qerr.ErrNotFound) && !strings.Contains(err.Error(), "changed") {
		t.Fatalf("error %v", err)
	}
}

// TestParquetRowGroupPruning: zone filters skip the row groups whose
// footer statistics rule every row out, and only those (the rows that
// come back are all the rows of the kept groups).
func TestParquetRowGroupPruning(t *testing.T) {
	ds, mem := sampleParquet(t, 4, "t.parquet") // id 0..9, name null at 0,3,6,9; row groups of 4: [0-3] [4-7] [8-9]
	lit := func(v any) *planner.Literal { return &planner.Literal{Value: v} }
	for _, tc := range []struct {
		name string
		pred planner.Predicate
		ids  []any
	}{
		{"gte", planner.Predicate{Col: "id", Index: 1, Op: planner.OpGte, Value: lit(int64(8))}, []any{int64(8), int64(9)}},
		{"eq middle", planner.Predicate{Col: "id", Index: 1, Op: planner.OpEq, Value: lit(int64(5))}, []any{int64(4), int64(5), int64(6), int64(7)}},
		{"none", planner.Predicate{Col: "id", Index: 1, Op: planner.OpGt, Value: lit(int64(100))}, nil},
		{"string", planner.Predicate{Col: "name", Index: 0, Op: planner.OpEq, Value: lit("b00501")}, []any{int64(0), int64(1), int64(2), int64(3), int64(4), int64(5), int64(6), int64(7)}}, // rows 8-9 hold only "a00501" and null
		{"is_null", planner.Predicate{Col: "x", Index: 2, Op: planner.OpIsNull}, nil},
		{"float", planner.Predicate{Col: "x", Index: 2, Op: planner.OpLt, Value: lit(0.5)}, []any{int64(0), int64(1), int64(2), int64(3)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if !ds.Source.(planner.ZoneFilterer).UsesZoneFilter(tc.pred, arrow.NewSchema([]arrow.Field{ds.Schema.Field(3), ds.Schema.Field(0), ds.Schema.Field(2)}, nil)) {
				t.Fatal("zone filter not usable")
			}
			_, cols := cattest.ScanAll(t, ds, catalog.ScanOptions{Columns: []string{"name", "id", "x"}, ZoneFilters: []planner.Predicate{tc.pred}})
			var got []any
			if len(cols) > 0 {
				got = cols[1]
			}
			if !reflect.DeepEqual(got, tc.ids) {
				t.Fatalf("ids %v, want %v", got, tc.ids)
			}
			// The reader counts the pruned groups and their rows.
			rr, err := ds.Source.Scan(context.Background(), catalog.ScanOptions{Columns: []string{"name", "id", "x"}, ZoneFilters: []planner.Predicate{tc.pred}, Alloc: mem})
			if err != nil {
				t.Fatal(err)
			}
			for rr.Next() {
			}
			st, ok := catalog.StatsOf(rr)
			rr.Release()
			if want := int64((10 - len(tc.ids) + 3) / 4); !ok || st.RowsRead != int64(len(tc.ids)) || st.RowsRead+st.RowsSkipped != 10 || st.ZonesSkipped != want {
				t.Fatalf("stats %+v (%v), want %d rows read, %d groups skipped", st, ok, len(tc.ids), want)
			}
		})
	}
}
