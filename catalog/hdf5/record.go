//go:build cgo && !nohdf5

package hdf5

import (
	"math"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/quarrydb/quarry/internal/h5"
	"github.com/quarrydb/quarry/internal/qerr"
)

// recordReader reads several members of a compound dataset with one read
// per selection: the members whose values have a fixed size (numbers,
// booleans, enums, fixed-length strings, arrays of numbers) are read
// together into a packed native record buffer, through h5.ChunkReader when
// the dataset qualifies (see newRecordReader) and else with one H5Dread of
// a memory compound holding just those members, and each is then copied
// out of the records into its own Arrow array. Variable-length strings are
// read on their own (their memory must be reclaimed per member) and
// unsupported members read as nulls. The arrays equal, buffer for buffer,
// what leafReader.read returns for each member read alone.
type recordReader struct {
	mem    h5.ID // packed memory compound (h5.Invalid: no packed member)
	size   int   // bytes per record of mem
	chunks *h5.ChunkReader
	cols   []recordCol
}

// recordCol is one requested member.
type recordCol struct {
	lf      *leaf
	packed  bool        // read from the record buffer
	off     int         // byte offset in the record (packed)
	elem    int         // bytes per value of the member's memory type (packed)
	trueVal int64       // value of TRUE (booleans)
	alone   *leafReader // read on its own (not packed; nil: nulls)
}

// packedKind reports whether values of kind k are read from the record.
func packedKind(k leafKind) bool {
	switch k {
	case kindNumeric, kindBool, kindEnum, kindFixedString, kindList:
		return true
	}
	return false
}

// memberKey joins a member path into a map key.
func memberKey(path []string) string { return strings.Join(path, "\x00") }

// newRecordReader prepares reads of the members at paths (leaves[i] is the
// mapping of the member at paths[i]) of the compound dataset dset of type
// t. When the dataset's chunks qualify for h5.ChunkReader with the native
// counterpart of the whole element type (chunked, deflate/shuffle/
// fletcher32 only, stored with native byte order and packed members, no
// variable-length data), whole records are decoded on every core and the
// members picked from them; otherwise the packed members are read with one
// H5Dread of a memory compound of just those members.
func newRecordReader(dset h5.ID, info h5.DatasetInfo, t *h5.Type, paths [][]string, leaves []*leaf) (*recordReader, error) {
	rr := &recordReader{mem: h5.Invalid, cols: make([]recordCol, len(paths))}
	want := map[string]bool{}
	for i, lf := range leaves {
		c := &rr.cols[i]
		c.lf = lf
		switch {
		case packedKind(lf.kind):
			c.packed = true
			want[memberKey(paths[i])] = true
			if lf.kind == kindBool {
				c.trueVal = boolTrueValue(lf.t)
			}
		case lf.kind != kindUnsupported:
			lr, err := newLeafReader(lf, paths[i])
			if err != nil {
				rr.close()
				return nil, err
			}
			c.alone = lr
		}
	}
	if len(want) == 0 {
		return rr, nil
	}
	offs := map[string]int{}
	if info.Layout == h5.LayoutChunked && len(info.Filters) > 0 {
		// Whole records, when the chunks can be decoded directly.
		full, size, err := buildRecordType(t, nil, nil, 0, 0, offs)
		if err == nil && full != h5.Invalid {
			if cr, _, err := h5.NewChunkReader(dset, full); err == nil && cr != nil {
				rr.mem, rr.size, rr.chunks = full, size, cr
			} else {
				_ = h5.Close(full)
			}
		}
	}
	if rr.mem == h5.Invalid {
		clear(offs)
		mt, size, err := buildRecordType(t, nil, want, 0, 0, offs)
		if err != nil {
			rr.close()
			return nil, qerr.Unsupported(qerr.CodeUnsupportedType, "cannot read HDF5 type %s", t).Wrap(err)
		}
		rr.mem, rr.size = mt, size
	}
	for i := range rr.cols {
		c := &rr.cols[i]
		if !c.packed {
			continue
		}
		off, ok := offs[memberKey(paths[i])]
		if !ok {
			rr.close()
			return nil, qerr.Internal(nil, "compound member %q missing from the record type", strings.Join(paths[i], "."))
		}
		c.off, c.elem = off, h5.MemSize(c.lf.t)
	}
	return rr, nil
}

