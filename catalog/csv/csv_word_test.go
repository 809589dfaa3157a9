package csv

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"testing"
)

// inBuffer returns s as a slice with extra readable bytes after it (as
// cells are inside a chunk buffer), filled with fill.
func inBuffer(s string, extra int, fill byte) []byte {
	b := make([]byte, len(s)+extra)
	copy(b, s)
	for i := len(s); i < len(b); i++ {
		b[i] = fill
	}
	return b[:len(s)]
}

// decimalShape reports whether s is [+-]?digits[.digits] with 1 to 8
// digits, the cells parseDecimalWord must accept.
func decimalShape(s string) bool {
	i, digits, dot := 0, 0, false
	if len(s) > 0 && (s[0] == '-' || s[0] == '+') {
		i = 1
	}
	for ; i < len(s); i++ {
		switch c := s[i]; {
		case c >= '0' && c <= '9':
			digits++
		case c == '.' && !dot:
			dot = true
		default:
			return false
		}
	}
	return digits >= 1 && digits <= 8
}

func TestParseDecimalWord(t *testing.T) {
	cases := []struct {
		in   string
		ok   bool
		want float64
	}{
		{"0", true, 0},
		{"-0", true, math.Copysign(0, -1)},
		{"-0.00", true, math.Copysign(0, -1)},
		{"14.66", true, 14.66},
		{"+3.5", true, 3.5},
		{".5", true, 0.5},
		{"-.5", true, -0.5},
		{"5.", true, 5},
		{"12345678", true, 12345678},
		{"1234.5678", false, 0}, // 9 bytes: not a word
		{"1.234567", true, 1.234567},
		{"", false, 0},
		{"-", false, 0},
		{"+", false, 0},
		{".", false, 0},
		{"-.", false, 0},
		{"1.2.3", false, 0},
		{"1e5", false, 0},
		{"--1", false, 0},
		{"1-", false, 0},
		{" 1", false, 0},
		{"NaN", false, 0},
		{"0x10", false, 0},
	}
	for _, tc := range cases {
		for _, fill := range []byte{'0', '.', '-', 0xFF, ','} {
			got, ok := parseDecimalWord(inBuffer(tc.in, 8, fill))
			if ok != tc.ok || (ok && math.Float64bits(got) != math.Float64bits(tc.want)) {
				t.Errorf("parseDecimalWord(%q) fill %q = %v %v, want %v %v", tc.in, fill, got, ok, tc.want, tc.ok)
			}
		}
	}
}

// TestParseDecimalWordRandom: whatever parseDecimalWord accepts, strconv
// parses to the same bits, and it accepts every cell of its shape.
func TestParseDecimalWordRandom(t *testing.T) {
	r := rand.New(rand.NewPCG(51, 52))
	for range 300_000 {
		var s string
		if r.IntN(2) == 0 {
			s = fmt.Sprintf("%d.%0*d", r.IntN(10000), r.IntN(5), r.IntN(10000))
			if r.IntN(4) == 0 {
				s = "-" + s
			}
		} else {
			b := make([]byte, r.IntN(10))
			for i := range b {
				b[i] = "0123456789.-+e"[r.IntN(14)]
			}
			s = string(b)
		}
		if len(s) > 8 {
			continue
		}
		got, ok := parseDecimalWord(inBuffer(s, 8, "0.-,\xff"[r.IntN(5)]))
		if ok != decimalShape(s) {
			t.Fatalf("parseDecimalWord(%q) ok %v, shape %v", s, ok, decimalShape(s))
		}
		if !ok {
			continue
		}
		ref, err := strconv.ParseFloat(s, 64)
		if err != nil || math.Float64bits(ref) != math.Float64bits(got) {
			t.Fatalf("parseDecimalWord(%q) = %v, strconv %v %v", s, got, ref, err)
		}
		// parseFloat64Bytes takes the word path for such cells, and
		// the byte loop (no readable bytes after the cell) agrees.
		slow, ok := parseDecimalFast([]byte(s)[:len(s):len(s)])
		if !ok || math.Float64bits(slow) != math.Float64bits(got) {
			t.Fatalf("parseDecimalFast(%q) without a word = %v %v, word %v", s, slow, ok, got)
		}
	}
}

// TestKeyWords: the words are the cell's first 16 bytes, zero-padded,
// whatever follows the cell in memory.
func TestKeyWords(t *testing.T) {
	r := rand.New(rand.NewPCG(53, 54))
	for range 50_000 {
		b := make([]byte, r.IntN(24))
		for i := range b {
			b[i] = byte(r.IntN(256))
		}
		s := string(b)
		var pad [16]byte
		copy(pad[:], s)
		w0, w1 := load64(pad[:], 0), load64(pad[:], 8)
		for _, extra := range []int{0, 3, 16} {
			g0, g1 := keyWords(inBuffer(s, extra, byte(r.IntN(256))))
			if g0 != w0 || g1 != w1 {
				t.Fatalf("keyWords(%q) extra %d = %x %x, want %x %x", s, extra, g0, g1, w0, w1)
			}
		}
	}
}
