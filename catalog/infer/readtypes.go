package infer

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
)

// Type overrides: the types a schema card may give a CSV column, and how
// a cell is parsed under one.

type OvID uint8

const (
	OvString OvID = iota
	OvInt
	OvUint
	OvFloat
	OvBool
	OvDate
	OvTimestamp
)

// OvType is a parsed override type name.
type OvType struct {
	ID   OvID
	Bits int
	DT   arrow.DataType
}

// OverrideTypes lists the type names a card may give a column.
const OverrideTypes = "string, int8, int16, int32, int64, uint8, uint16, uint32, uint64, float32, float64, bool, date, " +
	"timestamp[s|ms|us|ns] (naive) and timestamp[s|ms|us|ns, UTC]"

// OverrideType parses a type name as get_schema shows it.
func OverrideType(name string) (OvType, error) {
	n := strings.ToLower(strings.TrimSpace(name))
	switch n {
	case "string", "utf8", "text":
		return OvType{ID: OvString, DT: arrow.BinaryTypes.String}, nil
	case "int8":
		return OvType{OvInt, 8, arrow.PrimitiveTypes.Int8}, nil
	case "int16":
		return OvType{OvInt, 16, arrow.PrimitiveTypes.Int16}, nil
	case "int32":
		return OvType{OvInt, 32, arrow.PrimitiveTypes.Int32}, nil
	case "int64":
		return OvType{OvInt, 64, arrow.PrimitiveTypes.Int64}, nil
	case "uint8":
		return OvType{OvUint, 8, arrow.PrimitiveTypes.Uint8}, nil
	case "uint16":
		return OvType{OvUint, 16, arrow.PrimitiveTypes.Uint16}, nil
	case "uint32":
		return OvType{OvUint, 32, arrow.PrimitiveTypes.Uint32}, nil
	case "uint64":
		return OvType{OvUint, 64, arrow.PrimitiveTypes.Uint64}, nil
	case "float32":
		return OvType{OvFloat, 32, arrow.PrimitiveTypes.Float32}, nil
	case "float64", "double":
		return OvType{OvFloat, 64, arrow.PrimitiveTypes.Float64}, nil
	case "bool", "boolean":
		return OvType{ID: OvBool, DT: arrow.FixedWidthTypes.Boolean}, nil
	case "date", "date32":
		return OvType{ID: OvDate, DT: arrow.FixedWidthTypes.Date32}, nil
	}
	if inner, ok := strings.CutPrefix(n, "timestamp"); ok {
		unit, tz := "ms", ""
		if inner != "" {
			in, ok := strings.CutPrefix(inner, "[")
			in, ok2 := strings.CutSuffix(in, "]")
			if !ok || !ok2 {
				return OvType{}, fmt.Errorf("type %q is not known; use one of %s", name, OverrideTypes)
			}
			u, z, hasZone := strings.Cut(in, ",")
			unit = strings.TrimSpace(u)
			if hasZone {
				if tz = strings.TrimSpace(z); tz != "utc" {
					return OvType{}, fmt.Errorf("type %q: the only time zone is UTC", name)
				}
				tz = "UTC"
			}
		}
		var tu arrow.TimeUnit
		switch unit {
		case "s":
			tu = arrow.Second
		case "ms":
			tu = arrow.Millisecond
		case "us":
			tu = arrow.Microsecond
		case "ns":
			tu = arrow.Nanosecond
		default:
			return OvType{}, fmt.Errorf("type %q: the unit is s, ms, us or ns", name)
		}
		return OvType{ID: OvTimestamp, DT: &arrow.TimestampType{Unit: tu, TimeZone: tz}}, nil
	}
	return OvType{}, fmt.Errorf("type %q is not known; use one of %s", name, OverrideTypes)
}

// TimeFormat is a compiled strftime-style layout.
type TimeFormat struct {
	layout string // Go layout
	Src    string // as written
}

