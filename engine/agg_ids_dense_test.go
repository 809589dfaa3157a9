package engine

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
)

// The direct-indexed table in front of valueIDs' map (agg_ids_dense.go)
// hands out exactly the map's ids, row for row, whatever the values do: a
// window drifting up and down (growing both ways), extremes at both ends of
// the type, nulls, and wide values that make it give up; and both list the
// rows that numbered new ids (fresh: the single-key table's new groups).
func TestIntDenseIDsMatchMap(t *testing.T) {
	types := []arrow.DataType{tInt64, tInt8, tInt32, tUint8, tUint64, tTsUs}
	used := 0
	for iter := range uint64(60) {
		r := rand.New(rand.NewPCG(5, iter))
		dt := types[r.IntN(len(types))]
		a := acct{b: &budget{}}
		alloc := newAlloc()
		dense, plain := newValueIDs(dt, r.IntN(2) == 0, &a), newValueIDs(dt, true, &a)
		plain.nulls = dense.nulls
		plain.dense = nil
		if dense.dense == nil {
			t.Fatalf("%s: no dense table", dt)
		}
		wide := r.IntN(3) == 0     // some runs meet values too far apart for a table
		extremes := r.IntN(3) == 0 // the type's ends (int64: too far apart too)
		center := int64(r.IntN(1000)) - 500
		if r.IntN(4) == 0 {
			center = math.MinInt64 + 100
		} else if r.IntN(4) == 0 {
			center = math.MaxInt64 - 100
		}
		for range 100 {
			n := 1 + r.IntN(400)
			vals := make([]any, n)
			spread := int64(1 + r.IntN(300))
			center += int64(r.IntN(201)) - 100
			for i := range vals {
				switch k := r.IntN(50); {
				case k == 0:
					continue // null
				case k == 1 && wide:
					vals[i] = int64(r.Uint64())
				case k == 2 && extremes:
					vals[i] = []int64{math.MinInt64, math.MaxInt64, 0, -1}[r.IntN(4)]
				default:
					vals[i] = center + r.Int64N(2*spread+1) - spread
				}
			}
			b := makeBatch(alloc, []tcol{{"k", dt, vals}})
			before := dense.n
			got, want := dense.assign(b.Column(0)), plain.assign(b.Column(0))
			var fresh []int32 // the rows that numbered a new id (first seen, in row order)
			for i := range want {
				if got[i] != want[i] {
					t.Fatalf("iter %d %s row %d (%v): id %d, want %d", iter, dt, i, vals[i], got[i], want[i])
				}
				if got[i] == before+int32(len(fresh)) {
					fresh = append(fresh, int32(i))
				}
			}
			for _, v := range []*valueIDs{dense, plain} {
				if !v.freshKnown || !slices.Equal(v.fresh, fresh) {
					t.Fatalf("iter %d %s: fresh rows %v (known %v), want %v", iter, dt, v.fresh, v.freshKnown, fresh)
				}
			}
			b.Release()
		}
		alloc.AssertSize(t, 0)
		if dense.n != plain.n {
			t.Fatalf("iter %d: %d ids, want %d", iter, dense.n, plain.n)
		}
		// Every value numbered is listed once, with the id the map gave it
		// (and looking it up by its bits numbers nothing new).
		listed := 0
		dense.eachFixed(func(k uint64, id int32) {
			listed++
			if got := dense.bitsID(k); got != id {
				t.Fatalf("iter %d: bits %#x listed with id %d, looked up as %d", iter, k, id, got)
			}
			if want := plain.bitsID(k); want != id {
				t.Fatalf("iter %d: bits %#x has id %d, the map's is %d", iter, k, id, want)
			}
		})
		values := dense.n
		if dense.nullID >= 0 {
			values-- // null's id is not a value's
		}
		if int32(listed) != values {
			t.Fatalf("iter %d: %d values listed, %d ids", iter, listed, values)
		}
		if dense.n != plain.n {
			t.Fatalf("iter %d: looking values up numbered new ones (%d ids, want %d)", iter, dense.n, plain.n)
		}
		if !dense.dense.off {
			used++
		}
	}
	t.Logf("the table stayed in use in %d of 60 runs", used)
	if used < 10 {
		t.Fatalf("the table stayed in use in only %d runs; the test does not exercise it", used)
	}
}
