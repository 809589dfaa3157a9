package engine

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/quarrydb/quarry/catalog"
	"github.com/quarrydb/quarry/internal/qerr"
	"github.com/quarrydb/quarry/planner"
)

// Differential tests of the set operations against a row-at-a-time
// reference (multisets keyed by normalized rows: nulls equal, NaN equal,
// -0 = 0), with type unification between the two inputs, both inputs from
// different sources, and tiny batches.

type setKind struct {
	kind planner.SetOpKind
	all  bool
}

var setKinds = []setKind{
	{planner.SetUnion, true}, {planner.SetUnion, false},
	{planner.SetIntersect, true}, {planner.SetIntersect, false},
	{planner.SetExcept, true}, {planner.SetExcept, false},
}

// setKey is a row's identity for the reference.
func setKey(row []any) string {
	var b strings.Builder
	for _, v := range row {
		switch x := v.(type) {
		case float64:
			if math.IsNaN(x) {
				b.WriteString("f:NaN|")
				continue
			}
			fmt.Fprintf(&b, "f:%v|", x+0) // -0 + 0 = +0
		default:
			fmt.Fprintf(&b, "%T:%v|", v, v)
		}
	}
	return b.String()
}

// refSetOp is the reference: SQL multiset semantics.
func refSetOp(k setKind, left, right [][]any) [][]any {
	var out [][]any
	seen := map[string]bool{}
	cnt := map[string]int{}
	for _, r := range right {
		cnt[setKey(r)]++
	}
	switch {
	case k.kind == planner.SetUnion && k.all:
		return append(append(out, left...), right...)
	case k.kind == planner.SetUnion:
		for _, r := range append(append([][]any{}, left...), right...) {
			if key := setKey(r); !seen[key] {
				seen[key] = true
				out = append(out, r)
			}
		}
	case k.kind == planner.SetIntersect:
		for _, r := range left {
			key := setKey(r)
			if cnt[key] > 0 && (k.all || !seen[key]) {
				seen[key] = true
				cnt[key]--
				out = append(out, r)
			}
		}
	default: // except
		for _, r := range left {
			key := setKey(r)
			if k.all {
				if cnt[key] > 0 {
					cnt[key]--
					continue
				}
				out = append(out, r)
				continue
			}
			if cnt[key] == 0 && !seen[key] {
				seen[key] = true
				out = append(out, r)
			}
		}
	}
	return out
}

// tableRows turns columns into rows, converting column c's numbers to
// float64 when asFloat[c].
func tableRows(cols []tcol, asFloat []bool) [][]any {
	rows := make([][]any, len(cols[0].vals))
	for i := range rows {
		for c, col := range cols {
			v := col.vals[i]
			if x, ok := v.(int64); ok && asFloat[c] {
				v = float64(x)
			}
			rows[i] = append(rows[i], v)
		}
	}
	return rows
}

func randSetCase(r *rand.Rand) (left, right []tcol, asFloat []bool) {
	n := func() int {
		if r.IntN(8) == 0 {
			return 0
		}
		return r.IntN(40)
	}
	nl, nr := n(), n()
	card := 1 + r.IntN(6)
	ints := func(n int) []any {
		vs := make([]any, n)
		for i := range vs {
			if r.IntN(6) > 0 {
				vs[i] = int64(r.IntN(card) - 1)
			}
		}
		return vs
	}
	floats := func(n int) []any {
		vs := make([]any, n)
		for i := range vs {
			switch r.IntN(8) {
			case 0:
			case 1:
				vs[i] = math.NaN()
			case 2:
				vs[i] = math.Copysign(0, -1)
			default:
				vs[i] = float64(r.IntN(card))
			}
		}
		return vs
	}
	strs := func(n int) []any {
		vs := make([]any, n)
		for i := range vs {
			if r.IntN(6) > 0 {
				vs[i] = fmt.Sprintf("s%d", r.IntN(card))
			}
		}
		return vs
	}
	pick := func(ts ...arrow.DataType) arrow.DataType { return ts[r.IntN(len(ts))] }
	lt0 := pick(arrow.PrimitiveTypes.Int32, arrow.PrimitiveTypes.Int64)
	rt0 := pick(arrow.PrimitiveTypes.Int64, arrow.PrimitiveTypes.Int8, arrow.PrimitiveTypes.Float64)
	rt1 := pick(arrow.PrimitiveTypes.Float64, arrow.PrimitiveTypes.Int64)
	left = []tcol{
		{"a", lt0, ints(nl)},
		{"f", arrow.PrimitiveTypes.Float64, floats(nl)},
		{"s", pick(arrow.BinaryTypes.String, dictI16), strs(nl)},
	}
	right = []tcol{
		{"b", rt0, ints(nr)},
		{"g", rt1, ints(nr)},
		{"t", pick(arrow.BinaryTypes.String, dictI16, arrow.BinaryTypes.LargeString), strs(nr)},
	}
	if rt0.ID() == arrow.FLOAT64 {
		right[0].vals = floats(nr)
	}
	if rt1.ID() == arrow.FLOAT64 {
		right[1].vals = floats(nr)
	}
	return left, right, []bool{rt0.ID() == arrow.FLOAT64, true, false}
}

