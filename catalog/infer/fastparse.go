package infer

import (
	"encoding/binary"
	"math/bits"
	"strconv"
	"unsafe"
)

// Fast parsers of the common number and timestamp shapes, shared by the
// CSV reader (catalog/csv) and the JSON reader (catalog): each gives
// exactly what the general parser gives (strconv, ParseTimestamp) for the
// shapes it accepts, and says when it does not accept one.

const (
	lo8 = 0x0101010101010101
	hi8 = 0x8080808080808080
)

// Load64 is the little-endian word of the eight bytes of b at i (which
// must be readable, up to cap(b)).
func Load64(b []byte, i int) uint64 {
	return binary.LittleEndian.Uint64(unsafe.Slice((*byte)(unsafe.Add(unsafe.Pointer(unsafe.SliceData(b)), i)), 8))
}

// ExactZero has the high bit set in exactly the zero bytes of x.
func ExactZero(x uint64) uint64 {
	const l7 = 0x7F7F7F7F7F7F7F7F
	return ^(((x & l7) + l7) | x | l7)
}

// ParseInt64Bytes parses like strconv.ParseInt(s, 10, 64).
func ParseInt64Bytes(s []byte) (int64, bool) {
	if n := len(s); n > 0 && n <= 18 {
		i := 0
		neg := false
		switch s[0] {
		case '-':
			neg, i = true, 1
		case '+':
			i = 1
		}
		if i < n {
			var v int64
			for ; i+8 <= n; i += 8 {
				x, ok := Parse8Digits(Load64(s, i))
				if !ok {
					return 0, false
				}
				v = v*100_000_000 + int64(x)
			}
			for ; i < n; i++ {
				d := s[i] - '0'
				if d > 9 {
					return 0, false
				}
				v = v*10 + int64(d)
			}
			if neg {
				v = -v
			}
			return v, true
		}
		return 0, false
	}
	v, err := strconv.ParseInt(unsafe.String(unsafe.SliceData(s), len(s)), 10, 64)
	return v, err == nil
}

// Parse8Digits converts eight ASCII digits (as loaded little-endian, so
// the first digit is the lowest byte) to their value; ok is false when a
// byte is not a digit. (The SWAR steps are Lemire's.)
func Parse8Digits(x uint64) (uint64, bool) {
	if (x&0xF0F0F0F0F0F0F0F0)|(((x+0x0606060606060606)&0xF0F0F0F0F0F0F0F0)>>4) != 0x3333333333333333 {
		return 0, false
	}
	x = (x & 0x0F0F0F0F0F0F0F0F) * 2561 >> 8
	x = (x & 0x00FF00FF00FF00FF) * 6553601 >> 16
	return (x & 0x0000FFFF0000FFFF) * 42949672960001 >> 32, true
}

var float64pow10 = [...]float64{1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9,
	1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22}

// ParseDecimalFast parses [+-]?digits[.digits] with at most 15 digits
// (at least one) exactly like strconv.ParseFloat: the mantissa is exact in
// a float64 and so is the power of ten, so one IEEE division is correctly
// rounded (strconv's own "exact" fast path). ok is false when s has
// another shape (then it may still be a valid float).
func ParseDecimalFast(s []byte) (float64, bool) {
	n := len(s)
	if f, ok := ParseDecimalWord(s); ok {
		return f, true
	}
	if n == 0 || n > 17 {
		return 0, false
	}
	i := 0
	neg := false
	if c := s[0]; c == '-' || c == '+' {
		neg, i = c == '-', 1
	}
	var mant uint64
	start := i
	for i < n {
		d := s[i] - '0'
		if d > 9 {
			break
		}
		mant = mant*10 + uint64(d)
		i++
	}
	digits, frac := i-start, 0
	if i < n {
		if s[i] != '.' {
			return 0, false
		}
		i++
		fs := i
		for i < n {
			d := s[i] - '0'
			if d > 9 {
				return 0, false
			}
			mant = mant*10 + uint64(d)
			i++
		}
		frac = i - fs
		digits += frac
	}
	if digits == 0 || digits > 15 {
		return 0, false
	}
	return decimalValue(mant, uint(frac), neg), true
}

