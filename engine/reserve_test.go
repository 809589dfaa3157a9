package engine

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/quarrydb/quarry/catalog"
	"github.com/quarrydb/quarry/internal/qerr"
	"github.com/quarrydb/quarry/planner"
)

// reserveSlack is what a query may hold beyond its memory limit in
// TestOperatorsReserveFirst: small Go-side state charged after the fact
// (a batch's scratch). The operators' state proportional to their input
// is reserved before it is allocated, so it never takes the query past
// its limit.
const reserveSlack = 16 << 10

// TestOperatorsReserveFirst runs sort, join, window and top_n_per_group
// operators under a
// memory limit below what their state needs, over a source whose batches
// are not copied into the query's allocator (so the budget counts only
// what the operators allocate), and checks that each fails with
// resource_exhausted or spills before its state exists: the budget's live
// bytes (Arrow buffers allocated through the query's checked allocator
// plus the Go-side state the operators charge, the peak tracked on every
// increase) never pass the limit by more than reserveSlack. Before the
// operators reserved first, they allocated a batch's keys and rows (sort),
// a whole build batch's arrays (join) and whole per-row arrays (window)
// and charged them after: peaks up to a batch or an array over the limit.
func TestOperatorsReserveFirst(t *testing.T) {
	const n = 20000
	k, s, v := make([]any, n), make([]any, n), make([]any, n)
	for i := range n {
		k[i], s[i], v[i] = int64(i), fmt.Sprintf("value-%06d", (i*7919)%n), int64(i%100)
	}
	cols := []tcol{{"k", tInt64, k}, {"s", tStr, s}, {"v", tInt64, v}}
	sch := schemaOf(cols)
	joinOn := planner.Spec{Join: []planner.JoinSpec{{Dataset: "r", As: "r", On: []planner.JoinOn{{Left: "k", Right: "k"}}}}}
	cross := planner.Spec{Join: []planner.JoinSpec{{Dataset: "r", As: "r", Type: planner.JoinCross}}}
	window := func(ws ...planner.WindowSpec) planner.Node {
		t.Helper()
		plan, err := planner.Build(planner.Spec{Windows: ws}, planner.Input{Dataset: "t", Schema: sch})
		if err != nil {
			t.Fatal(err)
		}
		return plan
	}
	topN, err := planner.Build(planner.Spec{TopNPerGroup: &planner.TopNPerGroupSpec{N: 2,
		By: []planner.OrderSpec{{Col: "s"}}, PartitionBy: []string{"k"}}}, planner.Input{Dataset: "t", Schema: sch})
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name  string
		plan  planner.Node
		batch int
		limit int64
		spill bool // the operator spills instead of failing
		big   bool // too big to run without a limit (400M rows)
	}{
		// 24 bytes a row (a string view, a row reference) in 4096-row steps.
		{"sort", sortOf(scanOf(sch), "s"), 4096, 400 << 10, false, false},
		// The build side (25 bytes a row and a 24-byte entry) as one batch:
		// its arrays alone are over 3/4 of the limit.
		{"join", planJoin(t, joinOn, sch, sch, n, n), n, 512 << 10, true, false},
		{"cross join", planJoin(t, cross, sch, sch, n, n), n, 400 << 10, false, true},
		// Layout (perm, partition ids, keys, global rows) and results:
		// 8 bytes a row for each of several arrays.
		{"window row_number", window(planner.WindowSpec{Fn: "row_number", PartitionBy: []string{"v"},
			OrderBy: []planner.OrderSpec{{Col: "s"}}}), 4096, 400 << 10, false, false},
		// Per new group a buffer header, its n row references and its bars,
		// per batch the rank key's views.
		{"top_n_per_group", topN, 4096, 400 << 10, false, false},
		{"window sum", window(planner.WindowSpec{Fn: "sum", Col: "k", OrderBy: []planner.OrderSpec{{Col: "k"}}}), 4096, 300 << 10, false, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			alloc := newAlloc()
			defer alloc.AssertSize(t, 0)
			src := newSource(alloc, cols)
			src.noCopy = true
			defer src.release()
			spills := graceSpills.Load()
			opts := Options{Alloc: alloc, BatchSize: tc.batch, MemoryLimit: tc.limit,
				Sources: map[string]catalog.Source{"r": src}, SpillDir: t.TempDir(), joinBuild: buildRight}
			rows, peak, err := runPeak(t, tc.plan, src, opts)
			if tc.spill {
				if err != nil {
					t.Fatalf("spilling: %v", err)
				}
				if graceSpills.Load() == spills {
					t.Fatal("did not spill")
				}
				if rows != n {
					t.Fatalf("%d rows, want %d", rows, n)
				}
			} else if !errors.Is(err, qerr.ErrLimitExceeded) || qerr.Code(err) != qerr.CodeResourceExhausted {
				t.Fatalf("err = %v, want resource_exhausted", err)
			}
			t.Logf("peak %d bytes, limit %d", peak, tc.limit)
			if peak > tc.limit+reserveSlack {
				t.Errorf("the query held %d bytes at its peak: %d over its limit of %d", peak, peak-tc.limit, tc.limit)
			}
			if src.open.Load() != 0 {
				t.Fatal("source reader not released")
			}
			if tc.big {
				return
			}
			// Within a generous limit the same plan runs in memory.
			opts.MemoryLimit = 64 << 20
			if _, _, err := runPeak(t, tc.plan, src, opts); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// runPeak runs plan and returns its rows, the peak of its budget's live
// bytes and its error.
func runPeak(t *testing.T, plan planner.Node, src catalog.Source, opts Options) (int, int64, error) {
	t.Helper()
	r, err := Execute(context.Background(), plan, src, opts)
	if err != nil {
		return 0, 0, err
	}
	defer r.Release()
	rows := 0
	for r.Next() {
		rows += int(r.RecordBatch().NumRows())
	}
	return rows, r.(*reader).budget.peak.Load(), r.Err()
}

// The budget's reserve refuses before charging: over the limit, and after
// the pool refused a take; a refused reserve leaves nothing counted.
func TestAcctReserve(t *testing.T) {
	b := &budget{limit: 1000}
	a := acct{b: b}
	if err := a.reserve(600); err != nil {
		t.Fatal(err)
	}
	if err := a.reserve(500); qerr.Code(err) != qerr.CodeResourceExhausted {
		t.Fatalf("over the limit: %v", err)
	}
	if b.live.Load() != 600 || b.peak.Load() != 600 {
		t.Fatalf("live %d, peak %d after a refusal, want 600", b.live.Load(), b.peak.Load())
	}
	if err := a.reserve(-600); err != nil || b.live.Load() != 0 {
		t.Fatalf("giving back: %v, live %d", err, b.live.Load())
	}
	refused := error(qerr.Limit(qerr.CodeResourceExhausted, "pool"))
	b.refused.Store(&refused)
	if err := a.reserve(1); !errors.Is(err, refused) {
		t.Fatalf("after a refused take: %v", err)
	}
	a.release()
}
