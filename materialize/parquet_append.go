package materialize

import (
	"unicode/utf8"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/parquet-go/parquet-go"
)

// This file holds the specialised value loops of the Parquet writer: one
// tight loop per physical layout (fixed-width numbers, offset-based byte
// arrays, dictionary codes), reading the Arrow buffers directly, with no
// function call per value besides parquet-go's value constructors. They
// produce exactly the values of parquetColumnOf's mapping (the tests compare
// both paths).

// nullMask is the validity bitmap of an array, nil when it has no nulls.
type nullMask struct {
	bits []byte
	off  int
}

// maskOf returns arr's validity bitmap; ok is false when arr has nulls but
// no bitmap (a NullType array), which the specialised loops do not handle.
func maskOf(arr arrow.Array) (m nullMask, ok bool) {
	if arr.NullN() == 0 {
		return nullMask{}, true
	}
	bits := arr.NullBitmapBytes()
	if len(bits) == 0 {
		return nullMask{}, false
	}
	return nullMask{bits: bits, off: arr.Data().Offset()}, true
}

// null reports whether element i is null.
func (m nullMask) null(i int) bool {
	return m.bits != nil && !bitutil.BitIsSet(m.bits, m.off+i)
}

// present returns v as a non-null value (definition level 1) of leaf column
// col. The loops below inline its two setters instead: Value.Level (and this
// function) is not inlined and costs about twenty times more per value.
func present(v parquet.Value, col int) parquet.Value {
	v.SetDefinitionLevel(1)
	v.SetColumnIndex(col)
	return v
}

// extend returns dst grown by n values and the new values' slice.
func extend(dst []parquet.Value, n int) ([]parquet.Value, []parquet.Value) {
	l := len(dst)
	if cap(dst)-l < n {
		grown := make([]parquet.Value, l, l+n)
		copy(grown, dst)
		dst = grown
	}
	dst = dst[:l+n]
	return dst, dst[l:]
}

// int32Source are the Arrow value types written as INT32.
type int32Source interface {
	~int8 | ~int16 | ~int32 | ~uint8 | ~uint16 | ~uint32
}

// int64Source are the Arrow value types written as INT64.
type int64Source interface{ ~int64 | ~uint64 }

// int32Appender writes v[i]*scale as INT32 values.
func int32Appender[T int32Source](v []T, m nullMask, col int, scale int32) valueAppender {
	null := parquet.NullValue().Level(0, 0, col)
	return func(dst []parquet.Value, lo, hi int) []parquet.Value {
		dst, out := extend(dst, hi-lo)
		src := v[lo:hi]
		if m.bits == nil {
			for i, x := range src {
				out[i] = parquet.Int32Value(int32(x) * scale)
				out[i].SetDefinitionLevel(1)
				out[i].SetColumnIndex(col)
			}
			return dst
		}
		for i, x := range src {
			if m.null(lo + i) {
				out[i] = null
			} else {
				out[i] = parquet.Int32Value(int32(x) * scale)
				out[i].SetDefinitionLevel(1)
				out[i].SetColumnIndex(col)
			}
		}
		return dst
	}
}

// int64Appender writes v[i]*scale as INT64 values.
func int64Appender[T int64Source](v []T, m nullMask, col int, scale int64) valueAppender {
	null := parquet.NullValue().Level(0, 0, col)
	return func(dst []parquet.Value, lo, hi int) []parquet.Value {
		dst, out := extend(dst, hi-lo)
		src := v[lo:hi]
		if m.bits == nil {
			for i, x := range src {
				out[i] = parquet.Int64Value(int64(x) * scale)
				out[i].SetDefinitionLevel(1)
				out[i].SetColumnIndex(col)
			}
			return dst
		}
		for i, x := range src {
			if m.null(lo + i) {
				out[i] = null
			} else {
				out[i] = parquet.Int64Value(int64(x) * scale)
				out[i].SetDefinitionLevel(1)
				out[i].SetColumnIndex(col)
			}
		}
		return dst
	}
}

// floatAppender writes float32 values as FLOAT.
func floatAppender(v []float32, m nullMask, col int) valueAppender {
	null := parquet.NullValue().Level(0, 0, col)
	return func(dst []parquet.Value, lo, hi int) []parquet.Value {
		dst, out := extend(dst, hi-lo)
		for i, x := range v[lo:hi] {
			if m.null(lo + i) {
				out[i] = null
			} else {
				out[i] = parquet.FloatValue(x)
				out[i].SetDefinitionLevel(1)
				out[i].SetColumnIndex(col)
			}
		}
		return dst
	}
}

