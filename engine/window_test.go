package engine

import (
	"fmt"
	"math"
	"slices"
	"testing"

	"github.com/quarrydb/quarry/internal/qerr"
	"github.com/quarrydb/quarry/planner"
)

func buildPlan(t *testing.T, spec planner.Spec, cols []tcol) planner.Node {
	t.Helper()
	plan, err := planner.Build(spec, planner.Input{Dataset: "t", Schema: schemaOf(cols)})
	if err != nil {
		t.Fatal(err)
	}
	if plan, err = planner.Optimize(plan, planner.OptimizeOptions{}); err != nil {
		t.Fatal(err)
	}
	return plan
}

// Windows over aggregated rows: share of total and rank within the result.
func TestWindowOverAggregate(t *testing.T) {
	cols := []tcol{
		{name: "region", typ: tDict16, vals: vals("n", "s", "n", "e", "s", "n")},
		{name: "qty", typ: tInt64, vals: vals(int64(1), int64(2), int64(3), int64(4), int64(6), nil)},
	}
	plan := buildPlan(t, planner.Spec{
		GroupBy: []string{"region"},
		Aggs:    []planner.AggSpec{{Col: "qty", Fn: planner.AggSum, As: "units"}},
		Windows: []planner.WindowSpec{
			{Fn: planner.WindowFn(planner.AggSum), Col: "units", As: "all"},
			{Fn: "rank", OrderBy: []planner.OrderSpec{{Col: "units", Desc: true}}, As: "rank"},
			{Fn: "lag", Col: "region", OrderBy: []planner.OrderSpec{{Col: "units", Desc: true}}, As: "ahead"},
		},
		Columns: []string{"region", "units", "units / all AS share", "rank", "ahead"},
		OrderBy: []planner.OrderSpec{{Col: "rank"}},
	}, cols)
	alloc := newAlloc()
	src := newSource(alloc, cols)
	got, err := run(t, plan, src, Options{Alloc: alloc, BatchSize: 2})
	src.release()
	alloc.AssertSize(t, 0)
	if err != nil {
		t.Fatal(err)
	}
	want := [][]any{
		{"s", int64(8), 0.5, int64(1), nil},
		{"n", int64(4), 0.25, int64(2), "s"},
		{"e", int64(4), 0.25, int64(2), "n"},
	}
	if !rowsClose(got, want) {
		t.Fatalf("got\n%swant\n%s", fmtRows(got), fmtRows(want))
	}
}

// Failures (budget, integer overflow, the frame work cap) release everything.
func TestWindowErrors(t *testing.T) {
	n := 5000
	big := make([]any, n)
	part := make([]any, n)
	for i := range big {
		big[i] = int64(math.MaxInt64 / 4)
		part[i] = int64(i % 3)
	}
	cols := []tcol{{name: "p", typ: tInt64, vals: part}, {name: "v", typ: tInt64, vals: big}}
	cases := []struct {
		name  string
		spec  planner.Spec
		limit int64
		code  string
	}{
		{"overflow", planner.Spec{Windows: []planner.WindowSpec{{Fn: "sum", Col: "v", OrderBy: []planner.OrderSpec{{Col: "p"}}}}}, 0, qerr.CodeInvalidAggregate},
		{"budget", planner.Spec{Windows: []planner.WindowSpec{{Fn: "row_number", PartitionBy: []string{"p"}}, {Fn: "lag", Col: "v", OrderBy: []planner.OrderSpec{{Col: "v"}}}}}, 100_000, qerr.CodeResourceExhausted},
		{"top n budget", planner.Spec{TopNPerGroup: &planner.TopNPerGroupSpec{N: 5000, By: []planner.OrderSpec{{Col: "v"}}, PartitionBy: []string{"p"}}}, 100_000, qerr.CodeResourceExhausted},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			plan := buildPlan(t, c.spec, cols)
			alloc := newAlloc()
			src := newSource(alloc, cols)
			_, err := run(t, plan, src, Options{Alloc: alloc, BatchSize: 256, MemoryLimit: c.limit})
			src.release()
			alloc.AssertSize(t, 0)
			if qerr.Code(err) != c.code {
				t.Fatalf("err = %v, want code %s", err, c.code)
			}
		})
	}
}

