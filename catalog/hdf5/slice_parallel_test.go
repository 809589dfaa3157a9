//go:build cgo && !nohdf5

package hdf5

import (
	"bytes"
	"encoding/json"
	"math"
	"runtime"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// TestNestedJSONParallelMatchesSerial checks that large slices, formatted
// on several cores, give exactly the bytes of the serial path.
func TestNestedJSONParallelMatchesSerial(t *testing.T) {
	alloc := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer alloc.AssertSize(t, 0)
	for _, shape := range [][]int64{{1 << 17}, {513, 257}, {7, 97, 101}, {3, 1 << 15}} {
		n := int64(1)
		for _, d := range shape {
			n *= d
		}
		b := array.NewFloat64Builder(alloc)
		for i := range n {
			switch {
			case i%1001 == 0:
				b.AppendNull()
			case i%997 == 0:
				b.Append(math.NaN())
			default:
				b.Append(float64(i)/7 - 1000)
			}
		}
		s := &Slice{Shape: shape, Values: b.NewArray()}
		b.Release()

		prev := runtime.GOMAXPROCS(1)
		serial := s.AppendNestedJSON(nil)
		runtime.GOMAXPROCS(5) // uneven splits of the outer dimension
		parallel := s.AppendNestedJSON(nil)
		runtime.GOMAXPROCS(prev)
		s.Values.Release()

		if !bytes.Equal(serial, parallel) {
			t.Fatalf("shape %v: parallel output differs from serial", shape)
		}
		if !json.Valid(parallel) {
			t.Fatalf("shape %v: invalid JSON", shape)
		}
	}
}
