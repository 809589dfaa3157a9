package h5

/*
#include "shim.h"
*/
import "C"

import (
	"math/bits"
	"runtime"
	"sync"
	"sync/atomic"
	"unsafe"
)

// ChunkReader reads hyperslabs of a chunked dataset by decoding its chunks
// itself: the raw (still filtered) chunks the selection touches are read
// with H5Dget_chunk_info_by_coord and H5Dread_chunk, each call under the
// package's locking discipline like every other library call, and then
// inflated, unshuffled and checksum-verified (fletcher32) with no HDF5
// call and no lock held, on up to GOMAXPROCS goroutines (one zlib or
// libdeflate stream each), and the selected part of each chunk is copied
// straight into the destination. H5Dread does the same work serially
// behind libhdf5's global lock; a block crossing several compressed chunks
// decodes them in parallel here. Inflating uses libdeflate when the system
// has it (loaded at run time, see HaveLibdeflate), else zlib.
//
// A ChunkReader exists only for datasets whose every chunk decodes to
// exactly the bytes H5Dread would return (see NewChunkReader); its Read
// falls back to H5Dread whenever a chunk does not decode as expected
// (corrupt data, a checksum mismatch, an unexpected size, a failing raw
// read), so results, errors included, match Read's. Chunks that were never
// written read as the fill value, as H5Dread reads them. Safe for
// concurrent use while the dataset and the memory type stay open.
type ChunkReader struct {
	dset, mem ID
	plan      C.qh5_chunkplan
	// fillElem is one element of the fill value in the memory type.
	fillElem []byte
	// fill is one chunk of the fill value, built on first use (for
	// chunks that were never written).
	fillOnce sync.Once
	fill     []byte
}

// NewChunkReader returns a ChunkReader for dataset dset read with memory
// type memType, or nil and the reason when the dataset does not qualify.
// It qualifies when it is chunked with a non-empty filter pipeline made
// only of deflate, shuffle and fletcher32 (partial edge chunks filtered
// like the others), its element type is made only of integers, floats,
// fixed-length strings, enums, arrays and compounds of those (no
// variable-length data, no references) and equals memType (same sizes,
// orders, members and offsets: H5Dread would convert nothing, so the
// decoded bytes are exactly what it returns), and unallocated chunks read
// as a defined fill value (fill time not "never"); chunks are at most 16
// MiB. Datasets without filters do not qualify: for them H5Dread already
// reads just the selected bytes. memType must stay open as long as the
// reader is used.
func NewChunkReader(dset, memType ID) (*ChunkReader, string, error) {
	r := &ChunkReader{dset: dset, mem: memType}
	lock()
	size := int(C.qh5_type_size(C.hid_t(memType)))
	unlock()
	if size <= 0 || size > int(C.QH5_MAX_CHUNK_BYTES) {
		return nil, "unsupported element size", nil
	}
	r.fillElem = make([]byte, size)
	var e C.qh5_err
	lock()
	ok := C.qh5_chunk_plan_fixed(C.hid_t(dset), C.hid_t(memType), &r.plan, unsafe.Pointer(&r.fillElem[0]), C.size_t(size), &e)
	unlock()
	switch {
	case ok < 0:
		return nil, "", errOf(&e)
	case ok == 0:
		return nil, C.GoString(&r.plan.reason[0]), nil
	}
	return r, "", nil
}

// ElemSize is the size in bytes of one element of the memory type.
func (r *ChunkReader) ElemSize() int { return len(r.fillElem) }

// HaveLibdeflate reports whether libdeflate was found at run time; chunk
// decoding then inflates with it (2-3x faster than zlib, same bytes).
func HaveLibdeflate() bool { return C.qh5_have_libdeflate() != 0 }

// useLibdeflate switches libdeflate on or off for inflaters created from
// now on (tests run the decoder both ways).
func useLibdeflate(on bool) {
	off := 1
	if on {
		off = 0
	}
	C.qh5_libdeflate_off(C.int(off))
}

// dimRun is the part of a selection inside one chunk along one dimension:
// the chunk's index and the selection's element range k0..k0+n-1.
type dimRun struct {
	chunk, k0, n int64
}

