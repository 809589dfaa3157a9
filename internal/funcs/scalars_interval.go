package funcs

import (
	"fmt"
	"math"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
)

// Date and timestamp arithmetic: the meanings of + and - when an operand is
// a date, a timestamp or an interval literal. The planner binds such a
// Binary node to one of these operators (planner.Binary.Fn); their semantics
// are DuckDB's (and PostgreSQL's): date ± interval is a timestamp, date ±
// integer a date, date - date an integer number of days.

// Names of the temporal arithmetic operators (planner.Binary.Fn).
const (
	OpAddInterval = "+ interval"
	OpSubInterval = "- interval"
	OpAddDays     = "+ days"
	OpSubDays     = "- days"
	OpSubDates    = "- dates"
)

// intervalOp declares x ± INTERVAL '...': months first (the day of month
// clamped to the month's last day), then days, then the time part, in x's
// time zone.
func intervalOp(name, sig, doc string, sign int64) *ScalarDecl {
	return &ScalarDecl{Name: name, Operator: true, MinArgs: 2, MaxArgs: 2, Params: []Arg{ArgTimestamp, ArgText},
		ArgsDoc: "date or timestamp; interval literal", Signature: sig, Doc: doc, ResultDoc: "timestamp (a date gives timestamp[us, UTC]; a timestamp keeps its unit and zone)", Result: resultOf(0),
		Prepare: func(c *CallInfo) (Kernel, error) {
			iv, err := intervalArg(c, 1)
			if err != nil {
				return nil, err
			}
			iv = Interval{Months: sign * iv.Months, Days: sign * iv.Days, Dur: time.Duration(sign) * iv.Dur}
			t := c.Types[0]
			return Rows(c.Result, true, func(a []Col, i int, o *Out) error {
				emitTime(o, c.Result, iv.Add(TimeOf(t, a[0].Int(i))))
				return nil
			}), nil
		}}
}

// daysOp declares date ± integer (days).
func daysOp(name, sig, doc string, sign int64) *ScalarDecl {
	return &ScalarDecl{Name: name, Operator: true, MinArgs: 2, MaxArgs: 2, Params: []Arg{ArgTemporal, ArgInt},
		ArgsDoc: "date; integer", Signature: sig, Doc: doc, ResultDoc: "date32", Result: dateOnly(name),
		Prepare: func(c *CallInfo) (Kernel, error) {
			return Rows(c.Result, true, func(a []Col, i int, o *Out) error {
				d, ok := MulInt(a[1].Int(i), sign)
				if ok {
					d, ok = AddInt(a[0].Int(i), d)
				}
				if !ok || d < math.MinInt32 || d > math.MaxInt32 {
					return fmt.Errorf("date out of range: %s", name)
				}
				o.Int(d)
				return nil
			}), nil
		}}
}

// dateOnly is the result rule of the operators defined on dates only.
func dateOnly(name string) func([]arrow.DataType) (arrow.DataType, error) {
	return func(ts []arrow.DataType) (arrow.DataType, error) {
		if ts[0].ID() != arrow.DATE32 || (name == OpSubDates && ts[1].ID() != arrow.DATE32) {
			return nil, fmt.Errorf("needs dates, got %s; for timestamps use date_diff(unit, a, b) or an INTERVAL", TypeName(ts[0]))
		}
		if name == OpSubDates {
			return i64, nil
		}
		return ts[0], nil
	}
}

var intervalScalars = []*ScalarDecl{
	intervalOp(OpAddInterval, "x + INTERVAL '…'", "x moved forward by the interval literal ('7 days', '1 month', '-2 hours'): months first, clamped to the month's last day (Jan 31 + 1 month = Feb 28/29), then days, then the time part, in x's time zone; also `INTERVAL '…' + x`; a date becomes a timestamp (as DuckDB and PostgreSQL; `date_add` keeps a date)", 1),
	intervalOp(OpSubInterval, "x - INTERVAL '…'", "x moved back by the interval literal: `x + INTERVAL` of the negated interval (Mar 31 - 1 month = Feb 28/29)", -1),
	daysOp(OpAddDays, "d + n", "the date n days after the date d (also `n + d`); out of the date range fails the query", 1),
	daysOp(OpSubDays, "d - n", "the date n days before the date d", -1),
	{Name: OpSubDates, Operator: true, MinArgs: 2, MaxArgs: 2, Params: []Arg{ArgTemporal, ArgTemporal},
		ArgsDoc: "dates", Signature: "a - b", Doc: "days from the date b to the date a (as DuckDB; timestamps: use `date_diff`)",
		ResultDoc: "int64", Result: dateOnly(OpSubDates),
		Prepare: func(c *CallInfo) (Kernel, error) {
			return Rows(c.Result, true, func(a []Col, i int, o *Out) error { o.Int(a[0].Int(i) - a[1].Int(i)); return nil }), nil
		}},
}
