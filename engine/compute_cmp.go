package engine

import (
	"cmp"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/quarrydb/quarry/internal/funcs"
	"github.com/quarrydb/quarry/planner"
)

// Vectorized comparisons and boolean logic of expressions. The registry's
// general kernels of =, !=, <, <=, >, >=, IN, BETWEEN, AND, OR and NOT
// compute row by row through generic column accessors, and a literal
// argument reaches them broadcast into a full array (a string literal
// copied once per row). Comparisons of two values of one type (int64,
// float64, date32, timestamp, strings), IN and BETWEEN with literal values,
// and the three-valued AND / OR / NOT of booleans are evaluated here
// instead, one typed loop per operator, a literal compared as a scalar; a
// dictionary-encoded string column compared with literals is decided once
// per dictionary value, not per row. The semantics are the kernels' (funcs.Compare): null when
// either side is null; float NaN compares false except for != (Go's own
// float comparisons, which also make -0 equal 0); strings compare
// bytewise. evaluator.general is the fallback for every other case (and
// for tests, evaluator.noFast forces it).

// cmpOp is a comparison operator.
type cmpOp uint8

const (
	cmpEq cmpOp = iota
	cmpNe
	cmpLt
	cmpLe
	cmpGt
	cmpGe
)

var cmpOps = map[string]cmpOp{"=": cmpEq, "!=": cmpNe, "<": cmpLt, "<=": cmpLe, ">": cmpGt, ">=": cmpGe}

// flip is op with its operands swapped (a < b is b > a).
func (op cmpOp) flip() cmpOp {
	return [...]cmpOp{cmpEq, cmpNe, cmpGt, cmpGe, cmpLt, cmpLe}[op]
}

// fastCall evaluates a comparison or a boolean connective here when it can
// (see above); ok is false when the call is left to the general kernels.
func (ev *evaluator) fastCall(c *planner.Call, cols []arrow.Array, n int) (v vec, ok bool, err error) {
	if ev.noFast {
		return vec{}, false, nil
	}
	if op, isCmp := cmpOps[c.Fn]; isCmp && len(c.Args) == 2 {
		return ev.compare(op, c.Args[0], c.Args[1], cols, n)
	}
	switch c.Fn {
	case "and", "or", "not":
		return ev.logic(c, cols, n)
	case "in", "between":
		return ev.inRange(c, cols, n)
	case "like", "ilike":
		return ev.like(c, cols, n) // (compute_like.go)
	}
	return vec{}, false, nil
}

// cmpSide is one evaluated operand of a comparison: typed values (or a
// scalar, one value) and their validity.
type cmpSide struct {
	ints   []int64
	floats []float64
	dates  []int32
	strs   []string
	valid  []bool
	scalar bool
}

// cmpComparable reports whether compare handles operands of type t.
func cmpComparable(t arrow.DataType) bool {
	switch t.ID() {
	case arrow.INT64, arrow.FLOAT64, arrow.DATE32, arrow.TIMESTAMP, arrow.STRING, arrow.LARGE_STRING:
		return true
	}
	return false
}

func (ev *evaluator) compare(op cmpOp, a, b planner.Expr, cols []arrow.Array, n int) (vec, bool, error) {
	if a.Type() == nil || b.Type() == nil {
		return vec{}, false, nil
	}
	t := funcs.Decoded(a.Type())
	if !arrow.TypeEqual(t, funcs.Decoded(b.Type())) || !cmpComparable(t) {
		return vec{}, false, nil
	}
	if isScalar(a) {
		a, b, op = b, a, op.flip()
	}
	if isScalar(a) || isNullConst(b) {
		return vec{}, false, nil // two literals fold; a null literal is the kernels'
	}
	r, ok, err := ev.cmpOperand(b, t, cols, n)
	if !ok || err != nil {
		return vec{}, ok, err
	}
	out := ev.pool.boolsN(n)
	if arr := dictColumn(a, cols); arr != nil && r.scalar {
		dictOutcome(arr, out, func(vals []string, res []bool) { cmpScalar(op, vals, r.strs[0], res) })
		return vec{arr: ev.keep(buildBools(ev.mem, out, ev.validOf(arr)))}, true, nil
	}
	l, ok, err := ev.cmpOperand(a, t, cols, n)
	if !ok || err != nil {
		return vec{}, ok, err
	}
	cmpSides(op, t, l, r, out)
	valid := ev.and(l.valid, r.valid)
	return vec{arr: ev.keep(buildBools(ev.mem, out, valid))}, true, nil
}

// cmpSides sets out[i] to l[i] op r[i] (r[0] when r is a scalar) for
// operands of type t.
func cmpSides(op cmpOp, t arrow.DataType, l, r cmpSide, out []bool) {
	if len(out) == 0 {
		return
	}
	switch t.ID() {
	case arrow.INT64, arrow.TIMESTAMP:
		cmpSlices(op, l.ints, r.ints, r.scalar, out)
	case arrow.FLOAT64:
		cmpSlices(op, l.floats, r.floats, r.scalar, out)
	case arrow.DATE32:
		cmpSlices(op, l.dates, r.dates, r.scalar, out)
	default:
		cmpSlices(op, l.strs, r.strs, r.scalar, out)
	}
}

