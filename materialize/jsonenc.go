package materialize

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"math"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
)

// JSON encoding of Arrow values.
//
// Records are written straight from the Arrow arrays into a []byte: one
// closure per column per batch, no map[string]any per row and no
// encoding/json per value. The mapping (also documented in docs/DELIVERY.md):
//
//	null                      null
//	bool                      true / false
//	int8..int64, uint8..64    JSON number; int64/uint64 (and durations) with
//	                          |v| > 2^53 become JSON strings ("9007199254740993")
//	                          because JSON consumers parse numbers as float64
//	                          and would silently change such values
//	float16/32/64             shortest round-trip repr (strconv 'g', -1);
//	                          NaN, +Inf, -Inf -> "NaN", "Infinity", "-Infinity"
//	string, large_string,     JSON string; invalid UTF-8 -> U+FFFD, control
//	string_view               characters and U+2028/2029 escaped
//	binary, large_binary,     standard base64 string
//	fixed_size_binary, view
//	date32, date64            "YYYY-MM-DD"
//	timestamp                 RFC 3339 with the unit's fraction digits (s: 0,
//	                          ms: 3, us: 6, ns: 9); "Z" when the zone is UTC,
//	                          "+hh:mm" for another zone, no suffix when the
//	                          type has no zone (a wall-clock value)
//	time32, time64            "HH:MM:SS" plus the unit's fraction digits
//	duration                  integer count of the type's unit
//	decimal32..256            exact decimal string ("123.4500")
//	dictionary                the decoded value
//	list, large_list,         JSON array
//	fixed_size_list, views
//	map                       JSON object when keys are strings, otherwise
//	                          an array of {"key":..,"value":..} objects
//	struct                    JSON object in field order
//	anything else             arrow-go's GetOneForMarshal through encoding/json
//
// Years outside 0000..9999 are written with as many digits as needed (and a
// leading '-' for negative years); such strings are not RFC 3339 but stay
// unambiguous.

// maxSafeInt is 2^53: integers with a larger magnitude are not exactly
// representable as float64 and are encoded as JSON strings.
const maxSafeInt = 1 << 53

// valueEncoder appends the JSON encoding of element i of the array it was
// built for.
type valueEncoder func(dst []byte, i int) []byte

// RecordEncoder encodes rows of Arrow record batches as JSON objects keyed by
// column name, in schema order. Duplicate or empty column names are made
// unique exactly as in every other output of this package (see ColumnNames).
//
// Use: NewRecordEncoder(schema), then for each batch Bind(batch) and
// AppendRecord(dst, row) for the rows wanted. A RecordEncoder is not safe for
// concurrent use; it holds no references to the bound batch beyond Bind's
// caller's.
type RecordEncoder struct {
	keys [][]byte // `{"name":` for the first column, `,"name":` for the others
	cols []valueEncoder
}

// NewRecordEncoder returns an encoder for batches of the given schema.
func NewRecordEncoder(schema *arrow.Schema) *RecordEncoder {
	names := ColumnNames(schema)
	e := &RecordEncoder{keys: make([][]byte, len(names)), cols: make([]valueEncoder, len(names))}
	for i, n := range names {
		var k []byte
		if i == 0 {
			k = append(k, '{')
		} else {
			k = append(k, ',')
		}
		k = appendJSONString(k, n)
		e.keys[i] = append(k, ':')
	}
	return e
}

// Bind prepares the encoder for rows of batch (whose schema must match the
// encoder's).
func (e *RecordEncoder) Bind(batch arrow.RecordBatch) {
	for i := range e.cols {
		e.cols[i] = newValueEncoder(batch.Column(i))
	}
}

// AppendRecord appends row of the bound batch as one JSON object.
func (e *RecordEncoder) AppendRecord(dst []byte, row int) []byte {
	if len(e.cols) == 0 {
		return append(dst, '{', '}')
	}
	for i, enc := range e.cols {
		dst = append(dst, e.keys[i]...)
		dst = enc(dst, row)
	}
	return append(dst, '}')
}