// buildRecordType builds the packed native memory compound of compound t
// with the members whose paths are in want (nil: every member), nested
// compounds kept nested, members in file order; the offset of each member
// included, from the start of the record, goes to offs (keyed by
// memberKey). With want nil it equals h5.MemType(t). It returns h5.Invalid
// when nothing is wanted.
func buildRecordType(t *h5.Type, path []string, want map[string]bool, base, depth int, offs map[string]int) (h5.ID, int, error) {
	var specs []h5.MemberSpec
	defer func() {
		for _, s := range specs {
			_ = h5.Close(s.Type)
		}
	}()
	off := 0
	for _, m := range t.Members {
		p := append(path[:len(path):len(path)], m.Name)
		var id h5.ID
		var size int
		var err error
		if m.Type.Class == h5.ClassCompound && len(m.Type.Members) > 0 && depth < 16 {
			id, size, err = buildRecordType(m.Type, p, want, base+off, depth+1, offs)
		} else if want == nil || want[memberKey(p)] {
			offs[memberKey(p)] = base + off
			id, size, err = h5.MemType(m.Type)
		} else {
			continue
		}
		if err != nil {
			return h5.Invalid, 0, err
		}
		if id == h5.Invalid {
			continue
		}
		specs = append(specs, h5.MemberSpec{Name: m.Name, Offset: off, Type: id})
		off += size
	}
	if len(specs) == 0 {
		if want == nil {
			// As h5.MemType: an empty compound is one byte.
			id, err := h5.NewCompound(1, nil)
			return id, 1, err
		}
		return h5.Invalid, 0, nil
	}
	id, err := h5.NewCompound(off, specs)
	if err != nil {
		return h5.Invalid, 0, err
	}
	return id, off, nil
}

// boolTrueValue is the value of the TRUE member of an h5py boolean enum.
func boolTrueValue(t *h5.Type) int64 {
	var v int64
	for _, m := range t.Enum {
		if m.Name == "TRUE" || m.Name == "true" || m.Name == "True" {
			v = m.Value
		}
	}
	return v
}

func (rr *recordReader) close() {
	if rr == nil {
		return
	}
	_ = h5.Close(rr.mem)
	rr.mem = h5.Invalid
	rr.chunks = nil
	for _, c := range rr.cols {
		c.alone.close()
	}
}

// parallelSplitRows is the selection size from which the members are
// copied out of the records on up to GOMAXPROCS goroutines.
const parallelSplitRows = 1 << 15

// read reads the n elements selected by sel and returns one array per
// requested member, in order.
func (rr *recordReader) read(dset h5.ID, sel h5.Hyperslab, n int, alloc memory.Allocator) ([]arrow.Array, error) {
	out := make([]arrow.Array, len(rr.cols))
	fail := func(err error) ([]arrow.Array, error) {
		for _, a := range out {
			if a != nil {
				a.Release()
			}
		}
		return nil, err
	}
	if rr.mem != h5.Invalid {
		if int64(n) > math.MaxInt64/int64(rr.size) {
			return nil, qerr.Limit(qerr.CodeOversizeResult, "read of %d elements is too large", n)
		}
		buf := memory.NewResizableBuffer(alloc)
		defer buf.Release()
		buf.Resize(n * rr.size)
		if n > 0 {
			var err error
			if rr.chunks != nil {
				_, err = rr.chunks.Read(sel, unsafe.Pointer(&buf.Bytes()[0]))
			} else {
				err = h5.Read(dset, rr.mem, sel, unsafe.Pointer(&buf.Bytes()[0]))
			}
			if err != nil {
				return nil, readErr(err)
			}
		}
		var packed []int
		for i, c := range rr.cols {
			if c.packed {
				packed = append(packed, i)
			}
		}
		errs := make([]error, len(rr.cols))
		var next atomic.Int64
		work := func() {
			for {
				k := int(next.Add(1) - 1)
				if k >= len(packed) {
					return
				}
				i := packed[k]
				out[i], errs[i] = rr.cols[i].split(buf.Bytes(), n, rr.size, alloc)
			}
		}
		workers := 1
		if n >= parallelSplitRows {
			workers = min(len(packed), runtime.GOMAXPROCS(0))
		}
		var wg sync.WaitGroup
		for range workers - 1 {
			wg.Go(work)
		}
		work()
		wg.Wait()
		for _, err := range errs {
			if err != nil {
				return fail(err)
			}
		}
	}
	for i, c := range rr.cols {
		switch {
		case c.packed:
		case c.alone != nil:
			a, err := c.alone.read(dset, sel, n, alloc)
			if err != nil {
				return fail(err)
			}
			out[i] = a
		default:
			out[i] = array.NewNull(n)
		}
	}
	return out, nil
}

