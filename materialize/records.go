package materialize

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"github.com/quarrydb/quarry/internal/jsonx"
	"slices"
	"strconv"
	"sync"
	"unicode/utf8"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
)

// Record encoding.
//
// EncodeRecords writes rows as a JSON array of objects. It works column by
// column on chunks of rows: each column's values for the chunk are encoded
// into a per-column scratch buffer by a loop specialised for the column's
// type (no function-pointer call per value for the common types), then the
// rows are interleaved into the output with their keys. The byte budget is
// checked row by row while interleaving, and the chunk size follows the
// remaining budget, so a page fit encodes only a little more than the page.

// rawJSONKey marks (in field metadata) a utf8 column whose values are JSON
// texts, emitted verbatim: nested values read back from a spill file.
const rawJSONKey = "quarry:raw_json"

func isRawJSON(f arrow.Field) bool {
	return f.HasMetadata() && f.Metadata.FindKey(rawJSONKey) >= 0
}

// colKind selects the encoding kernel of a column.
type colKind uint8

const (
	kGeneric colKind = iota // valueEncoder closure, no shortening (numbers, times, decimals)
	kNested                 // valueEncoder closure; long JSON becomes a shortened string
	kNull
	kBool
	kInt8
	kInt16
	kInt32
	kInt64
	kUint8
	kUint16
	kUint32
	kUint64
	kFloat32
	kFloat64
	kString
	kLargeString
	kStringLike
	kRawJSON
	kBinary
	kDate32
	kTimestamp
	kDict
)

// column is the per-column state of a recordEncoder.
type column struct {
	key []byte // `{"name":` for the first column, `,"name":` for the others
	raw bool   // the field holds raw JSON texts

	kind  colKind
	valid []byte // validity bitmap; nil when the bound array has no nulls
	voff  int    // array offset into valid

	boolArr *array.Boolean
	i8      []int8
	i16     []int16
	i32     []int32
	i64     []int64
	u8      []uint8
	u16     []uint16
	u32     []uint32
	u64     []uint64
	f32     []float32
	f64     []float64
	str     *array.String
	lstr    *array.LargeString
	strLike array.StringLike
	bin     interface{ Value(int) []byte }
	d32     []arrow.Date32
	ts      []arrow.Timestamp
	tsf     *timestampFormatter
	dict    *dictMemo
	dictArr *array.Dictionary
	enc     valueEncoder
	scratch []byte

	// Chunk output: the values of rows lo..hi-1 back to back in buf,
	// ends[i] the end of row lo+i's value; pos is the interleave cursor.
	// perRow is the average value size of the last chunk, to size buf.
	buf    []byte
	ends   []int
	pos    int
	perRow int

	// date32 cache
	lastDay  arrow.Date32
	lastDate []byte
}

// dictMemo caches the encodings of a dictionary's values.
type dictMemo struct {
	values arrow.Array // the dictionary the memo is for
	inner  *column
	spans  []int32 // start, end per entry; start < 0: not encoded yet
	short  []bool
	buf    []byte
}

// maxMemoDict is the largest dictionary whose encodings are memoised.
const maxMemoDict = 1 << 16

// scratch is a column's reusable chunk buffers.
type scratch struct {
	buf  []byte
	ends []int
}

// scratchPool recycles column buffers between encodings (a server encodes
// page after page of similar shape).
var scratchPool = sync.Pool{New: func() any { return new(scratch) }}

// maxPooledScratch is the largest column buffer kept for reuse.
const maxPooledScratch = 1 << 20

// recordEncoder encodes rows of batches of one schema.
type recordEncoder struct {
	cols  []*column
	limit int     // characters per cell value, 0: unlimited
	short []int32 // per chunk row: number of shortened cell values
}

func newRecordEncoder(schema *arrow.Schema, limit int) *recordEncoder {
	names := ColumnNames(schema)
	e := &recordEncoder{cols: make([]*column, len(names)), limit: max(limit, 0)}
	for i, n := range names {
		var k []byte
		if i == 0 {
			k = append(k, '{')
		} else {
			k = append(k, ',')
		}
		k = jsonx.AppendString(k, n)
		sc := scratchPool.Get().(*scratch)
		e.cols[i] = &column{key: append(k, ':'), raw: isRawJSON(schema.Field(i)), buf: sc.buf[:0], ends: sc.ends[:0], perRow: 16}
		sc.buf, sc.ends = nil, nil
		scratchPool.Put(sc)
	}
	return e
}