// doubleAppender writes float64 values as DOUBLE.
func doubleAppender(v []float64, m nullMask, col int) valueAppender {
	null := parquet.NullValue().Level(0, 0, col)
	return func(dst []parquet.Value, lo, hi int) []parquet.Value {
		dst, out := extend(dst, hi-lo)
		src := v[lo:hi]
		if m.bits == nil {
			for i, x := range src {
				out[i] = parquet.DoubleValue(x)
				out[i].SetDefinitionLevel(1)
				out[i].SetColumnIndex(col)
			}
			return dst
		}
		for i, x := range src {
			if m.null(lo + i) {
				out[i] = null
			} else {
				out[i] = parquet.DoubleValue(x)
				out[i].SetDefinitionLevel(1)
				out[i].SetColumnIndex(col)
			}
		}
		return dst
	}
}

// booleanAppender writes BOOLEAN values.
func booleanAppender(a *array.Boolean, m nullMask, col int) valueAppender {
	null := parquet.NullValue().Level(0, 0, col)
	return func(dst []parquet.Value, lo, hi int) []parquet.Value {
		dst, out := extend(dst, hi-lo)
		for i := range out {
			if m.null(lo + i) {
				out[i] = null
			} else {
				out[i] = parquet.BooleanValue(a.Value(lo + i))
				out[i].SetDefinitionLevel(1)
				out[i].SetColumnIndex(col)
			}
		}
		return dst
	}
}

// byteArrayAppender writes the values of an offset-based string or binary
// array (offs has one more entry than the array, data starts at offs[0]) as
// BYTE_ARRAY values referencing the Arrow buffer. With utf8Fix, invalid
// UTF-8 is replaced by U+FFFD (in a copy).
func byteArrayAppender[O int32 | int64](offs []O, data []byte, m nullMask, col int, utf8Fix bool) valueAppender {
	null := parquet.NullValue().Level(0, 0, col)
	base := offs[0]
	return func(dst []parquet.Value, lo, hi int) []parquet.Value {
		dst, out := extend(dst, hi-lo)
		// One validation of the whole range (see repairUTF8).
		end := offs[hi] - base
		allValid := !utf8Fix || utf8Valid(data[offs[lo]-base:end])
		for i := range out {
			j := lo + i
			if m.null(j) {
				out[i] = null
				continue
			}
			s, e := offs[j]-base, offs[j+1]-base
			b := data[s:e:e]
			if utf8Fix {
				b = repairUTF8(data, int(s), int(e), int(end), allValid)
			}
			out[i] = parquet.ByteArrayValue(b)
			out[i].SetDefinitionLevel(1)
			out[i].SetColumnIndex(col)
		}
		return dst
	}
}

// utf8Valid reports whether b is valid UTF-8.
func utf8Valid(b []byte) bool { return utf8.Valid(b) }

// repairUTF8 returns value data[s:e] with invalid UTF-8 replaced by U+FFFD
// (in a copy), knowing whether the whole range of values it belongs to
// (ending at end) is valid: one validation of the range serves every value
// unless a character straddles one of the value's ends (its first byte, or
// the byte after it, is a continuation byte); only those values are
// validated on their own.
func repairUTF8(data []byte, s, e, end int, rangeValid bool) []byte {
	b := data[s:e:e]
	if len(b) > 0 && (!rangeValid || !utf8.RuneStart(b[0]) || (e < end && !utf8.RuneStart(data[e]))) && !utf8.Valid(b) {
		return stringBytes(toValidUTF8(string(b)))
	}
	return b
}

// dictIndex are the Arrow dictionary index types.
type dictIndex interface {
	~int8 | ~int16 | ~int32 | ~int64 | ~uint8 | ~uint16 | ~uint32 | ~uint64
}

// dictAppender writes dictionary-encoded values by copying, for each row,
// the precomputed value (levels included) of its dictionary entry.
func dictAppender[I dictIndex](idx []I, m nullMask, values []parquet.Value, col int) valueAppender {
	null := parquet.NullValue().Level(0, 0, col)
	return func(dst []parquet.Value, lo, hi int) []parquet.Value {
		dst, out := extend(dst, hi-lo)
		src := idx[lo:hi]
		if m.bits == nil {
			for i, k := range src {
				out[i] = values[k]
			}
			return dst
		}
		for i, k := range src {
			if m.null(lo + i) {
				out[i] = null
			} else {
				out[i] = values[k]
			}
		}
		return dst
	}
}

