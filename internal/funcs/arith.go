package funcs

import (
	"errors"
	"math"
)

// Scalar semantics of expressions, shared by constant folding and the
// engine's vectorized evaluator so that both always agree.

// AddInt returns a+b and false on int64 overflow.
func AddInt(a, b int64) (int64, bool) {
	r := a + b
	return r, (b >= 0) == (r >= a)
}

// SubInt returns a-b and false on int64 overflow.
func SubInt(a, b int64) (int64, bool) {
	r := a - b
	return r, (b >= 0) == (r <= a)
}

// MulInt returns a*b and false on int64 overflow.
func MulInt(a, b int64) (int64, bool) {
	if a == 0 || b == 0 {
		return 0, true
	}
	r := a * b
	if (a == -1 && b == math.MinInt64) || (b == -1 && a == math.MinInt64) || r/b != a {
		return r, false
	}
	return r, true
}

// NegInt returns -a and false on overflow (a == MinInt64).
func NegInt(a int64) (int64, bool) { return -a, a != math.MinInt64 }

// AbsInt returns |a| and false on overflow (a == MinInt64).
func AbsInt(a int64) (int64, bool) {
	if a < 0 {
		return NegInt(a)
	}
	return a, true
}

// DivFloat returns a/b; null is true when b == 0 (division by zero yields
// null, whatever a is).
func DivFloat(a, b float64) (q float64, null bool) {
	if b == 0 {
		return 0, true
	}
	return a / b, false
}

// RoundFloat rounds x half away from zero to digits decimal places
// (negative digits round to tens, hundreds, ...). NaN and ±Inf are
// returned unchanged, and so is x when scaling it would overflow.
func RoundFloat(x float64, digits int64) float64 {
	switch {
	case digits == 0:
		return math.Round(x)
	case digits > 0:
		p := math.Pow10(int(digits))
		s := x * p
		if math.IsInf(s, 0) {
			return x
		}
		return math.Round(s) / p
	}
	p := math.Pow10(int(-digits))
	return math.Round(x/p) * p
}

// RoundInt rounds x half away from zero to a multiple of 10^-digits
// (digits >= 0 leaves x unchanged); false on overflow.
func RoundInt(x, digits int64) (int64, bool) {
	if digits >= 0 {
		return x, true
	}
	p := int64(1)
	for range -digits {
		p *= 10
	}
	q, rem := x/p, x%p
	if rem < 0 {
		rem = -rem
	}
	if 2*rem >= p {
		if x < 0 {
			q--
		} else {
			q++
		}
	}
	return MulInt(q, p)
}

// ErrOverflow is the error of an integer result outside the int64 range.
var ErrOverflow = errors.New("integer overflow")

// FloorDivInt is a/b rounded toward negative infinity (b != 0; the caller
// handles MinInt64 / -1).
func FloorDivInt(a, b int64) int64 {
	q := a / b
	if (a%b != 0) && ((a < 0) != (b < 0)) {
		q--
	}
	return q
}

// ModInt is a % b with the sign of a (truncated division, as in C, Go,
// PostgreSQL and DuckDB); null is true when b == 0.
func ModInt(a, b int64) (r int64, null bool) {
	if b == 0 {
		return 0, true
	}
	if b == -1 {
		return 0, false
	}
	return a % b, false
}

// ModFloat is math.Mod (the sign of a); null is true when b == 0.
func ModFloat(a, b float64) (r float64, null bool) {
	if b == 0 {
		return 0, true
	}
	return math.Mod(a, b), false
}
