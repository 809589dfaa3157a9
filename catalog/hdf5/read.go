//go:build cgo && !nohdf5

package hdf5

import (
	"fmt"
	"math"
	"runtime"
	"slices"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/quarrydb/quarry/internal/h5"
	"github.com/quarrydb/quarry/internal/qerr"
)

// leafReader reads one leaf (a whole element or one compound member) of a
// dataset into Arrow arrays. It owns the HDF5 memory type.
type leafReader struct {
	lf       *leaf
	mem      h5.ID // memory type (wrapped in compounds for a member path)
	elemSize int   // bytes per element of mem
	children []*leafReader
	trueVal  int64
	// chunks decodes the dataset's compressed chunks itself, in parallel
	// (nil: every read goes through H5Dread); see useChunkReader.
	chunks *h5.ChunkReader
	// whole: the leaf is the dataset's whole element (no member path).
	whole bool
	// rec reads every member of a whole compound element at once (nil:
	// one read per member); see useChunkReader.
	rec *recordReader
}

// useChunkReader prepares the reads of dset. Elements of a fixed size
// (numbers, booleans, enums, fixed-length strings, arrays of numbers) are
// decoded straight from their chunks (h5.ChunkReader) when the dataset
// qualifies: chunked, compressed or checksummed with deflate, shuffle and
// fletcher32 only, stored in the native type. Whole compound elements are read with
// one read per selection for all their members (recordReader, itself
// decoding chunks directly when it can). Otherwise, or when preparing
// fails, reads stay on H5Dread, member by member for compounds.
func (r *leafReader) useChunkReader(dset h5.ID, info h5.DatasetInfo) {
	if r.lf.kind == kindStruct && r.whole {
		var paths [][]string
		var leaves []*leaf
		structLeaves(r.lf, nil, &paths, &leaves)
		if rr, err := newRecordReader(dset, info, r.lf.t, paths, leaves); err == nil {
			r.rec = rr
		}
		return
	}
	if !packedKind(r.lf.kind) || info.Layout != h5.LayoutChunked || len(info.Filters) == 0 {
		return
	}
	if cr, _, err := h5.NewChunkReader(dset, r.mem); err == nil {
		r.chunks = cr
	}
}

// structLeaves lists the non-compound fields under the struct leaf lf,
// depth first in member order, with their member paths below path.
func structLeaves(lf *leaf, path []string, paths *[][]string, leaves *[]*leaf) {
	for i, f := range lf.fields {
		p := append(path[:len(path):len(path)], lf.names[i])
		if f.kind == kindStruct {
			structLeaves(f, p, paths, leaves)
			continue
		}
		*paths = append(*paths, p)
		*leaves = append(*leaves, f)
	}
}

// assembleStruct builds the struct array of leaf lf from the arrays of its
// non-compound fields in structLeaves order, starting at arrs[*k]. The
// result holds its own references.
func assembleStruct(lf *leaf, n int, arrs []arrow.Array, k *int) arrow.Array {
	children := make([]arrow.ArrayData, 0, len(lf.fields))
	var nested []arrow.Array
	defer func() {
		for _, a := range nested {
			a.Release()
		}
	}()
	for _, f := range lf.fields {
		if f.kind == kindStruct {
			a := assembleStruct(f, n, arrs, k)
			nested = append(nested, a)
			children = append(children, a.Data())
			continue
		}
		children = append(children, arrs[*k].Data())
		*k++
	}
	return makeArray(lf.dt, n, []*memory.Buffer{nil}, children)
}

// newLeafReader builds the reader of leaf lf; member is the compound
// member path inside the dataset element (nil for the whole element).
func newLeafReader(lf *leaf, member []string) (*leafReader, error) {
	r := &leafReader{lf: lf, mem: h5.Invalid, whole: len(member) == 0}
	switch lf.kind {
	case kindUnsupported:
		return r, nil
	case kindStruct:
		for i, f := range lf.fields {
			p := append(append([]string(nil), member...), lf.names[i])
			c, err := newLeafReader(f, p)
			if err != nil {
				r.close()
				return nil, err
			}
			r.children = append(r.children, c)
		}
		return r, nil
	case kindBool:
		r.trueVal = boolTrueValue(lf.t)
	}
	mt, size, err := h5.MemType(lf.t)
	if err != nil {
		return nil, qerr.Unsupported(qerr.CodeUnsupportedType, "cannot read HDF5 type %s", lf.t).Wrap(err)
	}
	for i := len(member) - 1; i >= 0; i-- {
		w, err := h5.NewCompound(size, []h5.MemberSpec{{Name: member[i], Offset: 0, Type: mt}})
		_ = h5.Close(mt)
		if err != nil {
			return nil, qerr.Internal(err, "building the memory type of member %q", member[i])
		}
		mt = w
	}
	r.mem, r.elemSize = mt, size
	return r, nil
}

