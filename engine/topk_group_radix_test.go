package engine

import (
	"math/rand/v2"
	"testing"

	"github.com/quarrydb/quarry/internal/qerr"
	"github.com/quarrydb/quarry/planner"
)

// withTopNRadix counts the top n per group operators that took the
// partitioned path (and forces w workers).
func withTopNRadix(t *testing.T, w int) *int {
	t.Helper()
	withParallel(t, w)
	old, oldMin := topNRadixRan, radixMinGroups
	t.Cleanup(func() { topNRadixRan, radixMinGroups = old, oldMin })
	radixMinGroups = 0
	var n int
	topNRadixRan = func() { n++ }
	return &n
}

// topNOf keeps the first n rows per partition of in ranked by keys
// ("col" or "-col" for descending).
func topNOf(in planner.Node, n int64, parts []string, keys ...string) *planner.TopNPerGroup {
	s := in.Schema()
	tn := &planner.TopNPerGroup{Input: in, N: n, PartitionBy: parts}
	for _, p := range parts {
		tn.PartIdx = append(tn.PartIdx, colIndex(s, p))
	}
	for _, k := range keys {
		desc := k[0] == '-'
		if desc {
			k = k[1:]
		}
		tn.Keys = append(tn.Keys, planner.SortKey{Col: k, Index: colIndex(s, k), Desc: desc})
	}
	return tn
}

// The partitioned top n per group gives exactly the serial output, row for
// row and in the same order (groups in first-seen order, each in rank
// order, ties keeping the earlier row): a group split over two partitions,
// or partitions merged out of order, fails it. The serial run goes without
// the bars (topk_group_bar.go), the partitioned one with them, so a bar
// that drops a row it should keep fails it too.
func TestTopNPerGroupRadixMatchesSerial(t *testing.T) {
	ran := withTopNRadix(t, 2)
	t.Cleanup(func() { topNBars = true })
	for iter := range uint64(80) {
		r := rand.New(rand.NewPCG(99, iter))
		nrows := 1 + r.IntN(3000)
		data := moreAggData(r, nrows)
		scan := scanOf(schemaOf(data))
		parts := randKeys(r, "k", "k", "s", "b", "e")
		var keys []string
		for _, c := range r.Perm(4)[:1+r.IntN(3)] {
			k := []string{"x", "y", "e", "s"}[c]
			if r.IntN(2) == 0 {
				k = "-" + k
			}
			keys = append(keys, k)
		}
		plan := topNOf(scan, int64(1+r.IntN(4)), parts, keys...)
		want, got, label := serialThenSplit(t, r, plan, data, iter, 1+r.IntN(300), func() int64 { return int64(*ran) },
			func(serial bool) { topNBars = !serial })
		if !rowsEq(got, want) {
			t.Fatalf("%s\ngot\n%swant\n%s", label, fmtRows(got), fmtRows(want))
		}
	}
	t.Logf("partitioned path in %d of 80 iterations", *ran)
	if *ran < 60 {
		t.Fatalf("the partitioned path ran %d times in 80 iterations; the test does not exercise it", *ran)
	}
}

// Errors on the partitioned path (the memory budget, cancellation) come
// back as the query's error with every buffer released.
func TestTopNPerGroupRadixErrors(t *testing.T) {
	ran := withTopNRadix(t, 2)
	parallelMinRows = 100
	data := keyedInts(20000, 5000)
	plan := topNOf(scanOf(schemaOf(data)), 3, []string{"k"}, "-v")
	_, err := runRows(t, plan, data, 2, 512, Options{MemoryLimit: 64 << 10})
	if qerr.Code(err) != qerr.CodeResourceExhausted || *ran == 0 {
		t.Fatalf("budget: err %v, partitioned runs %d", err, *ran)
	}

	got, err := runRows(t, plan, data, 3, 512, Options{})
	if err != nil || len(got) != 5000*3 || *ran != 2 {
		t.Fatalf("no budget: %d rows (want %d), err %v, partitioned runs %d", len(got), 5000*3, err, *ran)
	}
	assertCancelled(t, plan, data)
}

// Few groups stay serial (radixMinGroups), with the same rows.
func TestTopNPerGroupFewGroupsSerial(t *testing.T) {
	ran := withTopNRadix(t, 2)
	parallelMinRows = 100
	n := 20000
	k, v := make([]any, n), make([]any, n)
	for i := range n {
		k[i], v[i] = int64(i%300), float64(i%977)
	}
	data := []tcol{{"k", tInt64, k}, {"v", tF64, v}}
	plan := topNOf(scanOf(schemaOf(data)), 2, []string{"k"}, "-v")
	forced, err := runRows(t, plan, data, 1, 512, Options{})
	if err != nil || *ran != 1 {
		t.Fatalf("radixMinGroups 0: err %v, partitioned runs %d, want 1", err, *ran)
	}
	radixMinGroups = 1 << 16
	got, err := runRows(t, plan, data, 1, 512, Options{})
	if err != nil || *ran != 1 {
		t.Fatalf("300 groups: err %v, partitioned runs %d, want still 1", err, *ran)
	}
	if len(got) != 600 || !rowsEq(got, forced) {
		t.Fatalf("serial and partitioned differ: %d and %d rows", len(got), len(forced))
	}
}
