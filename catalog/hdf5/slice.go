//go:build cgo && !nohdf5

package hdf5

import (
	"context"
	"fmt"
	"github.com/quarrydb/quarry/internal/jsonx"
	"math"
	"runtime"
	"strconv"
	"sync"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/quarrydb/quarry/internal/h5"
	"github.com/quarrydb/quarry/internal/qerr"
)

// Slice is the result of ReadSlice: a selection of a dataset, flattened in
// row-major order. Release it when done.
type Slice struct {
	// Shape of the result (dimensions indexed by an integer are dropped;
	// empty for a scalar result).
	Shape []int64
	// DType is the element type in the notation of Object.DType.
	DType string
	// Values holds the elements, flattened row-major: numbers as Arrow
	// numeric arrays, booleans as Boolean, enums and strings as String,
	// array elements as FixedSizeList, compound elements as Struct, and
	// unsupported compound members as Null fields.
	Values arrow.Array

	lf  *leaf
	sel h5.Selection
}

// Release releases Values.
func (s *Slice) Release() {
	if s != nil && s.Values != nil {
		s.Values.Release()
		s.Values = nil
	}
}

// ReadSlice reads the selection slice (NumPy syntax, see h5.ParseSlice) of
// the dataset at internalPath in absFile. Links on the path are followed
// (external ones only inside the root). Errors: not_a_dataset for groups
// and named datatypes, dangling_link, resource_not_found, invalid_slice,
// unsupported_type, unsupported_filter (checked before reading) and
// oversize_result beyond the Format's slice byte limit.
func (f *Format) ReadSlice(ctx context.Context, absFile, internalPath, slice string, alloc memory.Allocator) (*Slice, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if alloc == nil {
		alloc = memory.DefaultAllocator
	}
	ip, err := CleanInternalPath(internalPath)
	if err != nil {
		return nil, err
	}
	res, err := f.resolve(absFile, ip, true)
	if err != nil {
		return nil, err
	}
	defer res.release()
	switch res.obj.Type {
	case h5.ObjDataset:
	case h5.ObjGroup:
		return nil, qerr.Invalid(qerr.CodeNotADataset, "%s is a group, not a dataset", ip).
			WithHint("list the group's members with browse_hdf5, then slice one of its datasets")
	default:
		return nil, qerr.Invalid(qerr.CodeNotADataset, "%s is a %s, not a dataset", ip, res.obj.Type)
	}
	did, err := h5.OpenDataset(res.file.ID(), res.path, 0)
	if err != nil {
		return nil, qerr.Internal(err, "opening dataset %s: %v", ip, err)
	}
	defer h5.Close(did)
	info, err := h5.GetDatasetInfo(did)
	if err != nil {
		return nil, qerr.Internal(err, "reading the storage of %s: %v", ip, err)
	}
	if err := storageErr(ip, info); err != nil {
		return nil, err
	}
	sp, err := h5.DatasetSpace(did)
	if err != nil {
		return nil, qerr.Internal(err, "reading the shape of %s: %v", ip, err)
	}
	if sp.Class == h5.SpaceNull {
		return nil, qerr.Invalid(qerr.CodeInvalidSlice, "dataset %s has a null dataspace: it holds no data", ip)
	}
	typ, err := h5.DatasetType(did)
	if err != nil {
		return nil, qerr.Internal(err, "reading the type of %s: %v", ip, err)
	}
	lf := mapType(typ)
	if !lf.supported() {
		return nil, qerr.Unsupported(qerr.CodeUnsupportedType, "dataset %s has element type %s, which Quarry cannot read", ip, typ).
			With("dtype", typ.String())
	}
	sel, err := h5.ParseSlice(slice, sp.Dims)
	if err != nil {
		return nil, err
	}
	n := sel.NumElements()
	if est := mulSat(n, int64(h5.MemSize(typ))); est > f.maxSliceBytes || n > math.MaxInt32 {
		return nil, qerr.Limit(qerr.CodeOversizeResult, "the selection has %d elements (about %d bytes), over the %d-byte limit", n, est, f.maxSliceBytes).
			WithHint("select a smaller block, e.g. with a step (\"::10\") or fewer rows").With("shape", sel.Shape())
	}
	lr, err := newLeafReader(lf, nil)
	if err != nil {
		return nil, err
	}
	defer lr.close()
	lr.useChunkReader(did, info)
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	vals, err := lr.read(did, sel.Hyperslab(), int(n), alloc)
	if err != nil {
		return nil, err
	}
	return &Slice{Shape: sel.Shape(), DType: typ.String(), Values: vals, lf: lf, sel: sel}, nil
}

