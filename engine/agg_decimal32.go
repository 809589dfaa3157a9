package engine

import "math"

// Exact sums of float32 columns (agg_decimal.go). A float32 holds about 7
// significant digits: the float32 nearest to 0.1 is 0.100000001490116…,
// and adding it as a double ten times gives 1.0000000149011612. The value
// a float32 column's writer meant is the short decimal it rounded, which
// the shortest printing of the float32 shows: decOf32 turns each value
// into the double nearest to that decimal, and the float64 path sums those
// exactly.

// dec32Block is how many float32 values update32 converts at a time.
const dec32Block = 1024

// dec32Unique is 2^23: while |v·10^d| < 2^23, the d-digit decimals are
// further apart than v's float32 spacing, so at most one of them rounds to
// v.
const dec32Unique = 1 << 23

// update32 adds float32 values (v: their validity) to groups gids, each
// as decOf32 gives it, a block at a time.
func (s *decSum) update32(vals []float32, v validity, gids []int32) {
	if s.buf == nil {
		s.buf = make([]float64, dec32Block)
	}
	for lo := 0; lo < len(gids); lo += dec32Block {
		hi := min(lo+dec32Block, len(gids))
		buf := s.buf[:hi-lo]
		for i, x := range vals[lo:hi] {
			buf[i], s.hint = decOf32(x, s.hint)
		}
		bv := v
		if bv.bits != nil {
			bv.off += lo
		}
		s.updateVals(buf, bv, gids[lo:hi])
	}
}

// decOf32 is the double a float32 value v is summed as: the double nearest
// to n/10^d when v is the float32 nearest to that decimal for some d ≤
// maxDecScale with |v·10^d| < dec32Unique (only one d-digit decimal rounds
// to v there, and every such d gives the same decimal: the one with the
// fewest digits, which the shortest printing of v shows), else v itself
// (NaN, ±Inf, a value with more digits, or a large one, which the float64
// path then sums as it is). hint is the d to try first; the d that matched
// is returned as the next hint.
func decOf32(v float32, hint int) (float64, int) {
	x, h := float64(v), halfUlp32(v)
	if w, ok := dec32At(x, h, hint); ok {
		return w, hint
	}
	for d := 0; d <= maxDecScale && math.Abs(x*decPow10[d]) < dec32Unique; d++ { // larger d: larger products (NaN, ±Inf: none)
		if w, ok := dec32At(x, h, d); ok {
			return w, d
		}
	}
	return x, hint
}

// dec32At is decOf32 at d digits (x = v, h = halfUlp32(v)): with y = x·10^d
// (exact: 24 bits times 5^d ≤ 5^9, 21 bits) and n the integer nearest to
// it, n/10^d rounds to v when |y − n| < 10^d·h (both sides exact; a tie
// cannot occur below dec32Unique: a float32 midpoint has more than 9
// fraction digits there); then the double nearest to n/10^d.
func dec32At(x, h float64, d int) (float64, bool) {
	p := decPow10[d]
	y := x * p
	if !(math.Abs(y) < dec32Unique) {
		return 0, false
	}
	n := decRound(y)
	if !(math.Abs(y-n) < p*h) {
		return 0, false
	}
	return n / p, true
}

// halfUlp32 is half the spacing of the float32 values around v: 2^(E−24)
// for v in [2^E, 2^(E+1)), 2^-150 for subnormals and zero.
func halfUlp32(v float32) float64 {
	e := int(math.Float32bits(v)>>23) & 0xff
	return math.Float64frombits(uint64(max(e, 1)-127-24+1023) << 52)
}
