package engine

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"testing"
)

// fitScale accepts exactly the values float64(k)/10^d gives back bit for
// bit, with |k| < 2^31, and nothing else.
func TestFitScale(t *testing.T) {
	tests := []struct {
		x     float64
		scale int // smallest scale that fits (-1: none)
		k     int32
	}{
		{0, 0, 0},
		{math.Copysign(0, -1), -1, 0},
		{1, 0, 1},
		{-7, 0, -7},
		{1.5, 1, 15},
		{0.1, 1, 1},
		{-0.25, 2, -25},
		{12.34, 2, 1234},
		{0.001, 3, 1},
		{123.4567, 4, 1234567},
		{-0.0001, 4, -1},
		{0.00001, -1, 0},
		{1.0 / 3, -1, 0},
		{math.MaxInt32, 0, math.MaxInt32},
		{-math.MaxInt32, 0, -math.MaxInt32},
		{math.MinInt32, -1, 0}, // |k| must be below 2^31
		{1 << 31, -1, 0},
		{214748.3647, 4, math.MaxInt32},
		{214748.3648, -1, 0},
		{1e300, -1, 0},
		{-1e300, -1, 0},
		{5e-324, -1, 0},
		{math.Inf(1), -1, 0},
		{math.Inf(-1), -1, 0},
		{math.NaN(), -1, 0},
		{math.Nextafter(0.1, 1), -1, 0},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprint(tt.x), func(t *testing.T) {
			got := -1
			var k int32
			for d := maxScale; d >= 0; d-- {
				if kd, ok := fitScale(tt.x, d); ok {
					got, k = d, kd
				}
			}
			if got != tt.scale || got >= 0 && k != tt.k {
				t.Fatalf("smallest scale %d (k %d), want %d (k %d)", got, k, tt.scale, tt.k)
			}
			for d := range maxScale + 1 {
				if k, ok := fitScale(tt.x, d); ok && math.Float64bits(float64(k)/pow10[d]) != math.Float64bits(tt.x) {
					t.Fatalf("scale %d: fits as %d, which decodes to other bits", d, k)
				}
			}
		})
	}
}

// A compact value decodes to the same bits as parsing its decimal text,
// and random doubles are accepted only when they decode bit-identically.
func TestFitScaleRoundTrip(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for range 200000 {
		d := r.IntN(maxScale + 1)
		k := int64(r.Int32()) * int64(1-2*r.IntN(2))
		if k == math.MinInt32 {
			continue
		}
		s := strconv.FormatInt(k, 10)
		neg := k < 0
		if neg {
			s = s[1:]
		}
		for len(s) <= d {
			s = "0" + s
		}
		s = s[:len(s)-d] + "." + s[len(s)-d:]
		if neg {
			s = "-" + s
		}
		want, err := strconv.ParseFloat(s, 64)
		if err != nil {
			t.Fatal(err)
		}
		got, ok := fitScale(want, d)
		if k == 0 && neg {
			continue
		}
		if !ok || math.Float64bits(float64(got)/pow10[d]) != math.Float64bits(want) {
			t.Fatalf("%s at scale %d: k %d ok %v", s, d, got, ok)
		}
		x := math.Float64frombits(r.Uint64())
		if k, ok := fitScale(x, d); ok && math.Float64bits(float64(k)/pow10[d]) != math.Float64bits(x) {
			t.Fatalf("%v (bits %x) accepted at scale %d as %d", x, math.Float64bits(x), d, k)
		}
	}
}

// compactSeq builds value sequences for the chain tests.
type compactSeq struct {
	name string
	gen  func(r *rand.Rand, n int) []float64
}

func decimals(r *rand.Rand, n, d int, span int) []float64 {
	vs := make([]float64, n)
	for i := range vs {
		vs[i] = float64(r.IntN(2*span+1)-span) / pow10[d]
	}
	return vs
}

var negZero = math.Copysign(0, -1)