// inRange evaluates x IN (literals...) (as x = a OR x = b ...; x null gives
// null, nothing else can) and x BETWEEN lo AND hi (as x >= lo AND x <= hi)
// when the values are non-null literals of x's type.
func (ev *evaluator) inRange(c *planner.Call, cols []arrow.Array, n int) (vec, bool, error) {
	x := c.Args[0]
	if x.Type() == nil || isScalar(x) || c.Fn == "between" && len(c.Args) != 3 {
		return vec{}, false, nil
	}
	t := funcs.Decoded(x.Type())
	if !cmpComparable(t) {
		return vec{}, false, nil
	}
	lits := make([]cmpSide, len(c.Args)-1)
	for i, a := range c.Args[1:] {
		if !isScalar(a) || isNullConst(a) || !arrow.TypeEqual(funcs.Decoded(a.Type()), t) {
			return vec{}, false, nil
		}
		lits[i], _, _ = ev.cmpOperand(a, t, cols, n)
	}
	// f computes the outcome over values vs (of type t) into out.
	f := func(vs cmpSide, out []bool) {
		tmp := ev.pool.boolsN(len(out))
		if c.Fn == "between" {
			cmpSides(cmpGe, t, vs, lits[0], out)
			cmpSides(cmpLe, t, vs, lits[1], tmp)
			for i := range out {
				out[i] = out[i] && tmp[i]
			}
			return
		}
		clear(out)
		for _, lit := range lits {
			cmpSides(cmpEq, t, vs, lit, tmp)
			for i := range out {
				out[i] = out[i] || tmp[i]
			}
		}
	}
	out := ev.pool.boolsN(n)
	if arr := dictColumn(x, cols); arr != nil {
		dictOutcome(arr, out, func(vals []string, res []bool) { f(cmpSide{strs: vals}, res) })
		return vec{arr: ev.keep(buildBools(ev.mem, out, ev.validOf(arr)))}, true, nil
	}
	l, ok, err := ev.cmpOperand(x, t, cols, n)
	if !ok || err != nil {
		return vec{}, ok, err
	}
	f(l, out)
	return vec{arr: ev.keep(buildBools(ev.mem, out, l.valid))}, true, nil
}

// isScalar reports whether e is a literal.
func isScalar(e planner.Expr) bool {
	_, ok := e.(*planner.Const)
	return ok
}

func isNullConst(e planner.Expr) bool {
	k, ok := e.(*planner.Const)
	return ok && k.Null
}

// cmpOperand evaluates one operand of type t: a literal as a scalar, an
// expression over the batch as typed values.
func (ev *evaluator) cmpOperand(e planner.Expr, t arrow.DataType, cols []arrow.Array, n int) (cmpSide, bool, error) {
	if k, ok := e.(*planner.Const); ok {
		s := cmpSide{scalar: true}
		switch t.ID() {
		case arrow.INT64, arrow.TIMESTAMP:
			s.ints = []int64{k.Int}
		case arrow.FLOAT64:
			s.floats = []float64{k.Float}
		case arrow.DATE32:
			s.dates = []int32{int32(k.Int)}
		default:
			s.strs = []string{k.Str}
		}
		return s, true, nil
	}
	if arr := dictColumn(e, cols); arr != nil {
		return cmpSide{strs: dictRowViews(arr, ev.pool.strings(n), nil), valid: ev.validOf(arr)}, true, nil
	}
	v, err := ev.eval(e, cols, n)
	if err != nil {
		return cmpSide{}, false, err
	}
	if v.arr == nil {
		switch t.ID() {
		case arrow.INT64:
			if !v.isInt {
				return cmpSide{}, false, nil
			}
			return cmpSide{ints: v.ints, valid: v.valid}, true, nil
		case arrow.FLOAT64:
			return cmpSide{floats: ev.toFloat(v).floats, valid: v.valid}, true, nil
		}
		return cmpSide{}, false, nil
	}
	arr := v.arr
	if !arrow.TypeEqual(arr.DataType(), t) || arr.Len() != n {
		return cmpSide{}, false, nil
	}
	s := cmpSide{valid: ev.validOf(arr)}
	switch t.ID() {
	case arrow.DATE32:
		s.dates = values[int32](arr)
	case arrow.TIMESTAMP, arrow.INT64:
		s.ints = values[int64](arr)
	case arrow.FLOAT64:
		s.floats = values[float64](arr)
	default:
		s.strs = strViews(arr, ev.pool.strings(n))
	}
	return s, true, nil
}

// cmpSlices sets out[i] to a[i] op b[i] (b[0] when scalar).
func cmpSlices[T cmp.Ordered](op cmpOp, a, b []T, scalar bool, out []bool) {
	if scalar {
		cmpScalar(op, a, b[0], out)
		return
	}
	a, b = a[:len(out)], b[:len(out)]
	switch op {
	case cmpEq:
		for i := range out {
			out[i] = a[i] == b[i]
		}
	case cmpNe:
		for i := range out {
			out[i] = a[i] != b[i]
		}
	case cmpLt:
		for i := range out {
			out[i] = a[i] < b[i]
		}
	case cmpLe:
		for i := range out {
			out[i] = a[i] <= b[i]
		}
	case cmpGt:
		for i := range out {
			out[i] = a[i] > b[i]
		}
	case cmpGe:
		for i := range out {
			out[i] = a[i] >= b[i]
		}
	}
}