// EncodeRecords encodes rows [offset, offset+maxRows) of t (clamped to the
// table) as a JSON array of records. It stops before the first row that would
// make the array longer than maxBytes bytes (maxBytes <= 0: no limit), so
// finding out that 64 KiB holds 300 rows costs 301 rows of encoding, not the
// whole table. It returns the array and the number of rows in it, which may be
// fewer than asked (or 0) because of maxBytes. The context is checked between
// batches and every 4096 rows.
func EncodeRecords(ctx context.Context, t *Table, offset, maxRows, maxBytes int64) ([]byte, int64, error) {
	if offset < 0 {
		offset = 0
	}
	end := min(t.NumRows(), offset+max(maxRows, 0))
	if maxRows <= 0 || offset >= end {
		return []byte("[]"), 0, nil
	}
	enc := NewRecordEncoder(t.Schema())
	buf := make([]byte, 0, initialBufSize(maxBytes))
	buf = append(buf, '[')
	var n int64
	bi := t.batchIndex(offset)
	for row := offset; row < end; bi++ {
		if err := ctx.Err(); err != nil {
			return nil, 0, err
		}
		b := t.batches[bi]
		start := t.starts[bi]
		enc.Bind(b)
		lo := int(row - start)
		hi := int(min(end, start+b.NumRows()) - start)
		for r := lo; r < hi; r++ {
			if r&4095 == 4095 {
				if err := ctx.Err(); err != nil {
					return nil, 0, err
				}
			}
			mark := len(buf)
			if n > 0 {
				buf = append(buf, ',')
			}
			buf = enc.AppendRecord(buf, r)
			if maxBytes > 0 && int64(len(buf))+1 > maxBytes {
				buf = buf[:mark]
				return append(buf, ']'), n, nil
			}
			n++
		}
		row = start + int64(hi)
	}
	return append(buf, ']'), n, nil
}

func initialBufSize(maxBytes int64) int {
	if maxBytes > 0 && maxBytes < 1<<16 {
		return int(maxBytes) + 256
	}
	return 1 << 16
}

// Preview encodes the first n rows of t as a JSON array of records (used by
// get_schema sample_rows and estimate previews). n <= 0 yields "[]". It has
// no byte limit: callers choose a small n.
func Preview(t *Table, n int) (json.RawMessage, error) {
	data, _, err := EncodeRecords(context.Background(), t, 0, int64(n), 0)
	if err != nil {
		return nil, err
	}
	return json.RawMessage(data), nil
}

// newValueEncoder returns the encoder for the elements of arr, nulls included.
func newValueEncoder(arr arrow.Array) valueEncoder {
	if ext, ok := arr.(array.ExtensionArray); ok {
		arr = ext.Storage()
	}
	switch arr.DataType().ID() {
	case arrow.NULL:
		return func(dst []byte, _ int) []byte { return append(dst, "null"...) }
	case arrow.SPARSE_UNION, arrow.DENSE_UNION, arrow.RUN_END_ENCODED:
		// No validity bitmap of their own: the generic path handles nulls.
		return fallbackEncoder(arr)
	}
	enc := newNonNullEncoder(arr)
	if arr.NullN() == 0 {
		return enc
	}
	return func(dst []byte, i int) []byte {
		if arr.IsNull(i) {
			return append(dst, "null"...)
		}
		return enc(dst, i)
	}
}

