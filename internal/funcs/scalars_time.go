package funcs

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
)

// Date and time functions. Dates are date32, timestamps keep their unit
// and time zone; parts and truncation are computed in the timestamp's time
// zone (UTC when it has none).

var i64 = arrow.PrimitiveTypes.Int64

// part declares a function extracting one calendar field.
func part(name, doc string, f func(t time.Time) int64) *ScalarDecl {
	return &ScalarDecl{Name: name, MinArgs: 1, MaxArgs: 1, Params: []Arg{ArgTemporal}, Signature: name + "(x)", Doc: doc,
		ResultDoc: "int64", Result: fixed(i64),
		Prepare: func(c *CallInfo) (Kernel, error) {
			t := c.Types[0]
			return Rows(c.Result, true, func(a []Col, i int, o *Out) error { o.Int(f(TimeOf(t, a[0].Int(i)))); return nil }), nil
		}}
}

// Units of date_trunc and date_diff.
var timeUnits = []string{"year", "quarter", "month", "week", "day", "hour", "minute", "second", "millisecond", "microsecond"}

func unitOf(v *Value) (string, error) {
	if v == nil || v.Null {
		return "", fmt.Errorf("the unit must be a string literal: one of %s", strings.Join(timeUnits, ", "))
	}
	u := strings.TrimSuffix(strings.ToLower(strings.TrimSpace(v.Str)), "s")
	for _, x := range timeUnits {
		if u == x {
			return u, nil
		}
	}
	return "", fmt.Errorf("unknown unit %q (units: %s)", v.Str, strings.Join(timeUnits, ", "))
}

// Truncate returns t truncated to unit (weeks start on Monday).
func Truncate(t time.Time, unit string) time.Time {
	y, m, d := t.Date()
	loc := t.Location()
	switch unit {
	case "year":
		return time.Date(y, 1, 1, 0, 0, 0, 0, loc)
	case "quarter":
		return time.Date(y, (m-1)/3*3+1, 1, 0, 0, 0, 0, loc)
	case "month":
		return time.Date(y, m, 1, 0, 0, 0, 0, loc)
	case "week":
		wd := (int(t.Weekday()) + 6) % 7
		return time.Date(y, m, d-wd, 0, 0, 0, 0, loc)
	case "day":
		return time.Date(y, m, d, 0, 0, 0, 0, loc)
	case "hour":
		return time.Date(y, m, d, t.Hour(), 0, 0, 0, loc)
	case "minute":
		return time.Date(y, m, d, t.Hour(), t.Minute(), 0, 0, loc)
	case "second":
		return time.Date(y, m, d, t.Hour(), t.Minute(), t.Second(), 0, loc)
	case "millisecond":
		return t.Truncate(time.Millisecond)
	}
	return t.Truncate(time.Microsecond)
}

// emitTime appends t as a value of type r (date32 or a timestamp).
func emitTime(o *Out, r arrow.DataType, t time.Time) {
	if ts, ok := r.(*arrow.TimestampType); ok {
		o.Int(TicksOf(t, ts.Unit))
		return
	}
	o.Int(DaysOf(t))
}

// DateDiff is the number of unit boundaries between a and b (b - a):
// calendar units count month boundaries, the others whole units between
// the truncated instants (weeks: days / 7, toward zero).
func DateDiff(unit string, a, b time.Time) int64 {
	switch unit {
	case "year", "quarter", "month":
		months := int64(b.Year()-a.Year())*12 + int64(b.Month()-a.Month())
		switch unit {
		case "year":
			return int64(b.Year() - a.Year())
		case "quarter":
			return int64(b.Year()-a.Year())*4 + int64((b.Month()-1)/3) - int64((a.Month()-1)/3)
		}
		return months
	case "week":
		return (DaysOf(b) - DaysOf(a)) / 7
	case "day":
		return DaysOf(b) - DaysOf(a)
	}
	ta, tb := Truncate(a, unit), Truncate(b, unit)
	d := tb.Sub(ta)
	switch unit {
	case "hour":
		return int64(d / time.Hour)
	case "minute":
		return int64(d / time.Minute)
	case "second":
		return int64(d / time.Second)
	case "millisecond":
		return int64(d / time.Millisecond)
	}
	return int64(d / time.Microsecond)
}