func (r *leafReader) close() {
	if r == nil {
		return
	}
	_ = h5.Close(r.mem)
	r.mem = h5.Invalid
	r.chunks = nil
	r.rec.close()
	r.rec = nil
	for _, c := range r.children {
		c.close()
	}
}

// maxStringBytes is the largest string data one Arrow String array holds.
const maxStringBytes = math.MaxInt32

// read reads the n elements selected by sel from dset.
func (r *leafReader) read(dset h5.ID, sel h5.Hyperslab, n int, alloc memory.Allocator) (arrow.Array, error) {
	switch r.lf.kind {
	case kindUnsupported:
		return array.NewNull(n), nil
	case kindStruct:
		if r.rec != nil {
			return r.readRecords(dset, sel, n, alloc)
		}
		return r.readStruct(dset, sel, n, alloc)
	case kindNumeric:
		buf, err := r.readBuffer(dset, sel, n, alloc)
		if err != nil {
			return nil, err
		}
		defer buf.Release()
		return makeArray(r.lf.dt, n, []*memory.Buffer{nil, buf}, nil), nil
	case kindBool:
		return r.readBool(dset, sel, n, alloc)
	case kindEnum:
		return r.readEnum(dset, sel, n, alloc)
	case kindFixedString:
		return r.readFixed(dset, sel, n, alloc)
	case kindVarString:
		return r.readVar(dset, sel, n, alloc)
	case kindList:
		buf, err := r.readBuffer(dset, sel, n, alloc)
		if err != nil {
			return nil, err
		}
		defer buf.Release()
		child := array.NewData(r.lf.elem.dt, n*r.lf.listN, []*memory.Buffer{nil, buf}, nil, 0, 0)
		defer child.Release()
		return makeArray(r.lf.dt, n, []*memory.Buffer{nil}, []arrow.ArrayData{child}), nil
	}
	return nil, qerr.Internal(nil, "unknown leaf kind %d", r.lf.kind)
}

func makeArray(dt arrow.DataType, n int, bufs []*memory.Buffer, children []arrow.ArrayData) arrow.Array {
	d := array.NewData(dt, n, bufs, children, 0, 0)
	defer d.Release()
	return array.MakeFromData(d)
}

// readBuffer reads n elements of the memory type into a new buffer.
func (r *leafReader) readBuffer(dset h5.ID, sel h5.Hyperslab, n int, alloc memory.Allocator) (*memory.Buffer, error) {
	if int64(n) > math.MaxInt64/int64(max(r.elemSize, 1)) {
		return nil, qerr.Limit(qerr.CodeOversizeResult, "read of %d elements is too large", n)
	}
	buf := memory.NewResizableBuffer(alloc)
	buf.Resize(n * r.elemSize)
	if n > 0 {
		if err := r.readInto(dset, sel, unsafe.Pointer(&buf.Bytes()[0])); err != nil {
			buf.Release()
			return nil, readErr(err)
		}
	}
	return buf, nil
}

// readInto reads sel of dset with the memory type into p, through the
// chunk reader when there is one.
func (r *leafReader) readInto(dset h5.ID, sel h5.Hyperslab, p unsafe.Pointer) error {
	if r.chunks != nil {
		_, err := r.chunks.Read(sel, p)
		return err
	}
	return h5.Read(dset, r.mem, sel, p)
}

func readErr(err error) error {
	return qerr.Internal(err, "reading HDF5 data failed: %v", err)
}

func (r *leafReader) readBool(dset h5.ID, sel h5.Hyperslab, n int, alloc memory.Allocator) (arrow.Array, error) {
	raw, err := r.readBuffer(dset, sel, n, alloc)
	if err != nil {
		return nil, err
	}
	defer raw.Release()
	bits := memory.NewResizableBuffer(alloc)
	bits.Resize(int(bitutil.BytesForBits(int64(n))))
	bb := bits.Bytes()
	for i := range bb {
		bb[i] = 0
	}
	rb := raw.Bytes()
	for i := 0; i < n; i++ {
		if intAt(rb, i, r.elemSize) == r.trueVal {
			bitutil.SetBit(bb, i)
		}
	}
	defer bits.Release()
	return makeArray(arrow.FixedWidthTypes.Boolean, n, []*memory.Buffer{nil, bits}, nil), nil
}