// chunkRuns splits the selection along each dimension by chunk.
func (r *ChunkReader) chunkRuns(s cslab) [][]dimRun {
	runs := make([][]dimRun, s.rank)
	for d := 0; d < s.rank; d++ {
		cs := int64(r.plan.chunk[d])
		start, stride, count := int64(s.start[d]), int64(s.stride[d]), int64(s.count[d])
		for k := int64(0); k < count; {
			c := (start + k*stride) / cs
			last := min(count-1, ((c+1)*cs-1-start)/stride)
			runs[d] = append(runs[d], dimRun{chunk: c, k0: k, n: last - k + 1})
			k = last + 1
		}
	}
	return runs
}

// Read reads the hyperslab sel into buf exactly as Read(dset, memType, sel,
// buf) does and reports whether the chunks were decoded directly (false:
// the selection went through H5Dread).
func (r *ChunkReader) Read(sel Hyperslab, buf unsafe.Pointer) (direct bool, err error) {
	s, err := sel.c()
	if err != nil {
		return false, err
	}
	if sel.NumElements() == 0 || s.rank != int(r.plan.rank) || !r.inBounds(s) {
		return false, Read(r.dset, r.mem, sel, buf)
	}
	if r.readDirect(s, buf) {
		return true, nil
	}
	return false, Read(r.dset, r.mem, sel, buf)
}

func (r *ChunkReader) inBounds(s cslab) bool {
	for d := 0; d < s.rank; d++ {
		hi, span := bits.Mul64(uint64(s.count[d]-1), uint64(s.stride[d]))
		last, carry := bits.Add64(span, uint64(s.start[d]), 0)
		if hi != 0 || carry != 0 || last >= uint64(r.plan.dims[d]) {
			return false
		}
	}
	return true
}

// readDirect decodes every chunk the selection touches into buf, on up to
// GOMAXPROCS goroutines; it returns false when any chunk could not be
// decoded (buf then holds partial data and the caller reads it again).
func (r *ChunkReader) readDirect(s cslab, buf unsafe.Pointer) bool {
	runs := r.chunkRuns(s)
	jobs := int64(1)
	for _, rs := range runs {
		if jobs *= int64(len(rs)); jobs > maxChunkJobs {
			return false
		}
	}
	es := uint64(r.plan.elem_size)
	var dstride [MaxRank]C.ulonglong
	dstride[s.rank-1] = C.ulonglong(es)
	for d := s.rank - 2; d >= 0; d-- {
		dstride[d] = dstride[d+1] * C.ulonglong(s.count[d+1])
	}
	var next atomic.Int64
	var failed atomic.Bool
	work := func() {
		w := newChunkWorker(r)
		defer w.free()
		for !failed.Load() {
			j := next.Add(1) - 1
			if j >= jobs {
				return
			}
			if !w.do(s, runs, j, buf, &dstride) {
				failed.Store(true)
				return
			}
		}
	}
	workers := int(min(jobs, int64(runtime.GOMAXPROCS(0))))
	if workers <= 1 {
		work()
		return !failed.Load()
	}
	var wg sync.WaitGroup
	for range workers - 1 {
		wg.Go(work)
	}
	work()
	wg.Wait()
	return !failed.Load()
}

// maxChunkJobs bounds the chunks one direct read visits; larger
// selections go through H5Dread.
const maxChunkJobs = 1 << 24

// chunkWorker holds one goroutine's buffers and zlib stream.
type chunkWorker struct {
	r        *ChunkReader
	raw      *[]byte
	a, b     *[]byte
	cap      int
	inflater unsafe.Pointer
}

// scratchPool recycles chunk-sized byte buffers between reads.
var scratchPool sync.Pool

func getScratch(n int) *[]byte {
	if p, ok := scratchPool.Get().(*[]byte); ok && cap(*p) >= n {
		*p = (*p)[:n]
		return p
	}
	b := make([]byte, n)
	return &b
}

func putScratch(p *[]byte) {
	if p != nil {
		scratchPool.Put(p)
	}
}

func newChunkWorker(r *ChunkReader) *chunkWorker {
	// Room for the decoded chunk plus one checksum per fletcher32 stage
	// that comes before a decompressing stage in the pipeline.
	n := int(r.plan.chunk_bytes) + 4*int(r.plan.nfilters)
	return &chunkWorker{r: r, cap: n, a: getScratch(n), b: getScratch(n), raw: getScratch(n)}
}

func (w *chunkWorker) free() {
	if w.inflater != nil {
		C.qh5_inflater_free(w.inflater)
		w.inflater = nil
	}
	putScratch(w.a)
	putScratch(w.b)
	putScratch(w.raw)
}

