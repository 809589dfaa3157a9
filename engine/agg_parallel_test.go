package engine

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sync/atomic"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/quarrydb/quarry/internal/qerr"
	"github.com/quarrydb/quarry/planner"
)

// mergeableFns are the aggregates whose states merge (agg_merge.go): an
// aggregate made only of these runs on the parallel path.
var mergeableFns = []string{"var_samp", "var_pop", "stddev_samp", "stddev_pop", "covar_samp", "covar_pop", "corr",
	"regr_slope", "regr_intercept", "regr_r2", "bool_and", "bool_or", "count_if", "approx_count_distinct", "count", "sum", "avg"}

// baseMergeableFns are the built-ins of the base differential (refAggOne)
// that merge too.
var baseMergeableFns = []string{"min", "max", "count_distinct", "stddev"}

// withParallel runs f with the parallel path forced on (w workers, after
// minRows serial rows), counting the runs that took it.
func withParallel(t *testing.T, w int) *atomic.Int64 {
	t.Helper()
	oldW, oldMin, oldHook := parallelWorkers, parallelMinRows, parallelRan
	t.Cleanup(func() { parallelWorkers, parallelMinRows, parallelRan = oldW, oldMin, oldHook })
	parallelWorkers = func() int { return w }
	var ran atomic.Int64
	parallelRan = func() { ran.Add(1) }
	return &ran
}

// The property behind the merges: aggregating the input split over workers
// (arbitrary batches to arbitrary workers, partial states merged) gives the
// aggregate of the whole input, checked against the row-at-a-time
// reference (floats as cellClose: the order of additions differs), groups
// matched by key (the order is unspecified).
func TestParallelAggregateMatchesReference(t *testing.T) {
	ran := withParallel(t, 3)
	for iter := range uint64(50) {
		r := rand.New(rand.NewPCG(4242, iter))
		nrows := 1 + r.IntN(1500)
		parallelMinRows = r.IntN(nrows/2 + 1)
		data := moreAggData(r, nrows)
		rows := tcolRows(data)
		s := schemaOf(data)
		scan := &planner.Scan{Dataset: "t", Out: s}
		keys := randKeys(r, "", "k", "s", "b")
		a := aggOf(scan, keys)
		fs := slices.Clone(a.Out.Fields())
		for j := range 1 + r.IntN(5) {
			var e planner.AggExpr
			if r.IntN(3) == 0 {
				fn := baseMergeableFns[r.IntN(len(baseMergeableFns))]
				col := []string{"k", "s", "x", "y", "e"}[r.IntN(5)]
				if fn == "stddev" {
					col = []string{"x", "y", "k"}[r.IntN(3)]
				}
				idx := s.FieldIndices(col)[0]
				d, _ := planner.AggFn(fn).Lookup()
				e = planner.AggExpr{Fn: planner.AggFn(fn), Col: col, Index: idx, ArgIndex: -1, Type: d.Result(s.Field(idx).Type),
					Name: fmt.Sprintf("a%d_%s", j, fn)}
				if fn == "stddev" {
					e.Type = arrow.PrimitiveTypes.Float64
				}
			} else {
				for e = randMoreAgg(r, s, j); !slices.Contains(mergeableFns, string(e.Fn)); e = randMoreAgg(r, s, j) {
				}
			}
			a.Aggs = append(a.Aggs, e)
			fs = append(fs, arrow.Field{Name: e.Name, Type: e.Type, Nullable: true})
		}
		a.Out = arrow.NewSchema(fs, nil)
		want := refAgg(&refState{}, rows, &planner.Aggregate{GroupIdx: a.GroupIdx})
		groups := refGroupRows(rows, a.GroupIdx)
		for gi := range want {
			for _, e := range a.Aggs {
				if slices.Contains(baseMergeableFns, string(e.Fn)) {
					want[gi] = append(want[gi], refAggOne(&refState{}, e, groups[gi]))
				} else {
					want[gi] = append(want[gi], refMoreAgg(e, groups[gi]))
				}
			}
		}
		alloc := newAlloc()
		src := aggDiffSource(r, alloc, data)
		bs := 1 + r.IntN(200)
		before := ran.Load()
		got, err := run(t, a, src, Options{Alloc: alloc, BatchSize: bs})
		src.release()
		alloc.AssertSize(t, 0)
		label := fmt.Sprintf("iter %d (batch size %d, serial prefix %d rows, parallel %v) plan:\n%s", iter, bs, parallelMinRows, ran.Load() > before, planner.String(a))
		if err != nil {
			t.Fatalf("%s: %v", label, err)
		}
		sameGroups(t, label, a.Out, len(keys), got, want, func(c int, g, w any) bool { return moreCellOK(a.Aggs[c-len(keys)], g, w) })
	}
	t.Logf("parallel path in %d of 50 iterations", ran.Load())
	if n := ran.Load(); n < 15 {
		t.Fatalf("the parallel path ran %d times in 50 iterations; the test does not exercise it", n)
	}
}

