package engine

import (
	"math/rand/v2"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/quarrydb/quarry/catalog"
	"github.com/quarrydb/quarry/planner"
)

// TestJoinParallelProbeSameOutput: with several probe workers a join
// returns the rows of one worker, in the same order (the outputs are
// returned in input order), for every join type and build side, and no
// Arrow memory is left behind.
func TestJoinParallelProbeSameOutput(t *testing.T) {
	r := rand.New(rand.NewPCG(14, 5))
	for iter := range 60 {
		c := randJoinCase(r, 300)
		typ := planner.JoinTypes[r.IntN(len(planner.JoinTypes))]
		on := c.on
		if typ == planner.JoinCross {
			on = nil
		}
		batch, build := 1+r.IntN(40), r.IntN(3)
		var outs [2][][]any
		for k, workers := range []int{1, 3} {
			func() {
				defer setJoinWorkers(workers)()
				mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
				defer mem.AssertSize(t, 0)
				ls, rs := newSource(mem, c.left), newSource(mem, c.right)
				defer ls.release()
				defer rs.release()
				spec := planner.Spec{Join: []planner.JoinSpec{{Dataset: "r", As: "r", On: on, Type: typ}}}
				plan := planJoin(t, spec, ls.schema, rs.schema, int64(len(c.left[0].vals)), int64(len(c.right[0].vals)))
				got, err := run(t, plan, ls, Options{Alloc: mem, BatchSize: batch, Sources: map[string]catalog.Source{"r": rs}, joinBuild: build})
				if err != nil {
					t.Fatalf("iter %d (%s join, %d workers): %v", iter, typ, workers, err)
				}
				outs[k] = got
			}()
		}
		if !rowsEq(outs[0], outs[1]) {
			t.Fatalf("iter %d (%s join, build %d, batch %d): %d rows with 3 workers differ from the %d with one\n3: %v\n1: %v",
				iter, typ, build, batch, len(outs[1]), len(outs[0]), head(outs[1]), head(outs[0]))
		}
	}
}

// TestJoinParallelProbeEarlyClose: a limit above a parallel join closes it
// with probe batches in flight; the workers stop and everything they held
// is released.
func TestJoinParallelProbeEarlyClose(t *testing.T) {
	defer setJoinWorkers(2)()
	cases := []struct {
		name  string
		limit int64
	}{{"first row", 1}, {"mid-way", 500}, {"past the end", 1 << 20}}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
			defer mem.AssertSize(t, 0)
			const n = 5000
			lk, rk := make([]any, n), make([]any, 100)
			for i := range lk {
				lk[i] = int64(i % 100)
			}
			for i := range rk {
				rk[i] = int64(i)
			}
			ls := newSource(mem, []tcol{{"a", arrow.PrimitiveTypes.Int64, lk}})
			rs := newSource(mem, []tcol{{"b", arrow.PrimitiveTypes.Int64, rk}})
			defer ls.release()
			defer rs.release()
			spec := planner.Spec{Join: []planner.JoinSpec{{Dataset: "r", As: "r", On: []planner.JoinOn{{Left: "a", Right: "b"}}, Type: planner.JoinInner}}}
			plan := planJoin(t, spec, ls.schema, rs.schema, n, 100)
			got, err := run(t, limitOf(plan, 0, c.limit), ls, Options{Alloc: mem, BatchSize: 16, Sources: map[string]catalog.Source{"r": rs}})
			if err != nil {
				t.Fatal(err)
			}
			if want := min(c.limit, n); int64(len(got)) != want {
				t.Fatalf("%d rows, want %d", len(got), want)
			}
			for i, row := range got {
				if row[0] != int64(i%100) {
					t.Fatalf("row %d is %v: not in the probe order", i, row)
				}
			}
		})
	}
}

// setJoinWorkers sets the probe workers for a test; the returned func restores them.
func setJoinWorkers(w int) func() {
	old := joinWorkers
	joinWorkers = func() int { return w }
	return func() { joinWorkers = old }
}

// TestJoinParallelProbeFanOut: a probe batch that matches many build rows
// (a cross join, a key repeated on the build side) is not expanded whole
// on a worker: past maxTaskOutputs outputs it is probed on the operator's
// goroutine as the consumer asks, so a limit above a 20,000 × 20,000 cross
// join or a many-to-many join stays within a small memory budget, in the
// probe order of the serial join.
func TestJoinParallelProbeFanOut(t *testing.T) {
	defer setJoinWorkers(2)()
	const n = 20000
	keys, same := make([]any, n), make([]any, n)
	for i := range keys {
		keys[i], same[i] = int64(i), int64(7)
	}
	cases := []struct {
		name string
		typ  planner.JoinType
		on   []planner.JoinOn
	}{
		{"cross", planner.JoinCross, nil},
		{"one repeated key", planner.JoinInner, []planner.JoinOn{{Left: "s", Right: "s"}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
			defer mem.AssertSize(t, 0)
			ls := newSource(mem, []tcol{{"a", arrow.PrimitiveTypes.Int64, keys}, {"s", arrow.PrimitiveTypes.Int64, same}})
			rs := newSource(mem, []tcol{{"b", arrow.PrimitiveTypes.Int64, keys}, {"s", arrow.PrimitiveTypes.Int64, same}})
			defer ls.release()
			defer rs.release()
			spec := planner.Spec{Join: []planner.JoinSpec{{Dataset: "r", As: "r", On: c.on, Type: c.typ}}}
			plan := planJoin(t, spec, ls.schema, rs.schema, n, n)
			// 400M pairs: a worker expanding one 4,096-row probe batch whole would
			// hold 80M of them, far past the 64 MiB budget.
			got, err := run(t, limitOf(plan, 0, 10), ls, Options{Alloc: mem, BatchSize: 4096, MemoryLimit: 64 << 20,
				Sources: map[string]catalog.Source{"r": rs}})
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != 10 {
				t.Fatalf("%d rows, want 10", len(got))
			}
			for _, row := range got {
				if row[0] != int64(0) {
					t.Fatalf("row %v: the first probe row's pairs come first", row)
				}
			}
		})
	}
}
