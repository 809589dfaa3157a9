package engine

import (
	"math"
	"sort"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/quarrydb/quarry/internal/dictstr"
	"github.com/quarrydb/quarry/internal/qerr"
	"github.com/quarrydb/quarry/planner"
)

// Dictionary-encoded strings: a column of type dictionary<intN, utf8 or
// large_utf8> is accepted wherever a string column is. Predicates are
// evaluated once per dictionary entry and mapped through the codes; group
// keys are hashed once per entry; sort keys, aggregates and copies read the
// values through the codes. The scan folds nulls of the dictionary itself
// into the index validity (normalizeDict), so everywhere else a row is null
// exactly when its index is.

// isDictStr reports a dictionary-encoded string type.
func isDictStr(dt arrow.DataType) bool { return planner.IsDictString(dt) }

// isStringLike reports plain and dictionary-encoded string types.
func isStringLike(dt arrow.DataType) bool { return isStringType(dt.ID()) || isDictStr(dt) }

// strSrc views the values of a string or large_string array by index.
type strSrc struct {
	offs32 []int32
	offs64 []int64
	data   []byte
	n      int
}

func strSrcOf(arr arrow.Array) strSrc {
	s := strSrc{n: arr.Len()}
	if s.n == 0 {
		return s
	}
	d := arr.Data()
	if b := d.Buffers()[2]; b != nil {
		s.data = b.Bytes()
	}
	if arr.DataType().ID() == arrow.LARGE_STRING || arr.DataType().ID() == arrow.LARGE_BINARY {
		s.offs64 = arrow.GetOffsets[int64](d, 1)
	} else {
		s.offs32 = arrow.GetOffsets[int32](d, 1)
	}
	return s
}

// at returns value i (no bounds check beyond Go's).
func (s strSrc) at(i int) string {
	if s.offs64 != nil {
		return unsafeString(s.data[s.offs64[i]:s.offs64[i+1]])
	}
	return unsafeString(s.data[s.offs32[i]:s.offs32[i+1]])
}

// codeType is the dictionary index types the hot kernels are instantiated
// for: int16 (the catalog's CSV columns) and int32 (every other producer
// the engine sees most). Other widths are converted to int32 (dictIndices).
type codeType interface{ ~int16 | ~int32 }

// dictIdx is the indices of a dictionary array (offset applied, one per
// row). int16 and int32 indices alias Arrow memory in their own width
// (exactly one of i16 and i32 is non-nil, unless the array is empty);
// other widths are converted to int32, out-of-range values to -1. Null
// slots hold arbitrary values.
type dictIdx struct {
	i16 []int16
	i32 []int32
}

// dictIndices returns the indices of a dictionary array. buf is scratch
// the rare widths are converted into (grown as needed and kept for the
// next call; nil: a new slice each time); it is untouched for int16 and
// int32 indices.
func dictIndices(arr arrow.Array, buf *[]int32) dictIdx {
	switch arr.DataType().(*arrow.DictionaryType).IndexType.ID() {
	case arrow.INT16:
		return dictIdx{i16: values[int16](arr)}
	case arrow.INT32:
		return dictIdx{i32: values[int32](arr)}
	}
	var b []int32
	if buf != nil {
		b = *buf
	}
	b = convertCodes(arr, b)
	if buf != nil {
		*buf = b
	}
	return dictIdx{i32: b}
}

// at returns the code of row i.
func (x dictIdx) at(i int) int32 {
	if x.i16 != nil {
		return int32(x.i16[i])
	}
	return x.i32[i]
}

// convertCodes returns the indices of a dictionary array of any index
// width as int32 in buf (reallocated when too small); values that do not
// fit become -1, never a valid code.
func convertCodes(arr arrow.Array, buf []int32) []int32 {
	dt := arr.DataType().(*arrow.DictionaryType)
	n := arr.Len()
	if cap(buf) < n {
		buf = make([]int32, n)
	}
	buf = buf[:n]
	switch dt.IndexType.ID() {
	case arrow.INT8:
		convCodes(values[int8](arr), buf)
	case arrow.UINT8:
		convCodes(values[uint8](arr), buf)
	case arrow.INT16:
		convCodes(values[int16](arr), buf)
	case arrow.UINT16:
		convCodes(values[uint16](arr), buf)
	case arrow.INT32:
		copy(buf, values[int32](arr))
	case arrow.UINT32:
		convCodes(values[uint32](arr), buf)
	case arrow.INT64:
		convCodes(values[int64](arr), buf)
	case arrow.UINT64:
		convCodes(values[uint64](arr), buf)
	}
	return buf
}