// newNonNullEncoder returns the encoder for the valid elements of arr.
func newNonNullEncoder(arr arrow.Array) valueEncoder {
	switch a := arr.(type) {
	case *array.Boolean:
		return func(dst []byte, i int) []byte {
			if a.Value(i) {
				return append(dst, "true"...)
			}
			return append(dst, "false"...)
		}
	case *array.Int8:
		v := a.Int8Values()
		return func(dst []byte, i int) []byte { return strconv.AppendInt(dst, int64(v[i]), 10) }
	case *array.Int16:
		v := a.Int16Values()
		return func(dst []byte, i int) []byte { return strconv.AppendInt(dst, int64(v[i]), 10) }
	case *array.Int32:
		v := a.Int32Values()
		return func(dst []byte, i int) []byte { return strconv.AppendInt(dst, int64(v[i]), 10) }
	case *array.Int64:
		v := a.Int64Values()
		return func(dst []byte, i int) []byte { return appendSafeInt(dst, v[i]) }
	case *array.Uint8:
		v := a.Uint8Values()
		return func(dst []byte, i int) []byte { return strconv.AppendUint(dst, uint64(v[i]), 10) }
	case *array.Uint16:
		v := a.Uint16Values()
		return func(dst []byte, i int) []byte { return strconv.AppendUint(dst, uint64(v[i]), 10) }
	case *array.Uint32:
		v := a.Uint32Values()
		return func(dst []byte, i int) []byte { return strconv.AppendUint(dst, uint64(v[i]), 10) }
	case *array.Uint64:
		v := a.Uint64Values()
		return func(dst []byte, i int) []byte {
			if v[i] > maxSafeInt {
				dst = append(dst, '"')
				dst = strconv.AppendUint(dst, v[i], 10)
				return append(dst, '"')
			}
			return strconv.AppendUint(dst, v[i], 10)
		}
	case *array.Float16:
		return func(dst []byte, i int) []byte { return appendFloat(dst, float64(a.Value(i).Float32()), 32) }
	case *array.Float32:
		v := a.Float32Values()
		return func(dst []byte, i int) []byte { return appendFloat(dst, float64(v[i]), 32) }
	case *array.Float64:
		v := a.Float64Values()
		return func(dst []byte, i int) []byte { return appendFloat(dst, v[i], 64) }
	case array.StringLike: // string, large_string, string_view
		return func(dst []byte, i int) []byte { return appendJSONString(dst, a.Value(i)) }
	case *array.Binary:
		return func(dst []byte, i int) []byte { return appendBase64(dst, a.Value(i)) }
	case *array.LargeBinary:
		return func(dst []byte, i int) []byte { return appendBase64(dst, a.Value(i)) }
	case *array.BinaryView:
		return func(dst []byte, i int) []byte { return appendBase64(dst, a.Value(i)) }
	case *array.FixedSizeBinary:
		return func(dst []byte, i int) []byte { return appendBase64(dst, a.Value(i)) }
	case *array.Date32:
		v := a.Date32Values()
		return func(dst []byte, i int) []byte {
			dst = append(dst, '"')
			dst = appendDate(dst, int64(v[i]))
			return append(dst, '"')
		}
	case *array.Date64:
		v := a.Date64Values()
		return func(dst []byte, i int) []byte {
			dst = append(dst, '"')
			dst = appendDate(dst, floorDiv(int64(v[i]), 86_400_000))
			return append(dst, '"')
		}
	case *array.Timestamp:
		f := newTimestampFormatter(a.DataType().(*arrow.TimestampType))
		v := a.TimestampValues()
		return func(dst []byte, i int) []byte {
			dst = append(dst, '"')
			dst = f.append(dst, int64(v[i]))
			return append(dst, '"')
		}
	case *array.Time32:
		unit := a.DataType().(*arrow.Time32Type).Unit
		v := a.Time32Values()
		return func(dst []byte, i int) []byte {
			dst = append(dst, '"')
			dst = appendTimeOfDay(dst, int64(v[i]), unit)
			return append(dst, '"')
		}
	case *array.Time64:
		unit := a.DataType().(*arrow.Time64Type).Unit
		v := a.Time64Values()
		return func(dst []byte, i int) []byte {
			dst = append(dst, '"')
			dst = appendTimeOfDay(dst, int64(v[i]), unit)
			return append(dst, '"')
		}
	case *array.Duration:
		v := a.DurationValues()
		return func(dst []byte, i int) []byte { return appendSafeInt(dst, int64(v[i])) }
	case *array.Decimal32:
		scale := a.DataType().(arrow.DecimalType).GetScale()
		return func(dst []byte, i int) []byte { return appendQuoted(dst, a.Value(i).ToString(scale)) }
	case *array.Decimal64:
		scale := a.DataType().(arrow.DecimalType).GetScale()
		return func(dst []byte, i int) []byte { return appendQuoted(dst, a.Value(i).ToString(scale)) }
	case *array.Decimal128:
		scale := a.DataType().(arrow.DecimalType).GetScale()
		return func(dst []byte, i int) []byte { return appendQuoted(dst, a.Value(i).ToString(scale)) }
	case *array.Decimal256:
		scale := a.DataType().(arrow.DecimalType).GetScale()
		return func(dst []byte, i int) []byte { return appendQuoted(dst, a.Value(i).ToString(scale)) }
	case *array.Dictionary:
		values := newValueEncoder(a.Dictionary())
		return func(dst []byte, i int) []byte { return values(dst, a.GetValueIndex(i)) }
	case *array.Map:
		return newMapEncoder(a)
	case array.ListLike: // list, large_list, fixed_size_list, list views
		elems := newValueEncoder(a.ListValues())
		return func(dst []byte, i int) []byte {
			start, end := a.ValueOffsets(i)
			dst = append(dst, '[')
			for j := start; j < end; j++ {
				if j > start {
					dst = append(dst, ',')
				}
				dst = elems(dst, int(j))
			}
			return append(dst, ']')
		}
	case *array.Struct:
		st := a.DataType().(*arrow.StructType)
		keys := make([][]byte, a.NumField())
		fields := make([]valueEncoder, a.NumField())
		for f := range fields {
			k := appendJSONString(nil, st.Field(f).Name)
			keys[f] = append(k, ':')
			fields[f] = newValueEncoder(a.Field(f))
		}
		return func(dst []byte, i int) []byte {
			dst = append(dst, '{')
			for f, enc := range fields {
				if f > 0 {
					dst = append(dst, ',')
				}
				dst = append(dst, keys[f]...)
				dst = enc(dst, i)
			}
			return append(dst, '}')
		}
	}
	return fallbackEncoder(arr)
}

