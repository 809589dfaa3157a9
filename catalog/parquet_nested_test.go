package catalog_test

import (
	"reflect"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/quarrydb/quarry/catalog"
	"github.com/quarrydb/quarry/catalog/internal/cattest"
)

// TestParquetColumnsAfterStruct: columns after a struct of two fields
// (two leaf columns for one field, as DuckDB writes STRUCT columns) read
// their own values, alone, together and in any order. (The scan mapped
// field indices to leaves with the inverse mapping, so every later
// column read its left neighbour's leaves.)
func TestParquetColumnsAfterStruct(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	sc := arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		{Name: "rec", Type: arrow.StructOf(arrow.Field{Name: "a", Type: arrow.PrimitiveTypes.Int32, Nullable: true},
			arrow.Field{Name: "b", Type: arrow.BinaryTypes.String, Nullable: true}), Nullable: true},
		{Name: "grp", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "half", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
	}, nil)
	b := array.NewRecordBuilder(mem, sc)
	defer b.Release()
	for i := range 5 {
		b.Field(0).(*array.Int64Builder).Append(int64(i))
		sb := b.Field(1).(*array.StructBuilder)
		sb.Append(true)
		sb.FieldBuilder(0).(*array.Int32Builder).Append(int32(-i))
		sb.FieldBuilder(1).(*array.StringBuilder).Append("x")
		b.Field(2).(*array.StringBuilder).Append([]string{"north", "south"}[i%2])
		b.Field(3).(*array.Int64Builder).Append(int64(10 * i))
	}
	rec := b.NewRecordBatch()
	defer rec.Release()
	ds, _ := parquetDataset(t, rec, 1<<20, "n.parquet")
	want := map[string][]any{
		"id":   {int64(0), int64(1), int64(2), int64(3), int64(4)},
		"rec":  {`{"a":0,"b":"x"}`, `{"a":-1,"b":"x"}`, `{"a":-2,"b":"x"}`, `{"a":-3,"b":"x"}`, `{"a":-4,"b":"x"}`},
		"grp":  {"north", "south", "north", "south", "north"},
		"half": {int64(0), int64(10), int64(20), int64(30), int64(40)},
	}
	for _, cols := range [][]string{{"half"}, {"grp"}, {"rec"}, {"half", "id", "grp"}, {"grp", "rec", "half", "id"}} {
		_, got := cattest.ScanAll(t, ds, catalog.ScanOptions{Columns: cols})
		for i, c := range cols {
			if !reflect.DeepEqual(got[i], want[c]) {
				t.Errorf("columns %v: %s = %v, want %v", cols, c, got[i], want[c])
			}
		}
	}
}
