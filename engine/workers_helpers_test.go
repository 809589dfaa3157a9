package engine

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/quarrydb/quarry/planner"
)

// The set-up the tests of the paths that split work over workers
// (workers.go: the parallel and radix aggregates, the partitioned top n
// per group) share.

// randKeys picks each of cands with even odds, in order; none picked
// gives fallback alone (when it is not "").
func randKeys(r *rand.Rand, fallback string, cands ...string) []string {
	var keys []string
	for _, k := range cands {
		if r.IntN(2) == 0 {
			keys = append(keys, k)
		}
	}
	if len(keys) == 0 && fallback != "" {
		keys = []string{fallback}
	}
	return keys
}

// serialThenSplit runs plan over data (batches of bs rows, batch shapes
// from seed) on one worker, then on 2 to 4 workers (drawn from r) after a
// serial prefix of up to half the rows (drawn too), and returns both
// results and a label of the second run: its shape, whether it took the
// path that taken counts, the plan. serial, when set, is called with true
// before the serial run and with false after it. An error fails t.
func serialThenSplit(t *testing.T, r *rand.Rand, plan planner.Node, data []tcol, seed uint64, bs int, taken func() int64, serial func(bool)) (want, got [][]any, label string) {
	t.Helper()
	parallelWorkers = func() int { return 1 }
	if serial != nil {
		serial(true)
	}
	want, err := runRows(t, plan, data, seed, bs, Options{})
	if serial != nil {
		serial(false)
	}
	if err != nil {
		t.Fatalf("iter %d serial: %v", seed, err)
	}
	w := 2 + r.IntN(3)
	parallelWorkers = func() int { return w }
	nrows := len(data[0].vals)
	parallelMinRows = r.IntN(nrows/2 + 1)
	before := taken()
	got, err = runRows(t, plan, data, seed, bs, Options{})
	label = fmt.Sprintf("iter %d (%d rows, batch size %d, %d workers, prefix %d, split path %v) plan:\n%s",
		seed, nrows, bs, w, parallelMinRows, taken() > before, planner.String(plan))
	if err != nil {
		t.Fatalf("%s: %v", label, err)
	}
	return want, got, label
}

// sameGroups fails t unless got holds want's groups, each once, in any
// order: rows matched by their first nk cells (the keys), the other cells
// compared by same (c the column of out).
func sameGroups(t *testing.T, label string, out *arrow.Schema, nk int, got, want [][]any, same func(c int, got, want any) bool) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d groups, want %d\ngot\n%swant\n%s", label, len(got), len(want), fmtRows(got), fmtRows(want))
	}
	byKey := map[string][]any{}
	for _, g := range want {
		byKey[keyOf(g[:nk]...)] = g
	}
	for _, g := range got {
		w, ok := byKey[keyOf(g[:nk]...)]
		if !ok {
			t.Fatalf("%s: group %v twice or not among those wanted\ngot\n%swant\n%s", label, g[:nk], fmtRows(got), fmtRows(want))
		}
		delete(byKey, keyOf(g[:nk]...))
		for c := nk; c < len(g); c++ {
			if !same(c, g[c], w[c]) {
				t.Fatalf("%s\ngroup %v column %s: got %v, want %v", label, g[:nk], out.Field(c).Name, g[c], w[c])
			}
		}
	}
}

// keyedInts is n rows of int64 columns k (i mod groups) and v (i).
func keyedInts(n, groups int) []tcol {
	k, v := make([]any, n), make([]any, n)
	for i := range n {
		k[i], v[i] = int64(i%groups), int64(i)
	}
	return []tcol{{"k", tInt64, k}, {"v", tInt64, v}}
}

// assertCancelled runs plan over data with a context cancelled before the
// run: the error must be context.Canceled, every buffer released.
func assertCancelled(t *testing.T, plan planner.Node, data []tcol) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	alloc := newAlloc()
	src := newSource(alloc, data)
	_, err := Execute(ctx, plan, src, Options{Alloc: alloc, BatchSize: 128})
	src.release()
	alloc.AssertSize(t, 0)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled: err %v", err)
	}
}
