package planner

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Number is an exact filter operand on an integer column that no int64
// holds: an integer outside the int64 range (a uint64 above 2^63-1,
// -2^63-5, 1e30) or a number with a fraction (2.5). Literal.Value holds a
// Number for such operands; integers inside the int64 range stay int64.
//
// Integer columns compare with a Number exactly, as with the real number it
// denotes: for an integer v, v < x ⇔ v < Ceil, v <= x ⇔ v <= Floor,
// v > x ⇔ v > Floor, v >= x ⇔ v >= Ceil, and v = x ⇔ x is an integer and
// v = Floor. A value outside a column type's range therefore compares as
// below or above every value of the column.
type Number struct {
	text        string
	floor, ceil Int
	frac        bool // a non-zero fraction digit (floor == ceil beyond the domain says nothing of it)
}

// Int is an integer of the domain that integer columns span, [MinInt64,
// MaxUint64]: Side 0 and the value -Abs when Neg, +Abs otherwise. Side -1
// stands for any integer below that domain, +1 for any integer above it.
type Int struct {
	Side int
	Neg  bool
	Abs  uint64
}

// IntOf returns v as an Int.
func IntOf(v int64) Int {
	if v < 0 {
		return Int{Neg: true, Abs: uint64(-(v + 1)) + 1}
	}
	return Int{Abs: uint64(v)}
}

// Int64 returns the value when it fits an int64.
func (k Int) Int64() (int64, bool) {
	switch {
	case k.Side != 0:
		return 0, false
	case k.Neg && k.Abs <= 1<<63:
		return int64(-k.Abs), true // wraps to MinInt64 for Abs = 2^63
	case !k.Neg && k.Abs <= math.MaxInt64:
		return int64(k.Abs), true
	}
	return 0, false
}

// Floor is the greatest integer at or below x.
func (x Number) Floor() Int { return x.floor }

// Ceil is the least integer at or above x.
func (x Number) Ceil() Int { return x.ceil }

// IsInteger reports whether x is an integer.
func (x Number) IsInteger() bool { return !x.frac && x.floor == x.ceil }

// String is x as the client wrote it (without a leading "+").
func (x Number) String() string { return x.text }

// maxExpDigits bounds the exponent digits read exactly: any larger exponent
// makes the number far beyond (or far below) every integer column value.
const maxExpDigits = 9

// ParseIntOperand reads an integer-column filter operand, a decimal number
// (JSON number syntax, optionally with a leading "+" or surrounding
// spaces), exactly: an int64 when it is an integer in the int64 range, a
// Number otherwise. Its cost is linear in the text: exponents are never
// expanded (1e1000000000 is simply above every integer column value).
func ParseIntOperand(s string) (any, error) {
	t := strings.TrimSpace(s)
	neg, mant, exp, ok := splitDecimal(t)
	if !ok {
		return nil, fmt.Errorf("%q is not a decimal number", s)
	}
	t = strings.TrimPrefix(t, "+")
	mant = strings.TrimLeft(mant, "0")
	if mant == "" {
		return int64(0), nil
	}
	for len(mant) > 1 && mant[len(mant)-1] == '0' {
		mant = mant[:len(mant)-1]
		exp++
	}
	beyond := Int{Side: 1}
	if neg {
		beyond.Side = -1
	}
	var floor, ceil Int
	switch digits := len(mant) + exp; {
	case digits > 20: // |x| >= 10^20 > MaxUint64
		floor, ceil = beyond, beyond
	case digits <= 0: // 0 < |x| < 1
		floor, ceil = Int{}, Int{Abs: 1}
		if neg {
			floor, ceil = Int{Neg: true, Abs: 1}, Int{}
		}
	default:
		whole := mant
		if exp >= 0 {
			whole += strings.Repeat("0", exp)
		} else {
			whole = mant[:digits]
		}
		abs, err := strconv.ParseUint(whole, 10, 64)
		if err != nil { // 20 digits above MaxUint64
			floor, ceil = beyond, beyond
			break
		}
		frac := exp < 0 // trailing zeros are stripped: any fraction digit left is non-zero
		floor, ceil = signed(neg, abs, false), signed(neg, abs, false)
		if frac && neg {
			floor = signed(true, abs, true)
		} else if frac {
			ceil = signed(false, abs, true)
		}
	}
	if floor == ceil {
		if v, ok := floor.Int64(); ok {
			return v, nil
		}
		if floor.Side == 0 {
			t = strconv.FormatUint(floor.Abs, 10)
			if floor.Neg {
				t = "-" + t
			}
		}
	}
	return Number{text: t, floor: floor, ceil: ceil, frac: exp < 0}, nil
}

// signed returns ±(abs+1 when plusOne, else abs), or a Side beyond the
// domain when that is outside [MinInt64, MaxUint64].
func signed(neg bool, abs uint64, plusOne bool) Int {
	if plusOne {
		if abs == math.MaxUint64 {
			if neg {
				return Int{Side: -1}
			}
			return Int{Side: 1}
		}
		abs++
	}
	if neg && abs > 1<<63 {
		return Int{Side: -1}
	}
	return Int{Neg: neg && abs != 0, Abs: abs}
}

// splitDecimal splits a decimal number into its sign, its digits (integer
// and fraction parts together) and the exponent that scales them: the
// value is ±digits × 10^exp. Exponents beyond maxExpDigits digits saturate.
func splitDecimal(s string) (neg bool, mant string, exp int, ok bool) {
	if s != "" && (s[0] == '-' || s[0] == '+') {
		neg, s = s[0] == '-', s[1:]
	}
	i := 0
	for i < len(s) && isDigit(s[i]) {
		i++
	}
	intPart := s[:i]
	var fracPart string
	if i < len(s) && s[i] == '.' {
		j := i + 1
		for j < len(s) && isDigit(s[j]) {
			j++
		}
		fracPart, i = s[i+1:j], j
	}
	if intPart == "" && fracPart == "" {
		return false, "", 0, false
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		j := i + 1
		eneg := false
		if j < len(s) && (s[j] == '-' || s[j] == '+') {
			eneg, j = s[j] == '-', j+1
		}
		k := j
		for k < len(s) && isDigit(s[k]) {
			k++
		}
		if k == j {
			return false, "", 0, false
		}
		ed := strings.TrimLeft(s[j:k], "0")
		if len(ed) > maxExpDigits {
			ed = "1" + strings.Repeat("0", maxExpDigits)
		}
		if ed != "" {
			exp, _ = strconv.Atoi(ed)
		}
		if eneg {
			exp = -exp
		}
		i = k
	}
	if i != len(s) {
		return false, "", 0, false
	}
	return neg, intPart + fracPart, exp - len(fracPart), true
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }
