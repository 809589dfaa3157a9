package engine

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/quarrydb/quarry/catalog"
	"github.com/quarrydb/quarry/internal/qerr"
	"github.com/quarrydb/quarry/planner"
)

// Differential tests of joins with a residual condition (join[].where)
// against the nested-loop reference: every join type, with keys and
// without (pure inequality joins), both build sides, SQL three-valued
// logic (a null condition does not match), in memory and spilled.

type residualCase struct {
	text string
	// pred is the condition over row i of left and row j of right.
	pred func(c joinCase) func(i, j int) bool
}

func colVals(cols []tcol, name string) []any {
	for _, x := range cols {
		if x.name == name {
			return x.vals
		}
	}
	panic(name)
}

var residualCases = []residualCase{
	{"a < r.b + 2", func(c joinCase) func(i, j int) bool {
		a, b := colVals(c.left, "a"), colVals(c.right, "b")
		return func(i, j int) bool { return a[i] != nil && b[j] != nil && a[i].(int64) < b[j].(int64)+2 }
	}},
	{"s <> r.t OR r.rv IS NULL", func(c joinCase) func(i, j int) bool {
		s, t, rv := colVals(c.left, "s"), colVals(c.right, "t"), colVals(c.right, "rv")
		return func(i, j int) bool { return rv[j] == nil || s[i] != nil && t[j] != nil && s[i] != t[j] }
	}},
	{"coalesce(a, 0) * 2 >= coalesce(r.b, 1)", func(c joinCase) func(i, j int) bool {
		a, b := colVals(c.left, "a"), colVals(c.right, "b")
		or := func(v any, d int64) int64 {
			if v == nil {
				return d
			}
			return v.(int64)
		}
		return func(i, j int) bool { return or(a[i], 0)*2 >= or(b[j], 1) }
	}},
	{"lv IS NOT NULL AND r.rv LIKE 'r1%'", func(c joinCase) func(i, j int) bool {
		lv, rv := colVals(c.left, "lv"), colVals(c.right, "rv")
		return func(i, j int) bool { return lv[i] != nil && rv[j] != nil && strings.HasPrefix(rv[j].(string), "r1") }
	}},
}

func runResidualCase(t *testing.T, r *rand.Rand, iter int, spill bool, dir string) {
	c := randJoinCase(r, 40)
	if spill {
		c = randJoinCase(r, 1200)
	}
	typ := planner.JoinTypes[r.IntN(len(planner.JoinTypes))]
	rc := residualCases[r.IntN(len(residualCases))]
	on := c.on
	if typ == planner.JoinCross || !spill && r.IntN(3) == 0 {
		on = nil
	}
	if spill && typ == planner.JoinCross {
		typ, on = planner.JoinLeft, c.on
	}
	c.where = rc.pred(c)
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	ls, rs := newSource(mem, c.left), newSource(mem, c.right)
	defer ls.release()
	defer rs.release()
	spec := planner.Spec{Join: []planner.JoinSpec{{Dataset: "r", As: "r", On: on, Type: typ, Where: rc.text}}}
	if r.IntN(2) == 0 {
		spec.Columns = []string{"lv", "a"} // projection pushdown keeps the residual's columns
		if typ.KeepsRight() {
			spec.Columns = append(spec.Columns, "r.t")
		}
	}
	plan := planJoin(t, spec, ls.schema, rs.schema, int64(len(c.left[0].vals)), int64(len(c.right[0].vals)))
	opts := Options{Alloc: mem, BatchSize: 1 + r.IntN(30), Sources: map[string]catalog.Source{"r": rs}, joinBuild: r.IntN(3), SpillDir: dir}
	if spill {
		opts.BatchSize, opts.MemoryLimit = 256, 64<<10
	}
	got, err := run(t, plan, ls, opts)
	if err != nil {
		t.Fatalf("iter %d (%s join where %s, build %d): %v\nplan:\n%s", iter, typ, rc.text, opts.joinBuild, err, planner.String(plan))
	}
	c.on = on
	want := refJoin(c, typ)
	if spec.Columns != nil {
		want = pickColumns(want, c, typ, spec.Columns)
	}
	if !rowsEq(sortRows(got), sortRows(want)) {
		t.Fatalf("iter %d (%s join on %v where %s, build %d, batch %d): got %d rows, want %d\ngot  %v\nwant %v\nplan:\n%s",
			iter, typ, on, rc.text, opts.joinBuild, opts.BatchSize, len(got), len(want), head(got), head(want), planner.String(plan))
	}
}

