package h5_test

import (
	"bytes"
	"compress/zlib"
	"encoding/binary"
	"io"
	"testing"

	. "github.com/quarrydb/quarry/internal/h5"
)

// fuzzFilters maps two bits of the fuzzer's pipeline byte to a filter; 3
// is a filter the decoder does not know (it must fail, never guess).
var fuzzFilters = [4]int{FilterDeflate, FilterShuffle, FilterFletcher32, FilterLZF}

// fuzzPipeline turns the fuzzer's pipeline byte into up to three filters
// (pipeline order): bits 0-1 the count, then two bits per filter.
func fuzzPipeline(b byte) []int {
	var filters []int
	for i := range int(b & 3) {
		filters = append(filters, fuzzFilters[(b>>(2+2*i))&3])
	}
	return filters
}

// refDecode undoes the pipeline with Go's own decoders (compress/zlib, an
// independent unshuffle and Fletcher-32). ok is false when the chunk does
// not decode to exactly chunkBytes bytes; known is false when only Go's
// zlib rejected the stream (another inflater may still decode it).
func refDecode(raw []byte, filters []int, mask uint32, shuffleSize, chunkBytes, capacity int) (out []byte, ok, known bool) {
	cur := raw
	for i := len(filters) - 1; i >= 0; i-- {
		if mask&(1<<i) != 0 {
			continue
		}
		switch filters[i] {
		case FilterFletcher32:
			if len(cur) < 4 {
				return nil, false, true
			}
			body, stored := cur[:len(cur)-4], binary.LittleEndian.Uint32(cur[len(cur)-4:])
			sum := fletcher32(body)
			// Releases before 1.6.3 stored the sum byte-swapped.
			swapped := (sum&0x00ff00ff)<<8 | (sum&0xff00ff00)>>8
			if stored != sum && stored != swapped {
				return nil, false, true
			}
			cur = body
		case FilterShuffle:
			if len(cur) > capacity {
				return nil, false, true
			}
			cur = unshuffleBytes(cur, shuffleSize)
		case FilterDeflate:
			zr, err := zlib.NewReader(bytes.NewReader(cur))
			if err != nil {
				return nil, false, false
			}
			// One byte past the capacity tells a stream that does not fit.
			dec, err := io.ReadAll(io.LimitReader(zr, int64(capacity)+1))
			if len(dec) > capacity {
				return nil, false, true
			}
			if err != nil {
				return nil, false, false
			}
			cur = dec
		default:
			return nil, false, true
		}
	}
	if len(cur) != chunkBytes {
		return nil, false, true
	}
	return cur, true, true
}

// unshuffleBytes undoes HDF5's byte shuffle of size-byte elements; bytes
// past the last whole element stay in place.
func unshuffleBytes(b []byte, size int) []byte {
	out := bytes.Clone(b)
	n := len(b) / max(size, 1)
	if size <= 1 || n <= 1 {
		return out
	}
	for i := range n {
		for j := range size {
			out[i*size+j] = b[j*n+i]
		}
	}
	return out
}

// FuzzChunkDecode feeds arbitrary bytes to the chunk decoder (fletcher32,
// shuffle, deflate through libdeflate and zlib, in any pipeline order and
// with any filter mask): it must never crash or write past its buffers,
// and its output must equal Go's own decoding whenever Go decodes the
// chunk, and it must fail whenever the chunk cannot decode.
func FuzzChunkDecode(f *testing.F) {
	chunk := make([]byte, 96)
	for i := range chunk {
		chunk[i] = byte(i / 5)
	}
	z := deflateBytes(f, shuffleBytes(chunk, 4))
	all := byte(3 | 2<<2 | 1<<4 | 0<<6) // fletcher32, shuffle, deflate
	f.Add(z, byte(1|0<<2), byte(4), uint16(len(chunk)), byte(0))
	f.Add(appendFletcher32(z), all, byte(4), uint16(len(chunk)), byte(0))
	f.Add(appendFletcher32(shuffleBytes(chunk, 4)), all, byte(4), uint16(len(chunk)), byte(4))
	f.Add(appendFletcher32(chunk), byte(1|2<<2), byte(0), uint16(len(chunk)), byte(0))
	f.Add(z[:len(z)-3], byte(1|0<<2), byte(4), uint16(len(chunk)), byte(0))
	f.Add([]byte{0x78, 0x9c, 0x03, 0x00, 0x00, 0x00, 0x00, 0x01}, byte(1), byte(1), uint16(0), byte(0))
	f.Fuzz(func(t *testing.T, raw []byte, pipeline, shuffleSize byte, chunkBytes uint16, mask byte) {
		filters := fuzzPipeline(pipeline)
		size := int(chunkBytes)%4096 + 1
		capacity := size + 4*len(filters)
		want, ok, known := refDecode(raw, filters, uint32(mask), int(shuffleSize), size, capacity)
		for _, ld := range []bool{true, false} {
			if ld && !HaveLibdeflate() {
				continue
			}
			UseLibdeflate(ld)
			// An exactly sized copy, so reading past the input is caught
			// under -asan.
			got := DecodeChunk(filters, int(shuffleSize), size, bytes.Clone(raw), uint32(mask))
			UseLibdeflate(true)
			switch {
			case ok && got == nil:
				t.Fatalf("libdeflate=%v filters=%v mask=%#x: decoder failed, Go decodes %d bytes", ld, filters, mask, len(want))
			case ok && !bytes.Equal(got, want):
				t.Fatalf("libdeflate=%v filters=%v mask=%#x: decoded bytes differ from Go's", ld, filters, mask)
			case !ok && known && got != nil:
				t.Fatalf("libdeflate=%v filters=%v mask=%#x: decoded a chunk that cannot decode", ld, filters, mask)
			case !ok && !known && got != nil && !ld:
				t.Fatalf("filters=%v mask=%#x: zlib decoded a stream Go's compress/zlib rejects", filters, mask)
			}
		}
	})
}