// newMapEncoder encodes a map as an object when its keys are strings and as
// an array of {"key","value"} objects otherwise.
func newMapEncoder(a *array.Map) valueEncoder {
	values := newValueEncoder(a.Items())
	if sk, ok := a.Keys().(array.StringLike); ok {
		return func(dst []byte, i int) []byte {
			start, end := a.ValueOffsets(i)
			dst = append(dst, '{')
			for j := start; j < end; j++ {
				if j > start {
					dst = append(dst, ',')
				}
				dst = appendJSONString(dst, sk.Value(int(j)))
				dst = append(dst, ':')
				dst = values(dst, int(j))
			}
			return append(dst, '}')
		}
	}
	keys := newValueEncoder(a.Keys())
	return func(dst []byte, i int) []byte {
		start, end := a.ValueOffsets(i)
		dst = append(dst, '[')
		for j := start; j < end; j++ {
			if j > start {
				dst = append(dst, ',')
			}
			dst = append(dst, `{"key":`...)
			dst = keys(dst, int(j))
			dst = append(dst, `,"value":`...)
			dst = values(dst, int(j))
			dst = append(dst, '}')
		}
		return append(dst, ']')
	}
}

// fallbackEncoder handles the rare types without a dedicated encoder
// (unions, run-end encoded, intervals, ...) through arrow-go's
// GetOneForMarshal and encoding/json; an unmarshalable value becomes null.
func fallbackEncoder(arr arrow.Array) valueEncoder {
	return func(dst []byte, i int) []byte {
		b, err := json.Marshal(arr.GetOneForMarshal(i))
		if err != nil || !json.Valid(b) {
			return append(dst, "null"...)
		}
		return append(dst, b...)
	}
}

