package engine

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/quarrydb/quarry/catalog"
	"github.com/quarrydb/quarry/internal/qerr"
	"github.com/quarrydb/quarry/planner"
)

// Differential tests of the hash join against a row-at-a-time nested loop
// reference: every join type, both build sides, null keys, duplicate keys,
// skew, empty sides, integer widening and strings encoded differently on
// the two sides; in memory and spilled (Grace) under a tiny budget.

var dictI16 = &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int16, ValueType: arrow.BinaryTypes.String}

// joinCase is one random pair of tables.
type joinCase struct {
	left, right []tcol
	on          []planner.JoinOn
	where       func(i, j int) bool // the residual (nil: none), row i of left with row j of right
}

func randJoinCase(r *rand.Rand, maxRows int) joinCase {
	nl, nr := r.IntN(maxRows+1), r.IntN(maxRows+1)
	if r.IntN(8) == 0 {
		nl = 0
	}
	if r.IntN(8) == 0 {
		nr = 0
	}
	card, skew := 1+r.IntN(20), 4
	if maxRows > 100 { // spill cases: big sides, many keys, mild skew
		nl, nr, card, skew = maxRows/2+r.IntN(maxRows/2), maxRows/2+r.IntN(maxRows/2), 50+r.IntN(500), 30
	}
	intKey := func(n int, typ arrow.DataType) []any {
		vs := make([]any, n)
		for i := range vs {
			switch {
			case r.IntN(10) == 0:
				vs[i] = nil
			case r.IntN(skew) == 0:
				vs[i] = int64(0) // skew
			default:
				vs[i] = int64(r.IntN(card) - card/3)
			}
			if vs[i] != nil && typ.ID() == arrow.INT8 {
				vs[i] = int64(int8(vs[i].(int64)))
			}
		}
		return vs
	}
	strKey := func(n int) []any {
		vs := make([]any, n)
		for i := range vs {
			if r.IntN(10) == 0 {
				continue
			}
			vs[i] = fmt.Sprintf("k%d", r.IntN(card))
		}
		return vs
	}
	payload := func(n int, tag string) []any {
		vs := make([]any, n)
		for i := range vs {
			if r.IntN(7) == 0 {
				continue
			}
			vs[i] = fmt.Sprintf("%s%d", tag, i)
		}
		return vs
	}
	pick := func(ts ...arrow.DataType) arrow.DataType { return ts[r.IntN(len(ts))] }
	lit, rit := pick(arrow.PrimitiveTypes.Int64, arrow.PrimitiveTypes.Int32), pick(arrow.PrimitiveTypes.Int64, arrow.PrimitiveTypes.Int8)
	lst, rst := pick(arrow.BinaryTypes.String, dictI16), pick(arrow.BinaryTypes.String, dictI16, arrow.BinaryTypes.LargeString)
	c := joinCase{
		left:  []tcol{{"a", lit, intKey(nl, lit)}, {"s", lst, strKey(nl)}, {"lv", arrow.BinaryTypes.String, payload(nl, "l")}},
		right: []tcol{{"b", rit, intKey(nr, rit)}, {"t", rst, strKey(nr)}, {"rv", dictI16, payload(nr, "r")}},
	}
	switch r.IntN(3) {
	case 0:
		c.on = []planner.JoinOn{{Left: "a", Right: "b"}}
	case 1:
		c.on = []planner.JoinOn{{Left: "s", Right: "t"}}
	default:
		c.on = []planner.JoinOn{{Left: "a", Right: "b"}, {Left: "s", Right: "t"}}
	}
	return c
}

// refJoin is the nested-loop reference join of rows (left columns, then
// right columns unless semi/anti).
func refJoin(c joinCase, typ planner.JoinType) [][]any {
	nl, nr := len(c.left[0].vals), len(c.right[0].vals)
	col := func(cols []tcol, name string) []any {
		for _, x := range cols {
			if x.name == name {
				return x.vals
			}
		}
		panic(name)
	}
	match := func(i, j int) bool {
		for _, on := range c.on {
			a, b := col(c.left, on.Left)[i], col(c.right, on.Right)[j]
			if a == nil || b == nil || a != b {
				return false
			}
		}
		return true
	}
	row := func(i, j int) []any {
		var out []any
		for _, x := range c.left {
			if i < 0 {
				out = append(out, nil)
			} else {
				out = append(out, x.vals[i])
			}
		}
		if typ == planner.JoinSemi || typ == planner.JoinAnti {
			return out
		}
		for _, x := range c.right {
			if j < 0 {
				out = append(out, nil)
			} else {
				out = append(out, x.vals[j])
			}
		}
		return out
	}
	var out [][]any
	rightMatched := make([]bool, nr)
	for i := range nl {
		any := false
		for j := range nr {
			if (typ == planner.JoinCross || match(i, j)) && (c.where == nil || c.where(i, j)) {
				any = true
				rightMatched[j] = true
				if typ != planner.JoinSemi && typ != planner.JoinAnti {
					out = append(out, row(i, j))
				}
			}
		}
		switch {
		case typ == planner.JoinSemi && any, typ == planner.JoinAnti && !any:
			out = append(out, row(i, -1))
		case !any && (typ == planner.JoinLeft || typ == planner.JoinFull):
			out = append(out, row(i, -1))
		}
	}
	if typ == planner.JoinRight || typ == planner.JoinFull {
		for j := range nr {
			if !rightMatched[j] {
				out = append(out, row(-1, j))
			}
		}
	}
	return out
}

