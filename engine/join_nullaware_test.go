package engine

import (
	"math/rand/v2"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/quarrydb/quarry/catalog"
	"github.com/quarrydb/quarry/planner"
)

// refNotIn is SQL's left rows WHERE x NOT IN (SELECT y FROM right): all
// rows when right is empty; none when some y is null; else the rows with
// a non-null x equal to no y.
func refNotIn(c joinCase) [][]any {
	x, y := colVals(c.left, c.on[0].Left), colVals(c.right, c.on[0].Right)
	var out [][]any
	for i := range x {
		keep := true
		for _, v := range y {
			if v == nil || x[i] == nil || v == x[i] {
				keep = false
			}
		}
		if keep {
			row := make([]any, len(c.left))
			for k, col := range c.left {
				row[k] = col.vals[i]
			}
			out = append(out, row)
		}
	}
	return out
}

// dropNullKeys removes the rows of cols whose column name is null.
func dropNullKeys(cols []tcol, name string) []tcol {
	keys := colVals(cols, name)
	out := make([]tcol, len(cols))
	for k, c := range cols {
		out[k] = tcol{c.name, c.typ, nil}
		for i, v := range c.vals {
			if keys[i] != nil {
				out[k].vals = append(out[k].vals, v)
			}
		}
	}
	return out
}

// TestNullAwareAntiJoin checks the null-aware anti join (SQL NOT IN)
// against refNotIn on random tables (empty sides, null keys on either
// side, right sides without nulls), in memory and spilled.
func TestNullAwareAntiJoin(t *testing.T) {
	r := rand.New(rand.NewPCG(17, 19))
	dir := t.TempDir()
	seen := map[string]bool{}
	spills := graceSpills.Load()
	for iter := range 300 {
		spill := iter%40 == 0
		c := randJoinCase(r, 40)
		if spill {
			c = randJoinCase(r, 1200)
		}
		c.on = c.on[:1]
		if r.IntN(2) == 0 {
			c.right = dropNullKeys(c.right, c.on[0].Right)
		}
		want := refNotIn(c)
		nr, nullsR := len(c.right[0].vals), len(dropNullKeys(c.right, c.on[0].Right)[0].vals) < len(c.right[0].vals)
		switch {
		case nr == 0:
			seen["empty right"] = true
		case nullsR:
			seen["null in right"] = true
		case len(want) > 0:
			seen["rows kept"] = true
		}
		mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
		ls, rs := newSource(mem, c.left), newSource(mem, c.right)
		spec := planner.Spec{Join: []planner.JoinSpec{{Dataset: "r", As: "r", On: c.on, Type: planner.JoinAnti, NullAware: true}}}
		plan := planJoin(t, spec, ls.schema, rs.schema, int64(len(c.left[0].vals)), int64(nr))
		opts := Options{Alloc: mem, BatchSize: 1 + r.IntN(50), Sources: map[string]catalog.Source{"r": rs}, joinBuild: r.IntN(3), SpillDir: dir}
		if spill {
			opts.BatchSize, opts.MemoryLimit = 256, 64<<10
		}
		got, err := run(t, plan, ls, opts)
		if err != nil {
			t.Fatalf("iter %d: %v\n%s", iter, err, planner.String(plan))
		}
		if !rowsEq(sortRows(got), sortRows(want)) {
			t.Fatalf("iter %d (on %v, spill %v): got %d rows, want %d\ngot  %v\nwant %v\nleft %v\nright %v",
				iter, c.on, spill, len(got), len(want), head(got), head(want), c.left, c.right)
		}
		ls.release()
		rs.release()
		mem.AssertSize(t, 0)
	}
	if graceSpills.Load()-spills < 4 {
		t.Errorf("only %d of 8 big joins spilled", graceSpills.Load()-spills)
	}
	for _, k := range []string{"empty right", "null in right", "rows kept"} {
		if !seen[k] {
			t.Errorf("no case with %s", k)
		}
	}
}