// AppendNestedJSON appends the slice as JSON nested lists matching Shape (a
// bare value for a scalar result), like NumPy's tolist(): NaN and
// infinities become the strings "NaN", "Infinity", "-Infinity", 64-bit
// integers beyond ±2^53 become decimal strings, compound elements become
// objects and array elements nested lists.
func (s *Slice) AppendNestedJSON(dst []byte) []byte {
	if s == nil || s.Values == nil {
		return append(dst, "null"...)
	}
	if len(s.Shape) == 0 {
		if s.Values.Len() == 0 {
			return append(dst, "null"...)
		}
		return appendElem(dst, s.Values, 0, s.lf)
	}
	rows := s.Shape[0]
	parts := int64(runtime.GOMAXPROCS(0))
	if int64(s.Values.Len()) < parallelJSONElems || parts < 2 || rows < 2 {
		idx := 0
		return s.appendDim(dst, 0, &idx)
	}
	// Large slices: format contiguous ranges of the outermost dimension on
	// every core, then join them; the text is identical to the serial path.
	parts = min(parts, rows)
	inner := int64(s.Values.Len()) / rows
	bufs := make([][]byte, parts)
	var wg sync.WaitGroup
	for p := range parts {
		r0, r1 := rows*p/parts, rows*(p+1)/parts
		wg.Go(func() {
			buf := make([]byte, 0, (r1-r0)*inner*20)
			idx := int(r0 * inner)
			if len(s.Shape) == 1 {
				buf = appendRun(buf, s.Values, idx, int(r1-r0), s.lf)
			}
			for i := r0; i < r1 && len(s.Shape) > 1; i++ {
				if i > r0 {
					buf = append(buf, ',')
				}
				buf = s.appendDim(buf, 1, &idx)
			}
			bufs[p] = buf
		})
	}
	wg.Wait()
	dst = append(dst, '[')
	for p, b := range bufs {
		if p > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, b...)
	}
	return append(dst, ']')
}

// parallelJSONElems is the slice size from which AppendNestedJSON formats
// on all cores (below it the goroutines cost more than they save).
const parallelJSONElems = 1 << 16

func (s *Slice) appendDim(dst []byte, d int, idx *int) []byte {
	dst = append(dst, '[')
	if d == len(s.Shape)-1 {
		n := int(s.Shape[d])
		dst = appendRun(dst, s.Values, *idx, n, s.lf)
		*idx += n
		return append(dst, ']')
	}
	for i := int64(0); i < s.Shape[d]; i++ {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = s.appendDim(dst, d+1, idx)
	}
	return append(dst, ']')
}

// appendRun appends elements [start, start+n) of arr separated by commas,
// as appendElem would, with one typed loop for the null-free numeric
// arrays (the common case) instead of a type switch per element.
func appendRun(dst []byte, arr arrow.Array, start, n int, lf *leaf) []byte {
	if n == 0 {
		return dst
	}
	if arr.NullN() == 0 {
		switch a := arr.(type) {
		case *array.Float64:
			return appendFloats(dst, a.Float64Values()[start:start+n], 64)
		case *array.Float32:
			return appendFloats(dst, a.Float32Values()[start:start+n], 32)
		case *array.Int32:
			return appendInts(dst, a.Int32Values()[start:start+n])
		case *array.Int16:
			return appendInts(dst, a.Int16Values()[start:start+n])
		case *array.Int8:
			return appendInts(dst, a.Int8Values()[start:start+n])
		case *array.Uint32:
			return appendInts(dst, a.Uint32Values()[start:start+n])
		case *array.Uint16:
			return appendInts(dst, a.Uint16Values()[start:start+n])
		case *array.Uint8:
			return appendInts(dst, a.Uint8Values()[start:start+n])
		}
	}
	for i := start; i < start+n; i++ {
		if i > start {
			dst = append(dst, ',')
		}
		dst = appendElem(dst, arr, i, lf)
	}
	return dst
}

func appendFloats[T float32 | float64](dst []byte, vs []T, bits int) []byte {
	for i, v := range vs {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = jsonx.AppendFloat(dst, float64(v), bits)
	}
	return dst
}

// appendInts formats integers of at most 32 bits (always exact in JSON).
func appendInts[T int8 | int16 | int32 | uint8 | uint16 | uint32](dst []byte, vs []T) []byte {
	for i, v := range vs {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = strconv.AppendInt(dst, int64(v), 10)
	}
	return dst
}

// maxSafeInt is the largest integer a JSON (IEEE double) reader keeps exactly.
const maxSafeInt = 1 << 53