// decimalValue is ±mant/10^frac for mant < 2^53 and frac <= 15: one exact
// conversion and one correctly rounded division, so it equals
// strconv.ParseFloat of the decimal text.
func decimalValue(mant uint64, frac uint, neg bool) float64 {
	f := float64(mant)
	if frac > 0 {
		f /= float64pow10[frac]
	}
	if neg {
		f = -f
	}
	return f
}

// ParseDecimalWord is ParseDecimalFast for a cell of 1 to 8 bytes with 8
// readable bytes from its start (cap(s) >= 8), in registers: the cell is
// loaded as one word, its sign and its one '.' are cut out and the digits,
// left-padded with '0', are converted by Parse8Digits. It accepts a subset
// of what ParseDecimalFast accepts (at most 8 digits) with the same value;
// ok is false for everything else.
func ParseDecimalWord(s []byte) (float64, bool) {
	if len(s) == 0 || len(s) > 8 || cap(s) < 8 {
		return 0, false
	}
	n := uint(len(s))
	x := Load64(s[:8], 0)
	neg := false
	if c := x & 0xFF; c == '-' || c == '+' {
		neg = c == '-'
		x >>= 8
		n--
		if n == 0 {
			return 0, false
		}
	}
	x &= ^uint64(0) >> (64 - 8*n)
	frac := uint(0)
	if dots := ExactZero(x^('.'*lo8)) & (hi8 >> (64 - 8*n)); dots != 0 {
		if dots&(dots-1) != 0 {
			return 0, false
		}
		k := uint(bits.TrailingZeros64(dots)) >> 3
		low := uint64(1)<<(8*k) - 1
		x = x&low | x>>8&^low
		n--
		frac = n - k
		if n == 0 {
			return 0, false
		}
	}
	sh := 8 * (8 - n)
	x = x<<sh | 0x3030303030303030&(uint64(1)<<sh-1)
	v, ok := Parse8Digits(x)
	if !ok {
		return 0, false
	}
	return decimalValue(v, frac, neg), true
}

// ParseNaiveTSFast parses the common YYYY-MM-DD(T| )HH:MM:SS shape (19
// bytes, no fraction, no zone) into milliseconds, exactly like
// ParseTimestamp; ok is false for every other shape.
func ParseNaiveTSFast(s []byte) (int64, bool) {
	if len(s) != 19 {
		return 0, false
	}
	// Three overlapping words: "YYYY-MM-", "DDTHH:MM", "HH:MM:SS".
	a, b, c := Load64(s, 0), Load64(s, 8), Load64(s, 11)
	const (
		aSep = 0xFF<<32 | 0xFF<<56
		bSep = 0xFF<<16 | 0xFF<<40
		zero = 0x3030303030303030
	)
	if a&aSep != '-'<<32|'-'<<56 || (b>>16&0xFF != 'T' && b>>16&0xFF != ' ') || b>>40&0xFF != ':' || c&bSep != ':'<<16|':'<<40 {
		return 0, false
	}
	a = a&^aSep | zero&aSep
	b = b&^bSep | zero&bSep
	c = c&^bSep | zero&bSep
	if !allDigits(a) || !allDigits(b) || !allDigits(c) {
		return 0, false
	}
	// Digit pairs: byte i of x*10 + x>>8 is 10*digit(i) + digit(i+1) (at
	// most 99, so bytes do not carry into each other).
	a, b, c = a-zero, b-zero, c-zero
	a = a*10 + a>>8
	b = b*10 + b>>8
	y := int(a&0xFF)*100 + int(a>>16&0xFF)
	mo := int(a >> 40 & 0xFF)
	d := int(b & 0xFF)
	h := int(b >> 24 & 0xFF)
	mi := int(b >> 48 & 0xFF)
	sec := int(c>>48&0xFF)*10 + int(c>>56)
	if uint(mo-1) > 11 || uint(d-1) >= uint(MonthLen[mo]) || h > 23 || mi > 59 || sec > 59 {
		if mo != 2 || d != 29 || DaysIn(mo, y) != 29 || h > 23 || mi > 59 || sec > 59 {
			return 0, false
		}
	}
	return (EpochDays(y, mo, d)*86400 + int64(h*3600+mi*60+sec)) * 1000, true
}

// allDigits reports whether the eight bytes of x are ASCII digits.
func allDigits(x uint64) bool {
	return (x&0xF0F0F0F0F0F0F0F0)|(((x+0x0606060606060606)&0xF0F0F0F0F0F0F0F0)>>4) == 0x3333333333333333
}