// Interval is a calendar interval: months, days and a duration.
type Interval struct {
	Months, Days int64
	Dur          time.Duration
}

// ParseInterval parses '7 days', '1 year 2 months', '-3 hours', '90 minutes', ...
func ParseInterval(s string) (Interval, error) {
	var iv Interval
	f := strings.Fields(strings.ToLower(s))
	if len(f) == 0 || len(f)%2 != 0 {
		return iv, fmt.Errorf("interval %q: want pairs of a number and a unit, e.g. '7 days' or '1 month 2 days'", s)
	}
	for k := 0; k < len(f); k += 2 {
		n, err := strconv.ParseInt(f[k], 10, 32)
		if err != nil {
			return iv, fmt.Errorf("interval %q: %q is not an integer", s, f[k])
		}
		switch strings.TrimSuffix(f[k+1], "s") {
		case "year":
			iv.Months += 12 * n
		case "quarter":
			iv.Months += 3 * n
		case "month":
			iv.Months += n
		case "week":
			iv.Days += 7 * n
		case "day":
			iv.Days += n
		case "hour":
			iv.Dur += time.Duration(n) * time.Hour
		case "minute":
			iv.Dur += time.Duration(n) * time.Minute
		case "second":
			iv.Dur += time.Duration(n) * time.Second
		case "millisecond":
			iv.Dur += time.Duration(n) * time.Millisecond
		case "microsecond":
			iv.Dur += time.Duration(n) * time.Microsecond
		default:
			return iv, fmt.Errorf("interval %q: unknown unit %q (units: %s)", s, f[k+1], strings.Join(timeUnits, ", "))
		}
	}
	return iv, nil
}

// Add returns t + iv; adding months keeps the day of month, clamped to the
// month's last day (Jan 31 + 1 month = Feb 29 in a leap year).
func (iv Interval) Add(t time.Time) time.Time {
	if iv.Months != 0 {
		y, m, d := t.Date()
		total := int64(y)*12 + int64(m-1) + iv.Months
		ny, nm := int(total/12), time.Month(total%12+1)
		if total%12 < 0 {
			ny, nm = int(total/12)-1, time.Month(total%12+13)
		}
		last := time.Date(ny, nm+1, 0, 0, 0, 0, 0, time.UTC).Day()
		h, mi, se := t.Clock()
		t = time.Date(ny, nm, min(d, last), h, mi, se, t.Nanosecond(), t.Location())
	}
	return t.AddDate(0, 0, int(iv.Days)).Add(iv.Dur)
}

// strftime verbs: C-style directives translated to Go layouts.
var strftimeVerbs = map[byte]string{
	'Y': "2006", 'y': "06", 'm': "01", 'd': "02", 'e': "_2", 'H': "15", 'I': "03", 'M': "04", 'S': "05",
	'p': "PM", 'b': "Jan", 'h': "Jan", 'B': "January", 'a': "Mon", 'A': "Monday", 'z': "-0700", 'Z': "MST",
	'f': "000000", 'F': "2006-01-02", 'T': "15:04:05", 'D': "01/02/06", '%': "%",
}

// StrftimeLayout translates a strftime format (%Y-%m-%d ...) to a Go time
// layout; %j (day of year), %u (ISO weekday), %V (ISO week) and %G (ISO year) are
// filled in by Strftime.
func StrftimeLayout(f string) (string, error) {
	var b strings.Builder
	for i := 0; i < len(f); i++ {
		if f[i] != '%' {
			b.WriteByte(f[i])
			continue
		}
		if i+1 == len(f) {
			return "", fmt.Errorf("format %q ends with a lone %%", f)
		}
		i++
		if v, ok := strftimeVerbs[f[i]]; ok {
			b.WriteString(v)
			continue
		}
		switch f[i] {
		case 'j', 'u', 'V', 'G':
			b.WriteString("\x00" + string(f[i]))
		default:
			return "", fmt.Errorf("format %q: unknown directive %%%c", f, f[i])
		}
	}
	return b.String(), nil
}

