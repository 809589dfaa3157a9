package hdf5

import (
	"fmt"
	"math"
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
}

// useChunkReader lets numeric reads of dset decode its chunks directly
// (h5.ChunkReader) when the dataset qualifies: chunked, compressed or
// checksummed with deflate, shuffle and fletcher32 only, stored in the
// native type. Otherwise, or when asking fails, reads stay on H5Dread.
func (r *leafReader) useChunkReader(dset h5.ID, info h5.DatasetInfo) {
	if r.lf.kind != kindNumeric || info.Layout != h5.LayoutChunked || len(info.Filters) == 0 {
		return
	}
	if cr, _, err := h5.NewChunkReader(dset, r.mem); err == nil {
		r.chunks = cr
	}
}

// newLeafReader builds the reader of leaf lf; member is the compound
// member path inside the dataset element (nil for the whole element).
func newLeafReader(lf *leaf, member []string) (*leafReader, error) {
	r := &leafReader{lf: lf, mem: h5.Invalid}
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
		for _, m := range lf.t.Enum {
			if m.Name == "TRUE" || m.Name == "true" || m.Name == "True" {
				r.trueVal = m.Value
			}
		}
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
	names := make(map[int64]string, len(r.lf.t.Enum))
	for _, m := range r.lf.t.Enum {
		names[m.Value] = m.Name
	}
	signed := r.lf.t.Base.Signed
	b := array.NewStringBuilder(alloc)
	defer b.Release()
	b.Reserve(n)
	rb := raw.Bytes()
	for i := 0; i < n; i++ {
		v := intAt(rb, i, r.elemSize)
		if !signed && r.elemSize < 8 {
			v &= int64(1)<<(8*r.elemSize) - 1
		}
		if s, ok := names[v]; ok {
			b.Append(s)
		} else {
			b.AppendNull()
		}
	}
	return b.NewArray(), nil
}

func (r *leafReader) readFixed(dset h5.ID, sel h5.Hyperslab, n int, alloc memory.Allocator) (arrow.Array, error) {
	if int64(n)*int64(r.elemSize) > maxStringBytes {
		return nil, qerr.Limit(qerr.CodeOversizeResult, "%d strings of %d bytes exceed one Arrow string array; read fewer rows", n, r.elemSize)
	}
	data, err := r.readBuffer(dset, sel, n, alloc)
	if err != nil {
		return nil, err
	}
	defer data.Release()
	offs := memory.NewResizableBuffer(alloc)
	defer offs.Release()
	offs.Resize((n + 1) * 4)
	used := h5.PackFixedStrings(data.Bytes(), n, r.elemSize, r.lf.t.Pad, arrow.Int32Traits.CastFromBytes(offs.Bytes()))
	data.Resize(used)
	return makeArray(arrow.BinaryTypes.String, n, []*memory.Buffer{nil, offs, data}, nil), nil
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