func cmpScalar[T cmp.Ordered](op cmpOp, a []T, s T, out []bool) {
	a = a[:len(out)]
	switch op {
	case cmpEq:
		for i := range out {
			out[i] = a[i] == s
		}
	case cmpNe:
		for i := range out {
			out[i] = a[i] != s
		}
	case cmpLt:
		for i := range out {
			out[i] = a[i] < s
		}
	case cmpLe:
		for i := range out {
			out[i] = a[i] <= s
		}
	case cmpGt:
		for i := range out {
			out[i] = a[i] > s
		}
	case cmpGe:
		for i := range out {
			out[i] = a[i] >= s
		}
	}
}

// logic evaluates AND, OR (SQL's three-valued logic: false AND null is
// false, true OR null is true) and NOT over boolean operands.
func (ev *evaluator) logic(c *planner.Call, cols []arrow.Array, n int) (vec, bool, error) {
	type side struct {
		v     []uint8
		valid []bool
	}
	sides := make([]side, len(c.Args))
	for i, a := range c.Args {
		if t := a.Type(); t == nil || t.ID() != arrow.BOOL || isScalar(a) {
			return vec{}, false, nil
		}
		v, err := ev.eval(a, cols, n)
		if err != nil {
			return vec{}, false, err
		}
		if v.arr == nil || v.arr.DataType().ID() != arrow.BOOL || v.arr.Len() != n {
			return vec{}, false, nil
		}
		sides[i] = side{v: boolBytes(v.arr, nil), valid: ev.validOf(v.arr)}
	}
	out := ev.pool.boolsN(n)
	switch {
	case c.Fn == "not" && len(sides) == 1:
		for i, x := range sides[0].v {
			out[i] = x == 0
		}
		return vec{arr: ev.keep(buildBools(ev.mem, out, sides[0].valid))}, true, nil
	case c.Fn == "not" || len(sides) != 2:
		return vec{}, false, nil
	}
	l, r := sides[0], sides[1]
	and := c.Fn == "and"
	if and {
		for i := range out {
			out[i] = l.v[i]&r.v[i] != 0
		}
	} else {
		for i := range out {
			out[i] = l.v[i]|r.v[i] != 0
		}
	}
	if l.valid == nil && r.valid == nil {
		return vec{arr: ev.keep(buildBools(ev.mem, out, nil))}, true, nil
	}
	// A null side decides nothing: the row is known when both sides are,
	// or when the known side alone decides (false for AND, true for OR).
	valid := ev.pool.boolsN(n)
	for i := range valid {
		lk, rk := l.valid == nil || l.valid[i], r.valid == nil || r.valid[i]
		lv, rv := lk && l.v[i] != 0, rk && r.v[i] != 0
		if and {
			out[i] = lv && rv
			valid[i] = lk && rk || lk && !lv || rk && !rv
		} else {
			out[i] = lv || rv
			valid[i] = lk && rk || lv || rv
		}
	}
	return vec{arr: ev.keep(buildBools(ev.mem, out, valid))}, true, nil
}

// strings returns a reusable []string of n views (charged as their headers).
func (p *vecPool) strings(n int) []string { return pooled(&p.strs, &p.ns, n, 16, p.acct, nil) }

// dictColumn returns the column e reads (through a cast to its values'
// type) when it is a dictionary-encoded string column whose dictionary has
// no nulls (its rows' nulls are the index validity), compared without
// decoding it; nil otherwise.
func dictColumn(e planner.Expr, cols []arrow.Array) arrow.Array {
	if c, ok := e.(*planner.Cast); ok && c.X.Type() != nil && arrow.TypeEqual(funcs.Decoded(c.X.Type()), c.To) {
		e = c.X // the implicit cast of a dictionary to its values' type
	}
	ref, ok := e.(*planner.ColRef)
	if !ok || ref.Index < 0 || ref.Index >= len(cols) {
		return nil
	}
	arr := cols[ref.Index]
	if !isDictStr(arr.DataType()) || dictValues(arr).NullN() > 0 {
		return nil
	}
	return arr
}

// dictOutcome computes a condition on a dictionary-encoded string column:
// f sets the outcome of every dictionary value once, and each row takes
// its code's (null rows' slots are arbitrary).
func dictOutcome(arr arrow.Array, out []bool, f func(vals []string, res []bool)) {
	dict := dictValues(arr)
	src := strSrcOf(dict)
	vals := make([]string, dict.Len())
	for d := range vals {
		vals[d] = src.at(d)
	}
	res := make([]bool, len(vals))
	f(vals, res)
	codes := dictIndices(arr, nil)
	for i := range out {
		c := int(codes.at(i))
		out[i] = c >= 0 && c < len(res) && res[c]
	}
}