func convCodes[T integer](vs []T, out []int32) {
	for i, v := range vs {
		if uint64(v) > math.MaxInt32 {
			out[i] = -1 // never a valid code
		} else {
			out[i] = int32(v)
		}
	}
}

// dictValues returns the dictionary (values array) of a dictionary array.
func dictValues(arr arrow.Array) arrow.Array { return arr.(*array.Dictionary).Dictionary() }

// dictRowViews returns every row's string value ("" for nulls), aliasing
// the dictionary's memory, reusing buf (cbuf is dictIndices' scratch, may
// be nil).
func dictRowViews(arr arrow.Array, buf []string, cbuf *[]int32) []string {
	n := arr.Len()
	if cap(buf) < n {
		buf = make([]string, n)
	}
	buf = buf[:n]
	if n == 0 {
		return buf
	}
	src := strSrcOf(dictValues(arr))
	v := validityOf(arr)
	if x := dictIndices(arr, cbuf); x.i16 != nil {
		rowViews(x.i16, src, v, buf)
	} else {
		rowViews(x.i32, src, v, buf)
	}
	return buf
}

func rowViews[T codeType](codes []T, src strSrc, v validity, out []string) {
	out = out[:len(codes)]
	for i, c := range codes {
		if v.ok(i) && c >= 0 && int(c) < src.n {
			out[i] = src.at(int(c))
		} else {
			out[i] = ""
		}
	}
}

// strViewsAny is strViews for plain strings and dictRowViews for
// dictionary-encoded ones.
func strViewsAny(arr arrow.Array, buf []string, cbuf *[]int32) []string {
	if isDictStr(arr.DataType()) {
		return dictRowViews(arr, buf, cbuf)
	}
	return strViews(arr, buf)
}

// normalizeDict folds nulls of a dictionary's values into the index
// validity, so that a row is null exactly when its index is. It returns arr
// (retained) when the dictionary has no nulls.
func normalizeDict(mem memory.Allocator, arr arrow.Array) arrow.Array {
	dict := dictValues(arr)
	if dict.NullN() == 0 {
		arr.Retain()
		return arr
	}
	n := arr.Len()
	codes := dictIndices(arr, nil)
	v := validityOf(arr)
	dv := validityOf(dict)
	buf := memory.NewResizableBuffer(mem)
	defer buf.Release()
	buf.Resize(int(bitutil.BytesForBits(int64(n))))
	bits := buf.Bytes()
	clear(bits)
	nulls := 0
	for i := range n {
		if c := codes.at(i); v.ok(i) && c >= 0 && int(c) < dict.Len() && dv.ok(int(c)) {
			bitutil.SetBit(bits, i)
		} else {
			nulls++
		}
	}
	d := arr.Data()
	if d.Offset() != 0 {
		// The new bitmap starts at bit 0: copy the indices to offset 0 too.
		return compactDict(mem, arr, bits, nulls)
	}
	nd := array.NewDataWithDictionary(arr.DataType(), n, []*memory.Buffer{buf, d.Buffers()[1]}, nulls, 0, dict.Data().(*array.Data))
	defer nd.Release()
	return array.MakeFromData(nd)
}

// compactDict copies a sliced dictionary array into a zero-offset one with
// the given validity bits (bit i for row i).
func compactDict(mem memory.Allocator, arr arrow.Array, bits []byte, nulls int) arrow.Array {
	n := arr.Len()
	dt := arr.DataType().(*arrow.DictionaryType)
	w := fixedWidth(dt.IndexType)
	vb := memory.NewResizableBuffer(mem)
	defer vb.Release()
	vb.Resize(len(bits))
	copy(vb.Bytes(), bits)
	ib := memory.NewResizableBuffer(mem)
	defer ib.Release()
	ib.Resize(n * w)
	src := arr.Data().Buffers()[1].Bytes()[arr.Data().Offset()*w:]
	copy(ib.Bytes(), src[:n*w])
	nd := array.NewDataWithDictionary(dt, n, []*memory.Buffer{vb, ib}, nulls, 0, dictValues(arr).Data().(*array.Data))
	defer nd.Release()
	return array.MakeFromData(nd)
}

