package engine

import (
	"fmt"
	"math"
	"testing"

	"github.com/quarrydb/quarry/planner"
)

// TestSortNullsFirst: a key with NullsFirst puts its nulls before the other
// values in both directions (SQL ORDER BY ... NULLS FIRST), in a full sort
// and in a top-k; keys without it keep nulls last.
func TestSortNullsFirst(t *testing.T) {
	cols := []tcol{
		{"id", tInt64, vals(int64(0), int64(1), int64(2), int64(3), int64(4), int64(5))},
		{"g", tStr, vals("b", nil, "a", "b", nil, "a")},
		{"v", tInt64, vals(int64(1), int64(2), nil, nil, int64(0), int64(3))},
		{"f", tF64, vals(2.0, nil, math.NaN(), -1.0, nil, 0.5)},
	}
	cases := []struct {
		keys  []string // "-" prefix: descending; "^" prefix: nulls first
		limit int64    // -1: no limit
		want  []int64
	}{
		{[]string{"^g"}, -1, []int64{1, 4, 2, 5, 0, 3}},
		{[]string{"^-g"}, -1, []int64{1, 4, 0, 3, 2, 5}},
		{[]string{"^v"}, -1, []int64{2, 3, 4, 0, 1, 5}},
		{[]string{"^-v"}, -1, []int64{2, 3, 5, 1, 0, 4}},
		{[]string{"^f"}, -1, []int64{1, 4, 3, 5, 0, 2}}, // NaN after numbers
		{[]string{"g", "^v"}, -1, []int64{2, 5, 3, 0, 4, 1}},
		{[]string{"^-g", "-v"}, -1, []int64{1, 4, 0, 3, 5, 2}},
		{[]string{"^v"}, 3, []int64{2, 3, 4}},
		{[]string{"^-f"}, 2, []int64{1, 4}},
	}
	for _, tc := range cases {
		for _, bs := range []int{1, 4, 100} {
			t.Run(fmt.Sprintf("%v/%d/bs=%d", tc.keys, tc.limit, bs), func(t *testing.T) {
				alloc := newAlloc()
				defer alloc.AssertSize(t, 0)
				src := newSource(alloc, cols)
				defer src.release()
				scan := scanOf(src.schema)
				s := &planner.Sort{Input: scan}
				for _, k := range tc.keys {
					first := k[0] == '^'
					if first {
						k = k[1:]
					}
					desc := k[0] == '-'
					if desc {
						k = k[1:]
					}
					s.Keys = append(s.Keys, planner.SortKey{Col: k, Index: colIndex(scan.Schema(), k), Desc: desc, NullsFirst: first})
				}
				var plan planner.Node = s
				if tc.limit >= 0 {
					plan = limitOf(s, 0, tc.limit)
				}
				got, err := run(t, projectOf(plan, "id"), src, Options{Alloc: alloc, BatchSize: bs})
				if err != nil {
					t.Fatal(err)
				}
				if want := ids(tc.want...); !rowsEq(got, want) {
					t.Fatalf("got\n%swant\n%s", fmtRows(got), fmtRows(want))
				}
			})
		}
	}
}
