package h5

import (
	"bytes"
	"encoding/binary"
	"math/bits"
	"runtime"
	"sync"
	"unsafe"
)

// PackFixedStringsFrom is PackFixedStrings from a strided source: the i-th
// string is src[i*stride : i*stride+size]; the trimmed strings go back to
// back into dst, which needs room for n*size bytes. dst may be src itself
// (then stride must equal size) but must not overlap it otherwise. Large
// inputs are packed on several cores.
func PackFixedStringsFrom(dst, src []byte, n, stride, size int, pad StrPad, offsets []int32) int {
	if n < 0 || size < 0 || stride < size || len(offsets) < n+1 || len(dst) < n*size || (n > 0 && len(src) < (n-1)*stride+size) {
		panic("h5: PackFixedStringsFrom buffers too small")
	}
	if n == 0 || size == 0 {
		clear(offsets[:n+1])
		return 0
	}
	if &dst[0] == &src[0] && stride != size {
		panic("h5: PackFixedStringsFrom in place needs stride == size")
	}
	return packFixedParallel(dst, src, n, stride, size, pad, offsets)
}

// packParallelMin is the number of strings from which packing is split
// over several goroutines.
const packParallelMin = 1 << 17

// packFixedParallel packs contiguous ranges of strings on up to GOMAXPROCS
// goroutines, range k into dst from byte k0*size on (its own strings'
// room, so the ranges never overlap), then moves each range's bytes down
// to follow the previous one and shifts its offsets.
func packFixedParallel(dst, src []byte, n, stride, size int, pad StrPad, offsets []int32) int {
	parts := min(runtime.GOMAXPROCS(0), n/packParallelMin)
	if parts < 2 {
		w := packFixed(dst, src, 0, 0, n, stride, size, pad, offsets)
		offsets[n] = int32(w)
		return w
	}
	inPlace := &dst[0] == &src[0]
	used := make([]int, parts)
	var wg sync.WaitGroup
	for k := range parts {
		wg.Go(func() {
			i0, i1 := n*k/parts, n*(k+1)/parts
			// In place, a range reads only its own strings (the next
			// range rewrites its strings concurrently).
			s := src
			if inPlace {
				s = src[:i1*stride]
			}
			used[k] = packFixed(dst[:i1*size], s, i0*size, i0, i1, stride, size, pad, offsets) - i0*size
		})
	}
	wg.Wait()
	w := used[0]
	for k := 1; k < parts; k++ {
		i0, i1 := n*k/parts, n*(k+1)/parts
		if delta := i0*size - w; delta != 0 {
			copy(dst[w:w+used[k]], dst[i0*size:i0*size+used[k]])
			for i := i0; i < i1; i++ {
				offsets[i] -= int32(delta)
			}
		}
		w += used[k]
	}
	offsets[n] = int32(w)
	return w
}

// packFixed packs strings i0..i1-1 of src into dst from byte w on,
// writing their offsets; it returns the end of the bytes written. In place
// (dst and src sharing memory) w must not exceed i0*stride. dst ends where
// the range's room ends and src where the bytes that may be read end:
// whole-word copies never go past either.
func packFixed(dst, src []byte, w, i0, i1, stride, size int, pad StrPad, offsets []int32) int {
	// inPlace: dst and src share memory, so a string copied with whole
	// words must not spill into the next source string.
	inPlace := len(dst) > 0 && len(src) > 0 && &dst[0] == &src[0]
	for i := i0; i < i1; i++ {
		p := i * stride
		s := src[p : p+size]
		l := fixedLen(s, pad)
		offsets[i] = int32(w)
		// Short strings move as two 8-byte words (both loaded before
		// either is stored, so an overlapping in-place move is safe) when
		// the words stay inside both buffers and, in place, before the
		// next string.
		if l <= 16 && p+16 <= len(src) && w+16 <= len(dst) && (!inPlace || w+16 <= p+stride) {
			a := *(*uint64)(unsafe.Pointer(&src[p]))
			b := *(*uint64)(unsafe.Pointer(&src[p+8]))
			*(*uint64)(unsafe.Pointer(&dst[w])) = a
			*(*uint64)(unsafe.Pointer(&dst[w+8])) = b
		} else {
			copy(dst[w:w+l], s[:l])
		}
		w += l
	}
	return w
}

// fixedLen is the length of the fixed-length string s once trimmed per pad:
// NULLTERM cuts at the first NUL, SPACEPAD drops trailing spaces and NULs,
// any other padding (NULLPAD) trailing NULs.
func fixedLen(s []byte, pad StrPad) int {
	switch pad {
	case StrNullTerm:
		if i := bytes.IndexByte(s, 0); i >= 0 {
			return i
		}
		return len(s)
	case StrSpacePad:
		l := len(s)
		for l > 0 && (s[l-1] == 0 || s[l-1] == ' ') {
			l--
		}
		return l
	}
	// Trailing NULs, eight bytes at a time: the last string byte is the
	// highest non-zero byte of the last non-zero little-endian word.
	l := len(s)
	for l >= 8 {
		if w := binary.LittleEndian.Uint64(s[l-8 : l]); w != 0 {
			return l - bits.LeadingZeros64(w)/8
		}
		l -= 8
	}
	for l > 0 && s[l-1] == 0 {
		l--
	}
	return l
}

// FixedPacker packs fixed-length strings into Arrow layout in place, range
// by range, while later strings are still being read into the same
// buffer: Pack(upTo) packs every string not yet packed below upTo, reading
// no byte at or past upTo*size. The result equals PackFixedStrings over
// the whole buffer.
type FixedPacker struct {
	data    []byte
	size    int
	pad     StrPad
	offsets []int32
	w, next int
}

// NewFixedPacker packs strings of size bytes stored back to back in data,
// trimmed per pad (see PackFixedStrings), writing offsets (len >= the
// number of strings + 1).
func NewFixedPacker(data []byte, size int, pad StrPad, offsets []int32) *FixedPacker {
	return &FixedPacker{data: data, size: size, pad: pad, offsets: offsets}
}

// Pack packs strings up to (not including) upTo.
func (p *FixedPacker) Pack(upTo int) {
	if upTo <= p.next {
		return
	}
	if len(p.offsets) < upTo+1 || len(p.data) < upTo*p.size {
		panic("h5: FixedPacker buffers too small")
	}
	if p.size > 0 {
		end := upTo * p.size
		p.w = packFixed(p.data[:end], p.data[:end], p.w, p.next, upTo, p.size, p.size, p.pad, p.offsets)
	} else {
		clear(p.offsets[p.next:upTo])
	}
	p.next = upTo
}

// Finish writes the final offset and returns the number of data bytes
// used by the strings packed.
func (p *FixedPacker) Finish() int {
	p.offsets[p.next] = int32(p.w)
	return p.w
}
