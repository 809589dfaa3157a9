package h5_test

import (
	"bytes"
	"compress/zlib"
	"encoding/binary"
	"math"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"
	"unsafe"

	. "github.com/quarrydb/quarry/internal/h5"
	. "github.com/quarrydb/quarry/internal/h5/h5write"
)

// chunkFixture is one generated dataset of the direct-read differential test.
type chunkFixture struct {
	name      string
	size      int  // element size in bytes
	float     bool // float type (else integer)
	signed    bool
	dims      []int64
	chunk     []int64
	opts      DatasetOptions
	fill      bool      // set a non-zero user fill value
	blocks    [][]int64 // start,count pairs (flattened) written; nil = everything
	bigEndian bool
	// reason is a substring of the ineligibility reason ("" = eligible).
	reason string
}

// fixtureValue returns element i's bytes: a mix of smooth and noisy values
// (so deflate and shuffle have work), with NaN, -0 and infinities in float
// datasets.
func fixtureValue(f *chunkFixture, i int64, rng *rand.Rand) []byte {
	b := make([]byte, f.size)
	noisy := rng.IntN(4) == 0
	if f.float {
		v := math.Sin(float64(i)/37) * 1000
		if noisy {
			v = rng.NormFloat64() * 1e6
		}
		switch i % 97 {
		case 3:
			v = math.NaN()
		case 5:
			v = math.Copysign(0, -1)
		case 7:
			v = math.Inf(-1)
		}
		if f.size == 4 {
			binary.NativeEndian.PutUint32(b, math.Float32bits(float32(v)))
		} else {
			binary.NativeEndian.PutUint64(b, math.Float64bits(v))
		}
		return b
	}
	v := uint64(i / 3)
	if noisy {
		v = rng.Uint64()
	}
	switch f.size {
	case 1:
		b[0] = byte(v)
	case 2:
		binary.NativeEndian.PutUint16(b, uint16(v))
	case 4:
		binary.NativeEndian.PutUint32(b, uint32(v))
	default:
		binary.NativeEndian.PutUint64(b, v)
	}
	return b
}

func (f *chunkFixture) memType() ID {
	if f.float {
		return NewFloat(f.size)
	}
	return NewInt(f.size, f.signed)
}

func numElems(dims []int64) int64 {
	n := int64(1)
	for _, d := range dims {
		n *= d
	}
	return n
}

// create writes the fixture into file and returns the open dataset.
func (f *chunkFixture) create(t *testing.T, file ID, rng *rand.Rand) ID {
	t.Helper()
	mem := f.memType()
	defer Close(mem)
	ft := mem
	if f.bigEndian {
		ft = f.memType()
		defer Close(ft)
		must(t, SetBigEndian(ft, true))
	}
	o := f.opts
	o.Chunk = f.chunk
	if f.fill {
		fv := make([]byte, f.size)
		for i := range fv {
			fv[i] = byte(0x41 + i)
		}
		o.Fill = fv
	}
	d := idOK(t)(CreateDataset(file, f.name, ft, f.dims, &o))
	full := make([]byte, 0, numElems(f.dims)*int64(f.size))
	for i := range numElems(f.dims) {
		full = append(full, fixtureValue(f, i, rng)...)
	}
	if f.blocks == nil {
		must(t, Write(d, mem, unsafe.Pointer(&full[0])))
		return d
	}
	for _, blk := range f.blocks {
		rank := len(f.dims)
		start, count := blk[:rank], blk[rank:]
		part := gather(full, f.dims, start, count, f.size)
		must(t, WriteSlab(d, mem, start, count, unsafe.Pointer(&part[0])))
	}
	return d
}

// gather copies the block start/count out of a row-major array.
func gather(full []byte, dims, start, count []int64, size int) []byte {
	var out []byte
	idx := make([]int64, len(dims))
	for {
		off := int64(0)
		for d := range dims {
			off = off*dims[d] + start[d] + idx[d]
		}
		out = append(out, full[off*int64(size):(off+1)*int64(size)]...)
		d := len(dims) - 1
		for ; d >= 0; d-- {
			if idx[d]++; idx[d] < count[d] {
				break
			}
			idx[d] = 0
		}
		if d < 0 {
			return out
		}
	}
}