var compactSeqs = []compactSeq{
	{"integers", func(r *rand.Rand, n int) []float64 { return decimals(r, n, 0, 1<<30) }},
	{"scale 1", func(r *rand.Rand, n int) []float64 { return decimals(r, n, 1, 100000) }},
	{"scale 2", func(r *rand.Rand, n int) []float64 { return decimals(r, n, 2, 100000) }},
	{"scale 3", func(r *rand.Rand, n int) []float64 { return decimals(r, n, 3, 100000) }},
	{"scale 4", func(r *rand.Rand, n int) []float64 { return decimals(r, n, 4, 1<<30) }},
	{"rising scales", func(r *rand.Rand, n int) []float64 {
		vs := make([]float64, n)
		for i := range vs {
			vs[i] = float64(r.IntN(2000)-1000) / pow10[min(maxScale, i*5/max(n, 1))]
		}
		return vs
	}},
	{"rescale overflow", func(r *rand.Rand, n int) []float64 {
		vs := decimals(r, n, 0, 1000)
		for i := range vs {
			if i%3 == 0 {
				vs[i] = 2e9
			}
			if i%97 == 50 {
				vs[i] = 0.5 // needs scale 1: 2e9 would overflow
			}
		}
		return vs
	}},
	{"random doubles", func(r *rand.Rand, n int) []float64 {
		vs := make([]float64, n)
		for i := range vs {
			vs[i] = r.NormFloat64() * 1e3
		}
		return vs
	}},
	{"random bits", func(r *rand.Rand, n int) []float64 {
		vs := make([]float64, n)
		for i := range vs {
			if vs[i] = math.Float64frombits(r.Uint64()); vs[i] != vs[i] {
				vs[i] = 1
			}
		}
		return vs
	}},
	{"specials sprinkled", func(r *rand.Rand, n int) []float64 {
		vs := decimals(r, n, 2, 100000)
		specials := []float64{negZero, math.Inf(1), math.Inf(-1), math.NaN(), 1e300, -1e300, 5e-324, 1.0 / 3, math.MaxFloat64}
		for i := range vs {
			if r.IntN(200) == 0 {
				vs[i] = specials[r.IntN(len(specials))]
			}
		}
		return vs
	}},
	{"stops fitting", func(r *rand.Rand, n int) []float64 {
		vs := decimals(r, n, 2, 100000)
		for i := n / 2; i < n; i++ {
			vs[i] = r.Float64()
		}
		return vs
	}},
	{"one misfit", func(r *rand.Rand, n int) []float64 {
		vs := decimals(r, n, 1, 100000)
		if n > 0 {
			vs[r.IntN(n)] = negZero
		}
		return vs
	}},
	{"zeros", func(r *rand.Rand, n int) []float64 {
		vs := make([]float64, n)
		for i := range vs {
			if r.IntN(2) == 0 {
				vs[i] = negZero
			}
		}
		return vs
	}},
}

// Values go back from take bit for bit, whatever forms their blocks took;
// misfits at every position of a block (mid-block, when it is more than
// half full, on its last slot) and of a chain keep the count and
// accounting exact.
func TestCompactChains(t *testing.T) {
	sizes := []int{1, 5, 6, 7, 13, 14, 15, 2*edge - 1, 2 * edge, 2*edge + 1, 3000, 40000}
	for si, seq := range compactSeqs {
		t.Run(seq.name, func(t *testing.T) {
			r := rand.New(rand.NewPCG(11, uint64(si)))
			b := &budget{}
			a := &acct{b: b}
			s := newBlockStore(a)
			chains := make([]valueChain, len(sizes))
			want := make([][]float64, len(sizes))
			var order []int
			for g, n := range sizes {
				want[g] = seq.gen(r, n)
				order = append(order, slices.Repeat([]int{g}, n)...)
			}
			r.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
			next := make([]int, len(sizes))
			for _, g := range order {
				if err := s.add(&chains[g], want[g][next[g]]); err != nil {
					t.Fatal(err)
				}
				next[g]++
			}
			var most int64
			for g := range chains {
				if got := s.count(&chains[g]); got != int64(sizes[g]) {
					t.Fatalf("chain %d: count %d, want %d", g, got, sizes[g])
				}
				most = max(most, s.scratchNeed(&chains[g]))
			}
			if b.live.Load() != s.mapped || a.n != s.mapped {
				t.Fatalf("charged %d (acct %d), mapped %d", b.live.Load(), a.n, s.mapped)
			}
			if err := s.seal(most); err != nil {
				t.Fatal(err)
			}
			for g := range chains {
				vals, done := s.take(&chains[g])
				got := bitsSorted(vals)
				done()
				if w := bitsSorted(want[g]); !slices.Equal(got, w) {
					t.Fatalf("chain %d: %d values back, want %d (or different bits)", g, len(got), len(w))
				}
			}
			s.free()
			if s.mapped != 0 || b.live.Load() != 0 || a.n != 0 {
				t.Fatalf("after free: mapped %d, budget %d, acct %d", s.mapped, b.live.Load(), a.n)
			}
		})
	}
}