// intAt reads the i-th native integer of width size from b.
func intAt(b []byte, i, size int) int64 {
	p := unsafe.Pointer(&b[i*size])
	switch size {
	case 1:
		return int64(*(*int8)(p))
	case 2:
		return int64(*(*int16)(p))
	case 4:
		return int64(*(*int32)(p))
	}
	return *(*int64)(p)
}

func (r *leafReader) readEnum(dset h5.ID, sel h5.Hyperslab, n int, alloc memory.Allocator) (arrow.Array, error) {
	raw, err := r.readBuffer(dset, sel, n, alloc)
	if err != nil {
		return nil, err
	}
	defer raw.Release()
	return enumNames(r.lf.t, raw.Bytes(), 0, r.elemSize, r.elemSize, n, alloc), nil
}

// enumNames returns the member names of n values of enum type t, elem bytes
// each, the first at data[off] and the next stride bytes apart, as an Arrow
// string array; a value no member has is null.
func enumNames(t *h5.Type, data []byte, off, stride, elem, n int, alloc memory.Allocator) arrow.Array {
	names := make(map[int64]string, len(t.Enum))
	for _, m := range t.Enum {
		names[m.Value] = m.Name
	}
	signed := t.Base.Signed
	b := array.NewStringBuilder(alloc)
	defer b.Release()
	b.Reserve(n)
	for i := 0; i < n; i++ {
		v := intAt(data[off+i*stride:], 0, elem)
		if !signed && elem < 8 {
			v &= int64(1)<<(8*elem) - 1
		}
		if s, ok := names[v]; ok {
			b.Append(s)
		} else {
			b.AppendNull()
		}
	}
	return b.NewArray()
}

func (r *leafReader) readFixed(dset h5.ID, sel h5.Hyperslab, n int, alloc memory.Allocator) (arrow.Array, error) {
	if int64(n)*int64(r.elemSize) > maxStringBytes {
		return nil, qerr.Limit(qerr.CodeOversizeResult, "%d strings of %d bytes exceed one Arrow string array; read fewer rows", n, r.elemSize)
	}
	data := memory.NewResizableBuffer(alloc)
	defer data.Release()
	data.Resize(n * r.elemSize)
	offs := memory.NewResizableBuffer(alloc)
	defer offs.Release()
	offs.Resize((n + 1) * 4)
	packer := h5.NewFixedPacker(data.Bytes(), r.elemSize, r.lf.t.Pad, arrow.Int32Traits.CastFromBytes(offs.Bytes()))
	if err := r.readBlocks(dset, sel, n, data.Bytes(), packer.Pack); err != nil {
		return nil, readErr(err)
	}
	data.Resize(packer.Finish())
	return makeArray(arrow.BinaryTypes.String, n, []*memory.Buffer{nil, offs, data}, nil), nil
}

// pipelineBlockElems is the size, in elements, of the blocks a large read
// is split into so that each block is post-processed (while still in the
// CPU caches) as the next one is read.
const pipelineBlockElems = 1 << 17

// readBlocks reads the n elements of sel into buf (n elements of the
// memory type) in blocks of whole rows of the first dimension, calling
// done(k) on another goroutine once elements [0, k) are in buf (with
// increasing k, the last call with n). done must touch no byte of buf at
// or past element k. Small reads, and reads on a single core, read
// everything and call done once.
func (r *leafReader) readBlocks(dset h5.ID, sel h5.Hyperslab, n int, buf []byte, done func(int)) error {
	if n == 0 {
		done(0)
		return nil
	}
	inner := int64(1)
	for _, c := range sel.Count[min(1, len(sel.Count)):] {
		inner *= c
	}
	rows := max(1, int64(pipelineBlockElems)/max(inner, 1))
	if len(sel.Count) == 0 || sel.Count[0] <= rows || runtime.GOMAXPROCS(0) < 2 {
		if err := r.readInto(dset, sel, unsafe.Pointer(&buf[0])); err != nil {
			return err
		}
		done(n)
		return nil
	}
	ready := make(chan int, sel.Count[0]/rows+1)
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		for k := range ready {
			done(k)
		}
	}()
	var err error
	block := sel
	block.Start = slices.Clone(sel.Start)
	block.Count = slices.Clone(sel.Count)
	step := int64(1)
	if sel.Stride != nil {
		step = sel.Stride[0]
	}
	for r0 := int64(0); r0 < sel.Count[0]; r0 += rows {
		block.Start[0] = sel.Start[0] + r0*step
		block.Count[0] = min(rows, sel.Count[0]-r0)
		if err = r.readInto(dset, block, unsafe.Pointer(&buf[int(r0*inner)*r.elemSize])); err != nil {
			break
		}
		ready <- int((r0 + block.Count[0]) * inner)
	}
	close(ready)
	<-finished
	return err
}

