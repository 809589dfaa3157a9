package engine

import (
	"math/rand/v2"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/quarrydb/quarry/catalog"
	"github.com/quarrydb/quarry/planner"
)

// The one-number-key lookups of the hash join (join_probe.go): which one a
// build side gets, and the join's answers with each of them against the
// nested-loop reference (refJoin), every join type and both build sides.

// oneKeyMode names the lookup index gives a build side of these keys (nil: null).
func oneKeyMode(t *testing.T, keys []any) string {
	t.Helper()
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	b := makeBatch(mem, []tcol{{"k", arrow.PrimitiveTypes.Int64, keys}})
	var bs buildSide
	var scratch keyVals
	bs.setKeys(b.Schema(), []int{0})
	bs.add(b, []int{0}, &scratch)
	size, filt := bs.plan()
	bs.index(size, filt, false)
	defer bs.release()
	switch {
	case !bs.oneBits:
		return "none"
	case bs.dense && bs.unique:
		return "dense unique"
	case bs.dense:
		return "dense"
	case bs.filt != nil:
		return "filter"
	}
	return "hash"
}

func TestJoinOneKeyModes(t *testing.T) {
	seq := func(n int, f func(i int) any) []any {
		out := make([]any, n)
		for i := range out {
			out[i] = f(i)
		}
		return out
	}
	for _, c := range []struct {
		name string
		keys []any
		want string
	}{
		{"primary keys 1..N", seq(1000, func(i int) any { return int64(i + 1) }), "dense unique"},
		{"sparse order keys (8 of 32)", seq(1000, func(i int) any { return int64(i/8*32 + i%8 + 1) }), "dense unique"},
		{"unique keys and nulls", seq(1000, func(i int) any {
			if i%7 == 0 {
				return nil
			}
			return int64(1000 - i)
		}), "dense unique"},
		{"one duplicate", seq(1000, func(i int) any { return int64(max(i, 1)) }), "dense"},
		{"duplicates and nulls", seq(1000, func(i int) any {
			if i%7 == 0 {
				return nil
			}
			return int64(i % 10)
		}), "dense"},
		{"all null", []any{nil, nil}, "dense unique"},
		{"filtered dimension (189 of 200,000)", seq(189, func(i int) any { return int64(i*1051 + 17) }), "filter"},
		{"negative and positive", seq(100, func(i int) any { return int64(i - 50) }), "hash"},
		{"wide range", seq(100, func(i int) any { return int64(i) << 40 }), "hash"},
	} {
		if got := oneKeyMode(t, c.keys); got != c.want {
			t.Errorf("%s: lookup %s, want %s", c.name, got, c.want)
		}
	}
}

// TestJoinOneKeyDiff joins tables on one number key whose build side gets
// each lookup (dense, dense with unique keys, filter, hash; integer widths
// and floats mixed) and compares every join type with the reference.
func TestJoinOneKeyDiff(t *testing.T) {
	r := rand.New(rand.NewPCG(14, 17))
	keyOf := map[string]func(int) int64{
		"dense":  func(v int) int64 { return int64(v) },
		"filter": func(v int) int64 { return int64(v) * 997 },
		"hash":   func(v int) int64 { return int64(v-20) << 33 },
	}
	for iter := range 400 {
		mode := []string{"dense", "filter", "hash", "unique"}[iter%4]
		nl, nr := r.IntN(200), r.IntN(60)
		card := 1 + r.IntN(80)
		keys := func(n int, typ arrow.DataType) []any {
			vs := make([]any, n)
			distinct := r.Perm(n + r.IntN(n+1)) // unique: each side's keys distinct, the sides overlapping
			for i := range vs {
				if r.IntN(12) == 0 {
					continue
				}
				var k int64
				if mode == "unique" {
					k = int64(distinct[i])
				} else {
					k = keyOf[mode](r.IntN(card))
				}
				if typ.ID() == arrow.INT32 {
					k = int64(int32(k))
				}
				if typ.ID() == arrow.FLOAT64 {
					vs[i] = float64(k)
				} else {
					vs[i] = k
				}
			}
			return vs
		}
		lt, rt := arrow.DataType(arrow.PrimitiveTypes.Int64), arrow.DataType(arrow.PrimitiveTypes.Int64)
		switch r.IntN(4) {
		case 0:
			lt = arrow.PrimitiveTypes.Int32
		case 1:
			lt, rt = arrow.PrimitiveTypes.Float64, arrow.PrimitiveTypes.Float64
		}
		payload := func(n int) []any {
			vs := make([]any, n)
			for i := range vs {
				vs[i] = int64(i)
			}
			return vs
		}
		c := joinCase{
			left:  []tcol{{"a", lt, keys(nl, lt)}, {"lv", arrow.PrimitiveTypes.Int64, payload(nl)}},
			right: []tcol{{"b", rt, keys(nr, rt)}, {"rv", arrow.PrimitiveTypes.Int64, payload(nr)}},
			on:    []planner.JoinOn{{Left: "a", Right: "b"}},
		}
		for _, typ := range planner.JoinTypes {
			if typ == planner.JoinCross {
				continue
			}
			mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
			ls, rs := newSource(mem, c.left), newSource(mem, c.right)
			spec := planner.Spec{Join: []planner.JoinSpec{{Dataset: "r", As: "r", On: c.on, Type: typ}}}
			plan := planJoin(t, spec, ls.schema, rs.schema, int64(nl), int64(nr))
			opts := Options{Alloc: mem, BatchSize: 1 + r.IntN(70), Sources: map[string]catalog.Source{"r": rs}, joinBuild: 1 + r.IntN(2)}
			got, err := run(t, plan, ls, opts)
			if err != nil {
				t.Fatalf("iter %d (%s, %s join, build %d): %v", iter, mode, typ, opts.joinBuild, err)
			}
			if want := refJoin(c, typ); !rowsEq(sortRows(got), sortRows(want)) {
				t.Fatalf("iter %d (%s, %s join, %s = %s, build %d, batch %d): got %d rows, want %d\ngot  %v\nwant %v",
					iter, mode, typ, lt, rt, opts.joinBuild, opts.BatchSize, len(got), len(want), head(got), head(want))
			}
			ls.release()
			rs.release()
			mem.AssertSize(t, 0)
		}
	}
}
