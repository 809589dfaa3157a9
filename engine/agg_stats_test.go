package engine

import (
	"fmt"
	"math"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/quarrydb/quarry/internal/funcs"
)

// covState over integer columns adds exact sums while they provably fit
// (covExact) and turns online when a batch or a merge would not: every
// function's result matches the 256-bit two-pass reference either way,
// groups without a pair of non-null values are null, and the mode after
// the batches and merges is the one the bound implies.
func TestCovStateExact(t *testing.T) {
	type batch struct {
		y, x []any // int64 or nil
		g    []int32
	}
	small := func(n, groups int, seed int64) batch {
		var b batch
		for i := range n {
			v := (int64(i)*7919 + seed) % 1000
			b.y = append(b.y, v%15-3)
			b.x = append(b.x, (v*31)%5+1)
			b.g = append(b.g, int32(i%groups))
		}
		return b
	}
	withNulls := func(b batch) batch {
		for i := range b.y {
			switch i % 7 {
			case 0:
				b.y[i] = nil
			case 3:
				b.x[i] = nil
			}
		}
		return b
	}
	big := batch{y: []any{int64(3) << 40, int64(-5) << 40, int64(1)}, x: []any{int64(7), int64(1) << 33, int64(-2)}, g: []int32{9, 9, 9}} // a group of its own (10 groups)
	extreme := batch{y: []any{int64(math.MinInt64), int64(math.MaxInt64)}, x: []any{int64(1), int64(-1)}, g: []int32{1, 1}}
	for _, c := range []struct {
		name    string
		groups  int
		a, b    []batch // b: a second state merged into the first (nil: none)
		online  bool    // the merged state is online at the end
		onlineB bool    // the second state is online before the merge
	}{
		{name: "one group", groups: 1, a: []batch{small(500, 1, 1), small(300, 1, 2)}},
		{name: "many groups", groups: 97, a: []batch{small(3000, 97, 3)}},
		{name: "nulls and an empty group", groups: 4, a: []batch{withNulls(small(200, 3, 4))}},
		{name: "too large: online from the first batch", groups: 10, a: []batch{big}, online: true},
		{name: "too large after exact batches", groups: 10, a: []batch{small(100, 3, 5), big, small(50, 3, 6)}, online: true},
		{name: "extremes", groups: 2, a: []batch{small(20, 2, 7), extreme}, online: true},
		{name: "merge exact into exact", groups: 5, a: []batch{small(400, 5, 8)}, b: []batch{withNulls(small(300, 4, 9))}},
		{name: "merge online into exact", groups: 10, a: []batch{small(100, 3, 10)}, b: []batch{small(30, 3, 11), big}, online: true, onlineB: true},
		{name: "merge exact into online", groups: 10, a: []batch{big, small(100, 3, 12)}, b: []batch{small(40, 2, 13)}, online: true},
	} {
		t.Run(c.name, func(t *testing.T) {
			mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
			defer mem.AssertSize(t, 0)
			fns := []funcs.AggFn{funcs.AggCovarSamp, funcs.AggCovarPop, funcs.AggCorr, funcs.AggRegrSlope, funcs.AggRegrIntercept, funcs.AggRegrR2}
			for _, fn := range fns {
				a := &acct{b: &budget{}}
				feed := func(bs []batch) *covState {
					s := newCovState(fn, tInt64, tInt64, a).(*covState)
					s.grow(c.groups)
					for _, b := range bs {
						ya, xa := int64Array(mem, b.y), int64Array(mem, b.x)
						if err := s.update2(ya, xa, b.g); err != nil {
							t.Fatal(err)
						}
						ya.Release()
						xa.Release()
					}
					return s
				}
				s := feed(c.a)
				all := append([]batch(nil), c.a...)
				if c.b != nil {
					o := feed(c.b)
					if (o.ex == nil) != c.onlineB {
						t.Fatalf("%s: second state online %v, want %v", fn, o.ex == nil, c.onlineB)
					}
					dst := make([]int32, c.groups)
					for g := range dst {
						dst[g] = int32(g)
					}
					if err := s.merge(o, dst); err != nil {
						t.Fatal(err)
					}
					all = append(all, c.b...)
				}
				if (s.ex == nil) != c.online {
					t.Fatalf("%s: online %v, want %v", fn, s.ex == nil, c.online)
				}
				got := s.build(mem, 0, c.groups)
				for g := range c.groups {
					var ys, xs []float64
					for _, b := range all {
						for i, bg := range b.g {
							if int(bg) == g && b.y[i] != nil && b.x[i] != nil {
								ys, xs = append(ys, float64(b.y[i].(int64))), append(xs, float64(b.x[i].(int64)))
							}
						}
					}
					want := refCov(fn, xs, ys)
					var have any
					if got.IsValid(g) {
						have = got.(*array.Float64).Value(g)
					}
					if !cellClose(have, want) {
						t.Errorf("%s group %d: got %v, want %v", fn, g, have, want)
					}
				}
				got.Release()
			}
		})
	}
}

// refCov is covState's function fn of the pairs (xs[i], ys[i]) from the
// 256-bit reference moments (nil for a null result).
func refCov(fn funcs.AggFn, xs, ys []float64) any {
	n, mx, my, sxx, syy, sxy := refMoments(xs, ys)
	if n == 0 {
		return nil
	}
	cov, vx, vy := sxy/n, sxx/n, syy/n
	switch fn {
	case funcs.AggCovarPop:
		return cov
	case funcs.AggCovarSamp:
		if n < 2 {
			return nil
		}
		return sxy / (n - 1)
	case funcs.AggCorr:
		return cov / (math.Sqrt(vx) * math.Sqrt(vy))
	case funcs.AggRegrSlope:
		return cov / vx
	case funcs.AggRegrIntercept:
		slope := cov / vx
		if math.IsNaN(slope) || math.IsInf(slope, 0) {
			return nil
		}
		return my - slope*mx
	case funcs.AggRegrR2:
		switch {
		case vx == 0:
			return nil
		case vy == 0:
			return 1.0
		}
		return cov * cov / (vx * vy)
	}
	panic(fmt.Sprint(fn))
}

func int64Array(mem memory.Allocator, vs []any) arrow.Array {
	b := array.NewInt64Builder(mem)
	defer b.Release()
	for _, v := range vs {
		if v == nil {
			b.AppendNull()
		} else {
			b.Append(v.(int64))
		}
	}
	return b.NewArray()
}

// The 128-bit helpers of covSums.moments: products and differences beyond
// int64, and the rounding to float64 of values around ±2^63 and ±2^64.
func TestI128(t *testing.T) {
	for _, c := range []struct {
		a, b, c, d int64 // a·b − c·d
		want       float64
	}{
		{3, 4, 2, 5, 2},
		{-3, 4, 2, 5, -22},
		{math.MaxInt64, 2, 0, 0, 2 * float64(math.MaxInt64)},
		{math.MinInt64, 2, 0, 0, -0x1p64},
		{math.MinInt64, math.MinInt64, 0, 0, 0x1p126},
		{1 << 40, 1 << 40, (1 << 40) - 1, (1 << 40) + 1, 1},
		{0, 0, 1 << 62, 4, -0x1p64},
		{0, 0, -5, 1, 5},
		{0, 0, 5, 1, -5},
	} {
		got := i128Float(i128Sub(i128Mul(c.a, c.b), i128Mul(c.c, c.d)))
		if got != c.want {
			t.Errorf("%d·%d − %d·%d = %v, want %v", c.a, c.b, c.c, c.d, got, c.want)
		}
	}
}