func sortRows(rows [][]any) [][]any {
	keys := make(map[*any]string, len(rows))
	for _, r := range rows {
		if len(r) > 0 {
			keys[&r[0]] = fmt.Sprint(r...)
		}
	}
	slices.SortFunc(rows, func(a, b []any) int {
		if len(a) == 0 || len(b) == 0 {
			return len(a) - len(b)
		}
		return strings.Compare(keys[&a[0]], keys[&b[0]])
	})
	return rows
}

// joinPlan plans spec (whose first join is over the right table "r") over
// the left table "l" with the planner, and optimizes it.
func planJoin(t testing.TB, spec planner.Spec, left, right *arrow.Schema, lrows, rrows int64) planner.Node {
	t.Helper()
	in := planner.Input{Dataset: "l", Schema: left, RowCount: lrows,
		Joins: []planner.Input{{Dataset: "r", Schema: right, RowCount: rrows}}}
	plan, err := planner.Build(spec, in)
	if err != nil {
		t.Fatalf("build: %v", err)
	}
	if plan, err = planner.Optimize(plan, planner.OptimizeOptions{}); err != nil {
		t.Fatalf("optimize: %v", err)
	}
	return plan
}

func runJoinCase(t *testing.T, r *rand.Rand, iter int, spill bool, dir string) {
	c := randJoinCase(r, 60)
	if spill {
		c = randJoinCase(r, 1200)
	}
	typ := planner.JoinTypes[r.IntN(len(planner.JoinTypes))]
	on := c.on
	if typ == planner.JoinCross {
		on = nil
		if spill {
			typ = planner.JoinInner
			on = c.on
		}
	}
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	ls, rs := newSource(mem, c.left), newSource(mem, c.right)
	defer ls.release()
	defer rs.release()
	spec := planner.Spec{Join: []planner.JoinSpec{{Dataset: "r", As: "r", On: on, Type: typ}}}
	plan := planJoin(t, spec, ls.schema, rs.schema, int64(len(c.left[0].vals)), int64(len(c.right[0].vals)))
	opts := Options{Alloc: mem, BatchSize: 1 + r.IntN(50), Sources: map[string]catalog.Source{"r": rs}, joinBuild: r.IntN(3), SpillDir: dir}
	if spill {
		opts.BatchSize = 256
		opts.MemoryLimit = 64 << 10
	}
	got, err := run(t, plan, ls, opts)
	if err != nil {
		t.Fatalf("iter %d (%s join, build %d): %v\nplan:\n%s", iter, typ, opts.joinBuild, err, planner.String(plan))
	}
	want := refJoin(c, typ)
	if !rowsEq(sortRows(got), sortRows(want)) {
		t.Fatalf("iter %d (%s join on %v, build %d, batch %d): got %d rows, want %d\ngot  %v\nwant %v\nleft %v\nright %v",
			iter, typ, on, opts.joinBuild, opts.BatchSize, len(got), len(want), head(got), head(want), c.left, c.right)
	}
}

func head(rows [][]any) [][]any { return rows[:min(len(rows), 20)] }

func TestJoinDiff(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 11))
	dir := t.TempDir()
	for iter := range 400 {
		runJoinCase(t, r, iter, false, dir)
	}
}

func TestJoinSpillDiff(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 5))
	dir := t.TempDir()
	before := graceSpills.Load()
	for iter := range 8 {
		runJoinCase(t, r, iter, true, dir)
	}
	if graceSpills.Load()-before < 4 {
		t.Fatalf("only %d of 8 joins spilled", graceSpills.Load()-before)
	}
}

