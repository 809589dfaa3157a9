package planner

import (
	"github.com/apache/arrow-go/v18/arrow"

	"github.com/quarrydb/quarry/internal/funcs"
)

// bindTemporal types + and - with a date, timestamp or INTERVAL operand
// (DuckDB's rules): date/timestamp ± INTERVAL is a timestamp, date ± integer
// a date, date - date an int64 number of days; a timestamp minus a
// timestamp, and everything else with an interval, is refused. ok false:
// both operands are plain numbers (ordinary arithmetic). The Binary keeps
// its text (INTERVAL '1 day' + d prints as d + INTERVAL '1 day') and is
// bound to the registered operator in x.Fn.
func bindTemporal(x *Binary) (ok bool, err error) {
	isTime := func(e Expr) bool { id := e.Type().ID(); return id == arrow.DATE32 || id == arrow.TIMESTAMP }
	isIv := func(e Expr) bool { c, ok := e.(*Const); return ok && c.Interval }
	if !isTime(x.L) && !isTime(x.R) && !isIv(x.L) && !isIv(x.R) {
		return false, nil
	}
	if x.Op != '+' && x.Op != '-' {
		return true, argErr("operator %c: dates, timestamps and intervals take only + and - (%s)", x.Op, x.String())
	}
	if x.Op == '+' && !isTime(x.L) { // n + d, INTERVAL '1 day' + ts: the date/timestamp first
		x.L, x.R = x.R, x.L
	}
	rid := x.R.Type().ID()
	var fn string
	switch {
	case isTime(x.L) && isIv(x.R):
		fn = map[byte]string{'+': funcs.OpAddInterval, '-': funcs.OpSubInterval}[x.Op]
	case isTime(x.L) && (rid == arrow.INT64 || rid == arrow.NULL):
		fn = map[byte]string{'+': funcs.OpAddDays, '-': funcs.OpSubDays}[x.Op]
	case x.Op == '-' && isTime(x.L) && isTime(x.R):
		fn = funcs.OpSubDates
	default:
		kind := func(e Expr) string {
			if isIv(e) {
				return "interval"
			}
			return funcs.TypeName(e.Type())
		}
		return true, argErr("operator %c: cannot combine %s %s and %s %s (date ± INTERVAL '…', date ± integer days, date - date; for timestamps use date_diff(unit, a, b))",
			x.Op, kind(x.L), x.L.String(), kind(x.R), x.R.String())
	}
	d, _ := funcs.LookupScalar(fn)
	c := &Call{Fn: fn, Args: []Expr{x.L, x.R}}
	if err := bindGeneral(c, d); err != nil {
		return true, err
	}
	x.L, x.R, x.Typ, x.Fn = c.Args[0], c.Args[1], c.Typ, fn
	return true, nil
}
