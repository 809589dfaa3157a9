package h5

import (
	"bytes"
	"unsafe"
)

// Bridges for the external tests (package h5_test: they build their files
// with h5write, which imports this package).

// UseLibdeflate switches libdeflate on or off for inflaters created from
// now on.
var UseLibdeflate = useLibdeflate

// DecodeChunk runs the chunk decoder alone on raw (see newPipeline for
// filters, shuffleSize and chunkBytes; mask as in chunkWorker.decode) and
// returns a copy of the decoded chunk, nil when raw does not decode.
func DecodeChunk(filters []int, shuffleSize, chunkBytes int, raw []byte, mask uint32) []byte {
	w := newChunkWorker(newPipeline(filters, shuffleSize, chunkBytes))
	defer w.free()
	p := w.decode(raw, mask)
	if p == nil {
		return nil
	}
	return bytes.Clone(unsafe.Slice((*byte)(p), chunkBytes))
}
