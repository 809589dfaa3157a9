package engine

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/quarrydb/quarry/planner"
)

// TestCompareFast evaluates comparisons, IN, BETWEEN, LIKE and AND / OR / NOT through the
// vectorized path (compute_cmp.go, compute_like.go) and through the registry's general
// kernels (evaluator.noFast) over random columns with nulls, NaN, -0,
// duplicate strings and dictionary encoding, and checks that the answers
// are equal cell by cell and that the fast path really ran (no general
// kernel was prepared for the call).
func TestCompareFast(t *testing.T) {
	r := rand.New(rand.NewPCG(14, 3))
	n := 300
	maybe := func(v any) any {
		if r.IntN(9) == 0 {
			return nil
		}
		return v
	}
	col := func(f func() any) []any {
		out := make([]any, n)
		for i := range out {
			out[i] = maybe(f())
		}
		return out
	}
	floats := []float64{0, math.Copysign(0, -1), 1.5, -2, math.NaN(), math.Inf(1), 3}
	strs := []string{"", "a", "ab", "b", "É", "ab\x00", "B"}
	cols := []tcol{
		{"i", arrow.PrimitiveTypes.Int64, col(func() any { return int64(r.IntN(7) - 3) })},
		{"j", arrow.PrimitiveTypes.Int32, col(func() any { return int64(r.IntN(7) - 3) })},
		{"f", arrow.PrimitiveTypes.Float64, col(func() any { return floats[r.IntN(len(floats))] })},
		{"g", arrow.PrimitiveTypes.Float64, col(func() any { return floats[r.IntN(len(floats))] })},
		{"s", arrow.BinaryTypes.String, col(func() any { return strs[r.IntN(len(strs))] })},
		{"ds", dictI16, col(func() any { return strs[r.IntN(len(strs))] })},
		{"ls", arrow.BinaryTypes.LargeString, col(func() any { return strs[r.IntN(len(strs))] })},
		{"d", arrow.FixedWidthTypes.Date32, col(func() any { return int32(r.IntN(5)) })},
		{"e", arrow.FixedWidthTypes.Date32, col(func() any { return int32(r.IntN(5)) })},
		{"ts", &arrow.TimestampType{Unit: arrow.Microsecond}, col(func() any { return int64(r.IntN(5)) })},
		{"tu", &arrow.TimestampType{Unit: arrow.Microsecond}, col(func() any { return int64(r.IntN(5)) })},
		{"b1", arrow.FixedWidthTypes.Boolean, col(func() any { return r.IntN(2) == 0 })},
		{"b2", arrow.FixedWidthTypes.Boolean, col(func() any { return r.IntN(2) == 0 })},
	}
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	batch := makeBatch(mem, cols)
	defer batch.Release()
	in := scanOf(batch.Schema())
	for _, text := range []string{
		"i < j", "i = 2", "2 > i", "i != j", "i >= -1", "j <= 1",
		"f <= g", "f != 0.0", "f = -0.0", "f > g", "0.5 < f", "f >= g", "i < f",
		"s = 'ab'", "'ab' < s", "s != 'b'", "s <= ds", "ds = 'ab'", "ds != 'É'", "'b' > ds", "ds >= ds",
		"ls = 'a'", "ls < s", "d < e", "d = e", "d >= e", "ts < tu", "ts = tu",
		"b1 AND b2", "b1 OR b2", "NOT b1", "(i < 2) AND (s = 'a')", "(f > g) OR (ds = 'b')",
		"NOT (d <= e)", "(b1 OR i > 0) AND NOT (ds < s)",
		"i IN (1, 2)", "s IN ('a', 'b')", "ds IN ('ab', 'É', 'zz')", "f IN (0.0, 1.5)", "s NOT IN ('a', '')",
		"i BETWEEN 0 AND 1", "ds BETWEEN 'a' AND 'b'", "f BETWEEN 0.0 AND 1.5", "f BETWEEN -2.0 AND 0.0", "s NOT BETWEEN 'a' AND 'ab'",
		// LIKE / ILIKE with a literal pattern (compute_like.go): substring search, regular expression, dictionary
		"s LIKE '%b%'", "s LIKE 'a%'", "ds LIKE '%b'", "ls LIKE 'a%b%'", "s NOT LIKE '%a%b%'", "s LIKE 'a_'", "ds LIKE '_'",
		"s ILIKE 'b%'", "ds ILIKE '%é'", "ls LIKE ''", "(s LIKE 'a%') OR (ds LIKE '%b')",
	} {
		folded, err := planner.FoldConstants(computeOf(in, text), planner.OptimizeOptions{}) // -1 is a literal, as in optimized plans
		if err != nil {
			t.Fatal(err)
		}
		e := folded.(*planner.Compute).Exprs[0].Expr
		var got [2][]any
		var kernels [2]int
		for k, noFast := range []bool{false, true} {
			ev := &evaluator{mem: mem, name: text, noFast: noFast}
			ev.pool.acct = &acct{b: &budget{}}
			v, err := ev.eval(e, batch.Columns(), int(batch.NumRows()))
			if err != nil {
				t.Fatalf("%s (noFast %v): %v", text, noFast, err)
			}
			if v.arr == nil || v.arr.DataType().ID() != arrow.BOOL {
				t.Fatalf("%s: not a boolean array", text)
			}
			for i := range n {
				got[k] = append(got[k], cell(v.arr, i))
			}
			for x := range ev.kernels {
				if c, ok := x.(*planner.Call); ok {
					if _, isCmp := cmpOps[c.Fn]; isCmp || slices.Contains([]string{"and", "or", "not", "in", "between", "like", "ilike"}, c.Fn) {
						kernels[k]++
					}
				}
			}
			ev.reset()
		}
		for i := range n {
			if got[0][i] != got[1][i] {
				t.Errorf("%s, row %d: fast %v, kernels %v", text, i, got[0][i], got[1][i])
				break
			}
		}
		if kernels[0] != 0 || kernels[1] == 0 {
			t.Errorf("%s: %d comparison or logic kernels prepared on the fast path, %d on the general one", text, kernels[0], kernels[1])
		}
	}
}