// CompileTimeFormat turns a strftime-style layout into a Go time layout.
// Directives: %Y %y %m %d %e %H %I %M %S %f %p %b %B %z %%; other
// characters must be punctuation, a space or T (letters and digits would
// be read as Go layout words). A date layout needs %Y/%y, a month and
// %d; withTime also needs %H or %I.
func CompileTimeFormat(f string, withTime bool) (TimeFormat, error) {
	if len(f) == 0 || len(f) > 64 {
		return TimeFormat{}, errors.New("a format is 1 to 64 characters")
	}
	var b strings.Builder
	seen := map[byte]bool{}
	for i := 0; i < len(f); i++ {
		c := f[i]
		if c != '%' {
			if !strings.ContainsRune(" -/.:,T_'", rune(c)) {
				return TimeFormat{}, fmt.Errorf("%q: only %%-directives, spaces, T and - / . : , _ ' may appear", f)
			}
			b.WriteByte(c)
			continue
		}
		i++
		if i == len(f) {
			return TimeFormat{}, fmt.Errorf("%q ends with a lone %%", f)
		}
		d := f[i]
		if seen[d] && d != '%' {
			return TimeFormat{}, fmt.Errorf("%q repeats %%%c", f, d)
		}
		seen[d] = true
		switch d {
		case 'Y':
			b.WriteString("2006")
		case 'y':
			b.WriteString("06")
		case 'm':
			b.WriteString("1")
		case 'd', 'e':
			b.WriteString("2")
		case 'H':
			b.WriteString("15")
		case 'I':
			b.WriteString("3")
		case 'M':
			b.WriteString("04")
		case 'S':
			b.WriteString("05")
		case 'f':
			// Go reads a fraction after the seconds by itself; %f only
			// documents it and must follow %S and a dot.
			if !seen['S'] || !strings.HasSuffix(b.String(), "05.") {
				return TimeFormat{}, fmt.Errorf("%q: %%f must follow \"%%S.\"", f)
			}
			s := strings.TrimSuffix(b.String(), ".")
			b.Reset()
			b.WriteString(s)
		case 'p':
			b.WriteString("PM")
		case 'b':
			b.WriteString("Jan")
		case 'B':
			b.WriteString("January")
		case 'z':
			b.WriteString("Z07:00")
		case '%':
			b.WriteString("%")
		default:
			return TimeFormat{}, fmt.Errorf("%q: unknown directive %%%c", f, d)
		}
	}
	if !(seen['Y'] || seen['y']) || !(seen['m'] || seen['b'] || seen['B']) || !(seen['d'] || seen['e']) {
		return TimeFormat{}, fmt.Errorf("%q needs a year (%%Y), a month (%%m or %%b) and a day (%%d)", f)
	}
	if seen['b'] && seen['B'] || seen['m'] && (seen['b'] || seen['B']) || seen['d'] && seen['e'] || seen['Y'] && seen['y'] {
		return TimeFormat{}, fmt.Errorf("%q gives a field twice", f)
	}
	if withTime && !(seen['H'] || seen['I']) {
		return TimeFormat{}, fmt.Errorf("%q needs an hour (%%H)", f)
	}
	if !withTime && (seen['H'] || seen['I'] || seen['M'] || seen['S'] || seen['z']) {
		return TimeFormat{}, fmt.Errorf("%q is a date format: no time fields", f)
	}
	if seen['I'] != seen['p'] {
		return TimeFormat{}, fmt.Errorf("%q: %%I and %%p go together", f)
	}
	return TimeFormat{layout: b.String(), Src: f}, nil
}

// parse reads s under the layout (Go matches month names in any case).
func (tf TimeFormat) Parse(s string) (time.Time, bool) {
	t, err := time.Parse(tf.layout, s)
	return t, err == nil
}

// CellParser appends one non-null cell to a builder, reporting whether it
// parsed.
type CellParser func(b array.Builder, s string) bool

// OverrideParser returns the parser of a column under an override.
func OverrideParser(t OvType, format string, defDate, defTS *TimeFormat) (CellParser, error) {
	switch t.ID {
	case OvString:
		return func(b array.Builder, s string) bool { b.(*array.StringBuilder).Append(s); return true }, nil
	case OvInt:
		bits := t.Bits
		return func(b array.Builder, s string) bool {
			v, err := strconv.ParseInt(s, 10, bits)
			if err != nil {
				return false
			}
			switch bb := b.(type) {
			case *array.Int8Builder:
				bb.Append(int8(v))
			case *array.Int16Builder:
				bb.Append(int16(v))
			case *array.Int32Builder:
				bb.Append(int32(v))
			case *array.Int64Builder:
				bb.Append(v)
			}
			return true
		}, nil
	case OvUint:
		bits := t.Bits
		return func(b array.Builder, s string) bool {
			v, err := strconv.ParseUint(s, 10, bits)
			if err != nil {
				return false
			}
			switch bb := b.(type) {
			case *array.Uint8Builder:
				bb.Append(uint8(v))
			case *array.Uint16Builder:
				bb.Append(uint16(v))
			case *array.Uint32Builder:
				bb.Append(uint32(v))
			case *array.Uint64Builder:
				bb.Append(v)
			}
			return true
		}, nil
	case OvFloat:
		bits := t.Bits
		return func(b array.Builder, s string) bool {
			v, err := strconv.ParseFloat(s, bits)
			if err != nil && !errors.Is(err, strconv.ErrRange) {
				return false
			}
			if bits == 32 {
				b.(*array.Float32Builder).Append(float32(v))
			} else {
				b.(*array.Float64Builder).Append(v)
			}
			return true
		}, nil
	case OvBool:
		return func(b array.Builder, s string) bool {
			v, ok := ParseBool(s)
			if ok {
				b.(*array.BooleanBuilder).Append(v)
			}
			return ok
		}, nil
	case OvDate:
		return dateParser(format, defDate)
	case OvTimestamp:
		return timestampParser(t, format, defTS)
	}
	return nil, fmt.Errorf("no parser for override %d", t.ID)
}

