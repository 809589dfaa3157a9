package funcs

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// Casts between expression types: CAST(x AS type), TRY_CAST and the
// implicit casts the planner inserts. One kernel, used by constant folding
// and the engine alike.

// ErrCast is the error of a value CAST cannot convert (TRY_CAST gives null).
var ErrCast = errors.New("cannot cast")

// CastTypeNames lists the type names CAST accepts, for messages.
const CastTypeNames = "boolean, bigint (int, integer, int64), double (float, float64, real), varchar (string, text), date, timestamp"

// ParseCastType returns the type named by a CAST target (case-insensitive).
func ParseCastType(name string) (arrow.DataType, bool) {
	switch strings.ToLower(strings.TrimSpace(name)) {
	case "bool", "boolean":
		return arrow.FixedWidthTypes.Boolean, true
	case "int", "integer", "bigint", "int64", "long", "int32", "smallint", "tinyint":
		return arrow.PrimitiveTypes.Int64, true
	case "double", "float", "float64", "real", "float32", "numeric", "decimal":
		return arrow.PrimitiveTypes.Float64, true
	case "varchar", "string", "text", "utf8", "char":
		return arrow.BinaryTypes.String, true
	case "date", "date32":
		return arrow.FixedWidthTypes.Date32, true
	case "timestamp", "datetime":
		return arrow.FixedWidthTypes.Timestamp_us, true
	}
	return nil, false
}

// CanCast reports whether CAST converts from to to (every pair of
// expression types except booleans to and from dates and timestamps).
func CanCast(from, to arrow.DataType) bool {
	if from.ID() == arrow.NULL || arrow.TypeEqual(from, to) {
		return true
	}
	b := func(t arrow.DataType) bool { return t.ID() == arrow.BOOL }
	return !(b(from) && isTemporal(to) || b(to) && isTemporal(from))
}

// CastKernel converts arrays of type from to type to. With try, a value
// that does not convert is null; otherwise it is an error wrapping ErrCast.
func CastKernel(from, to arrow.DataType, try bool) Kernel {
	conv := castRow(from, to)
	return Rows(to, true, func(a []Col, i int, o *Out) error {
		if err := conv(a[0], i, o); err != nil {
			if try {
				o.Null()
				return nil
			}
			return err
		}
		return nil
	})
}

func castErr(v any, to arrow.DataType) error {
	return fmt.Errorf("%w %v to %s", ErrCast, v, TypeName(to))
}

