package zonemap

import (
	"fmt"
	"runtime"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// TestDictZoneSharedDictionary: the zone of a short slice of an array whose
// dictionary is far larger than the slice (the column cache's shared
// dictionaries) bounds the slice's values, and computing it reads the rows,
// not the whole dictionary (no per-entry table).
func TestDictZoneSharedDictionary(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	const entries = 1 << 20
	vb := array.NewStringBuilder(mem)
	for i := range entries {
		vb.Append(fmt.Sprintf("v%07d", entries-i)) // descending: code order is not value order
	}
	dict := vb.NewArray()
	vb.Release()
	defer dict.Release()
	dt := &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int32, ValueType: arrow.BinaryTypes.String}
	tests := []struct {
		name     string
		codes    []int32
		valid    []bool
		min, max string
		any      bool
	}{
		{"three rows", []int32{5, 900_000, 17}, nil, "v0148576", "v1048571", true},
		{"nulls skipped", []int32{5, 0, 17, 2}, []bool{true, false, true, false}, "v1048559", "v1048571", true},
		{"all null", []int32{0, 1}, []bool{false, false}, "", "", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ib := array.NewInt32Builder(mem)
			ib.AppendValues(tc.codes, tc.valid)
			idx := ib.NewArray()
			ib.Release()
			defer idx.Release()
			a := array.NewDictionaryArray(dt, idx, dict)
			defer a.Release()
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			z := Of(a)
			runtime.ReadMemStats(&after)
			if z.any != tc.any || z.smin != tc.min || z.smax != tc.max {
				t.Fatalf("zone any=%v [%q, %q], want any=%v [%q, %q]", z.any, z.smin, z.smax, tc.any, tc.min, tc.max)
			}
			if n := after.TotalAlloc - before.TotalAlloc; n > 64<<10 {
				t.Fatalf("the zone of %d rows allocated %d bytes (a table per dictionary entry?)", len(tc.codes), n)
			}
		})
	}
}