// release returns the column buffers to scratchPool; e must not be used
// afterwards.
func (e *recordEncoder) release() {
	for _, c := range e.cols {
		if cap(c.buf) <= maxPooledScratch {
			scratchPool.Put(&scratch{buf: c.buf[:0], ends: c.ends[:0]})
		}
		c.buf, c.ends = nil, nil
	}
}

func (e *recordEncoder) bind(b arrow.RecordBatch) {
	for i, c := range e.cols {
		c.bind(b.Column(i))
	}
}

// bind prepares c for the elements of arr.
func (c *column) bind(arr arrow.Array) {
	if ext, ok := arr.(array.ExtensionArray); ok {
		arr = ext.Storage()
	}
	c.valid, c.voff = nil, 0
	useBitmap := true
	switch a := arr.(type) {
	case *array.Null:
		c.kind, useBitmap = kNull, false
	case *array.Boolean:
		c.kind, c.boolArr = kBool, a
	case *array.Int8:
		c.kind, c.i8 = kInt8, a.Int8Values()
	case *array.Int16:
		c.kind, c.i16 = kInt16, a.Int16Values()
	case *array.Int32:
		c.kind, c.i32 = kInt32, a.Int32Values()
	case *array.Int64:
		c.kind, c.i64 = kInt64, a.Int64Values()
	case *array.Uint8:
		c.kind, c.u8 = kUint8, a.Uint8Values()
	case *array.Uint16:
		c.kind, c.u16 = kUint16, a.Uint16Values()
	case *array.Uint32:
		c.kind, c.u32 = kUint32, a.Uint32Values()
	case *array.Uint64:
		c.kind, c.u64 = kUint64, a.Uint64Values()
	case *array.Float32:
		c.kind, c.f32 = kFloat32, a.Float32Values()
	case *array.Float64:
		c.kind, c.f64 = kFloat64, a.Float64Values()
	case *array.String:
		c.kind, c.str, c.strLike = kString, a, a
	case *array.LargeString:
		c.kind, c.lstr, c.strLike = kLargeString, a, a
	case array.StringLike:
		c.kind, c.strLike = kStringLike, a
	case *array.Binary:
		c.kind, c.bin = kBinary, a
	case *array.LargeBinary:
		c.kind, c.bin = kBinary, a
	case *array.BinaryView:
		c.kind, c.bin = kBinary, a
	case *array.FixedSizeBinary:
		c.kind, c.bin = kBinary, a
	case *array.Date32:
		c.kind, c.d32 = kDate32, a.Date32Values()
		c.lastDate = c.lastDate[:0]
	case *array.Timestamp:
		c.kind, c.ts = kTimestamp, a.TimestampValues()
		c.tsf = newTimestampFormatter(a.DataType().(*arrow.TimestampType))
	case *array.Dictionary:
		c.kind, c.dictArr = kDict, a
		values := a.Dictionary()
		if c.dict == nil || c.dict.values != values {
			c.dict = &dictMemo{values: values, inner: &column{}}
			c.dict.inner.bind(values)
			if values.Len() <= maxMemoDict {
				c.dict.spans = make([]int32, 2*values.Len())
				for j := range values.Len() {
					c.dict.spans[2*j] = -1
				}
				c.dict.short = make([]bool, values.Len())
			}
		}
	case *array.Map, array.ListLike, *array.Struct:
		c.kind, c.enc = kNested, newNonNullEncoder(arr)
	default:
		switch arr.DataType().ID() {
		case arrow.SPARSE_UNION, arrow.DENSE_UNION, arrow.RUN_END_ENCODED:
			// No validity bitmap of their own: the fallback handles nulls.
			c.kind, c.enc, useBitmap = kGeneric, fallbackEncoder(arr), false
		default:
			c.kind, c.enc = kGeneric, newNonNullEncoder(arr)
		}
	}
	if c.raw && c.strLike != nil {
		c.kind = kRawJSON
	}
	if useBitmap && arr.NullN() > 0 {
		c.valid, c.voff = arr.NullBitmapBytes(), arr.Data().Offset()
	}
}

