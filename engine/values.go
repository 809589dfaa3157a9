package engine

import (
	"math"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
)

// integer is every Arrow integer physical type (date32 and timestamp included
// through their underlying int32/int64).
type integer interface {
	~int8 | ~int16 | ~int32 | ~int64 | ~uint8 | ~uint16 | ~uint32 | ~uint64
}

// float is the Arrow floating point physical types the engine computes on.
type float interface{ ~float32 | ~float64 }

// rowRef addresses one row of a retained batch: chunk b, row r.
type rowRef struct{ b, r int32 }

// values returns the typed values of a fixed-width array (offset applied,
// len == arr.Len()), aliasing Arrow memory.
func values[T arrow.FixedWidthType](arr arrow.Array) []T {
	n := arr.Len()
	if n == 0 {
		return nil
	}
	v := arrow.GetValues[T](arr.Data(), 1)
	if len(v) < n { // a producer omitted the data buffer of an all-null array
		return make([]T, n)
	}
	return v
}

// validity is an array's null bitmap; bits == nil means no nulls.
type validity struct {
	bits []byte
	off  int
}

func validityOf(arr arrow.Array) validity {
	if arr.NullN() == 0 {
		return validity{}
	}
	return validity{bits: arr.NullBitmapBytes(), off: arr.Data().Offset()}
}

func (v validity) ok(i int) bool {
	return v.bits == nil || bitutil.BitIsSet(v.bits, v.off+i)
}

// andValid clears mask where arr is null.
func andValid(arr arrow.Array, mask []bool) {
	v := validityOf(arr)
	if v.bits == nil {
		return
	}
	andBitmap(mask, v.bits, v.off, false)
}

// unsafeString views b as a string without copying. The string is valid only
// while the Arrow buffer behind b is alive.
func unsafeString(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	return unsafe.String(unsafe.SliceData(b), len(b))
}

// strViews returns the values of a string/binary array (32 or 64-bit offsets)
// as strings aliasing Arrow memory, reusing buf. Null slots hold whatever the
// offsets say (normally "").
func strViews(arr arrow.Array, buf []string) []string {
	n := arr.Len()
	if cap(buf) < n {
		buf = make([]string, n)
	}
	buf = buf[:n]
	if n == 0 {
		return buf
	}
	d := arr.Data()
	var data []byte
	if b := d.Buffers()[2]; b != nil {
		data = b.Bytes()
	}
	switch arr.DataType().ID() {
	case arrow.LARGE_STRING, arrow.LARGE_BINARY:
		offs := arrow.GetOffsets[int64](d, 1)
		for i := range buf {
			buf[i] = unsafeString(data[offs[i]:offs[i+1]])
		}
	default:
		offs := arrow.GetOffsets[int32](d, 1)
		for i := range buf {
			buf[i] = unsafeString(data[offs[i]:offs[i+1]])
		}
	}
	return buf
}

// boolBytes returns a boolean array's values as 0/1 bytes, reusing buf.
func boolBytes(arr arrow.Array, buf []uint8) []uint8 {
	n := arr.Len()
	if cap(buf) < n {
		buf = make([]uint8, n)
	}
	buf = buf[:n]
	if n == 0 {
		return buf
	}
	d := arr.Data()
	bits := d.Buffers()[1]
	if bits == nil {
		clear(buf)
		return buf
	}
	bs, off := bits.Bytes(), d.Offset()
	for i := range buf {
		buf[i] = getBit(bs, off+i)
	}
	return buf
}

// isStringType reports the string-like types the engine compares and hashes.
func isStringType(id arrow.Type) bool {
	return id == arrow.STRING || id == arrow.LARGE_STRING
}

// fixedWidth returns the byte width of the fixed-width types the engine
// copies by raw bytes, or 0.
func fixedWidth(dt arrow.DataType) int {
	switch dt.ID() {
	case arrow.INT8, arrow.UINT8:
		return 1
	case arrow.INT16, arrow.UINT16, arrow.FLOAT16:
		return 2
	case arrow.INT32, arrow.UINT32, arrow.FLOAT32, arrow.DATE32, arrow.TIME32:
		return 4
	case arrow.INT64, arrow.UINT64, arrow.FLOAT64, arrow.DATE64, arrow.TIME64,
		arrow.TIMESTAMP, arrow.DURATION:
		return 8
	}
	return 0
}

// supportedCompute reports the column types filters, keys, sorts and
// aggregates work on (dictionary-encoded strings included).
func supportedCompute(dt arrow.DataType) bool {
	switch dt.ID() {
	case arrow.INT8, arrow.INT16, arrow.INT32, arrow.INT64,
		arrow.UINT8, arrow.UINT16, arrow.UINT32, arrow.UINT64,
		arrow.FLOAT32, arrow.FLOAT64, arrow.BOOL, arrow.STRING, arrow.LARGE_STRING,
		arrow.DATE32, arrow.TIMESTAMP:
		return true
	case arrow.DICTIONARY:
		return isDictStr(dt)
	}
	return false
}

// rawBits writes each value's raw bits zero-extended to 64 bits into out
// (len arr.Len()); for floats it writes the normalized bits instead when norm
// is set (see normFloatBits). Null slots hold arbitrary bits.
func rawBits(arr arrow.Array, out []uint64, norm bool) {
	switch arr.DataType().ID() {
	case arrow.BOOL:
		d := arr.Data()
		if b := d.Buffers()[1]; b != nil && arr.Len() > 0 {
			bs, off := b.Bytes(), d.Offset()
			for i := range out {
				out[i] = uint64(getBit(bs, off+i))
			}
		} else {
			clear(out)
		}
		return
	case arrow.FLOAT32:
		vs := values[uint32](arr)
		if norm {
			for i, v := range vs {
				out[i] = uint64(normF32(v))
			}
			return
		}
		for i, v := range vs {
			out[i] = uint64(v)
		}
		return
	case arrow.FLOAT64:
		vs := values[uint64](arr)
		if norm {
			for i, v := range vs {
				out[i] = normF64(v)
			}
			return
		}
		copy(out, vs)
		return
	}
	switch fixedWidth(arr.DataType()) {
	case 1:
		widen(values[uint8](arr), out)
	case 2:
		widen(values[uint16](arr), out)
	case 4:
		widen(values[uint32](arr), out)
	case 8:
		copy(out, values[uint64](arr))
	}
}

func widen[T ~uint8 | ~uint16 | ~uint32](vs []T, out []uint64) {
	for i, v := range vs {
		out[i] = uint64(v)
	}
}

var canonNaN64 = math.Float64bits(math.NaN())
var canonNaN32 = math.Float32bits(float32(math.NaN()))

// normF64 maps float64 bits so that equal keys have equal bits: every NaN to
// one NaN and -0 to +0.
func normF64(b uint64) uint64 {
	f := math.Float64frombits(b)
	if f != f {
		return canonNaN64
	}
	if f == 0 {
		return 0
	}
	return b
}

// normF32 is normF64 for float32 bits.
func normF32(b uint32) uint32 {
	f := math.Float32frombits(b)
	if f != f {
		return canonNaN32
	}
	if f == 0 {
		return 0
	}
	return b
}

// getBit returns bit i of a little-endian bitmap as 0 or 1.
func getBit(bs []byte, i int) uint8 { return (bs[uint(i)>>3] >> (uint(i) & 7)) & 1 }
