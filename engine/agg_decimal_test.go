package engine

import (
	"math"
	"math/big"
	"math/rand/v2"
	"strconv"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// decRun folds vals (nil: null) into one group of a fresh sum (or avg)
// state, in batches of batch rows, and returns the result (NaN bits for
// null are not possible: ok false).
func decRun(t *testing.T, mem memory.Allocator, avg bool, vals []*float64, batch int) (float64, bool) {
	t.Helper()
	var s aggState = &decSum{avg: avg}
	s.grow(1)
	for lo := 0; lo < len(vals); lo += batch {
		hi := min(lo+batch, len(vals))
		b := array.NewFloat64Builder(mem)
		for _, v := range vals[lo:hi] {
			if v == nil {
				b.AppendNull()
			} else {
				b.Append(*v)
			}
		}
		arr := b.NewArray()
		b.Release()
		if err := s.update(arr, make([]int32, hi-lo)); err != nil {
			t.Fatal(err)
		}
		arr.Release()
	}
	out := s.build(mem, 0, 1).(*array.Float64)
	defer out.Release()
	return out.Value(0), out.IsValid(0)
}

func fp(x float64) *float64 { return &x }

// TestDecimalSums: sums and averages of decimal-looking values are the
// doubles nearest to the exact decimal results; values that are not
// decimal fall back to float sums.
func TestDecimalSums(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	tenths := make([]*float64, 10)
	for i := range tenths {
		tenths[i] = fp(0.1)
	}
	for _, c := range []struct {
		name     string
		vals     []*float64
		sum, avg string
	}{
		{"two decimals", []*float64{fp(75.78), fp(75.799)}, "151.579", "75.7895"},
		{"tenths", tenths, "1", "0.1"},
		{"0.1+0.2", []*float64{fp(0.1), fp(0.2)}, "0.3", "0.15"},
		{"widening scale", []*float64{fp(1.5), fp(0.25), fp(0.125), fp(-3)}, "-1.125", "-0.28125"},
		{"nulls", []*float64{nil, fp(2.5), nil, fp(0.01)}, "2.51", "1.255"},
		{"all null", []*float64{nil, nil}, "null", "null"},
		{"scaled sum beyond 2^53", []*float64{fp(5e14), fp(5e14), fp(0.5)}, "1.0000000000000005e+15", "3.333333333333335e+14"},
		{"value beyond 2^53 at its scale: float sum", []*float64{fp(9e15), fp(9e15), fp(0.5)}, "1.8e+16", "6e+15"},
		{"not decimal: float sum", []*float64{fp(0.1), fp(1.0 / 3)}, strconv.FormatFloat(0.1+1.0/3, 'g', -1, 64), strconv.FormatFloat((0.1+1.0/3)/2, 'g', -1, 64)},
		{"NaN", []*float64{fp(1), fp(math.NaN())}, "NaN", "NaN"},
		{"Inf", []*float64{fp(1.25), fp(math.Inf(-1))}, "-Inf", "-Inf"},
		{"zeros", []*float64{fp(0), fp(0), fp(1.5)}, "1.5", "0.5"},
		{"a few ulps off a decimal: the decimal", []*float64{fp(math.Nextafter(0.1, 1)), fp(0.2)}, "0.3", "0.15"},
		{"exact double with a further digit, 2^40 or more at its scale: float sum", []*float64{fp(1e15 + 0.25), fp(1)}, strconv.FormatFloat(1e15+1.25, 'g', -1, 64), strconv.FormatFloat((1e15+1.25)/2, 'g', -1, 64)},
		{"ten digits: float sum", []*float64{fp(0.1), fp(1e-10)}, strconv.FormatFloat(0.1+1e-10, 'g', -1, 64), strconv.FormatFloat((0.1+1e-10)/2, 'g', -1, 64)},
	} {
		for _, batch := range []int{1, 3, 1000} {
			for _, avg := range []bool{false, true} {
				got, ok := decRun(t, mem, avg, c.vals, batch)
				s := "null"
				if ok {
					s = strconv.FormatFloat(got, 'g', -1, 64)
				}
				want := c.sum
				if avg {
					want = c.avg
				}
				if s != want {
					t.Errorf("%s (batch %d, avg %v): got %s, want %s", c.name, batch, avg, s, want)
				}
			}
		}
	}
}

// TestDecimalSumsDiff: random decimal columns over random groups, folded in
// two partial states merged at the end (agg_parallel.go), against the exact
// decimal sums (math/big) of the texts the values were parsed from: equal
// bit for bit, or (values past 2^53 at their scale, the float fallback)
// within 1e-12. A third of the columns have nulls, whose slots hold NaN or
// 1e300 (a null's value is not read); a quarter are float32 columns (the
// texts parsed as float32: each value is the decimal it was rounded from).
func TestDecimalSumsDiff(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	r := rand.New(rand.NewPCG(17, 2026))
	nullTrials, f32Trials, f32Naive := 0, 0, 0
	for trial := range 200 {
		groups := 1 + r.IntN(8)
		n := r.IntN(400)
		maxd := r.IntN(7)
		f32 := trial%4 == 3
		wide := trial%5 == 0 && !f32
		nulls := trial%3 == 1
		texts := make([]string, n)
		gids := make([]int32, n)
		exact := make([]*big.Rat, groups)
		counts := make([]int64, groups)
		naive := make([]float64, groups) // float32 values added as doubles
		for g := range exact {
			exact[g] = new(big.Rat)
		}
		vals, valid := make([]float64, n), make([]bool, n)
		for i := range n {
			g := int32(r.IntN(groups))
			gids[i] = g
			if nulls && r.IntN(4) == 0 {
				vals[i] = []float64{math.NaN(), 1e300, 0.1}[r.IntN(3)]
				continue
			}
			d := r.IntN(maxd + 1)
			mags := []int64{10, 1000, 1_000_000, 1_000_000_000}
			if f32 {
				mags = mags[:3] // |n| < 2^23 at the text's digits: one decimal per float32
			}
			mag := mags[r.IntN(len(mags))]
			if wide {
				mag *= 100_000 // past 2^53 at 6 digits: the float fallback
			}
			texts[i] = strconv.FormatFloat(float64(r.Int64N(2*mag)-mag)/math.Pow10(d), 'f', d, 64)
			bits := 64
			if f32 {
				bits = 32
			}
			vals[i], _ = strconv.ParseFloat(texts[i], bits)
			valid[i] = true
			x, _ := new(big.Rat).SetString(texts[i])
			exact[g].Add(exact[g], x)
			counts[g]++
			naive[g] += vals[i]
		}
		var arr arrow.Array
		if f32 {
			v32 := make([]float32, n)
			for i, x := range vals {
				v32[i] = float32(x)
			}
			b := array.NewFloat32Builder(mem)
			b.AppendValues(v32, valid) // nulls keep their value bits
			arr = b.NewArray()
			b.Release()
			f32Trials++
			for g := range groups {
				if w, _ := exact[g].Float64(); counts[g] > 0 && naive[g] != w {
					f32Naive++
				}
			}
		} else {
			b := array.NewFloat64Builder(mem)
			b.AppendValues(vals, valid)
			arr = b.NewArray()
			b.Release()
		}
		if arr.NullN() > 0 {
			nullTrials++
		}
		cut := 0
		if n > 0 {
			cut = r.IntN(n + 1)
		}
		for _, avg := range []bool{false, true} {
			a, c := &decSum{avg: avg}, &decSum{avg: avg}
			a.grow(groups)
			c.grow(groups)
			left, right := array.NewSlice(arr, 0, int64(cut)), array.NewSlice(arr, int64(cut), int64(n))
			if err := a.update(left, gids[:cut]); err != nil {
				t.Fatal(err)
			}
			if err := c.update(right, gids[cut:]); err != nil {
				t.Fatal(err)
			}
			left.Release()
			right.Release()
			ident := make([]int32, groups)
			for g := range ident {
				ident[g] = int32(g)
			}
			if err := a.merge(c, ident); err != nil {
				t.Fatal(err)
			}
			out := a.build(mem, 0, groups).(*array.Float64)
			for g := range groups {
				if counts[g] == 0 {
					if out.IsValid(g) {
						t.Errorf("trial %d group %d: empty group is not null", trial, g)
					}
					continue
				}
				want := new(big.Rat).Set(exact[g])
				if avg {
					want.Quo(want, new(big.Rat).SetInt64(counts[g]))
				}
				w, _ := want.Float64()
				if got := out.Value(g); got != w && (!wide || math.Abs(got-w) > 1e-12*math.Abs(w)) {
					t.Errorf("trial %d group %d (avg %v, %d digits): got %v, want %v (exact %s)", trial, g, avg, maxd, got, w, want.FloatString(12))
				}
			}
			out.Release()
		}
		arr.Release()
	}
	if nullTrials < 50 || f32Trials < 40 || f32Naive < 20 {
		t.Fatalf("%d trials with nulls, %d float32 trials, %d float32 groups where adding doubles misses the exact sum", nullTrials, f32Trials, f32Naive)
	}
}

// TestDecimalSumsChunks: a long column through the chunked fast path with a
// value needing a wider scale inside a later chunk (that chunk is taken back
// and added again at the wider scale) and a non-decimal value further on
// (float sums from the exact partial sum on), one batch and many.
func TestDecimalSumsChunks(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	const n, wide, third = 1500, 700, 1300
	vals := make([]*float64, n)
	exact := new(big.Rat)
	for i := range n {
		text := strconv.FormatFloat(float64(i%977-300)/100, 'f', 2, 64)
		if i == wide {
			text = "0.125"
		}
		v, _ := strconv.ParseFloat(text, 64)
		vals[i] = fp(v)
		if i < third {
			x, _ := new(big.Rat).SetString(text)
			exact.Add(exact, x)
		}
	}
	vals[third] = fp(1.0 / 3)
	want, _ := exact.Float64()
	for i := third; i < n; i++ {
		want += *vals[i]
	}
	for _, batch := range []int{n, 333} {
		if got, _ := decRun(t, mem, false, vals, batch); got != want {
			t.Errorf("batch %d: got %v, want %v", batch, got, want)
		}
		if got, _ := decRun(t, mem, false, vals[:third], batch); got != exact2f(exact) {
			t.Errorf("batch %d, decimals only: got %v, want %v", batch, got, exact2f(exact))
		}
	}
}

func exact2f(r *big.Rat) float64 { f, _ := r.Float64(); return f }

// TestDecOf32: a float32 value is summed as the decimal it was rounded from
// when that decimal is the only one with its digits that rounds to it, else
// as itself.
func TestDecOf32(t *testing.T) {
	f32 := func(s string) float32 { x, _ := strconv.ParseFloat(s, 32); return float32(x) }
	for _, c := range []struct {
		in   float32
		want float64
	}{
		{f32("0.1"), 0.1},
		{f32("75.79"), 75.79},
		{f32("-3.25"), -3.25},
		{f32("123456.7"), 123456.7},
		{f32("0.000001"), 0.000001},
		{f32("1e-9"), 1e-9},
		{0, 0},
		{f32("1e-10"), float64(f32("1e-10"))},            // more than 9 digits: itself
		{f32("16384.002"), 16384.001953125},              // 16384.002 is one of several 3-digit decimals rounding to it: itself
		{f32("1.1e10"), 11000000512},                     // beyond 2^23: itself
		{math.MaxFloat32, math.MaxFloat32},               // itself
		{float32(math.SmallestNonzeroFloat32), 0x1p-149}, // a subnormal: itself
		{float32(math.Inf(-1)), math.Inf(-1)},
	} {
		for _, hint := range []int{0, 3, maxDecScale} {
			if got, _ := decOf32(c.in, hint); got != c.want {
				t.Errorf("decOf32(%v, hint %d) = %v, want %v", c.in, hint, got, c.want)
			}
		}
	}
	if got, _ := decOf32(float32(math.NaN()), 0); !math.IsNaN(got) {
		t.Errorf("decOf32(NaN) = %v", got)
	}
}