func (c *column) isNull(i int) bool {
	return c.valid != nil && c.valid[(c.voff+i)>>3]&(1<<uint((c.voff+i)&7)) == 0
}

// appendOne appends the JSON of element i, shortened to limit characters
// (0: unlimited) where the type allows; short reports a shortening.
func (c *column) appendOne(dst []byte, i, limit int) (out []byte, short bool) {
	if c.isNull(i) {
		return append(dst, "null"...), false
	}
	switch c.kind {
	case kNull:
		return append(dst, "null"...), false
	case kBool:
		if c.boolArr.Value(i) {
			return append(dst, "true"...), false
		}
		return append(dst, "false"...), false
	case kInt8:
		return strconv.AppendInt(dst, int64(c.i8[i]), 10), false
	case kInt16:
		return strconv.AppendInt(dst, int64(c.i16[i]), 10), false
	case kInt32:
		return strconv.AppendInt(dst, int64(c.i32[i]), 10), false
	case kInt64:
		return appendSafeInt(dst, c.i64[i]), false
	case kUint8:
		return strconv.AppendUint(dst, uint64(c.u8[i]), 10), false
	case kUint16:
		return strconv.AppendUint(dst, uint64(c.u16[i]), 10), false
	case kUint32:
		return strconv.AppendUint(dst, uint64(c.u32[i]), 10), false
	case kUint64:
		return appendSafeUint(dst, c.u64[i]), false
	case kFloat32:
		return jsonx.AppendFloat(dst, float64(c.f32[i]), 32), false
	case kFloat64:
		return jsonx.AppendFloat(dst, c.f64[i], 64), false
	case kString, kLargeString, kStringLike:
		return appendStringCell(dst, c.strLike.Value(i), limit)
	case kRawJSON:
		return appendNestedCell(dst, c.strLike.Value(i), limit)
	case kBinary:
		return appendBase64Cell(dst, c.bin.Value(i), limit)
	case kDate32:
		dst = append(dst, '"')
		dst = appendDate(dst, int64(c.d32[i]))
		return append(dst, '"'), false
	case kTimestamp:
		dst = append(dst, '"')
		dst = c.tsf.append(dst, int64(c.ts[i]))
		return append(dst, '"'), false
	case kDict:
		return c.dict.appendValue(dst, c.dictArr.GetValueIndex(i), limit)
	case kNested:
		c.scratch = c.enc(c.scratch[:0], i)
		out, short = appendNestedCell(dst, unsafeString(c.scratch), limit)
		if cap(c.scratch) > 1<<20 {
			c.scratch = nil
		}
		return out, short
	}
	return c.enc(dst, i), false
}

// appendValue appends the (memoised) encoding of dictionary entry j.
func (d *dictMemo) appendValue(dst []byte, j, limit int) ([]byte, bool) {
	if d.spans == nil {
		return d.inner.appendOne(dst, j, limit)
	}
	if d.spans[2*j] < 0 {
		start := len(d.buf)
		var short bool
		d.buf, short = d.inner.appendOne(d.buf, j, limit)
		if len(d.buf) > 1<<30 { // do not let int32 spans overflow; stop memoising
			dst = append(dst, d.buf[start:]...)
			d.spans, d.short, d.buf = nil, nil, nil
			return dst, short
		}
		d.spans[2*j], d.spans[2*j+1] = int32(start), int32(len(d.buf))
		d.short[j] = short
	}
	return append(dst, d.buf[d.spans[2*j]:d.spans[2*j+1]]...), d.short[j]
}