func TestSetOpDiff(t *testing.T) {
	r := rand.New(rand.NewPCG(17, 4))
	for iter := range 300 {
		left, right, asFloat := randSetCase(r)
		k := setKinds[r.IntN(len(setKinds))]
		mem := newAlloc()
		ls, rs := newSource(mem, left), newSource(mem, right)
		lscan := &planner.Scan{Dataset: "l", Out: ls.schema}
		rscan := &planner.Scan{Dataset: "r", Out: rs.schema}
		so, err := planner.NewSetOp(k.kind, k.all, lscan, rscan)
		if err != nil {
			t.Fatal(err)
		}
		var plan planner.Node = so
		if r.IntN(2) == 0 {
			if plan, err = planner.Optimize(plan, planner.OptimizeOptions{}); err != nil {
				t.Fatal(err)
			}
		}
		opts := Options{Alloc: mem, BatchSize: 1 + r.IntN(20), Sources: map[string]catalog.Source{"r": rs}}
		got, err := run(t, plan, ls, opts)
		if err != nil {
			t.Fatalf("iter %d %s: %v", iter, so.Name(), err)
		}
		want := refSetOp(k, tableRows(left, asFloat), tableRows(right, asFloat))
		if !rowsEq(sortRows(got), sortRows(want)) {
			t.Fatalf("iter %d %s: got %d rows, want %d\ngot  %v\nwant %v\nleft %v\nright %v", iter, so.Name(), len(got), len(want), got, want, left, right)
		}
		if k.kind == planner.SetUnion && k.all && !rowsEq(got, want) {
			t.Fatalf("iter %d: UNION ALL changed the order\ngot  %v\nwant %v", iter, got, want)
		}
		ls.release()
		rs.release()
		mem.AssertSize(t, 0)
	}
}