// decodeDict converts a dictionary-encoded string array into a plain array
// of type to (string or large_string), through dictstr, the decoder the
// materializer shares.
func decodeDict(mem memory.Allocator, arr arrow.Array, to arrow.DataType) (out arrow.Array, err error) {
	defer catchBudget(&err)
	return dictstr.Decode(mem, arr.(*array.Dictionary), to)
}

// encodeDict dictionary-encodes a plain string array as type to.
func encodeDict(mem memory.Allocator, arr arrow.Array, to *arrow.DictionaryType) (out arrow.Array, err error) {
	defer catchBudget(&err)
	strs := strViews(arr, nil)
	v := validityOf(arr)
	index := map[string]int32{}
	var uniq []string
	codes := make([]int32, len(strs))
	for i, s := range strs {
		if !v.ok(i) {
			continue
		}
		c, ok := index[s]
		if !ok {
			c = int32(len(uniq))
			index[s] = c
			uniq = append(uniq, s)
		}
		codes[i] = c
	}
	var vb *memory.Buffer
	nulls := 0
	if arr.NullN() > 0 {
		valid := make([]bool, len(strs))
		for i := range valid {
			valid[i] = v.ok(i)
		}
		vb, nulls = buildValidity(mem, valid)
		defer releaseBufs(vb)
	}
	return buildDict(mem, to, codes, vb, nulls, uniq)
}

// encodeFit returns how many leading rows of the string column arr (plain
// or dictionary-encoded) encodeDict can encode as type to: all of them
// unless they hold more distinct values than to's index type addresses
// (then at least maxCode(to)+1 rows).
func encodeFit(arr arrow.Array, to *arrow.DictionaryType) int {
	n := arr.Len()
	limit := maxCode(to) + 1
	if int64(n) <= limit {
		return n
	}
	strs := strViewsAny(arr, nil, nil)
	v := validityOf(arr)
	seen := map[string]struct{}{}
	for i, s := range strs {
		if !v.ok(i) {
			continue
		}
		if _, ok := seen[s]; !ok {
			if int64(len(seen)) == limit {
				return i
			}
			seen[s] = struct{}{}
		}
	}
	return n
}

// maxCode is the largest code the index type of dt can hold.
func maxCode(dt *arrow.DictionaryType) int64 {
	switch dt.IndexType.ID() {
	case arrow.INT8:
		return math.MaxInt8
	case arrow.UINT8:
		return math.MaxUint8
	case arrow.INT16:
		return math.MaxInt16
	case arrow.UINT16:
		return math.MaxUint16
	}
	return math.MaxInt32
}

// buildDict builds a dictionary array of type dt from int32 codes, a
// validity bitmap (may be nil) and the dictionary values. It panics with
// exhausted over the budget (callers recover with catchBudget).
func buildDict(mem memory.Allocator, dt *arrow.DictionaryType, codes []int32, validity *memory.Buffer, nulls int, uniq []string) (arrow.Array, error) {
	if int64(len(uniq))-1 > maxCode(dt) {
		return nil, qerr.Limit(qerr.CodeResourceExhausted, "a result batch holds %d distinct values, more than a %s dictionary index can address", len(uniq), dt.IndexType).
			WithHint("select fewer rows per request")
	}
	ib := indexBuffer(mem, dt, codes)
	defer ib.Release()
	dict := buildStrings(mem, dt.ValueType, uniq, nil)
	defer dict.Release()
	nd := array.NewDataWithDictionary(dt, len(codes), []*memory.Buffer{validity, ib}, nulls, 0, dict.Data().(*array.Data))
	defer nd.Release()
	return array.MakeFromData(nd), nil
}

// indexBuffer writes codes (each within the range of dt's index type) as
// the index buffer of a dictionary array of type dt.
func indexBuffer(mem memory.Allocator, dt *arrow.DictionaryType, codes []int32) *memory.Buffer {
	w := fixedWidth(dt.IndexType)
	ib := memory.NewResizableBuffer(mem)
	ib.Resize(len(codes) * w)
	b := ib.Bytes()
	switch w {
	case 1:
		out := b[:len(codes)]
		for i, c := range codes {
			out[i] = byte(c)
		}
	case 2:
		out := arrow.GetData[uint16](b)[:len(codes)]
		for i, c := range codes {
			out[i] = uint16(c)
		}
	case 4:
		copy(arrow.GetData[int32](b)[:len(codes)], codes)
	case 8:
		out := arrow.GetData[int64](b)[:len(codes)]
		for i, c := range codes {
			out[i] = int64(c)
		}
	}
	return ib
}

