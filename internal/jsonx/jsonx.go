// Package jsonx holds the JSON value encoders shared by every place Quarry
// writes JSON straight from typed values (the Arrow record encoder in
// materialize, HDF5 slices as nested lists): floats formatted exactly as
// encoding/json and JavaScript do, with fast paths, and strings escaped so
// the output is valid JSON for any input bytes.
package jsonx

import (
	"math"
	"math/bits"
	"strconv"
	"unicode/utf8"
)

// AppendFloat appends f as a JSON number the way encoding/json and
// JavaScript's JSON.stringify do: the shortest decimal that parses back to
// the same value (of the given bit size), in plain notation for 1e-6 <= |f|
// < 1e21 and in exponent notation ("1e+21", "5e-324") otherwise. Non-finite
// values become the strings "NaN", "Infinity" and "-Infinity".
//
// Integral values and values with at most four fraction digits (prices,
// readings) take a fast path that produces the same text without the
// general shortest-digits search.
func AppendFloat(dst []byte, f float64, bits int) []byte {
	switch {
	case math.IsNaN(f):
		return append(dst, `"NaN"`...)
	case math.IsInf(f, 1):
		return append(dst, `"Infinity"`...)
	case math.IsInf(f, -1):
		return append(dst, `"-Infinity"`...)
	case f == 0:
		if math.Signbit(f) {
			return append(dst, '-', '0')
		}
		return append(dst, '0')
	}
	abs := math.Abs(f)
	if bits == 64 || abs < 1<<24 { // float32 integers above 2^24 have shorter float32 forms
		if abs < 1e15 && f == math.Trunc(f) {
			return strconv.AppendInt(dst, int64(f), 10)
		}
		if bits == 64 && abs >= 1e-4 && abs < 1e11 {
			if out, ok := appendShortDecimal(dst, f); ok {
				return out
			}
		}
	}
	fmtc := byte('f')
	if bits == 32 {
		if a := float32(abs); a < 1e-6 || a >= 1e21 {
			fmtc = 'e'
		}
	} else if abs < 1e-6 || abs >= 1e21 {
		fmtc = 'e'
	}
	dst = strconv.AppendFloat(dst, f, fmtc, -1, bits)
	if fmtc == 'e' { // "1e-07" -> "1e-7", as encoding/json
		if n := len(dst); n >= 4 && dst[n-4] == 'e' && dst[n-3] == '-' && dst[n-2] == '0' {
			dst[n-2] = dst[n-1]
			dst = dst[:n-1]
		}
	}
	return dst
}

var pow10f = [...]float64{1, 1e1, 1e2, 1e3, 1e4}

// appendShortDecimal appends f (1e-4 <= |f| < 1e11, not integral) with k
// fraction digits for the smallest k in 1..4 such that the decimal m/10^k
// parses back to exactly f, which makes it the shortest round-trip form
// (the one strconv would find): m < 2^50, so the spacing of float64s near f
// is below 10^-k and no other k-digit decimal rounds to f. ok is false when
// f needs more than four fraction digits.
func appendShortDecimal(dst []byte, f float64) ([]byte, bool) {
	a, neg := f, false
	if a < 0 {
		a, neg = -a, true
	}
	for k := 1; k < len(pow10f); k++ {
		p := pow10f[k]
		m := a * p
		if m >= 1<<50 {
			return dst, false
		}
		// The decimal is round(m): m is within an ulp of it, so it is the
		// truncation or the next integer (no math.Round, which is not a
		// single instruction on every GOAMD64 level).
		v := uint64(m)
		// Cheap rejection first: if v/10^k (or (v+1)/10^k) rounds to a, m
		// lies within m*2^-52 of that integer, so a fraction of m farther
		// than m*2^-51 from both rules k out without dividing.
		if d, tol := m-float64(v), m*0x1p-51; d > tol && 1-d > tol {
			continue
		}
		if float64(v)/p != a {
			if v++; float64(v)/p != a {
				continue
			}
		}
		// v/10^k with exactly k fraction digits (the last one non-zero:
		// otherwise a smaller k would have matched), written right to left.
		var tmp [24]byte
		i := len(tmp)
		for j := 0; j < k; j++ {
			i--
			tmp[i] = byte('0' + v%10)
			v /= 10
		}
		i--
		tmp[i] = '.'
		for {
			i--
			tmp[i] = byte('0' + v%10)
			v /= 10
			if v == 0 {
				break
			}
		}
		if neg {
			i--
			tmp[i] = '-'
		}
		return append(dst, tmp[i:]...), true
	}
	return dst, false
}