// encode encodes rows [lo, hi) of the bound array into c.buf/c.ends,
// counting shortened values in short[row-lo].
func (c *column) encode(lo, hi, limit int, short []int32) {
	// Size the buffers for the chunk up front (no copying: they are reset).
	if need := (hi - lo) * (c.perRow + c.perRow/4 + 1); cap(c.buf) < need {
		c.buf = make([]byte, 0, need)
	}
	if cap(c.ends) < hi-lo {
		c.ends = make([]int, 0, hi-lo)
	}
	buf, ends := c.buf[:0], c.ends[:0]
	valid, voff := c.valid, c.voff
	null := func(i int) bool { return valid != nil && valid[(voff+i)>>3]&(1<<uint((voff+i)&7)) == 0 }
	switch c.kind {
	case kInt64:
		v := c.i64[lo:hi]
		for k, x := range v {
			if null(lo + k) {
				buf = append(buf, "null"...)
			} else if x <= maxSafeInt && x >= -maxSafeInt {
				buf = strconv.AppendInt(buf, x, 10)
			} else {
				buf = appendSafeInt(buf, x)
			}
			ends = append(ends, len(buf))
		}
	case kInt32:
		v := c.i32[lo:hi]
		for k, x := range v {
			if null(lo + k) {
				buf = append(buf, "null"...)
			} else {
				buf = strconv.AppendInt(buf, int64(x), 10)
			}
			ends = append(ends, len(buf))
		}
	case kFloat64:
		v := c.f64[lo:hi]
		for k, x := range v {
			if null(lo + k) {
				buf = append(buf, "null"...)
			} else {
				buf = jsonx.AppendFloat(buf, x, 64)
			}
			ends = append(ends, len(buf))
		}
	case kBool:
		for i := lo; i < hi; i++ {
			switch {
			case null(i):
				buf = append(buf, "null"...)
			case c.boolArr.Value(i):
				buf = append(buf, "true"...)
			default:
				buf = append(buf, "false"...)
			}
			ends = append(ends, len(buf))
		}
	case kString:
		offs := c.str.ValueOffsets()
		data := c.str.ValueBytes()
		base := offs[0]
		for i := lo; i < hi; i++ {
			if null(i) {
				buf = append(buf, "null"...)
			} else {
				s := unsafeString(data[offs[i]-base : offs[i+1]-base])
				if limit > 0 && len(s) > limit {
					var sh bool
					if buf, sh = appendStringCell(buf, s, limit); sh {
						short[i-lo]++
					}
				} else {
					buf = jsonx.AppendString(buf, s)
				}
			}
			ends = append(ends, len(buf))
		}
	case kTimestamp:
		v := c.ts[lo:hi]
		for k, x := range v {
			if null(lo + k) {
				buf = append(buf, "null"...)
			} else {
				buf = append(buf, '"')
				buf = c.tsf.append(buf, int64(x))
				buf = append(buf, '"')
			}
			ends = append(ends, len(buf))
		}
	case kDate32:
		v := c.d32[lo:hi]
		for k, x := range v {
			if null(lo + k) {
				buf = append(buf, "null"...)
			} else {
				if x != c.lastDay || len(c.lastDate) == 0 {
					c.lastDate = append(c.lastDate[:0], '"')
					c.lastDate = appendDate(c.lastDate, int64(x))
					c.lastDate = append(c.lastDate, '"')
					c.lastDay = x
				}
				buf = append(buf, c.lastDate...)
			}
			ends = append(ends, len(buf))
		}
	case kDict:
		for i := lo; i < hi; i++ {
			if null(i) {
				buf = append(buf, "null"...)
			} else {
				var sh bool
				if buf, sh = c.dict.appendValue(buf, c.dictArr.GetValueIndex(i), limit); sh {
					short[i-lo]++
				}
			}
			ends = append(ends, len(buf))
		}
	default:
		for i := lo; i < hi; i++ {
			var sh bool
			if buf, sh = c.appendOne(buf, i, limit); sh {
				short[i-lo]++
			}
			ends = append(ends, len(buf))
		}
	}
	c.buf, c.ends, c.pos = buf, ends, 0
	if hi > lo {
		c.perRow = len(buf)/(hi-lo) + 1
	}
}

// encodeChunk encodes rows [lo, hi) of the bound batch, column by column.
func (e *recordEncoder) encodeChunk(lo, hi int) {
	n := hi - lo
	e.short = slices.Grow(e.short[:0], n)[:n]
	clear(e.short)
	for _, c := range e.cols {
		c.encode(lo, hi, e.limit, e.short)
	}
}