// appendSafeInt appends v as a JSON number, or as a JSON string when
// |v| > 2^53.
func appendSafeInt(dst []byte, v int64) []byte {
	if v > maxSafeInt || v < -maxSafeInt {
		dst = append(dst, '"')
		dst = strconv.AppendInt(dst, v, 10)
		return append(dst, '"')
	}
	return strconv.AppendInt(dst, v, 10)
}

// appendFloat appends f in its shortest round-trip form; non-finite values
// become the strings "NaN", "Infinity" and "-Infinity".
func appendFloat(dst []byte, f float64, bits int) []byte {
	switch {
	case math.IsNaN(f):
		return append(dst, `"NaN"`...)
	case math.IsInf(f, 1):
		return append(dst, `"Infinity"`...)
	case math.IsInf(f, -1):
		return append(dst, `"-Infinity"`...)
	}
	return strconv.AppendFloat(dst, f, 'g', -1, bits)
}

func appendQuoted(dst []byte, s string) []byte {
	dst = append(dst, '"')
	dst = append(dst, s...)
	return append(dst, '"')
}

func appendBase64(dst []byte, b []byte) []byte {
	dst = append(dst, '"')
	dst = base64.StdEncoding.AppendEncode(dst, b)
	return append(dst, '"')
}

const hexDigits = "0123456789abcdef"