func appendElem(dst []byte, arr arrow.Array, i int, lf *leaf) []byte {
	if arr.IsNull(i) {
		return append(dst, "null"...)
	}
	switch a := arr.(type) {
	case *array.Int8:
		return strconv.AppendInt(dst, int64(a.Value(i)), 10)
	case *array.Int16:
		return strconv.AppendInt(dst, int64(a.Value(i)), 10)
	case *array.Int32:
		return strconv.AppendInt(dst, int64(a.Value(i)), 10)
	case *array.Int64:
		v := a.Value(i)
		if v > maxSafeInt || v < -maxSafeInt {
			dst = append(dst, '"')
			dst = strconv.AppendInt(dst, v, 10)
			return append(dst, '"')
		}
		return strconv.AppendInt(dst, v, 10)
	case *array.Uint8:
		return strconv.AppendUint(dst, uint64(a.Value(i)), 10)
	case *array.Uint16:
		return strconv.AppendUint(dst, uint64(a.Value(i)), 10)
	case *array.Uint32:
		return strconv.AppendUint(dst, uint64(a.Value(i)), 10)
	case *array.Uint64:
		v := a.Value(i)
		if v > maxSafeInt {
			dst = append(dst, '"')
			dst = strconv.AppendUint(dst, v, 10)
			return append(dst, '"')
		}
		return strconv.AppendUint(dst, v, 10)
	case *array.Float32:
		return jsonx.AppendFloat(dst, float64(a.Value(i)), 32)
	case *array.Float64:
		return jsonx.AppendFloat(dst, a.Value(i), 64)
	case *array.Boolean:
		if a.Value(i) {
			return append(dst, "true"...)
		}
		return append(dst, "false"...)
	case *array.String:
		return jsonx.AppendString(dst, a.Value(i))
	case *array.FixedSizeList:
		start, end := a.ValueOffsets(i)
		var dims []int64
		var elf *leaf
		if lf != nil && lf.t != nil {
			dims = lf.t.Dims
			elf = lf.elem
		}
		if len(dims) == 0 {
			dims = []int64{end - start}
		}
		pos := int(start)
		return appendNested(dst, a.ListValues(), dims, &pos, elf)
	case *array.Struct:
		st := a.DataType().(*arrow.StructType)
		dst = append(dst, '{')
		for k := 0; k < a.NumField(); k++ {
			if k > 0 {
				dst = append(dst, ',')
			}
			dst = jsonx.AppendString(dst, st.Field(k).Name)
			dst = append(dst, ':')
			var flf *leaf
			if lf != nil && k < len(lf.fields) {
				flf = lf.fields[k]
			}
			dst = appendElem(dst, a.Field(k), i, flf)
		}
		return append(dst, '}')
	}
	return append(dst, "null"...)
}

func appendNested(dst []byte, vals arrow.Array, dims []int64, pos *int, lf *leaf) []byte {
	dst = append(dst, '[')
	for i := int64(0); i < dims[0]; i++ {
		if i > 0 {
			dst = append(dst, ',')
		}
		if len(dims) == 1 {
			dst = appendElem(dst, vals, *pos, lf)
			*pos++
		} else {
			dst = appendNested(dst, vals, dims[1:], pos, lf)
		}
	}
	return append(dst, ']')
}

// Table returns the slice as a flat record batch: one int64 column per
// result dimension, i0..i{n-1}, holding each element's coordinates in the
// dataset (not in the slice), then a "value" column. A scalar result is one
// row with only the value column. Release the batch when done.
func (s *Slice) Table(alloc memory.Allocator) (arrow.RecordBatch, error) {
	if s == nil || s.Values == nil {
		return nil, qerr.Internal(nil, "Table on a released slice")
	}
	if alloc == nil {
		alloc = memory.DefaultAllocator
	}
	var kept []int
	for d := range s.sel.Count {
		if !s.sel.Dropped[d] {
			kept = append(kept, d)
		}
	}
	n := s.Values.Len()
	fields := make([]arrow.Field, 0, len(kept)+1)
	cols := make([]arrow.Array, 0, len(kept)+1)
	defer func() {
		for _, c := range cols {
			c.Release()
		}
	}()
	bufs := make([][]int64, len(kept))
	for k := range kept {
		fields = append(fields, arrow.Field{Name: fmt.Sprintf("i%d", k), Type: arrow.PrimitiveTypes.Int64})
		buf := memory.NewResizableBuffer(alloc)
		buf.Resize(n * 8)
		bufs[k] = arrow.Int64Traits.CastFromBytes(buf.Bytes())
		cols = append(cols, makeArray(arrow.PrimitiveTypes.Int64, n, []*memory.Buffer{nil, buf}, nil))
		buf.Release()
	}
	if len(kept) > 0 && n > 0 {
		ctr := make([]int64, len(kept))
		for row := 0; row < n; row++ {
			for k, d := range kept {
				bufs[k][row] = s.sel.Start[d] + ctr[k]*s.sel.Stride[d]
			}
			for k := len(kept) - 1; k >= 0; k-- {
				ctr[k]++
				if ctr[k] < s.sel.Count[kept[k]] {
					break
				}
				ctr[k] = 0
			}
		}
	}
	vf := arrow.Field{Name: "value", Type: s.Values.DataType(), Nullable: true}
	if s.lf != nil && s.lf.kind == kindUnsupported {
		vf = s.lf.field("value")
	}
	fields = append(fields, vf)
	s.Values.Retain()
	cols = append(cols, s.Values)
	return array.NewRecordBatch(arrow.NewSchema(fields, nil), cols, int64(n)), nil
}