func chunkFixtures() []*chunkFixture {
	gz := DatasetOptions{Gzip: 4}
	shufGz := DatasetOptions{Gzip: 1, Shuffle: true}
	return []*chunkFixture{
		{name: "f64_deflate_2d", size: 8, float: true, dims: []int64{70, 45}, chunk: []int64{16, 16}, opts: gz},
		{name: "f64_shuffle_deflate_2d", size: 8, float: true, dims: []int64{70, 45}, chunk: []int64{16, 16}, opts: shufGz},
		{name: "f32_shuffle_deflate_fletcher_2d", size: 4, float: true, dims: []int64{33, 65}, chunk: []int64{8, 32}, opts: DatasetOptions{Gzip: 6, Shuffle: true, Fletcher32: true}},
		{name: "i32_deflate_fletcher_1d", size: 4, signed: true, dims: []int64{1000}, chunk: []int64{96}, opts: DatasetOptions{Gzip: 9, Fletcher32: true}},
		{name: "u16_fletcher_only_1d", size: 2, dims: []int64{301}, chunk: []int64{50}, opts: DatasetOptions{Fletcher32: true}},
		{name: "i64_shuffle_only_3d", size: 8, signed: true, dims: []int64{9, 10, 11}, chunk: []int64{4, 3, 5}, opts: DatasetOptions{Shuffle: true}},
		{name: "u8_deflate_3d", size: 1, dims: []int64{7, 20, 13}, chunk: []int64{3, 8, 8}, opts: gz},
		{name: "i16_deflate_then_shuffle", size: 2, signed: true, dims: []int64{40, 30}, chunk: []int64{7, 9}, opts: DatasetOptions{Gzip: 2, Filters: []FilterSpec{{ID: FilterShuffle}}}},
		{name: "f64_chunk_larger_than_dataset", size: 8, float: true, dims: []int64{5, 6}, chunk: []int64{8, 8},
			opts: DatasetOptions{Gzip: 4, MaxDims: []int64{Unlimited, Unlimited}}},
		{name: "f64_unallocated_fill", size: 8, float: true, dims: []int64{50, 50}, chunk: []int64{10, 12}, opts: shufGz, fill: true,
			blocks: [][]int64{{0, 0, 10, 12}, {13, 30, 20, 7}, {45, 40, 5, 10}}},
		{name: "i32_unallocated_default_fill", size: 4, signed: true, dims: []int64{200}, chunk: []int64{16}, opts: gz,
			blocks: [][]int64{{20, 30}, {150, 1}}},
		{name: "u32_unallocated_fill_3d", size: 4, dims: []int64{6, 7, 8}, chunk: []int64{2, 3, 4}, opts: DatasetOptions{Gzip: 3, Fletcher32: true}, fill: true,
			blocks: [][]int64{{1, 1, 1, 3, 4, 5}}},
		{name: "f64_big_endian", size: 8, float: true, dims: []int64{20, 20}, chunk: []int64{8, 8}, opts: gz, bigEndian: true,
			reason: "file type differs"},
		{name: "f64_unfiltered", size: 8, float: true, dims: []int64{20, 20}, chunk: []int64{8, 8},
			reason: "no filters"},
		{name: "f64_contiguous", size: 8, float: true, dims: []int64{20, 20},
			reason: "not chunked"},
	}
}