// dictPrecomputeSlack is how many more dictionary entries than rows a
// dictionary array may have for its entries to be converted up front (a
// small slice of a batch with a big dictionary converts only its rows).
const dictPrecomputeSlack = 4096

// dictionaryAppender returns the appender of a dictionary array whose
// values map through inner: the dictionary's entries are converted once,
// rows copy their entry's value. Nil when the dictionary is much larger than
// the array or the index type is not an integer.
func dictionaryAppender(a *array.Dictionary, inner parquetColumn, col int) valueAppender {
	dict := a.Dictionary()
	if dict.Len() > a.Len()+dictPrecomputeSlack {
		return nil
	}
	m, ok := maskOf(a)
	if !ok {
		return nil
	}
	values := inner.bind(dict, col)(make([]parquet.Value, 0, dict.Len()), 0, dict.Len())
	switch ix := a.Indices().(type) {
	case *array.Int8:
		return dictAppender(ix.Int8Values(), m, values, col)
	case *array.Int16:
		return dictAppender(ix.Int16Values(), m, values, col)
	case *array.Int32:
		return dictAppender(ix.Int32Values(), m, values, col)
	case *array.Int64:
		return dictAppender(ix.Int64Values(), m, values, col)
	case *array.Uint8:
		return dictAppender(ix.Uint8Values(), m, values, col)
	case *array.Uint16:
		return dictAppender(ix.Uint16Values(), m, values, col)
	case *array.Uint32:
		return dictAppender(ix.Uint32Values(), m, values, col)
	case *array.Uint64:
		return dictAppender(ix.Uint64Values(), m, values, col)
	}
	return nil
}

// fastAppender returns a loop specialised for arr's layout, producing
// exactly the values parquetColumnOf's mapping would; nil for the types
// (and the rare layouts) left to the generic path.
func fastAppender(arr arrow.Array, col int) valueAppender {
	m, ok := maskOf(arr)
	if !ok {
		return nil
	}
	switch a := arr.(type) {
	case *array.Boolean:
		return booleanAppender(a, m, col)
	case *array.Int8:
		return int32Appender(a.Int8Values(), m, col, 1)
	case *array.Int16:
		return int32Appender(a.Int16Values(), m, col, 1)
	case *array.Int32:
		return int32Appender(a.Int32Values(), m, col, 1)
	case *array.Uint8:
		return int32Appender(a.Uint8Values(), m, col, 1)
	case *array.Uint16:
		return int32Appender(a.Uint16Values(), m, col, 1)
	case *array.Uint32:
		return int32Appender(a.Uint32Values(), m, col, 1)
	case *array.Int64:
		return int64Appender(a.Int64Values(), m, col, 1)
	case *array.Uint64:
		return int64Appender(a.Uint64Values(), m, col, 1)
	case *array.Float32:
		return floatAppender(a.Float32Values(), m, col)
	case *array.Float64:
		return doubleAppender(a.Float64Values(), m, col)
	case *array.Date32:
		return int32Appender(a.Date32Values(), m, col, 1)
	case *array.Time32:
		scale := int32(1)
		if a.DataType().(*arrow.Time32Type).Unit == arrow.Second {
			scale = 1000
		}
		return int32Appender(a.Time32Values(), m, col, scale)
	case *array.Time64:
		return int64Appender(a.Time64Values(), m, col, 1)
	case *array.Timestamp:
		_, scale := parquetTimeUnit(a.DataType().(*arrow.TimestampType).Unit)
		return int64Appender(a.TimestampValues(), m, col, scale)
	case *array.Duration:
		return int64Appender(a.DurationValues(), m, col, 1)
	case *array.String:
		return byteArrayAppender(a.ValueOffsets(), a.ValueBytes(), m, col, true)
	case *array.LargeString:
		return byteArrayAppender(a.ValueOffsets(), a.ValueBytes(), m, col, true)
	case *array.Binary:
		return byteArrayAppender(a.ValueOffsets(), a.ValueBytes(), m, col, false)
	case *array.LargeBinary:
		return byteArrayAppender(a.ValueOffsets(), a.ValueBytes(), m, col, false)
	}
	return nil
}
