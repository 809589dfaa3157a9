package engine

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/quarrydb/quarry/internal/qerr"
	"github.com/quarrydb/quarry/planner"
)

// withRadix counts the aggregates that took the radix-partitioned path.
func withRadix(t *testing.T) *int {
	t.Helper()
	old, oldMin, oldSpread := radixRan, radixMinGroups, radixSpread
	t.Cleanup(func() { radixRan, radixMinGroups, radixSpread = old, oldMin, oldSpread })
	radixMinGroups = 0
	var n int
	radixRan = func() { n++ }
	return &n
}

// runRows runs plan over data (random batch shapes from seed) with a
// checked allocator that must end empty.
func runRows(t *testing.T, plan planner.Node, data []tcol, seed uint64, bs int, opts Options) ([][]any, error) {
	t.Helper()
	alloc := newAlloc()
	src := aggDiffSource(rand.New(rand.NewPCG(seed, 7)), alloc, data)
	opts.Alloc, opts.BatchSize = alloc, bs
	got, err := run(t, plan, src, opts)
	src.release()
	alloc.AssertSize(t, 0)
	return got, err
}

// The radix-partitioned path gives every aggregate, order-dependent ones
// included, exactly the serial result (each partition sees its rows in
// input order): the same groups with the same values to the bit, in
// another order.
func TestRadixAggregateMatchesSerial(t *testing.T) {
	ran := withRadix(t)
	withParallel(t, 1)
	base := []string{"median:x", "quantile:y:0.3", "first:s", "last:e", "first:x", "last:k", "min:e", "max:s", "count_distinct:e", "sum:x", "count:*"}
	for iter := range uint64(60) {
		r := rand.New(rand.NewPCG(77, iter))
		radixSpread = []int32{1, 1 << 30}[iter%2] // odd: every key column places the rows; even: the number keys alone
		nrows := 1 + r.IntN(2000)
		data := moreAggData(r, nrows)
		scan := &planner.Scan{Dataset: "t", Out: schemaOf(data)}
		keys := randKeys(r, "e", "k", "s", "b", "e")
		// median makes the states non-mergeable: the radix path, not the merging one
		specs := []string{"median:x"}
		for range r.IntN(3) {
			specs = append(specs, base[r.IntN(len(base))])
		}
		a := aggOf(scan, keys, specs...)
		fs := slices.Clone(a.Out.Fields())
		for j := range r.IntN(4) {
			e := randMoreAgg(r, scan.Out, j)
			a.Aggs = append(a.Aggs, e)
			fs = append(fs, arrow.Field{Name: e.Name, Type: e.Type, Nullable: true})
		}
		a.Out = arrow.NewSchema(fs, nil)
		want, got, label := serialThenSplit(t, r, a, data, iter, 1+r.IntN(300), func() int64 { return int64(*ran) }, nil)
		sameGroups(t, label, a.Out, len(keys), got, want, func(_ int, g, w any) bool { return keyOf(g) == keyOf(w) })
	}
	t.Logf("radix path in %d of 60 iterations", *ran)
	if *ran < 30 {
		t.Fatalf("the radix path ran %d times in 60 iterations; the test does not exercise it", *ran)
	}
}