// Strftime formats t with a layout from StrftimeLayout.
func Strftime(t time.Time, layout string) string {
	s := t.Format(layout)
	if !strings.Contains(s, "\x00") {
		return s
	}
	y, w := t.ISOWeek()
	return strings.NewReplacer("\x00j", fmt.Sprintf("%03d", t.YearDay()), "\x00u", strconv.Itoa((int(t.Weekday())+6)%7+1),
		"\x00V", fmt.Sprintf("%02d", w), "\x00G", strconv.Itoa(y)).Replace(s)
}

func textArg(c *CallInfo, i int, what string) (string, error) {
	if c.Consts[i] == nil {
		return "", fmt.Errorf("the %s must be a string literal", what)
	}
	return c.Consts[i].Str, nil
}

// intervalArg is argument i, an interval literal.
func intervalArg(c *CallInfo, i int) (Interval, error) {
	s, err := textArg(c, i, "interval")
	if err != nil {
		return Interval{}, err
	}
	return ParseInterval(s)
}

var timeScalars = []*ScalarDecl{
	part("year", "calendar year", func(t time.Time) int64 { return int64(t.Year()) }),
	part("quarter", "quarter of the year, 1 to 4", func(t time.Time) int64 { return int64(t.Month()-1)/3 + 1 }),
	part("month", "month, 1 to 12", func(t time.Time) int64 { return int64(t.Month()) }),
	part("week", "ISO 8601 week number, 1 to 53 (weeks start on Monday)", func(t time.Time) int64 { _, w := t.ISOWeek(); return int64(w) }),
	part("day", "day of the month, 1 to 31", func(t time.Time) int64 { return int64(t.Day()) }),
	part("day_of_week", "day of the week, 0 (Sunday) to 6 (Saturday)", func(t time.Time) int64 { return int64(t.Weekday()) }),
	part("day_of_year", "day of the year, 1 to 366", func(t time.Time) int64 { return int64(t.YearDay()) }),
	part("hour", "hour, 0 to 23", func(t time.Time) int64 { return int64(t.Hour()) }),
	part("minute", "minute, 0 to 59", func(t time.Time) int64 { return int64(t.Minute()) }),
	part("second", "second, 0 to 59 (the fraction dropped)", func(t time.Time) int64 { return int64(t.Second()) }),
	{Name: "date_trunc", MinArgs: 2, MaxArgs: 2, Params: []Arg{ArgText, ArgTemporal}, Signature: "date_trunc(unit, x)",
		Doc:       "x truncated to the start of its unit: " + strings.Join(timeUnits, ", ") + " (weeks start on Monday)",
		ResultDoc: "type of x", Result: resultOf(1),
		Prepare: func(c *CallInfo) (Kernel, error) {
			u, err := unitOf(c.Consts[0])
			if err != nil {
				return nil, err
			}
			t := c.Types[1]
			return Rows(c.Result, true, func(a []Col, i int, o *Out) error {
				emitTime(o, c.Result, Truncate(TimeOf(t, a[1].Int(i)), u))
				return nil
			}), nil
		}},
	{Name: "date_diff", MinArgs: 3, MaxArgs: 3, Params: []Arg{ArgText, ArgSame, ArgSame}, Signature: "date_diff(unit, a, b)",
		Doc:       "number of unit boundaries from a to b (b later: positive); year/quarter/month count calendar boundaries, week is days / 7",
		ResultDoc: "int64", Result: fixed(i64),
		Prepare: func(c *CallInfo) (Kernel, error) {
			u, err := unitOf(c.Consts[0])
			if err != nil {
				return nil, err
			}
			t := c.Types[1]
			if !isTemporal(t) && t.ID() != arrow.NULL {
				return nil, fmt.Errorf("a and b must be dates or timestamps, got %s", TypeName(t))
			}
			return Rows(c.Result, true, func(a []Col, i int, o *Out) error {
				o.Int(DateDiff(u, TimeOf(t, a[1].Int(i)), TimeOf(t, a[2].Int(i))))
				return nil
			}), nil
		}},
	{Name: "date_add", MinArgs: 2, MaxArgs: 2, Params: []Arg{ArgTemporal, ArgText}, Signature: "date_add(x, INTERVAL '7 days')",
		Doc:       "x plus an interval literal ('1 year 2 months', '-3 days', '90 minutes'; months clamp to the month's last day); a date stays a date (sub-day parts then only move it by whole days)",
		ResultDoc: "type of x", Result: resultOf(0),
		Prepare: func(c *CallInfo) (Kernel, error) {
			iv, err := intervalArg(c, 1)
			if err != nil {
				return nil, err
			}
			t := c.Types[0]
			return Rows(c.Result, true, func(a []Col, i int, o *Out) error {
				emitTime(o, c.Result, iv.Add(TimeOf(t, a[0].Int(i))))
				return nil
			}), nil
		}},
	{Name: "date_bin", MinArgs: 2, MaxArgs: 3, Params: []Arg{ArgText, ArgTemporal, ArgTemporal},
		Signature: "date_bin(INTERVAL '15 minutes', x[, origin])",
		Doc:       "start of x's bin of a fixed stride (weeks, days, hours, minutes, seconds, milliseconds, microseconds; not months or years), bins counted from origin (default 2000-01-03 00:00:00 UTC, a Monday)",
		ResultDoc: "type of x", Result: resultOf(1),
		Prepare: func(c *CallInfo) (Kernel, error) {
			iv, err := intervalArg(c, 0)
			if err != nil {
				return nil, err
			}
			stride := (time.Duration(iv.Days)*24*time.Hour + iv.Dur).Microseconds()
			if iv.Months != 0 || stride <= 0 {
				return nil, fmt.Errorf("the interval must be a positive fixed stride (weeks, days, hours, ...), not %q", c.Consts[0].Str)
			}
			t := c.Types[1]
			origin := func(a []Col, i int) int64 { return time.Date(2000, 1, 3, 0, 0, 0, 0, time.UTC).UnixMicro() }
			if len(c.Types) > 2 {
				ot := c.Types[2]
				origin = func(a []Col, i int) int64 { return TimeOf(ot, a[2].Int(i)).UnixMicro() }
			}
			return Rows(c.Result, true, func(a []Col, i int, o *Out) error {
				x := TimeOf(t, a[1].Int(i))
				org := origin(a, i)
				start := org + FloorDivInt(x.UnixMicro()-org, stride)*stride
				emitTime(o, c.Result, time.UnixMicro(start).In(x.Location()))
				return nil
			}), nil
		}},
	{Name: "strftime", MinArgs: 2, MaxArgs: 2, Params: []Arg{ArgTemporal, ArgText}, Signature: "strftime(x, format)",
		Doc:       "x as text in a C strftime format literal: %Y %m %d %H %M %S %f (microseconds) %j %a %A %b %B %y %e %I %p %u %V %G %z %Z %F %T %%",
		ResultDoc: "string", Result: fixed(strType),
		Prepare: func(c *CallInfo) (Kernel, error) {
			f, err := textArg(c, 1, "format")
			if err != nil {
				return nil, err
			}
			layout, err := StrftimeLayout(f)
			if err != nil {
				return nil, err
			}
			t := c.Types[0]
			return Rows(c.Result, true, func(a []Col, i int, o *Out) error {
				o.Str(Strftime(TimeOf(t, a[0].Int(i)), layout))
				return nil
			}), nil
		}},
	parseTime("strptime", "strptime(s, format)", "parses s with a strftime format literal (%Y %m %d %H %M %S %f %b %B %y %p %z ...)", arrow.FixedWidthTypes.Timestamp_us, true),
	parseTime("to_date", "to_date(s[, format])", "parses s as a date (default: ISO 2024-01-31, also with a time of day)", arrow.FixedWidthTypes.Date32, false),
	{Name: "to_timestamp", MinArgs: 1, MaxArgs: 1, Params: []Arg{ArgFloat}, Signature: "to_timestamp(seconds)",
		Doc: "the instant a number of seconds after 1970-01-01 UTC", ResultDoc: "timestamp[us, UTC]",
		Nulls:  "null when an argument is null, NaN or out of range",
		Result: fixed(&arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"}),
		Prepare: func(c *CallInfo) (Kernel, error) {
			return Rows(c.Result, true, func(a []Col, i int, o *Out) error {
				us, ok := FloatToInt(a[0].Float(i) * 1e6)
				if !ok {
					o.Null()
					return nil
				}
				o.Int(us)
				return nil
			}), nil
		}},
	{Name: "epoch", MinArgs: 1, MaxArgs: 1, Params: []Arg{ArgTemporal}, Signature: "epoch(x)",
		Doc: "seconds since 1970-01-01 UTC (with the fraction)", ResultDoc: "float64", Result: fixed(f64),
		Prepare: func(c *CallInfo) (Kernel, error) {
			t := c.Types[0]
			return Rows(c.Result, true, func(a []Col, i int, o *Out) error {
				o.Float(float64(TimeOf(t, a[0].Int(i)).UnixNano()) / 1e9)
				return nil
			}), nil
		}},
	{Name: "epoch_ms", MinArgs: 1, MaxArgs: 1, Params: []Arg{ArgTemporal}, Signature: "epoch_ms(x)",
		Doc: "milliseconds since 1970-01-01 UTC", ResultDoc: "int64", Result: fixed(i64),
		Prepare: func(c *CallInfo) (Kernel, error) {
			t := c.Types[0]
			return Rows(c.Result, true, func(a []Col, i int, o *Out) error {
				o.Int(TimeOf(t, a[0].Int(i)).UnixMilli())
				return nil
			}), nil
		}},
	{Name: "now", MinArgs: 0, MaxArgs: 0, Signature: "now()", Doc: "the query's start time (the same in every row and expression of a query)",
		ResultDoc: "timestamp[us, UTC]", Nulls: "never null", Result: fixed(NowType),
		Prepare: func(c *CallInfo) (Kernel, error) {
			now := time.Now()
			return Rows(c.Result, false, func(_ []Col, _ int, o *Out) error { o.Int(now.UnixMicro()); return nil }), nil
		}},
	{Name: "current_date", MinArgs: 0, MaxArgs: 0, Signature: "current_date", Doc: "the query's start date (UTC)",
		ResultDoc: "date32", Nulls: "never null", Result: fixed(arrow.FixedWidthTypes.Date32),
		Prepare: func(c *CallInfo) (Kernel, error) {
			now := time.Now().UTC()
			return Rows(c.Result, false, func(_ []Col, _ int, o *Out) error { o.Int(DaysOf(now)); return nil }), nil
		}},
}

// NowType is the type of now().
var NowType = &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"}

func parseTime(name, sig, doc string, result arrow.DataType, needFormat bool) *ScalarDecl {
	minArgs := 1
	if needFormat {
		minArgs = 2
	}
	return &ScalarDecl{Name: name, MinArgs: minArgs, MaxArgs: 2, Params: []Arg{ArgString, ArgText}, Signature: sig,
		Doc: doc, ResultDoc: TypeName(result), Nulls: "null when s is null or does not parse", Result: fixed(result),
		Prepare: func(c *CallInfo) (Kernel, error) {
			layout := ""
			if len(c.Consts) > 1 {
				f, err := textArg(c, 1, "format")
				if err != nil {
					return nil, err
				}
				if layout, err = StrftimeLayout(f); err != nil {
					return nil, err
				}
				if strings.Contains(layout, "\x00") {
					return nil, fmt.Errorf("format %q: %%j, %%u, %%V and %%G cannot be parsed", f)
				}
				layout = strings.ReplaceAll(layout, "000000", "999999")
			}
			return Rows(c.Result, true, func(a []Col, i int, o *Out) error {
				var t time.Time
				var err error
				ok := true
				if layout == "" {
					t, ok = ParseTime(a[0].Str(i))
				} else if t, err = time.Parse(layout, a[0].Str(i)); err != nil {
					ok = false
				}
				if !ok {
					o.Null()
					return nil
				}
				emitTime(o, c.Result, t)
				return nil
			}), nil
		}}
}