// dateParser parses dates under format (or the default layout, or any
// layout inference knows).
func dateParser(format string, defDate *TimeFormat) (CellParser, error) {
	tf := defDate
	if format != "" {
		f, err := CompileTimeFormat(format, false)
		if err != nil {
			return nil, err
		}
		tf = &f
	}
	return func(b array.Builder, s string) bool {
		var days int64
		if tf != nil {
			t, ok := tf.Parse(s)
			if !ok {
				return false
			}
			days = EpochDays(t.Year(), int(t.Month()), t.Day())
		} else {
			d, ok := parseAnyDate(s)
			if !ok {
				return false
			}
			days = d
		}
		if days < math.MinInt32 || days > math.MaxInt32 {
			return false
		}
		b.(*array.Date32Builder).Append(arrow.Date32(days))
		return true
	}, nil
}

// timestampParser parses timestamps under format: epoch_s/epoch_ms, a
// layout, the default layout or any layout inference knows.
func timestampParser(t OvType, format string, defTS *TimeFormat) (CellParser, error) {
	tt := t.DT.(*arrow.TimestampType)
	per := int64(1)
	switch tt.Unit {
	case arrow.Millisecond:
		per = 1_000
	case arrow.Microsecond:
		per = 1_000_000
	case arrow.Nanosecond:
		per = 1_000_000_000
	}
	if format == "epoch_s" || format == "epoch_ms" {
		div, mul := int64(1), per
		if format == "epoch_ms" {
			if per >= 1000 {
				mul = per / 1000
			} else {
				div, mul = 1000, 1
			}
		}
		return func(b array.Builder, s string) bool {
			v, err := strconv.ParseInt(s, 10, 64)
			if err != nil || v%div != 0 {
				return false // a unit too coarse for the value would lose it
			}
			v /= div
			if v > math.MaxInt64/mul || v < math.MinInt64/mul {
				return false
			}
			b.(*array.TimestampBuilder).Append(arrow.Timestamp(v * mul))
			return true
		}, nil
	}
	tf := defTS
	if format != "" {
		f, err := CompileTimeFormat(format, true)
		if err != nil {
			return nil, err
		}
		tf = &f
	}
	return func(b array.Builder, s string) bool {
		var t time.Time
		if tf != nil {
			var ok bool
			if t, ok = tf.Parse(s); !ok {
				return false
			}
		} else {
			ms, ok := parseAnyTimestamp(s)
			if !ok {
				return false
			}
			t = time.UnixMilli(ms).UTC()
		}
		if !TimestampFits(t, per) {
			return false
		}
		b.(*array.TimestampBuilder).Append(arrow.Timestamp(t.UnixNano() / (1_000_000_000 / per)))
		return true
	}, nil
}

// TimestampFits reports whether a timestamp reader keeps t in a unit of
// 1/per seconds: within UnixNano's range (years 1678 to 2261, so every
// unit is safe) and not finer than the unit (which would lose it). A
// column inferred as a timestamp under a timestamp_format is one whose
// every value fits (per 1000: timestamp[ms]).
func TimestampFits(t time.Time, per int64) bool {
	if t.Year() < 1678 || t.Year() > 2261 {
		return false
	}
	return t.UnixNano()%(1_000_000_000/per) == 0
}

// parseAnyDate parses a cell in any date layout inference knows.
func parseAnyDate(s string) (int64, bool) {
	switch k := Classify(s); {
	case k == KindDate:
		d, ok := ParseDateBytes([]byte(s))
		return int64(d), ok
	case k.IsDateLike() && k.ArrowType().ID() == arrow.DATE32:
		d, ok := ParseDateKind(k, s)
		return int64(d), ok
	}
	return 0, false
}

// parseAnyTimestamp parses a cell in any timestamp layout inference knows
// (or a date, at midnight), in milliseconds.
func parseAnyTimestamp(s string) (int64, bool) {
	if ms, _, ok := ParseTimestamp(s); ok {
		return ms, true
	}
	if d, ok := parseAnyDate(s); ok {
		return d * 86_400_000, true
	}
	k := Classify(s)
	if !k.IsDateLike() {
		return 0, false
	}
	return ParseTSKind(k, s)
}
