package engine

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
)

// Keyless first and last merge on the parallel path (agg_firstlast_merge.go):
// the input goes to the workers and the results are the serial ones (the
// first / last non-null value in input order), whichever batch and worker
// holds the value.
func TestKeylessFirstLastParallel(t *testing.T) {
	const n = 4000
	value := func(typ arrow.DataType, i int) any {
		switch typ {
		case tInt64:
			return int64(i*7 - 9000)
		case tF64:
			return float64(i) / 8
		case tBool:
			return i%3 == 0
		}
		return fmt.Sprintf("v%04d", i)
	}
	cases := []struct {
		name string
		// valid reports whether row i of the column is not null
		valid func(i int) bool
	}{
		{"no nulls", func(int) bool { return true }},
		{"sparse nulls", func(i int) bool { return i%5 != 0 }},
		{"one value in the middle", func(i int) bool { return i == 2345 }},
		{"values only in the serial prefix", func(i int) bool { return i < 50 }},
		{"values only past the prefix", func(i int) bool { return i >= 1000 && i < 1200 || i == 3001 }},
		{"first and last rows only", func(i int) bool { return i == 0 || i == n-1 }},
		{"all null", func(int) bool { return false }},
	}
	ran := withParallel(t, 3)
	parallelMinRows = 200
	for _, typ := range []arrow.DataType{tInt64, tF64, tStr, tDict, tBool} {
		for ci, tc := range cases {
			t.Run(fmt.Sprintf("%s/%s", typ, tc.name), func(t *testing.T) {
				vs, xs := make([]any, n), make([]any, n)
				var first, last any
				for i := range n {
					xs[i] = int64(i % 10)
					if tc.valid(i) {
						vs[i] = value(typ, i)
						if first == nil {
							first = vs[i]
						}
						last = vs[i]
					}
				}
				data := []tcol{{"v", typ, vs}, {"x", tInt64, xs}}
				plan := aggOf(scanOf(schemaOf(data)), nil, "first:v", "count:*", "last:v", "sum:x")
				alloc := newAlloc()
				src := aggDiffSource(rand.New(rand.NewPCG(uint64(ci), 7)), alloc, data)
				before := ran.Load()
				got, err := run(t, plan, src, Options{Alloc: alloc, BatchSize: 64})
				src.release()
				alloc.AssertSize(t, 0)
				if err != nil {
					t.Fatal(err)
				}
				if ran.Load() == before {
					t.Fatal("the parallel path was not taken")
				}
				want := [][]any{{first, int64(n), last, int64(n/10) * 45}}
				if !rowsEq(got, want) {
					t.Fatalf("got\n%swant\n%s", fmtRows(got), fmtRows(want))
				}
			})
		}
	}
}