func bitsSorted(vs []float64) []uint64 {
	out := make([]uint64, len(vs))
	for i, v := range vs {
		out[i] = math.Float64bits(v)
	}
	slices.Sort(out)
	return out
}

// Values that fit compact blocks take half the blocks of float64 values.
func TestCompactChainsHalveMemory(t *testing.T) {
	const n = 1 << 20
	blocks := map[bool]uint32{}
	for _, compact := range []bool{false, true} {
		s := newBlockStore(nil)
		var ch valueChain
		r := rand.New(rand.NewPCG(1, 2))
		for range n {
			x := float64(r.IntN(1e6)) / 100
			if !compact {
				x += 1.0 / 3
			}
			if err := s.add(&ch, x); err != nil {
				t.Fatal(err)
			}
		}
		blocks[compact] = ch.nblk
		s.free()
	}
	if blocks[true]*100 > blocks[false]*51 {
		t.Fatalf("compact values take %d blocks, float values %d: want about half", blocks[true], blocks[false])
	}
}

// median and quantiles over compact, mixed and special values against the
// reference evaluator.
func TestQuantileCompactValues(t *testing.T) {
	sizes := []int{1, 2, 7, 15, edge + 3, 5000, 0, 3}
	for si, seq := range compactSeqs {
		t.Run(seq.name, func(t *testing.T) {
			r := rand.New(rand.NewPCG(12, uint64(si)))
			alloc := newAlloc()
			defer alloc.AssertSize(t, 0)
			var g, v []any
			for grp, n := range sizes {
				for i, x := range seq.gen(r, n) {
					g = append(g, int64(grp))
					if i%50 == 7 {
						v = append(v, nil)
					} else {
						v = append(v, x)
					}
				}
			}
			rows := make([][]any, len(g))
			for i := range g {
				rows[i] = []any{g[i], v[i]}
			}
			src := newSource(alloc, []tcol{{"g", tInt64, g}, {"v", tF64, v}})
			defer src.release()
			plan := aggOf(scanOf(src.schema), []string{"g"}, "median:v", "quantile:v:0", "quantile:v:0.1", "quantile:v:0.99", "quantile:v:1", "count:v")
			want := refAgg(&refState{}, rows, plan)
			rr, err := Execute(context.Background(), plan, src, Options{Alloc: alloc, BatchSize: 1000})
			if err != nil {
				t.Fatal(err)
			}
			bud := rr.(*reader).budget
			got, err := drain(t, rr)
			if err != nil {
				t.Fatal(err)
			}
			if !rowsEq(got, want) {
				t.Fatalf("got\n%s\nwant\n%s", fmtRows(got), fmtRows(want))
			}
			if n := bud.live.Load(); n != 0 {
				t.Fatalf("%d bytes still charged after the query", n)
			}
		})
	}
}

// A misfit after every number of compact values (every slot of the growing
// blocks, more or less than half full, with and without a rescale first)
// keeps every value.
func TestCompactMisfitEveryPosition(t *testing.T) {
	for _, lead := range []float64{3, 0.5} {
		for m := range 2*edge + 40 {
			s := newBlockStore(nil)
			var ch valueChain
			var want []float64
			add := func(x float64) {
				if err := s.add(&ch, x); err != nil {
					t.Fatal(err)
				}
				want = append(want, x)
			}
			add(lead)
			for i := range m {
				add(float64(i%1000) / 10)
			}
			add(negZero)
			for i := range 30 {
				add(float64(i) / 100)
			}
			if got := s.count(&ch); got != int64(len(want)) {
				t.Fatalf("lead %v, %d compact values: count %d, want %d", lead, m, got, len(want))
			}
			if err := s.seal(s.scratchNeed(&ch)); err != nil {
				t.Fatal(err)
			}
			vals, done := s.take(&ch)
			got := bitsSorted(vals)
			done()
			if !slices.Equal(got, bitsSorted(want)) {
				t.Fatalf("lead %v, %d compact values: values differ", lead, m)
			}
			s.free()
		}
	}
}