// do decodes job j (an index into the cartesian product of runs) and
// copies its selected elements into buf.
func (w *chunkWorker) do(s cslab, runs [][]dimRun, j int64, buf unsafe.Pointer, dstride *[MaxRank]C.ulonglong) bool {
	r := w.r
	var offset [MaxRank]C.hsize_t
	var lo, step, count [MaxRank]C.ulonglong
	off := uintptr(0)
	for d := s.rank - 1; d >= 0; d-- {
		rs := runs[d]
		run := rs[j%int64(len(rs))]
		j /= int64(len(rs))
		cs := int64(r.plan.chunk[d])
		origin := run.chunk * cs
		offset[d] = C.hsize_t(origin)
		lo[d] = C.ulonglong(int64(s.start[d]) + run.k0*int64(s.stride[d]) - origin)
		step[d] = C.ulonglong(s.stride[d])
		count[d] = C.ulonglong(run.n)
		off += uintptr(run.k0) * uintptr(dstride[d])
	}
	var src unsafe.Pointer
	for {
		var size C.ulonglong
		var mask C.uint
		var e C.qh5_err
		raw := *w.raw
		lock()
		rc := C.qh5_chunk_raw(C.hid_t(r.dset), &offset[0], unsafe.Pointer(&raw[0]), C.size_t(len(raw)), &size, &mask, &e)
		unlock()
		switch rc {
		case 0:
			if src = w.decode(raw[:size], uint32(mask)); src == nil {
				return false
			}
		case 1:
			// A raw chunk larger than its decoded size (incompressible
			// data plus overhead): grow, within reason, and read again.
			if uint64(size) > 2*uint64(w.cap)+(1<<20) {
				return false
			}
			putScratch(w.raw)
			w.raw = getScratch(int(size))
			continue
		case 2:
			src = unsafe.Pointer(&r.fillChunk()[0])
		default:
			return false
		}
		break
	}
	C.qh5_chunk_scatter(src, &r.plan, &lo[0], &step[0], &count[0], unsafe.Add(buf, off), &dstride[0])
	return true
}

// decode undoes the filter pipeline on raw, a chunk as stored (filters
// whose bit is set in mask were skipped on write): checksums verified,
// inflated, unshuffled. It returns the decoded chunk (chunk_bytes long, in
// raw or one of w's buffers) or nil when raw does not decode to exactly one
// chunk (bad checksum or stream, wrong size). raw is untrusted bytes from
// the file; FuzzChunkDecode drives this function.
func (w *chunkWorker) decode(raw []byte, mask uint32) unsafe.Pointer {
	if len(raw) == 0 {
		return nil
	}
	if w.inflater == nil {
		if w.inflater = C.qh5_inflater_new(); w.inflater == nil {
			return nil
		}
	}
	var failure C.int
	return unsafe.Pointer(C.qh5_chunk_decode(&w.r.plan, w.inflater, unsafe.Pointer(&raw[0]), C.size_t(len(raw)), C.uint(mask),
		unsafe.Pointer(&(*w.a)[0]), unsafe.Pointer(&(*w.b)[0]), C.size_t(w.cap), &failure))
}

// newPipeline returns a ChunkReader that can only decode chunks: its
// pipeline is filters (filter ids in pipeline order; shuffle moves
// shuffleSize-byte elements) and its chunks hold chunkBytes bytes. It
// lets FuzzChunkDecode feed the decoder arbitrary bytes without a file.
func newPipeline(filters []int, shuffleSize, chunkBytes int) *ChunkReader {
	r := &ChunkReader{dset: Invalid, mem: Invalid}
	r.plan.nfilters = C.int(min(len(filters), int(C.QH5_MAX_FILTERS)))
	for i, id := range filters[:r.plan.nfilters] {
		r.plan.filter_id[i] = C.int(id)
		if id == FilterShuffle {
			r.plan.filter_cd[i] = C.uint(shuffleSize)
		}
	}
	r.plan.elem_size = 1
	r.plan.chunk_bytes = C.size_t(chunkBytes)
	return r
}

// fillChunk returns one chunk holding the fill value in every element.
func (r *ChunkReader) fillChunk() []byte {
	r.fillOnce.Do(func() {
		es := len(r.fillElem)
		r.fill = make([]byte, int(r.plan.chunk_bytes))
		for i := 0; i < len(r.fill); i += es {
			copy(r.fill[i:i+es], r.fillElem)
		}
	})
	return r.fill
}