// appendRow appends chunk row i (rows must be appended in order, each once).
func (e *recordEncoder) appendRow(dst []byte, i int) []byte {
	if len(e.cols) == 0 {
		return append(dst, '{', '}')
	}
	for _, c := range e.cols {
		end := c.ends[i]
		dst = append(dst, c.key...)
		dst = append(dst, c.buf[c.pos:end]...)
		c.pos = end
	}
	return append(dst, '}')
}

// encoded is the output of encodeRows.
type encoded struct {
	data      []byte // JSON array of records
	rows      int64  // records in data
	shortened int64  // cell values shortened in those records
}

// encodeRows encodes rows [offset, offset+maxRows) of t (clamped) as a JSON
// array of records, stopping before the first row that would make the array
// longer than maxBytes (maxBytes <= 0: no limit). Cell values longer than
// limit characters are shortened (limit <= 0: never). The context is checked
// between chunks.
func encodeRows(ctx context.Context, t *Table, offset, maxRows, maxBytes int64, limit int) (encoded, error) {
	offset = max(offset, 0)
	end := min(t.NumRows(), offset+max(maxRows, 0))
	if maxRows <= 0 || offset >= end {
		return encoded{data: []byte("[]")}, nil
	}
	v, err := t.Slice(ctx, offset, end-offset)
	if err != nil {
		return encoded{}, err
	}
	defer v.Release()
	want := end - offset
	e := newRecordEncoder(v.Schema(), limit)
	defer e.release()
	initial := 4096
	if maxBytes > 0 {
		initial = int(min(maxBytes+1, 4096))
	}
	out := make([]byte, 1, initial)
	out[0] = '['
	var res encoded
	sized := false
	for _, b := range v.batches {
		e.bind(b)
		nb := int(b.NumRows())
		for lo := 0; lo < nb; {
			if err := ctx.Err(); err != nil {
				return encoded{}, err
			}
			hi := min(nb, lo+chunkRows(len(out), res.rows, maxBytes))
			e.encodeChunk(lo, hi)
			for i := range hi - lo {
				mark := len(out)
				if res.rows > 0 {
					out = append(out, ',')
				}
				out = e.appendRow(out, i)
				if maxBytes > 0 && int64(len(out))+1 > maxBytes {
					res.data = append(out[:mark], ']')
					return res, nil
				}
				res.rows++
				res.shortened += int64(e.short[i])
			}
			if !sized && res.rows > 0 {
				// Pre-size the output from the first chunk's average row.
				sized = true
				avg := int64(len(out))/res.rows + 1
				rest := avg * (want - res.rows)
				need := rest + rest/8 + 64 // later rows tend to be a little longer (wider numbers)
				if maxBytes > 0 {
					need = min(need, maxBytes+1-int64(len(out)))
				}
				need = min(need, 1<<28)
				if need > int64(cap(out)-len(out)) {
					out = slices.Grow(out, int(need))
				}
			}
			lo = hi
		}
	}
	res.data = append(out, ']')
	return res, nil
}

// chunkRows is the number of rows to encode next: enough to fill the rest
// of the byte budget (judged from the rows so far) with a little slack,
// between 8 and 1024.
func chunkRows(outLen int, rows, maxBytes int64) int {
	const most = 1024
	if maxBytes <= 0 {
		return most
	}
	if rows == 0 {
		return 32
	}
	avg := (int64(outLen)-1)/rows + 1
	left := (maxBytes-int64(outLen))/avg + 1
	return int(min(max(left+left/8, 8), most))
}

// EncodeRecords encodes rows [offset, offset+maxRows) of t (clamped to the
// table) as a JSON array of records: objects keyed by column name (see
// ColumnNames) in schema order, values as documented in docs/DELIVERY.md.
// It stops before the first row that would make the array longer than
// maxBytes bytes (maxBytes <= 0: no limit), so finding out that 64 KiB
// holds 300 rows costs little more than 300 rows of encoding, not the whole
// table. It returns the array and the number of rows in it, which may be
// fewer than asked (or 0) because of maxBytes. Values are never shortened
// (the Materializer shortens long cell values in what it returns inline).
// The context is checked between chunks of rows.
func EncodeRecords(ctx context.Context, t *Table, offset, maxRows, maxBytes int64) ([]byte, int64, error) {
	r, err := encodeRows(ctx, t, offset, maxRows, maxBytes, 0)
	return r.data, r.rows, err
}