const hexDigits = "0123456789abcdef"

// safeASCII[c] is true for ASCII bytes that need no escaping in a JSON string.
var safeASCII = func() (t [utf8.RuneSelf]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// AppendString appends s as a JSON string. The output is valid JSON for
// any input bytes: invalid UTF-8 becomes U+FFFD, control characters are
// escaped, and so are U+2028/U+2029 (for JavaScript consumers).
func AppendString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	dst = AppendStringBody(dst, s)
	return append(dst, '"')
}

// SWAR constants for plainPrefix.
const (
	swarLo   = 0x0101010101010101
	swarHi   = 0x8080808080808080
	swarCtl  = 0x2020202020202020 // bytes < 0x20
	swarQuot = 0x2222222222222222 // '"'
	swarBack = 0x5c5c5c5c5c5c5c5c // '\\'
)

// plainPrefix returns the length of the longest prefix of s made of ASCII
// bytes that need no escaping in a JSON string, testing 8 bytes at a time.
// In each test the lowest flagged byte is exact (borrows only flag bytes
// above a real match), so the first special byte is found exactly.
func plainPrefix(s string) int {
	i := 0
	for ; i+8 <= len(s); i += 8 {
		w := uint64(s[i]) | uint64(s[i+1])<<8 | uint64(s[i+2])<<16 | uint64(s[i+3])<<24 |
			uint64(s[i+4])<<32 | uint64(s[i+5])<<40 | uint64(s[i+6])<<48 | uint64(s[i+7])<<56
		t := w & swarHi
		t |= (w - swarCtl) & ^w & swarHi
		x := w ^ swarQuot
		t |= (x - swarLo) & ^x & swarHi
		y := w ^ swarBack
		t |= (y - swarLo) & ^y & swarHi
		if t != 0 {
			return i + bits.TrailingZeros64(t)/8
		}
	}
	for ; i < len(s); i++ {
		if c := s[i]; c >= utf8.RuneSelf || !safeASCII[c] {
			return i
		}
	}
	return i
}

// AppendStringBody appends s escaped for the inside of a JSON string
// (no quotes).
func AppendStringBody(dst []byte, s string) []byte {
	for len(s) > 0 {
		p := plainPrefix(s)
		dst = append(dst, s[:p]...)
		if p == len(s) {
			return dst
		}
		s = s[p:]
		c := s[0]
		if c < utf8.RuneSelf {
			switch c {
			case '"', '\\':
				dst = append(dst, '\\', c)
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
			}
			s = s[1:]
			continue
		}
		// A run of multi-byte characters.
		i := 0
		for i < len(s) && s[i] >= utf8.RuneSelf {
			r, size := utf8.DecodeRuneInString(s[i:])
			switch {
			case r == utf8.RuneError && size == 1:
				dst = append(dst, s[:i]...)
				dst = append(dst, "\uFFFD"...)
				s = s[i+1:]
				i = 0
				continue
			case r == '\u2028' || r == '\u2029':
				dst = append(dst, s[:i]...)
				dst = append(dst, '\\', 'u', '2', '0', '2', hexDigits[r&0xF])
				s = s[i+size:]
				i = 0
				continue
			}
			i += size
		}
		dst = append(dst, s[:i]...)
		s = s[i:]
	}
	return dst
}