func (r *leafReader) readVar(dset h5.ID, sel h5.Hyperslab, n int, alloc memory.Allocator) (arrow.Array, error) {
	offs := memory.NewResizableBuffer(alloc)
	defer offs.Release()
	offs.Resize((n + 1) * 4)
	data := memory.NewResizableBuffer(alloc)
	defer data.Release()
	if n == 0 {
		arrow.Int32Traits.CastFromBytes(offs.Bytes())[0] = 0
		return makeArray(arrow.BinaryTypes.String, 0, []*memory.Buffer{nil, offs, data}, nil), nil
	}
	vs, err := h5.ReadVarStrings(dset, false, r.mem, sel, n)
	if err != nil {
		return nil, readErr(err)
	}
	defer vs.Free()
	if vs.TotalBytes() > maxStringBytes {
		return nil, qerr.Limit(qerr.CodeOversizeResult, "%d bytes of strings exceed one Arrow string array; read fewer rows", vs.TotalBytes())
	}
	data.Resize(int(vs.TotalBytes()))
	vs.Fill(arrow.Int32Traits.CastFromBytes(offs.Bytes()), data.Bytes())
	return makeArray(arrow.BinaryTypes.String, n, []*memory.Buffer{nil, offs, data}, nil), nil
}

// readRecords reads a whole compound element with one read for all its
// members (see recordReader).
func (r *leafReader) readRecords(dset h5.ID, sel h5.Hyperslab, n int, alloc memory.Allocator) (arrow.Array, error) {
	arrs, err := r.rec.read(dset, sel, n, alloc)
	if err != nil {
		return nil, err
	}
	defer func() {
		for _, a := range arrs {
			a.Release()
		}
	}()
	k := 0
	return assembleStruct(r.lf, n, arrs, &k), nil
}

// readStruct reads a compound element one member at a time.
func (r *leafReader) readStruct(dset h5.ID, sel h5.Hyperslab, n int, alloc memory.Allocator) (arrow.Array, error) {
	children := make([]arrow.ArrayData, 0, len(r.children))
	defer func() {
		for _, c := range children {
			c.Release()
		}
	}()
	for _, c := range r.children {
		a, err := c.read(dset, sel, n, alloc)
		if err != nil {
			return nil, err
		}
		d := a.Data()
		d.Retain()
		a.Release()
		children = append(children, d)
	}
	return makeArray(r.lf.dt, n, []*memory.Buffer{nil}, children), nil
}

// copyColumn copies column j of a row-major block of rows x width elements
// of size bytes into dst (rows elements).
func copyColumn(dst, block []byte, rows, width, j, size int) {
	switch size {
	case 8:
		d := unsafe.Slice((*uint64)(unsafe.Pointer(&dst[0])), rows)
		s := unsafe.Slice((*uint64)(unsafe.Pointer(&block[0])), rows*width)
		for r := range d {
			d[r] = s[r*width+j]
		}
	case 4:
		d := unsafe.Slice((*uint32)(unsafe.Pointer(&dst[0])), rows)
		s := unsafe.Slice((*uint32)(unsafe.Pointer(&block[0])), rows*width)
		for r := range d {
			d[r] = s[r*width+j]
		}
	case 2:
		d := unsafe.Slice((*uint16)(unsafe.Pointer(&dst[0])), rows)
		s := unsafe.Slice((*uint16)(unsafe.Pointer(&block[0])), rows*width)
		for r := range d {
			d[r] = s[r*width+j]
		}
	case 1:
		for r := 0; r < rows; r++ {
			dst[r] = block[r*width+j]
		}
	default:
		panic(fmt.Sprintf("copyColumn: element size %d", size))
	}
}
