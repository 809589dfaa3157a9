package catalog_test

import (
	"reflect"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/quarrydb/quarry/catalog"
	"github.com/quarrydb/quarry/catalog/internal/cattest"
)

// viewRecord is n rows of a string view column (short values inline,
// long ones in data buffers, every 5th null) and a binary view column,
// the layout Polars writes strings in.
func viewRecord(t testing.TB, mem memory.Allocator, n int) (arrow.RecordBatch, []any) {
	t.Helper()
	sc := arrow.NewSchema([]arrow.Field{
		{Name: "s", Type: arrow.BinaryTypes.StringView, Nullable: true},
		{Name: "b", Type: arrow.BinaryTypes.BinaryView, Nullable: true},
	}, nil)
	b := array.NewRecordBuilder(mem, sc)
	defer b.Release()
	var want []any
	for i := range n {
		if i%5 == 4 {
			b.Field(0).AppendNull()
			want = append(want, nil)
		} else {
			s := []string{"north", "Երևան", strings.Repeat("long value ", 1+i%3) + "end"}[i%3]
			b.Field(0).(*array.StringViewBuilder).Append(s)
			want = append(want, s)
		}
		b.Field(1).(*array.BinaryViewBuilder).Append([]byte{byte(i), 0xff})
	}
	return b.NewRecordBatch(), want
}

// TestArrowStringView: string and binary view columns (what Polars'
// default IPC writer produces for strings) are read as text (binary as
// base64), through the file (mapped and not) and stream formats.
func TestArrowStringView(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	rec, want := viewRecord(t, mem, 40)
	defer rec.Release()
	a, b := rec.NewSlice(0, 17), rec.NewSlice(17, 40)
	defer a.Release()
	defer b.Release()
	root := t.TempDir()
	cattest.WriteRaw(t, root, "v.arrow", string(arrowBytes(t, nil, a, b)))
	cattest.WriteRaw(t, root, "vs.arrows", string(arrowStreamBytes(t, nil, a, b)))
	c := cattest.NewCatalog(t, root, catalog.NewArrowFormat(catalog.Limits{}))
	if d := c.Diagnostics(); len(d) != 0 {
		t.Fatalf("diagnostics %v", d)
	}
	for _, id := range []string{"v", "vs"} {
		for _, mapped := range []bool{true, false} {
			restore := catalog.SetArrowMmap(mapped)
			ds := cattest.Lookup(t, c, id)
			if got := cattest.TypeNames(ds.Schema); !reflect.DeepEqual(got, []string{"utf8", "utf8"}) {
				t.Fatalf("%s: types %v", id, got)
			}
			_, cols := cattest.ScanAll(t, ds, catalog.ScanOptions{BatchSize: 7})
			restore()
			if !reflect.DeepEqual(cols[0], want) || cols[1][1] != "Af8=" {
				t.Fatalf("%s (mapped %v): %v %v", id, mapped, cols[0], cols[1][:2])
			}
		}
	}
}