// selections returns the hyperslabs read from a dataset of shape dims:
// everything, corners, blocks across chunk borders, strides (including
// steps longer than a chunk) and random slabs.
func selections(dims []int64, rng *rand.Rand) []Hyperslab {
	rank := len(dims)
	mk := func(f func(d int) (start, stride, count int64)) Hyperslab {
		h := Hyperslab{Start: make([]int64, rank), Stride: make([]int64, rank), Count: make([]int64, rank)}
		for d := range rank {
			h.Start[d], h.Stride[d], h.Count[d] = f(d)
		}
		return h
	}
	out := []Hyperslab{
		mk(func(d int) (int64, int64, int64) { return 0, 1, dims[d] }),
		mk(func(d int) (int64, int64, int64) { return 0, 1, 1 }),
		mk(func(d int) (int64, int64, int64) { return dims[d] - 1, 1, 1 }),
		mk(func(d int) (int64, int64, int64) { return dims[d] / 3, 1, dims[d] - dims[d]/3 }),
		mk(func(d int) (int64, int64, int64) { return 1, 2, (dims[d] - 1 + 1) / 2 }),
		mk(func(d int) (int64, int64, int64) { return 0, 3, (dims[d] + 2) / 3 }),
		mk(func(d int) (int64, int64, int64) {
			s := max(dims[d]/2, 1)
			return dims[d] % s, s, 2 - min(1, dims[d]/s/2)
		}),
	}
	for range 25 {
		out = append(out, mk(func(d int) (int64, int64, int64) {
			start := rng.Int64N(dims[d])
			stride := int64(1)
			if rng.IntN(3) == 0 {
				stride = 1 + rng.Int64N(dims[d])
			}
			maxCount := (dims[d]-1-start)/stride + 1
			return start, stride, 1 + rng.Int64N(maxCount)
		}))
	}
	return out
}

// writeFixtures creates the fixtures in a new file, closes it and opens it
// again read-only, as the server sees files (nothing left in the library's
// caches from writing).
func writeFixtures(t *testing.T, write func(file ID)) ID {
	t.Helper()
	path := filepath.Join(t.TempDir(), "chunks.h5")
	file := idOK(t)(CreateFile(path))
	write(file)
	must(t, Close(file))
	file = idOK(t)(OpenFile(path))
	t.Cleanup(func() { Close(file) })
	return file
}

// inflaters runs f with libdeflate (when the system has it) and with zlib.
func inflaters(t *testing.T, f func(t *testing.T)) {
	for _, ld := range []bool{true, false} {
		name := "zlib"
		if ld {
			if !HaveLibdeflate() {
				continue
			}
			name = "libdeflate"
		}
		t.Run(name, func(t *testing.T) {
			UseLibdeflate(ld)
			defer UseLibdeflate(true)
			f(t)
		})
	}
}

func TestChunkReaderMatchesH5Dread(t *testing.T) {
	inflaters(t, testChunkReaderMatchesH5Dread)
}

func testChunkReaderMatchesH5Dread(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	fixtures := chunkFixtures()
	file := writeFixtures(t, func(file ID) {
		for _, f := range fixtures {
			must(t, Close(f.create(t, file, rng)))
		}
	})
	for _, f := range fixtures {
		t.Run(f.name, func(t *testing.T) {
			d := idOK(t)(OpenDataset(file, f.name, 0))
			defer Close(d)
			mem := f.memType()
			defer Close(mem)
			cr, reason, err := NewChunkReader(d, mem)
			must(t, err)
			if f.reason != "" {
				if cr != nil || !strings.Contains(reason, f.reason) {
					t.Fatalf("want ineligible (%q), got reader=%v reason %q", f.reason, cr != nil, reason)
				}
				return
			}
			if cr == nil {
				t.Fatalf("not eligible: %s", reason)
			}
			for _, sel := range selections(f.dims, rng) {
				compareRead(t, d, mem, cr, sel, f.size, true)
			}
		})
	}
}