// safeASCII[c] is true for ASCII bytes that need no escaping in a JSON string.
var safeASCII = func() (t [utf8.RuneSelf]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// appendJSONString appends s as a JSON string. The output is valid JSON for
// any input bytes: invalid UTF-8 becomes U+FFFD, control characters are
// escaped, and so are U+2028/U+2029 (for JavaScript consumers).
func appendJSONString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if safeASCII[c] {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch c {
			case '"', '\\':
				dst = append(dst, '\\', c)
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			dst = append(dst, s[start:i]...)
			dst = append(dst, "\uFFFD"...)
		case r == '\u2028' || r == '\u2029':
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hexDigits[r&0xF])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

// floorDiv is a / b rounded toward negative infinity (b > 0).
func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && a < 0 {
		q--
	}
	return q
}

// civil converts days since 1970-01-01 to a proleptic Gregorian date
// (Howard Hinnant's days_from_civil inverse).
func civil(days int64) (y int64, m, d int) {
	z := days + 719468
	era := floorDiv(z, 146097)
	doe := z - era*146097
	yoe := (doe - doe/1460 + doe/36524 - doe/146096) / 365
	y = yoe + era*400
	doy := doe - (365*yoe + yoe/4 - yoe/100)
	mp := (5*doy + 2) / 153
	d = int(doy - (153*mp+2)/5 + 1)
	if mp < 10 {
		m = int(mp + 3)
	} else {
		m = int(mp - 9)
	}
	if m <= 2 {
		y++
	}
	return y, m, d
}

func append2(dst []byte, v int) []byte {
	return append(dst, byte('0'+v/10), byte('0'+v%10))
}

// appendDate appends days since the epoch as YYYY-MM-DD.
func appendDate(dst []byte, days int64) []byte {
	y, m, d := civil(days)
	if y < 0 {
		dst = append(dst, '-')
		y = -y
	}
	if y < 10000 {
		dst = append2(dst, int(y/100))
		dst = append2(dst, int(y%100))
	} else {
		dst = strconv.AppendInt(dst, y, 10)
	}
	dst = append(dst, '-')
	dst = append2(dst, m)
	dst = append(dst, '-')
	return append2(dst, d)
}

// appendClock appends HH:MM:SS and, when digits > 0, '.' and the first
// digits digits of the nanoseconds.
func appendClock(dst []byte, secOfDay int64, nanos int64, digits int) []byte {
	h := secOfDay / 3600
	if h < 100 {
		dst = append2(dst, int(h))
	} else {
		dst = strconv.AppendInt(dst, h, 10)
	}
	dst = append(dst, ':')
	dst = append2(dst, int(secOfDay/60%60))
	dst = append(dst, ':')
	dst = append2(dst, int(secOfDay%60))
	if digits > 0 {
		dst = append(dst, '.')
		frac := nanos
		for range 9 - digits {
			frac /= 10
		}
		var tmp [9]byte
		for k := digits - 1; k >= 0; k-- {
			tmp[k] = byte('0' + frac%10)
			frac /= 10
		}
		dst = append(dst, tmp[:digits]...)
	}
	return dst
}

// unitScale returns the number of units per second and the fraction digits
// shown for a time unit.
func unitScale(u arrow.TimeUnit) (perSec int64, digits int) {
	switch u {
	case arrow.Millisecond:
		return 1_000, 3
	case arrow.Microsecond:
		return 1_000_000, 6
	case arrow.Nanosecond:
		return 1_000_000_000, 9
	}
	return 1, 0
}

// splitUnits splits v units into whole seconds and nanoseconds (>= 0).
func splitUnits(v, perSec int64) (sec, nsec int64) {
	sec = floorDiv(v, perSec)
	return sec, (v - sec*perSec) * (1_000_000_000 / perSec)
}

func appendTimeOfDay(dst []byte, v int64, unit arrow.TimeUnit) []byte {
	perSec, digits := unitScale(unit)
	if v < 0 { // invalid per the Arrow spec; keep the output unambiguous
		dst = append(dst, '-')
		v = -v
	}
	sec, nsec := splitUnits(v, perSec)
	return appendClock(dst, sec, nsec, digits)
}

// timestampFormatter formats timestamps of one Arrow timestamp type.
type timestampFormatter struct {
	perSec int64
	digits int
	naive  bool           // no zone: wall-clock value, no suffix
	loc    *time.Location // nil: UTC ("Z")
}

// utcNames are zone names written with the "Z" suffix.
var utcNames = []string{"UTC", "Z", "Etc/UTC", "+00:00", "-00:00", "GMT", "Etc/GMT", "UCT", "Etc/UCT", "Zulu", "Etc/Zulu", "Universal", "Etc/Universal"}

func isUTCName(tz string) bool {
	for _, n := range utcNames {
		if strings.EqualFold(tz, n) {
			return true
		}
	}
	return false
}

// newTimestampFormatter resolves the zone of tt once. A zone that cannot be
// loaded is written in UTC with "Z" (the stored instant is UTC either way).
func newTimestampFormatter(tt *arrow.TimestampType) *timestampFormatter {
	perSec, digits := unitScale(tt.Unit)
	f := &timestampFormatter{perSec: perSec, digits: digits}
	switch {
	case tt.TimeZone == "":
		f.naive = true
	case isUTCName(tt.TimeZone):
	default:
		if loc, err := tt.GetZone(); err == nil && loc != time.UTC {
			f.loc = loc
		}
	}
	return f
}

func (f *timestampFormatter) append(dst []byte, v int64) []byte {
	sec, nsec := splitUnits(v, f.perSec)
	offset := int64(0)
	if f.loc != nil {
		_, off := time.Unix(sec, nsec).In(f.loc).Zone()
		offset = int64(off)
		if offset%60 != 0 { // historic LMT offsets with seconds: RFC 3339 cannot say them
			offset = 0
		}
	}
	wall := sec + offset
	days := floorDiv(wall, 86400)
	dst = appendDate(dst, days)
	dst = append(dst, 'T')
	dst = appendClock(dst, wall-days*86400, nsec, f.digits)
	switch {
	case f.naive:
	case f.loc == nil:
		dst = append(dst, 'Z')
	default:
		if offset < 0 {
			dst = append(dst, '-')
			offset = -offset
		} else {
			dst = append(dst, '+')
		}
		dst = append2(dst, int(offset/3600))
		dst = append(dst, ':')
		dst = append2(dst, int(offset/60%60))
	}
	return dst
}
