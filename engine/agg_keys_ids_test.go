package engine

import (
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
)

// An aggregate over one integer-like key writes its keys out of the value
// → id table once its groups are complete (groupTable.fromIDs): the keys
// come out in first-seen order with their counts, null a group of its
// own, whether the ids came through the dense table (a small range), the
// map (a wide one) or both (a range that widens mid-way), for narrow and
// negative values, and across batches.
func TestAggregateKeysFromIDs(t *testing.T) {
	cases := []struct {
		name string
		dt   arrow.DataType
		keys []any
	}{
		{"int8 dense", arrow.PrimitiveTypes.Int8, vals(int64(-3), int64(5), nil, int64(-3), int64(127), int64(-128), nil, int64(5))},
		{"int32 dense", arrow.PrimitiveTypes.Int32, vals(int64(7), int64(-1), int64(7), int64(0), nil)},
		{"int64 map", tInt64, vals(int64(1)<<40, int64(-1)<<50, nil, int64(1)<<40, int64(3), int64(-1)<<50)},
		{"int64 dense then map", tInt64, vals(int64(1), int64(2), int64(1), int64(2), int64(1)<<60, nil, int64(2), int64(-1)<<62)},
		{"date32", arrow.FixedWidthTypes.Date32, vals(int32(19000), int32(-5), int32(19000), nil)},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			alloc := newAlloc()
			defer alloc.AssertSize(t, 0)
			cols := []tcol{{"k", tc.dt, tc.keys}}
			src := newSource(alloc, cols)
			defer src.release()
			plan := aggOf(scanOf(src.schema), []string{"k"}, "count:*")
			var want [][]any
			seen := map[any]int{}
			for _, k := range tc.keys {
				i, ok := seen[k]
				if !ok {
					i = len(want)
					seen[k] = i
					want = append(want, []any{k, int64(0)})
				}
				want[i][1] = want[i][1].(int64) + 1
			}
			for _, batch := range []int{1, 3, 64} {
				got, err := run(t, plan, src, Options{Alloc: alloc, BatchSize: batch})
				if err != nil {
					t.Fatal(err)
				}
				if !rowsEq(got, want) {
					t.Fatalf("batch %d: got %v, want %v", batch, got, want)
				}
			}
		})
	}
}