// compareRead reads sel through H5Dread and through cr and requires
// identical bytes (buffers start with different garbage, so an element
// left unwritten shows) and, when wantDirect, that cr decoded the chunks
// itself.
func compareRead(t *testing.T, d, mem ID, cr *ChunkReader, sel Hyperslab, size int, wantDirect bool) {
	t.Helper()
	n := sel.NumElements() * int64(size)
	want := bytes.Repeat([]byte{0xAA}, int(n))
	got := bytes.Repeat([]byte{0x55}, int(n))
	must(t, Read(d, mem, sel, unsafe.Pointer(&want[0])))
	direct, err := cr.Read(sel, unsafe.Pointer(&got[0]))
	must(t, err)
	if direct != wantDirect {
		t.Fatalf("selection %+v: direct = %v, want %v", sel, direct, wantDirect)
	}
	if !bytes.Equal(got, want) {
		i := 0
		for got[i] == want[i] {
			i++
		}
		t.Fatalf("selection %+v: bytes differ from H5Dread at byte %d (element %d)", sel, i, i/size)
	}
}

// shuffleBytes and fletcher32 are independent encoders used to build raw
// chunks for the filter-mask tests.
func shuffleBytes(b []byte, size int) []byte {
	n := len(b) / size
	out := make([]byte, len(b))
	for i := range n {
		for j := range size {
			out[j*n+i] = b[i*size+j]
		}
	}
	return out
}

func appendFletcher32(b []byte) []byte {
	return binary.LittleEndian.AppendUint32(b, fletcher32(b))
}

// fletcher32 is HDF5's Fletcher-32: big-endian 16-bit words, end-around-carry
// sums starting at zero, an odd last byte as the high byte of a word.
func fletcher32(b []byte) uint32 {
	fold := func(s uint32) uint32 { return s&0xffff + s>>16 }
	var s1, s2 uint32
	for i := 0; i+1 < len(b); i += 2 {
		s1 = fold(s1 + (uint32(b[i])<<8 | uint32(b[i+1])))
		s2 = fold(s2 + s1)
	}
	if len(b)%2 == 1 {
		s1 = fold(s1 + uint32(b[len(b)-1])<<8)
		s2 = fold(s2 + s1)
	}
	return fold(s2)<<16 | fold(s1)
}

func deflateBytes(t testing.TB, b []byte) []byte {
	var buf bytes.Buffer
	w := zlib.NewWriter(&buf)
	_, err := w.Write(b)
	must(t, err)
	must(t, w.Close())
	return buf.Bytes()
}

// TestChunkReaderFilterMaskAndCorruption writes raw chunks with
// H5Dwrite_chunk: chunks that skipped some filters (per-chunk filter
// mask) must decode like H5Dread decodes them, and corrupt chunks must fail
// exactly as H5Dread fails (the reader falls back to it).
func TestChunkReaderFilterMaskAndCorruption(t *testing.T) {
	inflaters(t, testChunkReaderFilterMaskAndCorruption)
}

