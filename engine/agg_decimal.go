package engine

import (
	"math"
	"math/big"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// Exact sums and averages of decimal-looking float64 values (docs/QUERY.md,
// "Exact sums and averages"). A float64 value v looks decimal with d
// fraction digits when, with x = v·10^d (the rounded product) and n the
// integer nearest to x, either |n| < 2^40 and |x − n| ≤ 2^-50·|x| (decTol:
// v is within a few ulps of n/10^d, so it differs from that decimal at its
// 16th significant digit at most), or 2^40 ≤ |n| < 2^53 and v is exactly
// the double nearest to n/10^d (decNearExact: there a few ulps could hold a
// real further digit). The double nearest to any such decimal qualifies (it
// is within 2^-52 of it relatively): the value a CSV cell "75.79" parses
// to, and the one the shortest printing of v shows. While every value of a
// column looks decimal, for some d up to maxDecScale, sum and avg add the
// integers n exactly (int64, one scale d per state, raised when a value
// needs more digits): the sum is the exact sum of the decimals n/10^d, each
// within 2^-50 of its value relatively, and the result is the double nearest
// to it (or to it divided by the count): the average of 75.78 and 75.7990
// prints as 75.7895, where adding doubles would print 75.78949999999999.
// The first value that does not look decimal (1/3, NaN, ±Inf, more than
// maxDecScale digits, |n| ≥ 2^53) or a sum beyond int64 turns the state
// into a float64 sum in input order, from the exact partial sums. Partial
// states merge exactly while both are exact (agg_merge.go).
//
// A float32 value is summed as the decimal it was rounded from (decOf32):
// float32 0.1 is 0.100000001490116…, and sums of it are sums of 0.1.
// Window sums and averages (window_agg.go) add the same integers, one
// scale for the whole column (decColumn).
//
// Cost: the check uses no division. Columns go through addFast, chunk by
// chunk (decAddChunkK: multiply, round by adding 1.5·2^52, compare squares,
// add; no per-value branch on the state; with nulls decAddChunkValidK,
// which masks a null to 0 and counts the validity bit), and only a chunk
// with a value that fails is taken back and redone value by value
// (addExact, widen); after a widening the next chunk is tried fast again.

// maxDecScale is the most fraction digits a value may have to be summed
// exactly.
const maxDecScale = 9

// decPow10 are the exact powers of ten up to 10^18.
var decPow10 = [...]float64{1, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18}

// decIPow10 are the same as int64.
var decIPow10 = [...]int64{1, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18}

// maxExact is 2^53: integers below it in magnitude are exact doubles.
const maxExact = 1 << 53

// decTol is the relative distance from a decimal a value may have and still
// look decimal: 2^-50, a few ulps (the double nearest to n/10^d, times
// 10^d and rounded, is within about 2^-52 of n relatively).
const decTol = 1.0 / (1 << 50)

// decNearExact is 2^40: at |n| below it, decTol·|x| is less than 2^-10 of a
// unit of the d-th digit; at and above it a value must be exactly the double
// nearest to n/10^d (decScaled divides), and addFast leaves it to addExact.
const decNearExact = 1 << 40

// decRound is the integer nearest to x (ties to even) for |x| < 2^51 (the
// fast path's values are below decNearExact), with no call: adding and
// removing 1.5·2^52 rounds in the FPU.
func decRound(x float64) float64 {
	return (x + decMagic) - decMagic
}

// decMagic is 1.5·2^52.
const decMagic = 3 << 51

// decScaled returns n with v within decTol of n/p (p = 10^d) relatively,
// and, when |n| ≥ decNearExact, v the double nearest to n/p; |n| < 2^53.
func decScaled(v, p float64) (int64, bool) {
	x := v * p
	a := math.Abs(x)
	if !(a < maxExact) { // also NaN
		return 0, false
	}
	r := math.Round(x)
	n := int64(r)
	if math.Abs(x-r) > a*decTol {
		return 0, false
	}
	return n, a < decNearExact || float64(n)/p == v
}

// decSum is sum (avg: true) of a float64 column: exact scaled integers
// while the values look decimal, else float64.
type decSum struct {
	avg    bool
	scale  int       // fraction digits of the exact sums
	float  bool      // the sums are fsums (no longer exact)
	sums   []int64   // exact: the sums times 10^scale
	fsums  []float64 // float: the sums
	counts []int64   // non-null values per group
	bound  int64     // exact: at least every |sums[g]|, at most decSumBound
	buf    []float64 // float32 input: a block of values as decOf32 gives them
	hint   int       // float32 input: the digits decOf32 tries first
}

func (s *decSum) grow(n int) {
	s.counts = growTo(s.counts, n)
	if s.float {
		s.fsums = growTo(s.fsums, n)
	} else {
		s.sums = growTo(s.sums, n)
	}
}

func (s *decSum) groupBytes() int64 { return 16 }

func (s *decSum) update(col arrow.Array, gids []int32) error {
	v := validityOf(col)
	if col.DataType().ID() == arrow.FLOAT32 {
		s.update32(values[float32](col), v, gids)
		return nil
	}
	s.updateVals(values[float64](col), v, gids)
	return nil
}

// updateVals adds vals (v: their validity) to groups gids.
func (s *decSum) updateVals(vals []float64, v validity, gids []int32) {
	fast := true
	for i := 0; i < len(gids); {
		if s.float {
			s.addFloat(vals, v, gids[i:], i)
			return
		}
		end := len(gids)
		if fast {
			if i = s.addFast(vals, v, gids, i); i == end {
				return
			}
			end = min(i+decChunk, end) // the chunk addFast could not add, value by value
		}
		j := s.addExact(vals, v, gids[:end], i)
		if j < end {
			s.widen(vals[j]) // the value at j needs more digits, or the sum left int64
		} else if fast {
			fast = false // the chunk is exact but not for addFast (|n| ≥ decNearExact, bound): the rest value by value
		}
		i = j
	}
}

// decChunk is how many values the fast path converts before adding them.
const decChunk = 256

// decSumBound is 2^61: while every |sum| stays below it, a chunk of
// decChunk values each below decNearExact cannot take a sum out of int64
// (and two bounds add without overflow).
const decSumBound = 1 << 61

// decChunkBound bounds what one chunk adds to a sum in magnitude.
const decChunkBound = decChunk * decNearExact

// addFast adds rows from i on, a chunk at a time while every value of the
// chunk is within decTol of a decimal at the current scale with |n| <
// decNearExact and the sums stay below decSumBound. Each chunk is added in
// one pass with no branch on the state or the value but a predictable one
// for the check (a null counts as 0, by a mask: decAddChunkValid); a chunk
// with a value that fails is taken back (integer additions undo exactly,
// even wrapped ones) and the function returns its first row (addExact
// takes over there).
func (s *decSum) addFast(vals []float64, v validity, gids []int32, i int) int {
	p := decPow10[s.scale]
	for ; i < len(gids); i += decChunk {
		if s.bound+decChunkBound >= decSumBound {
			s.tighten()
			if s.bound+decChunkBound >= decSumBound {
				return i
			}
		}
		gs := gids[i:min(i+decChunk, len(gids))]
		vs := vals[i : i+len(gs)]
		var ok bool
		if v.bits == nil {
			ok = decAddChunk(vs, gs, s.sums, s.counts, p)
		} else {
			ok = decAddChunkValid(vs, gs, s.sums, s.counts, p, v.bits, v.off+i)
		}
		if !ok {
			decUndoChunk(vs, validity{v.bits, v.off + i}, gs, s.sums, s.counts, p)
			return i
		}
		s.bound += decChunkBound
	}
	return len(gids)
}

// decAddChunk adds the integers nearest to vs times p to sums (counts) of
// groups gs; false when a value is not strictly within decTol of its
// integer (compared as squares: (x−n)² < x²·decTol², or x = n) or not below
// decNearExact (also NaN, ±Inf): a subset of what decScaled accepts, with
// the same n.
func decAddChunk(vs []float64, gs []int32, sums, counts []int64, p float64) bool {
	return decAddChunkK(vs, gs, sums, counts, p, decMagic, decTol*decTol, decNearExact*decNearExact)
}

// decAddChunkValid is decAddChunk over values with nulls: bits is the
// validity bitmap of vs[0] at bit off; a null's value (whatever its bits)
// is masked to +0, adding 0 and counting nothing.
func decAddChunkValid(vs []float64, gs []int32, sums, counts []int64, p float64, bits []byte, off int) bool {
	return decAddChunkValidK(vs, gs, sums, counts, p, bits, off, decMagic, decTol*decTol, decNearExact*decNearExact)
}

// decNear is the check of decAddChunk for x = v·p: n = x rounded (magic:
// see decRound) and whether x is strictly within decTol of it relatively
// (tol2 = decTol²) and below decNearExact (lim2 = decNearExact²).
func decNear(x, magic, tol2, lim2 float64) (float64, bool) {
	r := (x + magic) - magic
	e, x2 := x-r, x*x
	return r, (e*e < x2*tol2 || e == 0) && x2 < lim2
}

// decAddChunkK is decAddChunk with its constants passed in, so that the
// loop of this leaf keeps them in registers (magic: see decRound, tol2 =
// decTol², lim2 = decNearExact²).
//
//go:noinline
func decAddChunkK(vs []float64, gs []int32, sums, counts []int64, p, magic, tol2, lim2 float64) bool {
	ok := true
	vs = vs[:len(gs)]
	for j, g := range gs {
		r, near := decNear(vs[j]*p, magic, tol2, lim2)
		if !near {
			ok = false
		}
		sums[g] += int64(r)
		counts[g]++
	}
	return ok
}

// decAddChunkValidK is decAddChunkValid with its constants passed in (see
// decAddChunkK).
//
//go:noinline
func decAddChunkValidK(vs []float64, gs []int32, sums, counts []int64, p float64, bits []byte, off int, magic, tol2, lim2 float64) bool {
	ok := true
	vs = vs[:len(gs)]
	for j, g := range gs {
		k := off + j
		b := uint64(bits[k>>3]>>(k&7)) & 1
		x := math.Float64frombits(math.Float64bits(vs[j])&-b) * p
		r, near := decNear(x, magic, tol2, lim2)
		if !near {
			ok = false
		}
		sums[g] += int64(r)
		counts[g] += int64(b)
	}
	return ok
}

// decUndoChunk takes back what decAddChunk (or decAddChunkValid, v the
// validity of vs) added.
func decUndoChunk(vs []float64, v validity, gs []int32, sums, counts []int64, p float64) {
	for j, g := range gs {
		if v.ok(j) {
			sums[g] -= int64(decRound(vs[j] * p))
			counts[g]--
		}
	}
}

// decAbs is |n| without a branch.
func decAbs(n int64) int64 {
	m := n >> 63
	return (n ^ m) - m
}

// tighten sets bound to the largest |sum|.
func (s *decSum) tighten() {
	s.bound = 0
	for _, x := range s.sums {
		s.bound = max(s.bound, decAbs(x))
	}
	s.bound = min(s.bound, decSumBound)
}

// addExact adds rows from i on exactly and returns the first row it could
// not add (len(gids) when it added them all).
func (s *decSum) addExact(vals []float64, v validity, gids []int32, i int) int {
	p := decPow10[s.scale]
	sums, counts := s.sums, s.counts
	for ; i < len(gids); i++ {
		if !v.ok(i) {
			continue
		}
		n, ok := decScaled(vals[i], p)
		if !ok {
			return i
		}
		g := gids[i]
		acc := sums[g]
		r := acc + n
		if (n > 0 && r < acc) || (n < 0 && r > acc) {
			return i
		}
		sums[g] = r
		counts[g]++
		s.bound = min(s.bound+decAbs(n), decSumBound)
	}
	return i
}

// addFloat adds rows (gids from row off on) as float64.
func (s *decSum) addFloat(vals []float64, v validity, gids []int32, off int) {
	fsums, counts := s.fsums, s.counts
	for j, g := range gids {
		if i := off + j; v.ok(i) {
			fsums[g] += vals[i]
			counts[g]++
		}
	}
}

// widen makes the state able to take x: a larger scale when x looks
// decimal with more digits and every sum still fits in int64 at it, else
// float sums.
func (s *decSum) widen(x float64) {
	if _, ok := decScaled(x, decPow10[s.scale]); ok { // x fits: the sum left int64
		s.toFloat()
		return
	}
	for d := s.scale + 1; d <= maxDecScale; d++ {
		if _, ok := decScaled(x, decPow10[d]); ok {
			if s.rescale(d) {
				return
			}
			break
		}
	}
	s.toFloat()
}

// rescale multiplies every exact sum by 10^(d-scale); false (nothing
// changed) when one would leave int64.
func (s *decSum) rescale(d int) bool {
	m := decIPow10[d-s.scale]
	lim := math.MaxInt64 / m
	for _, x := range s.sums {
		if x > lim || x < -lim {
			return false
		}
	}
	for i := range s.sums {
		s.sums[i] *= m
	}
	s.scale = d
	s.tighten()
	return true
}

// toFloat turns the exact sums into float sums (each the double nearest
// to its exact value).
func (s *decSum) toFloat() {
	if s.float {
		return
	}
	s.fsums = make([]float64, len(s.sums), cap(s.sums))
	for g, x := range s.sums {
		s.fsums[g] = decQuo(x, 1, s.scale)
	}
	s.sums, s.float = nil, true
}

// decQuo is the double nearest to x / (c * 10^d).
func decQuo(x, c int64, d int) float64 {
	if x > -maxExact && x < maxExact && c < maxExact/decIPow10[d] {
		return float64(x) / (float64(c) * decPow10[d]) // one correctly rounded division
	}
	den := new(big.Int).Mul(big.NewInt(c), big.NewInt(decIPow10[d]))
	f, _ := new(big.Rat).SetFrac(big.NewInt(x), den).Float64()
	return f
}

func (s *decSum) build(mem memory.Allocator, lo, hi int) arrow.Array {
	n := hi - lo
	out := make([]float64, n)
	valid := make([]bool, n)
	for i := range n {
		g := lo + i
		c := s.counts[g]
		if c == 0 {
			continue
		}
		valid[i] = true
		switch {
		case s.float && s.avg:
			out[i] = s.fsums[g] / float64(c)
		case s.float:
			out[i] = s.fsums[g]
		case s.avg:
			out[i] = decQuo(s.sums[g], c, s.scale)
		default:
			out[i] = decQuo(s.sums[g], 1, s.scale)
		}
	}
	return buildFixed(mem, arrow.PrimitiveTypes.Float64, out, valid)
}

func (s *decSum) merge(src aggState, dst []int32) error {
	o := src.(*decSum)
	if !s.float && !o.float {
		d := max(s.scale, o.scale)
		if s.rescale(d) && o.rescale(d) && s.mergeExact(o, dst) {
			return nil
		}
	}
	s.toFloat()
	o.toFloat()
	for g, d := range dst {
		s.fsums[d] += o.fsums[g]
		s.counts[d] += o.counts[g]
	}
	return nil
}

// mergeExact adds o's exact sums (at s's scale) into s's groups dst; false,
// with s unchanged, when a sum would leave int64.
func (s *decSum) mergeExact(o *decSum, dst []int32) bool {
	for g, d := range dst {
		acc, x := s.sums[d], o.sums[g]
		if r := acc + x; (x > 0 && r < acc) || (x < 0 && r > acc) {
			return false
		}
	}
	for g, d := range dst {
		s.sums[d] += o.sums[g]
		s.counts[d] += o.counts[g]
	}
	s.bound = min(s.bound+o.bound, decSumBound)
	return true
}