// TestJoinSpills checks that a build side over the budget really goes to
// disk (and that the files are gone afterwards) and still gives the
// in-memory answer.
func TestJoinSpills(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	n := 20000
	lk, rk, rv := make([]any, n), make([]any, n), make([]any, n)
	for i := range n {
		lk[i], rk[i], rv[i] = int64(i%5000), int64(i), fmt.Sprintf("value-%d", i)
	}
	ls := newSource(mem, []tcol{{"a", arrow.PrimitiveTypes.Int64, lk}})
	rs := newSource(mem, []tcol{{"b", arrow.PrimitiveTypes.Int64, rk}, {"v", arrow.BinaryTypes.String, rv}})
	defer ls.release()
	defer rs.release()
	spec := planner.Spec{Join: []planner.JoinSpec{{Dataset: "r", As: "r", On: []planner.JoinOn{{Left: "a", Right: "b"}}}}}
	plan := planJoin(t, spec, ls.schema, rs.schema, int64(n), int64(n))
	dir := t.TempDir()
	var spilled atomic.Int64
	count := func(limit int64) (int, error) {
		rr, err := Execute(context.Background(), plan, ls, Options{Alloc: mem, BatchSize: 1024, MemoryLimit: limit,
			Sources: map[string]catalog.Source{"r": rs}, SpillDir: dir, joinBuild: buildRight, Spilled: &spilled})
		if err != nil {
			return 0, err
		}
		defer rr.Release()
		rows := 0
		for rr.Next() {
			b := rr.RecordBatch()
			for i := range int(b.NumRows()) {
				if cell(b.Column(0), i) != cell(b.Column(1), i) {
					t.Fatalf("row %d: key %v joined to %v", i, cell(b.Column(0), i), cell(b.Column(1), i))
				}
			}
			rows += int(b.NumRows())
			if rows == 1024 { // mid-join: the partition files exist
				if ents, _ := os.ReadDir(dir); len(ents) == 0 {
					t.Errorf("no spill directory while spilling")
				}
			}
		}
		return rows, rr.Err()
	}
	got, err := count(256 << 10)
	if err != nil {
		t.Fatal(err)
	}
	if got != n {
		t.Fatalf("spilled join: %d rows, want %d", got, n)
	}
	if spilled.Load() < int64(n)*8 { // at least the build side's keys went to disk
		t.Fatalf("Options.Spilled counted %d bytes", spilled.Load())
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Fatalf("spill files left behind: %v", ents)
	}
	// A cross join cannot be partitioned: over the budget it fails cleanly.
	cross := planner.Spec{Join: []planner.JoinSpec{{Dataset: "r", As: "r", Type: planner.JoinCross}}}
	plan = planJoin(t, cross, ls.schema, rs.schema, int64(n), int64(n))
	if _, err := count(64 << 10); qerr.Code(err) != qerr.CodeResourceExhausted {
		t.Fatalf("cross join over the budget: %v, want resource_exhausted", err)
	}
}

// TestJoinEarlyRelease: a join released mid-stream (in memory and while
// spilled) frees every byte and removes its spill files.
func TestJoinEarlyRelease(t *testing.T) {
	for _, limit := range []int64{0, 256 << 10} {
		mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
		n := 20000
		lk, rk, rs := make([]any, n), make([]any, n), make([]any, n)
		for i := range n {
			lk[i], rk[i], rs[i] = int64(i%100), int64(i%5000), fmt.Sprintf("s%d", i%300)
		}
		ls := newSource(mem, []tcol{{"a", arrow.PrimitiveTypes.Int64, lk}})
		// a dictionary-encoded payload travels through the spill files
		rsrc := newSource(mem, []tcol{{"b", arrow.PrimitiveTypes.Int64, rk}, {"s", dictI16, rs}})
		spec := planner.Spec{Join: []planner.JoinSpec{{Dataset: "r", As: "r", Type: planner.JoinFull, On: []planner.JoinOn{{Left: "a", Right: "b"}}}}}
		plan := planJoin(t, spec, ls.schema, rsrc.schema, int64(n), int64(n))
		dir := t.TempDir()
		spills := graceSpills.Load()
		rr, err := Execute(context.Background(), plan, ls, Options{Alloc: mem, BatchSize: 512, MemoryLimit: limit,
			Sources: map[string]catalog.Source{"r": rsrc}, SpillDir: dir, joinBuild: buildRight})
		if err != nil {
			t.Fatal(err)
		}
		if !rr.Next() {
			t.Fatalf("limit %d: no first batch: %v", limit, rr.Err())
		}
		if spilled := graceSpills.Load() > spills; spilled != (limit > 0) {
			t.Errorf("limit %d: spilled %v", limit, spilled)
		}
		rr.Release()
		if ents, _ := os.ReadDir(dir); len(ents) != 0 {
			t.Errorf("limit %d: spill files left: %v", limit, ents)
		}
		ls.release()
		rsrc.release()
		mem.AssertSize(t, 0)
	}
}
