package engine

import (
	"encoding/binary"
	"math/bits"
	"unsafe"
)

// Row masks are []bool (one byte per row, 0 or 1). The helpers here work
// on them eight rows at a time: a little-endian uint64 load of eight bools
// has exactly one bit set per true row in bit 8k, so popcount counts them
// and a zero word means eight failed rows.

// maskBytes views a mask as its bytes (every byte is 0 or 1).
func maskBytes(mask []bool) []uint8 {
	if len(mask) == 0 {
		return nil
	}
	return unsafe.Slice((*uint8)(unsafe.Pointer(unsafe.SliceData(mask))), len(mask))
}

// b2u is 1 for true and 0 for false, without a branch.
func b2u(b bool) uint8 { return *(*uint8)(unsafe.Pointer(&b)) }

// fillTrue sets every entry of mask.
func fillTrue(mask []bool) {
	m := maskBytes(mask)
	if len(m) == 0 {
		return
	}
	m[0] = 1
	for i := 1; i < len(m); i *= 2 {
		copy(m[i:], m[:i])
	}
}

// countTrue returns the number of true entries of mask.
func countTrue(mask []bool) int {
	m := maskBytes(mask)
	n := 0
	i := 0
	for ; i+8 <= len(m); i += 8 {
		n += bits.OnesCount64(binary.LittleEndian.Uint64(m[i:]))
	}
	for ; i < len(m); i++ {
		n += int(m[i])
	}
	return n
}

// anyTrue reports whether mask has a true entry.
func anyTrue(mask []bool) bool {
	m := maskBytes(mask)
	i := 0
	for ; i+32 <= len(m); i += 32 {
		if binary.LittleEndian.Uint64(m[i:])|binary.LittleEndian.Uint64(m[i+8:])|
			binary.LittleEndian.Uint64(m[i+16:])|binary.LittleEndian.Uint64(m[i+24:]) != 0 {
			return true
		}
	}
	for ; i < len(m); i++ {
		if m[i] != 0 {
			return true
		}
	}
	return false
}

// spread8 maps a bitmap byte to eight mask bytes (bit k -> byte k, 0 or 1).
var spread8 = func() (t [256]uint64) {
	for b := range 256 {
		var w uint64
		for k := range 8 {
			w |= uint64(b>>k&1) << (8 * k)
		}
		t[b] = w
	}
	return t
}()

// bitmapByte returns the 8 bits of bm starting at bit position pos (bits
// past the end of bm read as 0).
func bitmapByte(bm []byte, pos int) uint8 {
	k, sh := pos>>3, uint(pos&7)
	lo := uint16(bm[k])
	if sh != 0 && k+1 < len(bm) {
		lo |= uint16(bm[k+1]) << 8
	}
	return uint8(lo >> sh)
}

// andBitmap ANDs bit off+i of bm into mask[i] (or its complement when
// invert is set): with a validity bitmap, invert=false keeps the valid rows
// and invert=true the null ones.
func andBitmap(mask []bool, bm []byte, off int, invert bool) {
	m := maskBytes(mask)
	var flip uint8
	if invert {
		flip = 0xff
	}
	i := 0
	for ; i+8 <= len(m); i += 8 {
		w := spread8[bitmapByte(bm, off+i)^flip]
		p := m[i : i+8 : i+8]
		binary.LittleEndian.PutUint64(p, binary.LittleEndian.Uint64(p)&w)
	}
	for ; i < len(m); i++ {
		bit := getBit(bm, off+i) ^ (flip & 1)
		m[i] &= bit
	}
}

// selectRows writes the indices of the true entries of mask into sel
// (grown as needed) and returns it.
func selectRows(mask []bool, sel []int32) []int32 {
	if cap(sel) < len(mask) {
		sel = make([]int32, len(mask))
	}
	sel = sel[:len(mask)]
	m := maskBytes(mask)
	k := 0
	i := 0
	for ; i+8 <= len(m); i += 8 {
		if binary.LittleEndian.Uint64(m[i:]) == 0 {
			continue
		}
		for j := i; j < i+8; j++ {
			sel[k] = int32(j)
			k += int(m[j])
		}
	}
	for ; i < len(m); i++ {
		sel[k] = int32(i)
		k += int(m[i])
	}
	return sel[:k]
}