// Nearly unique keys with merging states take the radix path too (not the
// merging one), and the rows come out in the same order on every run.
func TestRadixAggregateNearlyUniqueRepeatable(t *testing.T) {
	ran := withRadix(t)
	par := withParallel(t, 2)
	parallelMinRows = 1000
	n := 20000
	k, s, x := make([]any, n), make([]any, n), make([]any, n)
	for i := range n {
		k[i], s[i], x[i] = int64(i/2), fmt.Sprintf("id%07d", i%977), float64(i)/3
	}
	data := []tcol{{"k", tInt64, k}, {"s", tStr, s}, {"x", tF64, x}}
	plan := aggOf(scanOf(schemaOf(data)), []string{"k", "s"}, "sum:x", "count:*")
	var first [][]any
	for rep := range 3 {
		got, err := runRows(t, plan, data, uint64(rep), 512, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != n { // every row a group of its own: s differs between the two rows of each k
			t.Fatalf("%d groups, want %d", len(got), n)
		}
		if rep == 0 {
			first = got
		} else if !rowsEq(first, got) {
			t.Fatalf("run %d differs from run 0", rep)
		}
	}
	if *ran != 3 || par.Load() != 0 {
		t.Fatalf("radix path ran %d times, merging path %d, want 3 and 0", *ran, par.Load())
	}
}

// Nearly unique keys end the folded part of the serial prefix at a quarter
// of it; the rest of the prefix is kept unfolded for the partitions, or
// folded serially when the input ends within the prefix (the same rows in
// the same order as the serial fold). Partitioned by the number key
// alone (k spreads: more than radixSpread values), the groups are the
// serial ones too.
func TestRadixUniquePrefix(t *testing.T) {
	ran := withRadix(t)
	withParallel(t, 2)
	radixSpread = 100 // k has 512 values when the prefix's folded part ends
	for _, tc := range []struct {
		n     int
		radix bool
	}{{3000, false}, {20000, true}} {
		parallelMinRows = 4000
		k, s, x := make([]any, tc.n), make([]any, tc.n), make([]any, tc.n)
		for i := range tc.n {
			k[i], s[i], x[i] = int64(i/2), fmt.Sprintf("id%07d", i%977), float64(i)/3
		}
		data := []tcol{{"k", tInt64, k}, {"s", tStr, s}, {"x", tF64, x}}
		plan := aggOf(scanOf(schemaOf(data)), []string{"s", "k"}, "sum:x", "count:*")
		before := *ran
		parallelWorkers = func() int { return 1 }
		want, err := runRows(t, plan, data, 1, 256, Options{})
		if err != nil {
			t.Fatal(err)
		}
		parallelWorkers = func() int { return 2 }
		got, err := runRows(t, plan, data, 1, 256, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if took := *ran > before; took != tc.radix {
			t.Fatalf("%d rows: radix path %v, want %v", tc.n, took, tc.radix)
		}
		if !tc.radix {
			if !rowsEq(got, want) {
				t.Fatalf("%d rows: the serial fold of the kept prefix differs from the serial run", tc.n)
			}
			continue
		}
		label := fmt.Sprintf("%d rows", tc.n)
		sameGroups(t, label, plan.Out, 2, got, want, func(_ int, g, w any) bool { return keyOf(g) == keyOf(w) })
	}
}

// The prefix stops folding on the rows so far (15/16 new groups) even when
// the batch that decided had few new groups of its own; the batches kept
// unfolded after it go to the radix partitions, not the merging path
// (which takes only folded batches).
func TestRadixUniquePrefixLastBatchRepeats(t *testing.T) {
	ran := withRadix(t)
	withParallel(t, 2)
	parallelMinRows = 4000 // folded part: 10 batches of 100
	n := 20000
	k, x := make([]any, n), make([]any, n)
	for i := range n {
		k[i], x[i] = int64(i), float64(i%13)
		if i >= 900 && i < 1000 && i%5 >= 2 { // the 10th batch: 40 new keys, 60 repeats (940 groups in 1000 rows)
			k[i] = int64(i % 900)
		}
	}
	data := []tcol{{"k", tInt64, k}, {"x", tF64, x}}
	plan := aggOf(scanOf(schemaOf(data)), []string{"k"}, "sum:x", "count:*")
	runWith := func(w int) [][]any {
		parallelWorkers = func() int { return w }
		alloc := newAlloc()
		src := newSource(alloc, data)
		got, err := run(t, plan, src, Options{Alloc: alloc, BatchSize: 100})
		src.release()
		alloc.AssertSize(t, 0)
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	want := runWith(1)
	got := runWith(2)
	if *ran != 1 {
		t.Fatalf("radix path ran %d times, want 1", *ran)
	}
	sameGroups(t, "repeats in the deciding batch", plan.Out, 1, got, want, func(_ int, g, w any) bool { return keyOf(g) == keyOf(w) })
}

// Errors on the radix path (a sum overflowing in one partition, the memory
// budget, cancellation) come back as the query's error with every buffer
// released.
func TestRadixAggregateErrors(t *testing.T) {
	ran := withRadix(t)
	withParallel(t, 2)
	parallelMinRows = 100
	data := keyedInts(20000, 7)
	data[1].vals[20000-3] = int64(math.MaxInt64)
	plan := aggOf(scanOf(schemaOf(data)), []string{"k"}, "sum:v", "median:v")
	_, err := runRows(t, plan, data, 1, 128, Options{})
	if qerr.Code(err) != qerr.CodeInvalidAggregate || *ran == 0 {
		t.Fatalf("overflow: err %v, radix runs %d", err, *ran)
	}

	data = keyedInts(20000, 5000)
	plan = aggOf(scanOf(schemaOf(data)), []string{"k"}, "sum:v", "first:v", "median:v")
	_, err = runRows(t, plan, data, 2, 4096, Options{MemoryLimit: 64 << 10})
	if qerr.Code(err) != qerr.CodeResourceExhausted {
		t.Fatalf("budget: err %v", err)
	}
	assertCancelled(t, plan, data)
}

// Few groups and a state that does not merge (the peer harness's Q3:
// count distinct + median over 240 groups): the serial fold, not the radix
// path, and the same answer as with radix forced.
func TestRadixSkipsFewGroups(t *testing.T) {
	ran := withRadix(t)
	withParallel(t, 2)
	parallelMinRows = 1000
	n := 20000
	k, x := make([]any, n), make([]any, n)
	for i := range n {
		k[i], x[i] = int64(i%240), float64(i%977)/4
	}
	data := []tcol{{"k", tInt64, k}, {"x", tF64, x}}
	a := aggOf(&planner.Scan{Dataset: "t", Out: schemaOf(data)}, []string{"k"}, "median:x", "count_distinct:x")
	forced, err := runRows(t, a, data, 1, 500, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if *ran != 1 {
		t.Fatalf("radix forced (radixMinGroups 0): ran %d times, want 1", *ran)
	}
	radixMinGroups = 1 << 16
	got, err := runRows(t, a, data, 1, 500, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if *ran != 1 {
		t.Fatalf("240 groups with radixMinGroups %d went radix", radixMinGroups)
	}
	byKey := map[string]string{}
	for _, g := range forced {
		byKey[keyOf(g[0])] = keyOf(g[1:]...)
	}
	if len(got) != 240 || len(forced) != 240 {
		t.Fatalf("groups: serial %d, radix %d, want 240", len(got), len(forced))
	}
	for _, g := range got {
		if byKey[keyOf(g[0])] != keyOf(g[1:]...) {
			t.Fatalf("group %v: serial %v, radix %v", g[0], g[1:], byKey[keyOf(g[0])])
		}
	}
}