// TestSetOpCases: fixed cases, each kind, over the same dataset on both
// sides (one source) and with VALUES inputs.
func TestSetOpCases(t *testing.T) {
	mem := newAlloc()
	defer mem.AssertSize(t, 0)
	src := newSource(mem, []tcol{
		{"k", arrow.PrimitiveTypes.Int64, vals(int64(1), int64(1), int64(2), nil, nil, int64(3))},
		{"v", arrow.BinaryTypes.String, vals("a", "a", "b", nil, nil, "c")},
	})
	defer src.release()
	scan := &planner.Scan{Dataset: "t", Out: src.schema}
	filtered := filterOf(scan, pred(src.schema, "k", planner.OpNeq, int64(3)))
	vnode := func(rows ...[]any) *planner.Values {
		var exprs [][]planner.Expr
		for _, row := range rows {
			var es []planner.Expr
			for _, v := range row {
				text := "NULL"
				switch x := v.(type) {
				case int64:
					text = fmt.Sprint(x)
				case float64:
					text = fmt.Sprintf("%g", x)
					if !strings.ContainsAny(text, ".e") {
						text += ".0"
					}
				case string:
					text = "'" + x + "'"
				}
				e, _, err := planner.ParseExpr(text)
				if err != nil {
					t.Fatal(err)
				}
				es = append(es, e)
			}
			exprs = append(exprs, es)
		}
		v, err := planner.NewValues([]string{"x", "y"}, exprs)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	cases := []struct {
		name        string
		kind        planner.SetOpKind
		all         bool
		left, right planner.Node
		want        [][]any
	}{
		{"union all self", planner.SetUnion, true, filtered, scan, [][]any{
			{int64(1), "a"}, {int64(1), "a"}, {int64(2), "b"},
			{int64(1), "a"}, {int64(1), "a"}, {int64(2), "b"}, {nil, nil}, {nil, nil}, {int64(3), "c"}}},
		{"union self", planner.SetUnion, false, scan, filtered, [][]any{{int64(1), "a"}, {int64(2), "b"}, {nil, nil}, {int64(3), "c"}}},
		{"intersect all", planner.SetIntersect, true, scan, vnode([]any{int64(1), "a"}, []any{nil, nil}, []any{nil, nil}, []any{nil, nil}, []any{int64(9), "z"}),
			[][]any{{int64(1), "a"}, {nil, nil}, {nil, nil}}},
		{"intersect", planner.SetIntersect, false, scan, vnode([]any{int64(1), "a"}, []any{nil, nil}, []any{int64(9), "z"}),
			[][]any{{int64(1), "a"}, {nil, nil}}},
		{"except all", planner.SetExcept, true, scan, vnode([]any{int64(1), "a"}, []any{nil, nil}, []any{int64(9), "z"}),
			[][]any{{int64(1), "a"}, {int64(2), "b"}, {nil, nil}, {int64(3), "c"}}},
		{"except", planner.SetExcept, false, scan, vnode([]any{int64(1), "a"}, []any{nil, nil}),
			[][]any{{int64(2), "b"}, {int64(3), "c"}}},
		{"values widen to float", planner.SetUnion, true, vnode([]any{int64(1), "p"}), vnode([]any{2.5, nil}),
			[][]any{{1.0, "p"}, {2.5, nil}}},
		{"null column typed by the other side", planner.SetUnion, false, vnode([]any{nil, "p"}, []any{nil, "p"}), scan,
			[][]any{{nil, "p"}, {int64(1), "a"}, {int64(2), "b"}, {nil, nil}, {int64(3), "c"}}},
		{"values only except", planner.SetExcept, false, vnode([]any{nil, nil}, []any{int64(1), "a"}), vnode([]any{nil, nil}),
			[][]any{{int64(1), "a"}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			so, err := planner.NewSetOp(c.kind, c.all, c.left, c.right)
			if err != nil {
				t.Fatal(err)
			}
			for _, bs := range []int{1, 3, 100} {
				got, err := run(t, so, src, Options{Alloc: mem, BatchSize: bs})
				if err != nil {
					t.Fatal(err)
				}
				if !rowsEq(sortRows(got), sortRows(c.want)) {
					t.Fatalf("batch %d: got %v, want %v", bs, got, c.want)
				}
			}
		})
	}
}

func TestSetOpErrors(t *testing.T) {
	a := arrow.NewSchema([]arrow.Field{{Name: "a", Type: arrow.PrimitiveTypes.Int64}, {Name: "s", Type: arrow.BinaryTypes.String}}, nil)
	b := arrow.NewSchema([]arrow.Field{{Name: "b", Type: arrow.BinaryTypes.String}, {Name: "t", Type: arrow.BinaryTypes.String}}, nil)
	c := arrow.NewSchema([]arrow.Field{{Name: "c", Type: arrow.PrimitiveTypes.Int64}}, nil)
	_, err := planner.NewSetOp(planner.SetUnion, true, &planner.Scan{Dataset: "x", Out: a}, &planner.Scan{Dataset: "y", Out: b})
	if qerr.Code(err) != qerr.CodeInvalidArgument || !strings.Contains(err.Error(), "column 1") {
		t.Fatalf("int with string: %v", err)
	}
	_, err = planner.NewSetOp(planner.SetExcept, false, &planner.Scan{Dataset: "x", Out: a}, &planner.Scan{Dataset: "y", Out: c})
	if qerr.Code(err) != qerr.CodeInvalidArgument || !strings.Contains(err.Error(), "same number of columns") {
		t.Fatalf("column count: %v", err)
	}
	_, err = planner.NewSetOp("minus", false, &planner.Scan{Dataset: "x", Out: a}, &planner.Scan{Dataset: "y", Out: a})
	if qerr.Code(err) != qerr.CodeInvalidArgument {
		t.Fatalf("unknown kind: %v", err)
	}
	// A missing source for the right dataset is an internal error, before anything runs.
	mem := newAlloc()
	defer mem.AssertSize(t, 0)
	ls := newSource(mem, []tcol{{"c", arrow.PrimitiveTypes.Int64, vals(int64(1))}})
	defer ls.release()
	so, _ := planner.NewSetOp(planner.SetUnion, true, &planner.Scan{Dataset: "x", Out: c}, &planner.Scan{Dataset: "y", Out: c})
	if _, err := run(t, so, ls, Options{Alloc: mem}); qerr.Code(err) != qerr.CodeInternal {
		t.Fatalf("missing source: %v", err)
	}
}

// TestSetOpBudget: a hash set operation over more distinct rows than the
// memory budget holds spills and answers exactly, freeing everything;
// UNION ALL streams under the same budget.
func TestSetOpBudget(t *testing.T) {
	mem := newAlloc()
	defer mem.AssertSize(t, 0)
	n := 200000
	ks := make([]any, n)
	for i := range ks {
		ks[i] = int64(i)
	}
	src := newSource(mem, []tcol{{"k", arrow.PrimitiveTypes.Int64, ks}})
	defer src.release()
	scan := &planner.Scan{Dataset: "t", Out: src.schema}
	dir := t.TempDir()
	for _, k := range setKinds {
		so, _ := planner.NewSetOp(k.kind, k.all, scan, scan)
		spills := setopSpills.Load()
		rr, err := Execute(context.Background(), so, src, Options{Alloc: mem, BatchSize: 4096, MemoryLimit: 1 << 20, SpillDir: dir})
		if err != nil {
			t.Fatal(err)
		}
		rows := 0
		for rr.Next() {
			rows += int(rr.RecordBatch().NumRows())
		}
		err = rr.Err()
		rr.Release()
		if k.kind == planner.SetUnion && k.all {
			if err != nil || rows != 2*n {
				t.Fatalf("union all: %d rows, %v", rows, err)
			}
			continue
		}
		want := n // union, intersect: every distinct row once (all: each row of the left input)
		if k.kind == planner.SetExcept {
			want = 0
		}
		if err != nil || rows != want || setopSpills.Load() == spills { // over the budget: spilled (setop_spill.go)
			t.Fatalf("%s: %v (%d rows, want %d; spilled %v)", so.Name(), err, rows, want, setopSpills.Load() > spills)
		}
	}
}

// TestSetOpLimitAndExplain: a Limit on UNION ALL is copied into both
// inputs (each stops early), the result is right, and explain/analyze
// name the operator.
func TestSetOpLimitAndExplain(t *testing.T) {
	mem := newAlloc()
	defer mem.AssertSize(t, 0)
	ks := make([]any, 1000)
	for i := range ks {
		ks[i] = int64(i)
	}
	src := newSource(mem, []tcol{{"k", arrow.PrimitiveTypes.Int64, ks}})
	defer src.release()
	scan := &planner.Scan{Dataset: "t", Out: src.schema}
	so, _ := planner.NewSetOp(planner.SetUnion, true, scan, scan)
	plan, err := planner.Optimize(&planner.Limit{Input: so, Offset: 2, Count: 3}, planner.OptimizeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := "Limit: offset=2 count=3\n  SetOp: UNION ALL\n    Limit: offset=0 count=5\n      Scan: t\n    Limit: offset=0 count=5\n      Scan: t\n"
	if got := planner.String(plan); got != want {
		t.Fatalf("plan:\n%s\nwant:\n%s", got, want)
	}
	if again, _ := planner.Optimize(plan, planner.OptimizeOptions{}); planner.String(again) != want {
		t.Fatalf("not idempotent:\n%s", planner.String(again))
	}
	prof := &Profile{}
	got, err := run(t, plan, src, Options{Alloc: mem, BatchSize: 2, Profile: prof})
	if err != nil {
		t.Fatal(err)
	}
	if !rowsEq(got, [][]any{{int64(2)}, {int64(3)}, {int64(4)}}) {
		t.Fatalf("rows %v", got)
	}
	var union *Operator
	prof.Root().Walk(func(o *Operator, _ int) {
		if o.Name == "union all" {
			union = o
		}
	})
	if union == nil || union.Stats == nil || union.Stats.RowsIn > 10 || len(union.Inputs) != 2 {
		t.Fatalf("profile: %+v\n%s", union, prof.Root())
	}
	ex, err := Explain(mustSetOp(t, planner.SetIntersect, false, scan, scan), src, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if s := ex.String(); !strings.Contains(s, "hash INTERSECT") {
		t.Fatalf("explain: %s", s)
	}
}

func mustSetOp(t *testing.T, k planner.SetOpKind, all bool, l, r planner.Node) *planner.SetOp {
	t.Helper()
	so, err := planner.NewSetOp(k, all, l, r)
	if err != nil {
		t.Fatal(err)
	}
	return so
}

// TestSetOpEarlyRelease: released mid-stream, every kind frees every byte.
func TestSetOpEarlyRelease(t *testing.T) {
	mem := newAlloc()
	defer mem.AssertSize(t, 0)
	ks := make([]any, 5000)
	ss := make([]any, 5000)
	for i := range ks {
		ks[i], ss[i] = int64(i%700), fmt.Sprintf("s%d", i%300)
	}
	src := newSource(mem, []tcol{{"k", arrow.PrimitiveTypes.Int32, ks}, {"s", dictI16, ss}})
	defer src.release()
	scan := &planner.Scan{Dataset: "t", Out: src.schema}
	v, err := planner.NewValues([]string{"k", "s"}, [][]planner.Expr{{&planner.Const{Typ: arrow.PrimitiveTypes.Float64, Float: 1}, &planner.Const{Typ: arrow.BinaryTypes.String, Str: "s1"}}})
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range setKinds {
		rr, err := Execute(context.Background(), mustSetOp(t, k.kind, k.all, scan, v), src, Options{Alloc: mem, BatchSize: 64})
		if err != nil {
			t.Fatal(err)
		}
		if !rr.Next() && k.kind != planner.SetIntersect {
			t.Fatalf("%v: no batch: %v", k, rr.Err())
		}
		if f := rr.Schema().Field(0).Type; f.ID() != arrow.FLOAT64 {
			t.Fatalf("int32 with float64: %s", f)
		}
		rr.Release()
	}
}