// Preview encodes the first n rows of t as a JSON array of records (used by
// get_schema sample_rows and estimate previews). n <= 0 yields "[]". It has
// no byte limit (callers choose a small n), but cell values longer than
// DefaultMaxCellChars characters are shortened as in inline results.
func Preview(t *Table, n int) (json.RawMessage, error) {
	r, err := encodeRows(context.Background(), t, 0, int64(n), 0, DefaultMaxCellChars)
	if err != nil {
		return nil, err
	}
	return json.RawMessage(r.data), nil
}

// Cell shortening.

// appendMarker appends the shortening marker "…[truncated N chars]".
func appendMarker(dst []byte, removed int) []byte {
	dst = append(dst, "…[truncated "...)
	dst = strconv.AppendInt(dst, int64(removed), 10)
	return append(dst, " chars]"...)
}

// charIndex returns the byte index just after the first n characters of s
// (len(s) when s has no more than n). Invalid bytes count as one character
// each (they become U+FFFD).
func charIndex(s string, n int) int {
	i := 0
	for i < len(s) && n > 0 {
		if s[i] < utf8.RuneSelf {
			i++
		} else {
			_, size := utf8.DecodeRuneInString(s[i:])
			i += size
		}
		n--
	}
	return i
}

// appendStringCell appends s as a JSON string; when limit > 0 and s has more
// than limit characters, only the first limit are kept, followed by the
// marker, and short is true.
func appendStringCell(dst []byte, s string, limit int) ([]byte, bool) {
	if limit <= 0 || len(s) <= limit {
		return jsonx.AppendString(dst, s), false
	}
	cut := charIndex(s, limit)
	if cut >= len(s) {
		return jsonx.AppendString(dst, s), false
	}
	dst = append(dst, '"')
	dst = jsonx.AppendStringBody(dst, s[:cut])
	dst = appendMarker(dst, utf8.RuneCountInString(s[cut:]))
	return append(dst, '"'), true
}

// appendNestedCell appends the JSON text js verbatim, or, when limit > 0 and
// it has more than limit characters, a JSON string holding its first limit
// characters and the marker.
func appendNestedCell(dst []byte, js string, limit int) ([]byte, bool) {
	if limit <= 0 || len(js) <= limit {
		return append(dst, js...), false
	}
	cut := charIndex(js, limit)
	if cut >= len(js) {
		return append(dst, js...), false
	}
	dst = append(dst, '"')
	dst = jsonx.AppendStringBody(dst, js[:cut])
	dst = appendMarker(dst, utf8.RuneCountInString(js[cut:]))
	return append(dst, '"'), true
}

// appendBase64Cell appends b as a base64 JSON string; when limit > 0 and the
// base64 text is longer than limit characters it is cut (at a multiple of 4
// characters) and the marker appended.
func appendBase64Cell(dst []byte, b []byte, limit int) ([]byte, bool) {
	n := base64.StdEncoding.EncodedLen(len(b))
	if limit <= 0 || n <= limit {
		return appendBase64(dst, b), false
	}
	k := limit / 4 * 3
	dst = append(dst, '"')
	dst = base64.StdEncoding.AppendEncode(dst, b[:k])
	dst = appendMarker(dst, n-base64.StdEncoding.EncodedLen(k))
	return append(dst, '"'), true
}

// appendSafeUint appends v as a JSON number, or as a JSON string when
// v > 2^53.
func appendSafeUint(dst []byte, v uint64) []byte {
	if v > maxSafeInt {
		dst = append(dst, '"')
		dst = strconv.AppendUint(dst, v, 10)
		return append(dst, '"')
	}
	return strconv.AppendUint(dst, v, 10)
}

func unsafeString(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	return unsafe.String(&b[0], len(b))
}
