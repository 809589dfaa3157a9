package engine

import (
	"fmt"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
)

// Avg states over several columns share one row count per group
// (shareAvgRows): the first counts the rows, each counts its own nulls.
func TestShareAvgRows(t *testing.T) {
	mixed := []aggState{newAvgState(arrow.INT64), &decSum{avg: true}, newAvgState(arrow.UINT8), newAvgState(arrow.INT32)}
	if n := shareAvgRows(mixed, make([]*aggInput, len(mixed))); n != 3 {
		t.Fatalf("sharing states: %d, want 3", n)
	}
	if !mixed[3].(*avgState[int32]).lead || mixed[0].(*avgState[int64]).lead || mixed[2].(*avgState[uint8]).rows != mixed[3].(*avgState[int32]).rows {
		t.Fatalf("the last avg state leads and the others share its rows")
	}
	one := []aggState{newAvgState(arrow.INT64), &decSum{avg: true}}
	if n := shareAvgRows(one, make([]*aggInput, len(one))); n != 0 || one[0].(*avgState[int64]).rows != nil {
		t.Fatalf("a single avg state shares (%d)", n)
	}
}

// Averages with shared row counts are each column's own average, whatever
// the nulls (none, some batches only, the leading column's, all) and the
// groups (one, several, none), serial and on many parallel partitions.
func TestAvgSharedRowsMatchesReference(t *testing.T) {
	const n = 3000
	type nullFn func(i int) bool
	never := func(int) bool { return false }
	cases := []struct {
		name   string
		rows   int
		groups int
		nulls  [5]nullFn // of the columns a (int64), b (int32), c (uint8), d (int64), e (int64, leads)
	}{
		{"no nulls", n, 7, [5]nullFn{never, never, never, never, never}},
		{"one group", n, 1, [5]nullFn{never, never, never, never, never}},
		{"nulls in the first half of b and a", n, 7, [5]nullFn{func(i int) bool { return i < n/2 && i%4 == 0 }, func(i int) bool { return i < n/2 && i%3 == 0 }, never, never, never}},
		{"nulls in the leading column", n, 7, [5]nullFn{never, never, func(i int) bool { return i%7 == 1 }, never, func(i int) bool { return i%5 == 0 || i > n-200 }}},
		{"nulls in the first half of the leading column", n, 7, [5]nullFn{never, never, never, never, func(i int) bool { return i < n/2 && i%3 == 0 }}},
		{"all of c and d null", n, 7, [5]nullFn{never, func(i int) bool { return i%2 == 0 }, func(int) bool { return true }, func(int) bool { return true }, never}},
		{"a group all null in a", n, 3, [5]nullFn{func(i int) bool { return i%3 == 0 }, never, never, never, never}},
		{"empty input", 0, 1, [5]nullFn{never, never, never, never, never}},
	}
	for _, tc := range cases {
		data := []tcol{{name: "k", typ: tInt64}, {name: "a", typ: tInt64}, {name: "b", typ: tInt32}, {name: "c", typ: tUint8}, {name: "d", typ: tInt64}, {name: "e", typ: tInt64}}
		for c := range data {
			data[c].vals = make([]any, tc.rows)
		}
		type acc struct{ sum, cnt [5]int64 }
		want := map[int64]*acc{}
		for i := range tc.rows {
			k := int64((i * 7919) % tc.groups)
			data[0].vals[i] = k
			if want[k] == nil {
				want[k] = &acc{}
			}
			for c, null := range tc.nulls {
				if null(i) {
					continue
				}
				v := int64((i*31+c*17)%200) - 50*int64(c%2)
				if c == 2 {
					v = int64(i % 251)
				}
				data[c+1].vals[i] = v
				want[k].sum[c] += v
				want[k].cnt[c]++
			}
		}
		for _, w := range []int{1, 4} {
			for _, bs := range []int{1 + tc.rows/3, 64} {
				t.Run(fmt.Sprintf("%s/workers %d/batch %d", tc.name, w, bs), func(t *testing.T) {
					ran := withParallel(t, w)
					parallelMinRows = 100
					plan := aggOf(scanOf(schemaOf(data)), []string{"k"}, "avg:a", "avg:b", "avg:c", "avg:d", "avg:e", "count:*")
					got, err := runRows(t, plan, data, uint64(bs), bs, Options{})
					if err != nil {
						t.Fatal(err)
					}
					if w > 1 && tc.rows > 0 && ran.Load() == 0 {
						t.Fatalf("the parallel path did not run")
					}
					if len(got) != len(want) {
						t.Fatalf("%d groups, want %d", len(got), len(want))
					}
					for _, row := range got {
						wa := want[row[0].(int64)]
						for c := range 5 {
							if wa.cnt[c] == 0 {
								if row[c+1] != nil {
									t.Fatalf("group %v avg %d: %v, want null", row[0], c, row[c+1])
								}
								continue
							}
							if x := float64(wa.sum[c]) / float64(wa.cnt[c]); row[c+1] != x {
								t.Fatalf("group %v avg %d: %v, want %v", row[0], c, row[c+1], x)
							}
						}
					}
				})
			}
		}
	}
}