// A window keeps the input's row order and batches.
func TestWindowKeepsInputOrder(t *testing.T) {
	cols := []tcol{
		{name: "g", typ: tStr, vals: vals("a", "b", "a", "b", "a")},
		{name: "x", typ: tF64, vals: vals(3.0, 1.0, 1.0, math.NaN(), nil)},
	}
	plan := buildPlan(t, planner.Spec{Windows: []planner.WindowSpec{
		{Fn: "row_number", PartitionBy: []string{"g"}, OrderBy: []planner.OrderSpec{{Col: "x"}}, As: "rn"},
		{Fn: "max", Col: "x", PartitionBy: []string{"g"}, As: "mx"},
		{Fn: "last_value", Col: "x", PartitionBy: []string{"g"}, OrderBy: []planner.OrderSpec{{Col: "x"}}, Frame: &planner.FrameSpec{Start: "current row", End: "unbounded following"}, As: "lv"},
	}}, cols)
	alloc := newAlloc()
	src := newSource(alloc, cols)
	got, err := run(t, plan, src, Options{Alloc: alloc, BatchSize: 2})
	src.release()
	alloc.AssertSize(t, 0)
	if err != nil {
		t.Fatal(err)
	}
	want := [][]any{
		{"a", 3.0, int64(2), 3.0, nil},
		{"b", 1.0, int64(1), 1.0, math.NaN()},
		{"a", 1.0, int64(1), 3.0, nil},
		{"b", math.NaN(), int64(2), 1.0, math.NaN()},
		{"a", nil, int64(3), 3.0, nil},
	}
	if !rowsClose(got, want) {
		t.Fatalf("got\n%swant\n%s", fmtRows(got), fmtRows(want))
	}
}

// Partitions sorted on several goroutines (the threshold lowered).
func TestWindowParallelSort(t *testing.T) {
	defer func(old int) { parallelSortRows = old }(parallelSortRows)
	parallelSortRows = 1000
	const n = 20_000
	p, v := make([]any, n), make([]any, n)
	for i := range n {
		p[i] = int64((i * 7919) % 500)
		v[i] = int64((i * 31) % 97)
	}
	cols := []tcol{{name: "p", typ: tInt64, vals: p}, {name: "v", typ: tInt64, vals: v}}
	plan := buildPlan(t, planner.Spec{Windows: []planner.WindowSpec{
		{Fn: "row_number", PartitionBy: []string{"p"}, OrderBy: []planner.OrderSpec{{Col: "v", Desc: true}}, As: "rn"},
		{Fn: "rank", PartitionBy: []string{"p"}, OrderBy: []planner.OrderSpec{{Col: "v", Desc: true}}, As: "rk"},
	}}, cols)
	alloc := newAlloc()
	src := newSource(alloc, cols)
	got, err := run(t, plan, src, Options{Alloc: alloc})
	src.release()
	alloc.AssertSize(t, 0)
	if err != nil {
		t.Fatal(err)
	}
	rows := make([][]any, n)
	for i := range rows {
		rows[i] = []any{p[i], v[i]}
	}
	w := windowOf(t, plan)
	st := &refState{}
	rn, rk := refWindow(st, rows, w.Exprs[0]), refWindow(st, rows, w.Exprs[1])
	for i, r := range got {
		if r[2] != rn[i] || r[3] != rk[i] {
			t.Fatalf("row %d: got %v, want row_number %v rank %v", i, r, rn[i], rk[i])
		}
	}
}

// explain analyze names the window and top-n operators and counts their rows.
func TestWindowProfile(t *testing.T) {
	cols := []tcol{
		{name: "g", typ: tStr, vals: vals("a", "b", "a", "b", "a")},
		{name: "x", typ: tInt64, vals: vals(int64(3), int64(1), int64(1), int64(2), nil)},
	}
	plan := buildPlan(t, planner.Spec{
		Windows:      []planner.WindowSpec{{Fn: "sum", Col: "x", PartitionBy: []string{"g"}, As: "s"}},
		TopNPerGroup: &planner.TopNPerGroupSpec{N: 1, PartitionBy: []string{"g"}, By: []planner.OrderSpec{{Col: "s", Desc: true}}},
	}, cols)
	alloc := newAlloc()
	src := newSource(alloc, cols)
	prof := &Profile{}
	_, err := run(t, plan, src, Options{Alloc: alloc, BatchSize: 2, Profile: prof})
	src.release()
	alloc.AssertSize(t, 0)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	prof.Root().Walk(func(o *Operator, _ int) {
		got = append(got, fmt.Sprintf("%s:%d", o.Name, o.Stats.RowsOut))
	})
	if want := []string{"top n per group:2", "window:5", "scan:5"}; !slices.Equal(got, want) {
		t.Fatalf("operators %v, want %v", got, want)
	}
}
