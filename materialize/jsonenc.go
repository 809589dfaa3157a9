package materialize

import (
	"encoding/base64"
	"encoding/json"
	"github.com/quarrydb/quarry/internal/jsonx"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
)

// JSON encoding of Arrow values.
//
// Records are written straight from the Arrow arrays into a []byte, column
// by column (see records.go), with no map[string]any per row and no
// encoding/json per value. The mapping (also documented in docs/DELIVERY.md):
//
//	null                      null
//	bool                      true / false
//	int8..int64, uint8..64    JSON number; int64/uint64 (and durations) with
//	                          |v| > 2^53 become JSON strings ("9007199254740993")
//	                          because JSON consumers parse numbers as float64
//	                          and would silently change such values
//	float16/32/64             shortest round-trip repr, formatted as
//	                          encoding/json and JavaScript do (plain for
//	                          1e-6 <= |v| < 1e21, else "1e+21", "5e-324");
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
		return func(dst []byte, i int) []byte { return jsonx.AppendFloat(dst, float64(a.Value(i).Float32()), 32) }
	case *array.Float32:
		v := a.Float32Values()
		return func(dst []byte, i int) []byte { return jsonx.AppendFloat(dst, float64(v[i]), 32) }
	case *array.Float64:
		v := a.Float64Values()
		return func(dst []byte, i int) []byte { return jsonx.AppendFloat(dst, v[i], 64) }
	case array.StringLike: // string, large_string, string_view
		return func(dst []byte, i int) []byte { return jsonx.AppendString(dst, a.Value(i)) }
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
		return newListEncoder(a)
	case *array.Struct:
		return newStructEncoder(a)
	}
	return fallbackEncoder(arr)
}

// newListEncoder encodes a list-like value as a JSON array.
func newListEncoder(a array.ListLike) valueEncoder {
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
}

// newStructEncoder encodes a struct value as a JSON object in field order.
func newStructEncoder(a *array.Struct) valueEncoder {
	st := a.DataType().(*arrow.StructType)
	keys := make([][]byte, a.NumField())
	fields := make([]valueEncoder, a.NumField())
	for f := range fields {
		k := jsonx.AppendString(nil, st.Field(f).Name)
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
				dst = jsonx.AppendString(dst, sk.Value(int(j)))
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
	return append(dst, digitPairs[2*v], digitPairs[2*v+1])
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

// digitPairs holds "00", "01", ..., "99".
const digitPairs = "00010203040506070809101112131415161718192021222324252627282930313233343536373839" +
	"40414243444546474849505152535455565758596061626364656667686970717273747576777879" +
	"8081828384858687888990919293949596979899"

// pow10u64[k] is 10^k.
var pow10u64 = [...]int64{1, 10, 100, 1000, 10_000, 100_000, 1_000_000, 10_000_000, 100_000_000, 1_000_000_000}

// appendClock appends HH:MM:SS and, when digits > 0, '.' and the first
// digits digits of the nanoseconds.
func appendClock(dst []byte, secOfDay int64, nanos int64, digits int) []byte {
	h := secOfDay / 3600
	if h >= 100 {
		dst = strconv.AppendInt(dst, h, 10)
	} else {
		dst = append(dst, digitPairs[2*h], digitPairs[2*h+1])
	}
	m, sec := secOfDay/60%60, secOfDay%60
	var tmp [16]byte
	tmp[0] = ':'
	tmp[1], tmp[2] = digitPairs[2*m], digitPairs[2*m+1]
	tmp[3] = ':'
	tmp[4], tmp[5] = digitPairs[2*sec], digitPairs[2*sec+1]
	n := 6
	if digits > 0 {
		tmp[6] = '.'
		frac := nanos / pow10u64[9-digits]
		k := 7 + digits
		for ; k-7 >= 2; k -= 2 {
			p := frac % 100
			frac /= 100
			tmp[k-2], tmp[k-1] = digitPairs[2*p], digitPairs[2*p+1]
		}
		if k-7 == 1 {
			tmp[7] = byte('0' + frac)
		}
		n = 7 + digits
	}
	return append(dst, tmp[:n]...)
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

// timestampFormatter formats timestamps of one Arrow timestamp type. It
// caches the date text of the last day and the zone offset of the last zone
// period, so it is not safe for concurrent use.
type timestampFormatter struct {
	perSec int64
	digits int
	naive  bool           // no zone: wall-clock value, no suffix
	loc    *time.Location // nil: UTC ("Z")

	day     int64 // day of date (valid when len(date) > 0)
	date    []byte
	zoneLo  int64 // [zoneLo, zoneHi): unix seconds where offset applies
	zoneHi  int64
	zoneOff int64
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
		offset = f.offsetAt(sec, nsec)
	}
	wall := sec + offset
	days := floorDiv(wall, 86400)
	if days != f.day || len(f.date) == 0 {
		f.date = appendDate(f.date[:0], days)
		f.day = days
	}
	dst = append(dst, f.date...)
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

// offsetAt returns the zone offset in seconds at the instant (sec, nsec),
// reusing the last zone period when the instant falls inside it.
func (f *timestampFormatter) offsetAt(sec, nsec int64) int64 {
	if f.zoneHi > f.zoneLo && sec >= f.zoneLo && sec < f.zoneHi {
		return f.zoneOff
	}
	t := time.Unix(sec, nsec).In(f.loc)
	_, off := t.Zone()
	offset := int64(off)
	if offset%60 != 0 { // historic LMT offsets with seconds: RFC 3339 cannot say them
		offset = 0
	}
	start, end := t.ZoneBounds()
	f.zoneLo, f.zoneHi, f.zoneOff = math.MinInt64, math.MaxInt64, offset
	if !start.IsZero() {
		f.zoneLo = start.Unix()
	}
	if !end.IsZero() {
		f.zoneHi = end.Unix()
	}
	return offset
}
