//go:build cgo && !nohdf5

package hdf5

import (
	"math"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// TestAppendRunMatchesAppendElem: the typed loops of appendRun write the
// same text as appendElem element by element, for every numeric type, with
// and without nulls, on sliced arrays, at every start and length.
func TestAppendRunMatchesAppendElem(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	floats := []float64{0, math.Copysign(0, -1), 1.25, -3.5, 1e-7, 1e21, 123456.789, math.NaN(), math.Inf(1), math.Inf(-1), 0.1, 2.0 / 3, 1 << 53, -1e300}
	types := []arrow.DataType{arrow.PrimitiveTypes.Float64, arrow.PrimitiveTypes.Float32, arrow.PrimitiveTypes.Int8, arrow.PrimitiveTypes.Int16,
		arrow.PrimitiveTypes.Int32, arrow.PrimitiveTypes.Uint8, arrow.PrimitiveTypes.Uint16, arrow.PrimitiveTypes.Uint32, arrow.PrimitiveTypes.Int64}
	for _, dt := range types {
		for _, nulls := range []bool{false, true} {
			b := array.NewBuilder(mem, dt)
			for i, f := range floats {
				if nulls && i%5 == 3 {
					b.AppendNull()
					continue
				}
				switch bb := b.(type) {
				case *array.Float64Builder:
					bb.Append(f)
				case *array.Float32Builder:
					bb.Append(float32(f))
				case *array.Int8Builder:
					bb.Append(int8(-i * 9))
				case *array.Int16Builder:
					bb.Append(int16(-i * 2000))
				case *array.Int32Builder:
					bb.Append(int32(-i * 150_000_000))
				case *array.Uint8Builder:
					bb.Append(uint8(i * 18))
				case *array.Uint16Builder:
					bb.Append(uint16(i * 4000))
				case *array.Uint32Builder:
					bb.Append(uint32(i) * 300_000_000)
				case *array.Int64Builder:
					bb.Append(int64(i) << 50)
				}
			}
			full := b.NewArray()
			b.Release()
			for _, arr := range []arrow.Array{full, array.NewSlice(full, 2, int64(full.Len()))} {
				for start := 0; start < arr.Len(); start++ {
					for n := 0; start+n <= arr.Len(); n++ {
						var want []byte
						for i := start; i < start+n; i++ {
							if i > start {
								want = append(want, ',')
							}
							want = appendElem(want, arr, i, nil)
						}
						if got := appendRun(nil, arr, start, n, nil); string(got) != string(want) {
							t.Fatalf("%s nulls=%v offset=%d [%d,+%d): %s, want %s", dt, nulls, arr.Data().Offset(), start, n, got, want)
						}
					}
				}
				if arr != full {
					arr.Release()
				}
			}
			full.Release()
		}
	}
}
