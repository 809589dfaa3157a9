package h5

import (
	"bytes"
	"math/rand/v2"
	"slices"
	"testing"
)

// refPack is the reference trimming of PackFixedStrings, one string and
// one byte at a time.
func refPack(src []byte, n, stride, size int, pad StrPad) ([]int32, []byte) {
	offs := []int32{0}
	var data []byte
	for i := range n {
		s := src[i*stride : i*stride+size]
		l := len(s)
		if pad == StrNullTerm {
			if z := bytes.IndexByte(s, 0); z >= 0 {
				l = z
			}
		} else {
			for l > 0 && (s[l-1] == 0 || (pad == StrSpacePad && s[l-1] == ' ')) {
				l--
			}
		}
		data = append(data, s[:l]...)
		offs = append(offs, int32(len(data)))
	}
	return offs, data
}

// randomFixed returns n strings of size bytes in records of stride bytes:
// random lengths, NULs and spaces inside and as padding, full-width
// strings, and random bytes between records.
func randomFixed(rng *rand.Rand, n, stride, size int) []byte {
	buf := make([]byte, n*stride+rng.IntN(3))
	for i := range buf {
		buf[i] = byte(rng.IntN(256))
	}
	alphabet := []byte{'a', 'b', ' ', 0, 0xd5, 0xa3}
	for i := range n {
		s := buf[i*stride : i*stride+size]
		l := rng.IntN(size + 1)
		if rng.IntN(5) == 0 {
			l = size
		}
		for j := range s {
			switch {
			case j < l:
				s[j] = alphabet[rng.IntN(len(alphabet))]
			case rng.IntN(2) == 0:
				s[j] = ' '
			default:
				s[j] = 0
			}
		}
	}
	return buf
}

func TestPackFixedStringsMatchesReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	cases := []struct {
		name          string
		n, stride, sz int
	}{
		{"empty", 0, 5, 5},
		{"zero-size", 10, 0, 0},
		{"one", 1, 3, 3},
		{"short", 100, 4, 4},
		{"seventeen", 1000, 17, 17},
		{"long", 300, 40, 40},
		{"exactly8", 200, 8, 8},
		{"parallel", 3*packParallelMin + 17, 17, 17},
		{"parallel-short", 2*packParallelMin + 5, 3, 3},
		{"strided", 1000, 35, 8},
		{"strided-parallel", 2*packParallelMin + 3, 35, 17},
		{"strided-tight", 1000, 9, 8},
	}
	for _, tc := range cases {
		for _, pad := range []StrPad{StrNullTerm, StrNullPad, StrSpacePad} {
			t.Run(tc.name, func(t *testing.T) {
				src := randomFixed(rng, tc.n, tc.stride, tc.sz)
				wantOffs, wantData := refPack(src, tc.n, tc.stride, tc.sz, pad)
				check := func(how string, offs []int32, data []byte, used int) {
					t.Helper()
					if used != len(wantData) || !bytes.Equal(data[:used], wantData) || !slices.Equal(offs, wantOffs) {
						t.Fatalf("%s pad %d: got %d bytes, want %d (offsets equal %v)", how, pad, used, len(wantData), slices.Equal(offs, wantOffs))
					}
				}
				offs := make([]int32, tc.n+1)
				dst := make([]byte, tc.n*tc.sz)
				used := PackFixedStringsFrom(dst, src, tc.n, tc.stride, tc.sz, pad, offs)
				check("strided", offs, dst, used)
				if tc.stride == tc.sz {
					data := slices.Clone(src)
					offs := make([]int32, tc.n+1)
					used := PackFixedStrings(data, tc.n, tc.sz, pad, offs)
					check("in place", offs, data, used)
					if tc.n > 0 && tc.sz > 0 {
						data = slices.Clone(src)
						used = PackFixedStringsFrom(data, data, tc.n, tc.stride, tc.sz, pad, offs)
						check("from, in place", offs, data, used)
					}
				}
			})
		}
	}
}