// castRow returns the conversion of one non-null row.
func castRow(from, to arrow.DataType) func(c Col, i int, o *Out) error {
	fid, tid := from.ID(), to.ID()
	if arrow.TypeEqual(from, to) || (IsString(from) && IsString(to)) {
		return func(c Col, i int, o *Out) error { o.Copy(c, i); return nil }
	}
	switch tid {
	case arrow.STRING, arrow.LARGE_STRING:
		return func(c Col, i int, o *Out) error { o.Str(FormatValue(from, c, i)); return nil }
	case arrow.FLOAT64:
		switch fid {
		case arrow.BOOL:
			return func(c Col, i int, o *Out) error { o.Float(b2f(c.Bool(i))); return nil }
		case arrow.STRING, arrow.LARGE_STRING:
			return func(c Col, i int, o *Out) error {
				f, err := strconv.ParseFloat(strings.TrimSpace(c.Str(i)), 64)
				if err != nil && !errors.Is(err, strconv.ErrRange) {
					return castErr(strconv.Quote(c.Str(i)), to)
				}
				o.Float(f)
				return nil
			}
		}
		return func(c Col, i int, o *Out) error { o.Float(c.Float(i)); return nil }
	case arrow.INT64:
		switch fid {
		case arrow.BOOL:
			return func(c Col, i int, o *Out) error { o.Int(int64(b2f(c.Bool(i)))); return nil }
		case arrow.FLOAT64:
			return func(c Col, i int, o *Out) error {
				v, ok := FloatToInt(c.Float(i))
				if !ok {
					return castErr(c.Float(i), to)
				}
				o.Int(v)
				return nil
			}
		case arrow.STRING, arrow.LARGE_STRING:
			return func(c Col, i int, o *Out) error {
				s := strings.TrimSpace(c.Str(i))
				v, err := strconv.ParseInt(s, 10, 64)
				if err != nil {
					f, ferr := strconv.ParseFloat(s, 64)
					var ok bool
					if v, ok = FloatToInt(f); ferr != nil || !ok {
						return castErr(strconv.Quote(c.Str(i)), to)
					}
				}
				o.Int(v)
				return nil
			}
		}
		return func(c Col, i int, o *Out) error { o.Int(c.Int(i)); return nil } // date32 / timestamp: days / ticks
	case arrow.BOOL:
		switch fid {
		case arrow.STRING, arrow.LARGE_STRING:
			return func(c Col, i int, o *Out) error {
				switch strings.ToLower(strings.TrimSpace(c.Str(i))) {
				case "true", "t", "yes", "y", "1":
					o.Bool(true)
				case "false", "f", "no", "n", "0":
					o.Bool(false)
				default:
					return castErr(strconv.Quote(c.Str(i)), to)
				}
				return nil
			}
		case arrow.FLOAT64:
			return func(c Col, i int, o *Out) error { o.Bool(c.Float(i) != 0); return nil }
		}
		return func(c Col, i int, o *Out) error { o.Bool(c.Int(i) != 0); return nil }
	case arrow.DATE32, arrow.TIMESTAMP:
		return castTime(from, to)
	}
	return func(Col, int, *Out) error { return castErr(TypeName(from), to) }
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// FloatToInt rounds f to the nearest int64, halves to even (as DuckDB and
// PostgreSQL cast a double: 10.5 → 10, 11.5 → 12); false for NaN, ±Inf and
// values outside the int64 range.
func FloatToInt(f float64) (int64, bool) {
	r := math.RoundToEven(f)
	if math.IsNaN(r) || r < -9.223372036854775808e18 || r >= 9.223372036854775808e18 {
		return 0, false
	}
	return int64(r), true
}

// castTime converts to date32 or a timestamp.
func castTime(from, to arrow.DataType) func(c Col, i int, o *Out) error {
	toUnit := arrow.Second
	if ts, ok := to.(*arrow.TimestampType); ok {
		toUnit = ts.Unit
	}
	emit := func(t time.Time, o *Out) {
		if to.ID() == arrow.DATE32 {
			o.Int(DaysOf(t))
			return
		}
		o.Int(TicksOf(t, toUnit))
	}
	switch from.ID() {
	case arrow.DATE32, arrow.TIMESTAMP:
		return func(c Col, i int, o *Out) error { emit(TimeOf(from, c.Int(i)), o); return nil }
	case arrow.STRING, arrow.LARGE_STRING:
		return func(c Col, i int, o *Out) error {
			t, ok := ParseTime(c.Str(i))
			if !ok {
				return castErr(strconv.Quote(c.Str(i)), to)
			}
			emit(t, o)
			return nil
		}
	case arrow.INT64, arrow.FLOAT64:
		return func(c Col, i int, o *Out) error { o.Int(c.Int(i)); return nil } // days / ticks
	}
	return func(c Col, i int, o *Out) error { return castErr(TypeName(from), to) }
}

// TimeOf is the instant of a date32 (days) or timestamp (ticks) value, in
// the timestamp's time zone (UTC when it has none or an unknown one).
func TimeOf(t arrow.DataType, v int64) time.Time {
	ts, ok := t.(*arrow.TimestampType)
	if !ok {
		return time.Unix(v*86400, 0).UTC()
	}
	var r time.Time
	switch ts.Unit {
	case arrow.Second:
		r = time.Unix(v, 0)
	case arrow.Millisecond:
		r = time.UnixMilli(v)
	case arrow.Microsecond:
		r = time.UnixMicro(v)
	default:
		r = time.Unix(0, v)
	}
	return r.In(Location(ts))
}

// Location is the time zone of a timestamp type (UTC when none or unknown).
func Location(ts *arrow.TimestampType) *time.Location {
	if ts == nil || ts.TimeZone == "" {
		return time.UTC
	}
	if loc, err := ts.GetZone(); err == nil && loc != nil {
		return loc
	}
	return time.UTC
}

// DaysOf is the date32 value of t's calendar date (in t's location).
func DaysOf(t time.Time) int64 {
	y, m, d := t.Date()
	return time.Date(y, m, d, 0, 0, 0, 0, time.UTC).Unix() / 86400
}

// TicksOf is t in ticks of unit since the epoch.
func TicksOf(t time.Time, unit arrow.TimeUnit) int64 {
	switch unit {
	case arrow.Second:
		return t.Unix()
	case arrow.Millisecond:
		return t.UnixMilli()
	case arrow.Microsecond:
		return t.UnixMicro()
	}
	return t.UnixNano()
}

// ParseTime parses a date or timestamp text: 2024-01-31, 2024-01-31
// 12:30[:45[.123]], with T instead of the space, with Z or ±hh:mm.
func ParseTime(s string) (time.Time, bool) {
	s = strings.TrimSpace(s)
	for _, layout := range []string{"2006-01-02", time.RFC3339Nano, "2006-01-02T15:04:05.999999999", "2006-01-02 15:04:05.999999999",
		"2006-01-02 15:04:05.999999999Z07:00", "2006-01-02T15:04", "2006-01-02 15:04"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t, true
		}
	}
	return time.Time{}, false
}

// FormatValue is row i of c (of type t) as text: integers in decimal,
// floats in the shortest form that reads back, booleans true/false, dates
// 2024-01-31, timestamps 2024-01-31 12:30:45[.fraction][±zone].
func FormatValue(t arrow.DataType, c Col, i int) string {
	switch t.ID() {
	case arrow.INT64:
		return strconv.FormatInt(c.Int(i), 10)
	case arrow.FLOAT64:
		return strconv.FormatFloat(c.Float(i), 'g', -1, 64)
	case arrow.BOOL:
		return strconv.FormatBool(c.Bool(i))
	case arrow.STRING, arrow.LARGE_STRING:
		return c.Str(i)
	case arrow.DATE32:
		return TimeOf(t, c.Int(i)).Format("2006-01-02")
	case arrow.TIMESTAMP:
		layout := "2006-01-02 15:04:05.999999999"
		if ts := t.(*arrow.TimestampType); ts.TimeZone != "" {
			layout += "Z07:00"
		}
		return TimeOf(t, c.Int(i)).Format(layout)
	}
	return ""
}

// Format is the constant as text (see FormatValue); "null" for a null.
func (v *Value) Format() string {
	if v.Null {
		return "null"
	}
	a := Broadcast(memory.DefaultAllocator, v, nil, 1)
	defer a.Release()
	return FormatValue(v.Type, NewCol(a), 0)
}