// pickColumns projects reference rows (left columns, then right columns)
// to cols (left names, or r.name).
func pickColumns(rows [][]any, c joinCase, typ planner.JoinType, cols []string) [][]any {
	var idx []int
	for _, name := range cols {
		for k, x := range c.left {
			if x.name == name {
				idx = append(idx, k)
			}
		}
		for k, x := range c.right {
			if "r."+x.name == name && typ.KeepsRight() {
				idx = append(idx, len(c.left)+k)
			}
		}
	}
	out := make([][]any, len(rows))
	for i, row := range rows {
		for _, k := range idx {
			out[i] = append(out[i], row[k])
		}
	}
	return out
}

func TestJoinResidualDiff(t *testing.T) {
	r := rand.New(rand.NewPCG(23, 29))
	dir := t.TempDir()
	for iter := range 400 {
		runResidualCase(t, r, iter, false, dir)
	}
}

func TestJoinResidualSpillDiff(t *testing.T) {
	r := rand.New(rand.NewPCG(31, 37))
	dir := t.TempDir()
	before := graceSpills.Load()
	for iter := range 6 {
		runResidualCase(t, r, iter, true, dir)
	}
	if graceSpills.Load() == before {
		t.Fatal("no join with a residual spilled")
	}
}

// TestJoinResidualPlan: the residual shows in the plan, validation errors
// are structured, and a keyless join over the budget fails cleanly.
func TestJoinResidualPlan(t *testing.T) {
	left := arrow.NewSchema([]arrow.Field{{Name: "ts", Type: arrow.PrimitiveTypes.Int64}, {Name: "x", Type: arrow.BinaryTypes.String}}, nil)
	right := arrow.NewSchema([]arrow.Field{{Name: "lo", Type: arrow.PrimitiveTypes.Int32}, {Name: "hi", Type: arrow.PrimitiveTypes.Int32}, {Name: "name", Type: arrow.BinaryTypes.String}}, nil)
	spec := planner.Spec{Columns: []string{"x", "r.name"}, Join: []planner.JoinSpec{{Dataset: "r", As: "r", Type: planner.JoinLeft, Where: "ts >= r.lo AND ts < r.hi"}}}
	plan := planJoin(t, spec, left, right, 10, 10)
	want := "Project: x, r.name\n  Join: left r AS r WHERE ts >= r.lo AND ts < r.hi\n    Scan: l\n    Scan: r\n"
	if got := planner.String(plan); got != want {
		t.Fatalf("plan:\n%s\nwant:\n%s", got, want)
	}
	in := planner.Input{Dataset: "l", Schema: left, Joins: []planner.Input{{Dataset: "r", Schema: right}}}
	for _, bad := range []struct {
		where, code, field string
	}{
		{"ts + r.lo", qerr.CodeInvalidFilter, "join[0].where"},
		{"ts > r.nope", qerr.CodeInvalidColumn, "join[0].where"},
		{"ts > ", qerr.CodeInvalidArgument, "join[0].where"},
	} {
		_, err := planner.Build(planner.Spec{Join: []planner.JoinSpec{{Dataset: "r", Where: bad.where}}}, in)
		if e := qerr.As(err); e == nil || e.Code != bad.code || e.Diagnostics["field"] != bad.field {
			t.Errorf("where %q: %v, want %s at %s", bad.where, err, bad.code, bad.field)
		}
	}
	// A pure inequality join over the budget: resource_exhausted, nothing left allocated.
	mem := newAlloc()
	defer mem.AssertSize(t, 0)
	n := 20000
	ks := make([]any, n)
	for i := range ks {
		ks[i] = int64(i)
	}
	ls := newSource(mem, []tcol{{"a", arrow.PrimitiveTypes.Int64, ks}})
	rs := newSource(mem, []tcol{{"b", arrow.PrimitiveTypes.Int64, ks}})
	defer ls.release()
	defer rs.release()
	plan = planJoin(t, planner.Spec{Join: []planner.JoinSpec{{Dataset: "r", As: "r", Where: "a < r.b"}}}, ls.schema, rs.schema, int64(n), int64(n))
	_, err := run(t, plan, ls, Options{Alloc: mem, BatchSize: 1024, MemoryLimit: 64 << 10, Sources: map[string]catalog.Source{"r": rs}, joinBuild: buildRight})
	if qerr.Code(err) != qerr.CodeResourceExhausted {
		t.Fatalf("keyless join over the budget: %v", err)
	}
}