// sameDictData reports whether two arrays share one dictionary.
func sameDictData(a, b arrow.Array) bool {
	return a.Data().Dictionary() == b.Data().Dictionary()
}

// gatherShared copies rows of dictionary-encoded string chunks that all
// share one dictionary (gc.shared): the indices are copied and the
// dictionary is shared.
func gatherShared(mem memory.Allocator, gc *gatherCol, refs []rowRef) arrow.Array {
	dt := gc.dt.(*arrow.DictionaryType)
	valid, nulls := gc.gatherValidity(mem, refs)
	defer releaseBufs(valid)
	codes := make([]int32, len(refs))
	for i, r := range refs {
		if gc.valid[r.b].ok(int(r.r)) {
			codes[i] = gc.codes[r.b].at(int(r.r))
		}
	}
	ib := indexBuffer(mem, dt, codes)
	defer ib.Release()
	nd := array.NewDataWithDictionary(dt, len(codes), []*memory.Buffer{valid, ib}, nulls, 0, gc.arrs[0].Data().Dictionary().(*array.Data))
	defer nd.Release()
	return array.MakeFromData(nd)
}

// dictEncoding is the re-encoding of gathered rows of dictionary chunks
// with different dictionaries into one new dictionary: the referenced
// values in first-use order (uniq; first[j] is the row where uniq[j] is
// first used) and each row's code (0 for nulls). It covers the first rows
// rows, as many as the index type of the column can address.
type dictEncoding struct {
	codes []int32
	uniq  []string
	first []int
	rows  int
}

// encodeGathered re-encodes the rows refs of gc (chunks with different
// dictionaries), stopping before the first row whose value would need a
// code beyond the range of the column's index type.
//
// Each chunk's codes are mapped to the new ones through a table of the
// chunk's dictionary size, filled as codes are met, so a value is hashed
// once per chunk and dictionary entry instead of once per row (a join
// gathering 10M build rows from CSV chunks with their own 100-value
// dictionaries hashed 10M strings). The tables hold at most
// remapPerRef entries per ref (plus remapMinEntries); chunks beyond that,
// or with bigger dictionaries, hash their values as they come.
func encodeGathered(gc *gatherCol, refs []rowRef) *dictEncoding {
	limit := maxCode(gc.dt.(*arrow.DictionaryType)) + 1
	e := &dictEncoding{codes: make([]int32, len(refs)), rows: len(refs)}
	index := map[string]int32{}
	remap := make([][]int32, len(gc.dicts)) // chunk → (code → new code + 1; 0: not met); empty non-nil: hashed
	room := remapPerRef*len(refs) + remapMinEntries
	for i, r := range refs {
		if !gc.valid[r.b].ok(int(r.r)) {
			continue
		}
		code := int(gc.codes[r.b].at(int(r.r)))
		m := remap[r.b]
		if m == nil {
			if n := gc.dicts[r.b].n; n <= room {
				m, room = make([]int32, n), room-n
			} else {
				m = []int32{}
			}
			remap[r.b] = m
		}
		if len(m) > 0 && m[code] != 0 {
			e.codes[i] = m[code] - 1
			continue
		}
		s := gc.dicts[r.b].at(code)
		c, ok := index[s]
		if !ok {
			if int64(len(e.uniq)) == limit {
				e.rows = i
				e.codes = e.codes[:i]
				break
			}
			c = int32(len(e.uniq))
			index[s] = c
			e.uniq = append(e.uniq, s)
			e.first = append(e.first, i)
		}
		e.codes[i] = c
		if len(m) > 0 {
			m[code] = c + 1
		}
	}
	return e
}

// The code tables of encodeGathered hold at most remapPerRef entries per
// gathered row plus remapMinEntries.
const (
	remapPerRef     = 2
	remapMinEntries = 4096
)

// build makes the dictionary array of the first len(refs) rows of the
// encoding (refs is a prefix of the rows encoded).
func (e *dictEncoding) build(mem memory.Allocator, gc *gatherCol, refs []rowRef) (arrow.Array, error) {
	valid, nulls := gc.gatherValidity(mem, refs)
	defer releaseBufs(valid)
	n := len(refs)
	used := sort.SearchInts(e.first, n) // values first used before row n
	return buildDict(mem, gc.dt.(*arrow.DictionaryType), e.codes[:n], valid, nulls, e.uniq[:used])
}