// Errors on the parallel path: a sum overflowing in some worker's part, the
// memory budget and cancellation all come back as the query's error, with
// every buffer released.
func TestParallelAggregateErrors(t *testing.T) {
	ran := withParallel(t, 2)
	parallelMinRows = 100
	data := keyedInts(20000, 7)
	data[1].vals[20000-3] = int64(math.MaxInt64)
	plan := aggOf(scanOf(schemaOf(data)), []string{"k"}, "sum:v", "count:*")
	alloc := newAlloc()
	src := newSource(alloc, data)
	_, err := run(t, plan, src, Options{Alloc: alloc, BatchSize: 128})
	src.release()
	alloc.AssertSize(t, 0)
	if qerr.Code(err) != qerr.CodeInvalidAggregate || ran.Load() == 0 {
		t.Fatalf("overflow: err %v, parallel runs %d", err, ran.Load())
	}

	// Many groups per worker under a small budget.
	data = keyedInts(20000, 5000)
	plan = aggOf(scanOf(schemaOf(data)), []string{"k"}, "sum:v", "max:v", "count:*")
	alloc = newAlloc()
	src = newSource(alloc, data)
	_, err = run(t, plan, src, Options{Alloc: alloc, BatchSize: 4096, MemoryLimit: 64 << 10})
	src.release()
	alloc.AssertSize(t, 0)
	if qerr.Code(err) != qerr.CodeResourceExhausted {
		t.Fatalf("budget: err %v", err)
	}
	assertCancelled(t, plan, data)
}

// tcolRows is data as rows.
func tcolRows(data []tcol) [][]any {
	rows := make([][]any, len(data[0].vals))
	for i := range rows {
		rows[i] = make([]any, len(data))
		for c, col := range data {
			rows[i][c] = col.vals[i]
		}
	}
	return rows
}

// The parallel path deals batches out round-robin: the same input gives
// the same rows in the same order on every run, float sums to the bit.
func TestParallelAggregateRepeatable(t *testing.T) {
	ran := withParallel(t, 3)
	parallelMinRows = 500
	r := rand.New(rand.NewPCG(9, 9))
	n := 30000
	k, x := make([]any, n), make([]any, n)
	for i := range n {
		k[i], x[i] = diffStrings[r.IntN(len(diffStrings))]+fmt.Sprint(r.IntN(30)), r.Float64()*1e6
	}
	data := []tcol{{"k", tStr, k}, {"x", tF64, x}}
	plan := aggOf(scanOf(schemaOf(data)), []string{"k"}, "sum:x", "avg:x", "count:*")
	var first [][]any
	for rep := range 4 {
		alloc := newAlloc()
		src := newSource(alloc, data)
		got, err := run(t, plan, src, Options{Alloc: alloc, BatchSize: 100})
		src.release()
		alloc.AssertSize(t, 0)
		if err != nil {
			t.Fatal(err)
		}
		if rep == 0 {
			first = got
		} else if !rowsEq(first, got) {
			t.Fatalf("run %d differs from run 0:\n%s\nvs\n%s", rep, fmtRows(got), fmtRows(first))
		}
	}
	if ran.Load() != 4 {
		t.Fatalf("parallel path ran %d times, want 4", ran.Load())
	}
}