// split copies the member out of n records of recSize bytes in rec into a
// new array.
func (c *recordCol) split(rec []byte, n, recSize int, alloc memory.Allocator) (arrow.Array, error) {
	switch c.lf.kind {
	case kindNumeric:
		buf := c.gather(rec, n, recSize, alloc)
		defer buf.Release()
		return makeArray(c.lf.dt, n, []*memory.Buffer{nil, buf}, nil), nil
	case kindList:
		buf := c.gather(rec, n, recSize, alloc)
		defer buf.Release()
		child := array.NewData(c.lf.elem.dt, n*c.lf.listN, []*memory.Buffer{nil, buf}, nil, 0, 0)
		defer child.Release()
		return makeArray(c.lf.dt, n, []*memory.Buffer{nil}, []arrow.ArrayData{child}), nil
	case kindBool:
		bits := memory.NewResizableBuffer(alloc)
		defer bits.Release()
		bits.Resize(int(bitutil.BytesForBits(int64(n))))
		bb := bits.Bytes()
		clear(bb)
		for i := 0; i < n; i++ {
			if intAt(rec[i*recSize+c.off:], 0, c.elem) == c.trueVal {
				bitutil.SetBit(bb, i)
			}
		}
		return makeArray(arrow.FixedWidthTypes.Boolean, n, []*memory.Buffer{nil, bits}, nil), nil
	case kindEnum:
		return enumNames(c.lf.t, rec, c.off, recSize, c.elem, n, alloc), nil
	case kindFixedString:
		if int64(n)*int64(c.elem) > maxStringBytes {
			return nil, qerr.Limit(qerr.CodeOversizeResult, "%d strings of %d bytes exceed one Arrow string array; read fewer rows", n, c.elem)
		}
		data := memory.NewResizableBuffer(alloc)
		defer data.Release()
		data.Resize(n * c.elem)
		offs := memory.NewResizableBuffer(alloc)
		defer offs.Release()
		offs.Resize((n + 1) * 4)
		var src []byte
		if n > 0 {
			src = rec[c.off:]
		}
		used := h5.PackFixedStringsFrom(data.Bytes(), src, n, recSize, c.elem, c.lf.t.Pad, arrow.Int32Traits.CastFromBytes(offs.Bytes()))
		data.Resize(used)
		return makeArray(arrow.BinaryTypes.String, n, []*memory.Buffer{nil, offs, data}, nil), nil
	}
	return nil, qerr.Internal(nil, "member kind %d is not read from records", c.lf.kind)
}

// gather copies the member's fixed-size values out of the records into a
// new buffer of n values.
func (c *recordCol) gather(rec []byte, n, recSize int, alloc memory.Allocator) *memory.Buffer {
	buf := memory.NewResizableBuffer(alloc)
	buf.Resize(n * c.elem)
	if n == 0 {
		return buf
	}
	dst := buf.Bytes()
	src := rec[c.off:]
	switch c.elem {
	case 8:
		gatherWords[uint64](dst, src, n, recSize)
	case 4:
		gatherWords[uint32](dst, src, n, recSize)
	case 2:
		gatherWords[uint16](dst, src, n, recSize)
	case 1:
		for i := range n {
			dst[i] = src[i*recSize]
		}
	default:
		es := c.elem
		for i := range n {
			copy(dst[i*es:(i+1)*es], src[i*recSize:i*recSize+es])
		}
	}
	return buf
}

// gatherWords copies n values of type T, the i-th at src[i*stride:], into
// dst. Bounds are checked once: src holds (n-1)*stride+size(T) bytes.
func gatherWords[T uint16 | uint32 | uint64](dst, src []byte, n, stride int) {
	var zero T
	size := int(unsafe.Sizeof(zero))
	_ = src[(n-1)*stride+size-1]
	d := unsafe.Slice((*T)(unsafe.Pointer(&dst[0])), n)
	base := unsafe.Pointer(&src[0])
	for i := range d {
		d[i] = *(*T)(unsafe.Add(base, i*stride))
	}
}
