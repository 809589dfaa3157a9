package materialize

import (
	"context"
	"fmt"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/compute"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/quarrydb/quarry/internal/dictstr"
)

// TestPlainerDictionaries: Plainer decodes dictionary columns to the
// values compute.Take gives, through the direct string decoder
// (dictstr.Decode) for string dictionaries and through Take for the rest —
// every index width, nulls, sliced arrays, a dictionary with a null value
// and one of numbers — with every buffer released.
func TestPlainerDictionaries(t *testing.T) {
	cases := []struct {
		name    string
		index   arrow.DataType
		values  arrow.DataType
		dict    string
		indices string
		slice   [2]int64 // rows [from, to) of the column; zero: all
		direct  bool     // dictstr decodes it
	}{
		{"int8", arrow.PrimitiveTypes.Int8, arrow.BinaryTypes.String, `["a","bb",""]`, `[0,1,2,1,0]`, [2]int64{}, true},
		{"int16 with nulls", arrow.PrimitiveTypes.Int16, arrow.BinaryTypes.String, `["x","héllo"]`, `[1,null,0,null]`, [2]int64{}, true},
		{"int32 sliced with nulls", arrow.PrimitiveTypes.Int32, arrow.BinaryTypes.String, `["p","qq","rrr"]`, `[2,null,1,0,null,2,1]`, [2]int64{1, 6}, true},
		{"int64 all null", arrow.PrimitiveTypes.Int64, arrow.BinaryTypes.String, `["z"]`, `[null,null]`, [2]int64{}, true},
		{"empty", arrow.PrimitiveTypes.Int32, arrow.BinaryTypes.String, `["z"]`, `[]`, [2]int64{}, true},
		{"null in the dictionary", arrow.PrimitiveTypes.Int32, arrow.BinaryTypes.String, `["a",null]`, `[1,0,1]`, [2]int64{}, true},
		{"unsigned indices", arrow.PrimitiveTypes.Uint16, arrow.BinaryTypes.String, `["a","b"]`, `[1,0]`, [2]int64{}, true},
		{"numbers", arrow.PrimitiveTypes.Int32, arrow.PrimitiveTypes.Float64, `[1.5,2]`, `[1,1,0]`, [2]int64{}, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			mem := newAlloc(t)
			ctx := compute.WithAllocator(context.Background(), mem)
			dt := &arrow.DictionaryType{IndexType: tc.index, ValueType: tc.values}
			vals := fromJSON(t, mem, tc.values, tc.dict)
			defer vals.Release()
			idx := fromJSON(t, mem, tc.index, tc.indices)
			defer idx.Release()
			var col arrow.Array = array.NewDictionaryArray(dt, idx, vals)
			defer col.Release()
			if tc.slice != [2]int64{} {
				col = array.NewSlice(col, tc.slice[0], tc.slice[1])
				defer col.Release()
			}
			d := col.(*array.Dictionary)
			if direct, err := dictstr.Decode(mem, d, tc.values); (err == nil) != tc.direct {
				t.Errorf("dictstr decoded it: %v (%v), want %v", err == nil, err, tc.direct)
			} else if err == nil {
				direct.Release() // Plainer.Batch's result is checked below
			}
			want, err := compute.TakeArray(ctx, d.Dictionary(), d.Indices())
			if err != nil {
				t.Fatal(err)
			}
			defer want.Release()

			sc := arrow.NewSchema([]arrow.Field{{Name: "c", Type: dt, Nullable: true}}, nil)
			rec := array.NewRecordBatch(sc, []arrow.Array{col}, int64(col.Len()))
			defer rec.Release()
			p := NewPlainer(sc)
			out, err := p.Batch(ctx, rec)
			if err != nil {
				t.Fatal(err)
			}
			defer out.Release()
			if !arrow.TypeEqual(out.Column(0).DataType(), tc.values) || !array.Equal(out.Column(0), want) {
				t.Errorf("decoded %v (%s), want %v", out.Column(0), out.Column(0).DataType(), want)
			}
		})
	}
}

// BenchmarkPlainStrings: decoding one 64Ki-row batch of a 16-value string
// dictionary (the facade's Stream5M category column) directly and with
// compute.Take.
func BenchmarkPlainStrings(b *testing.B) {
	dt := &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int32, ValueType: arrow.BinaryTypes.String}
	bld := array.NewDictionaryBuilder(memory.DefaultAllocator, dt).(*array.BinaryDictionaryBuilder)
	for i := range 1 << 16 {
		if err := bld.AppendString(fmt.Sprintf("category-%02d", i%16)); err != nil {
			b.Fatal(err)
		}
	}
	d := bld.NewArray().(*array.Dictionary)
	bld.Release()
	defer d.Release()
	b.Run("direct", func(b *testing.B) {
		for b.Loop() {
			out, err := dictstr.Decode(memory.DefaultAllocator, d, arrow.BinaryTypes.String)
			if err != nil {
				b.Fatal(err)
			}
			out.Release()
		}
	})
	b.Run("take", func(b *testing.B) {
		for b.Loop() {
			out, err := compute.TakeArray(context.Background(), d.Dictionary(), d.Indices())
			if err != nil {
				b.Fatal(err)
			}
			out.Release()
		}
	})
}