func testChunkReaderFilterMaskAndCorruption(t *testing.T) {
	mem := NewFloat(8)
	defer Close(mem)
	const side, cs = 24, 8
	vals := make([]float64, side*side)
	for i := range vals {
		vals[i] = float64(i) * 0.25
	}
	chunkOf := func(r0, c0 int) []byte {
		b := make([]byte, 0, cs*cs*8)
		for i := range cs {
			for j := range cs {
				b = binary.NativeEndian.AppendUint64(b, math.Float64bits(vals[(r0+i)*side+c0+j]+1000))
			}
		}
		return b
	}
	// Pipeline [shuffle, deflate, fletcher32]: bit 0 shuffle, 1 deflate, 2 fletcher32.
	opts := &DatasetOptions{Chunk: []int64{cs, cs}, Gzip: 5, Shuffle: true, Fletcher32: true}
	raw := chunkOf(0, 0)
	// Corrupt chunks: a bad checksum, a broken zlib stream, a short chunk.
	corrupt := []struct {
		name string
		mask uint32
		data []byte
		// undefined: H5Dread accepts the chunk but leaves part of the
		// result undefined (uninitialized library memory), so only the
		// outcome is compared, not the bytes.
		undefined bool
	}{
		{"bad checksum", 0b000, func() []byte {
			b := appendFletcher32(deflateBytes(t, shuffleBytes(raw, 8)))
			b[len(b)-1] ^= 0xFF
			return b
		}(), false},
		{"broken zlib stream", 0b100, bytes.Repeat([]byte{0x13}, 300), false},
		{"short chunk", 0b111, raw[:len(raw)-8], true},
		{"long chunk", 0b111, append(chunkOf(8, 8), 1, 2, 3, 4, 5, 6, 7, 8), false},
	}
	file := writeFixtures(t, func(file ID) {
		d := idOK(t)(CreateDataset(file, "masked", mem, []int64{side, side}, opts))
		must(t, Write(d, mem, unsafe.Pointer(&vals[0])))
		must(t, WriteRawChunk(d, []int64{0, 0}, 0b010, appendFletcher32(shuffleBytes(raw, 8))))           // deflate skipped
		must(t, WriteRawChunk(d, []int64{0, 8}, 0b101, deflateBytes(t, chunkOf(0, 8))))                   // only deflate
		must(t, WriteRawChunk(d, []int64{8, 0}, 0b111, chunkOf(8, 0)))                                    // nothing applied
		must(t, WriteRawChunk(d, []int64{8, 8}, 0b001, appendFletcher32(deflateBytes(t, chunkOf(8, 8))))) // shuffle skipped
		must(t, Close(d))
		for _, c := range corrupt {
			d := idOK(t)(CreateDataset(file, c.name, mem, []int64{side, side}, opts))
			must(t, Write(d, mem, unsafe.Pointer(&vals[0])))
			must(t, WriteRawChunk(d, []int64{8, 8}, c.mask, c.data))
			must(t, Close(d))
		}
	})
	d := idOK(t)(OpenDataset(file, "masked", 0))
	defer Close(d)
	cr, reason, err := NewChunkReader(d, mem)
	must(t, err)
	if cr == nil {
		t.Fatal(reason)
	}
	for _, sel := range selections([]int64{side, side}, rand.New(rand.NewPCG(3, 4))) {
		compareRead(t, d, mem, cr, sel, 8, true)
	}
	for _, c := range corrupt {
		t.Run(c.name, func(t *testing.T) {
			if c.undefined && asanBuild {
				t.Skip("libhdf5 reads past its own chunk buffer here (the undefined bytes); AddressSanitizer aborts on that library defect")
			}
			d := idOK(t)(OpenDataset(file, c.name, 0))
			defer Close(d)
			cr, _, err := NewChunkReader(d, mem)
			must(t, err)
			sel := Hyperslab{Start: []int64{4, 4}, Count: []int64{12, 12}}
			want := make([]byte, 12*12*8)
			got := make([]byte, 12*12*8)
			wantErr := Read(d, mem, sel, unsafe.Pointer(&want[0]))
			direct, err := cr.Read(sel, unsafe.Pointer(&got[0]))
			if direct {
				t.Fatal("a corrupt chunk decoded directly")
			}
			if (err == nil) != (wantErr == nil) {
				t.Fatalf("error %v, H5Dread's %v", err, wantErr)
			}
			if wantErr == nil && !c.undefined && !bytes.Equal(got, want) {
				t.Fatal("bytes differ from H5Dread's")
			}
		})
	}
}

// TestChunkReaderRejectsOtherFilters: a pipeline with a filter Quarry does
// not decode itself (here a registered test filter) keeps the H5Dread path.
func TestChunkReaderRejectsOtherFilters(t *testing.T) {
	const xorID = 32100
	must(t, RegisterXORFilter(xorID))
	defer UnregisterFilter(xorID)
	file := idOK(t)(CreateFile(filepath.Join(t.TempDir(), "xor.h5")))
	defer Close(file)
	mem := NewInt(4, true)
	defer Close(mem)
	d := idOK(t)(CreateDataset(file, "x", mem, []int64{100}, &DatasetOptions{Chunk: []int64{10}, Gzip: 1, Filters: []FilterSpec{{ID: xorID}}}))
	defer Close(d)
	cr, reason, err := NewChunkReader(d, mem)
	must(t, err)
	if cr != nil || !strings.Contains(reason, "other than deflate") {
		t.Fatalf("reader %v, reason %q", cr != nil, reason)
	}
}
