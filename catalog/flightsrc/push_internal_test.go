package flightsrc

import (
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// TestToTypeUnion: a column a remote typed as a union of its storage
// classes (SQLite's computed columns whose first value is null) is read
// as the plan's type.
func TestToTypeUnion(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	ut := arrow.DenseUnionOf([]arrow.Field{
		{Name: "int", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		{Name: "string", Type: arrow.BinaryTypes.String, Nullable: true},
	}, []arrow.UnionTypeCode{0, 1})
	b := array.NewDenseUnionBuilder(mem, ut)
	defer b.Release()
	ints, strs := b.Child(0).(*array.Int64Builder), b.Child(1).(*array.StringBuilder)
	b.Append(0)
	ints.AppendNull()
	b.Append(0)
	ints.Append(5)
	b.Append(1)
	strs.Append("7")
	u := b.NewArray()
	defer u.Release()
	got, err := toType(mem, u, arrow.PrimitiveTypes.Int64)
	if err != nil {
		t.Fatal(err)
	}
	defer got.Release()
	if s := got.String(); s != "[(null) 5 7]" {
		t.Errorf("got %s", s)
	}
	b.Append(1)
	strs.Append("x")
	bad := b.NewArray()
	defer bad.Release()
	if _, err := toType(mem, bad, arrow.PrimitiveTypes.Int64); err == nil {
		t.Error("text read as an integer")
	}
}
