package engine

import (
	"cmp"
	"math"
	"slices"
	"strings"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/quarrydb/quarry/internal/funcs"
	"github.com/quarrydb/quarry/internal/qerr"
	"github.com/quarrydb/quarry/planner"
)

// scratch holds per-operator buffers reused across batches by predicates.
type scratch struct {
	strs  []string
	bytes []uint8
	codes []int32
}

// predicate is a compiled planner.Predicate: eval ANDs the predicate's
// outcome for every row of the batch (its columns cols) into mask. Rows
// already false in mask may be skipped (their outcome is irrelevant).
type predicate struct {
	eval func(cols []arrow.Array, mask []bool, sc *scratch)
	// cost ranks predicates by the work per row (see predCost): an AND
	// chain runs the cheap ones first.
	cost int
	// nullTest is the column of a plain is_null (nullIs) or is_not_null
	// (nullIsNot) test, which a count can answer from null counts.
	nullTest nullTest
	nullCol  int
}

// nullTest classifies is_null / is_not_null predicates.
type nullTest uint8

const (
	nullNone nullTest = iota
	nullIs
	nullIsNot
)

// predCost ranks a leaf predicate on a column of type dt by its work per
// row: null tests, then fixed-width comparisons, dictionary-encoded
// strings (one lookup per row), plain string comparisons, substring
// searches, case-folding and regular expressions.
func predCost(p planner.Predicate, dt arrow.DataType) int {
	switch {
	case p.Op == planner.OpIsNull || p.Op == planner.OpIsNotNull:
		return 0
	case !isStringLike(dt):
		return 1
	case isDictStr(dt):
		return 2
	case p.Op == planner.OpRegex:
		return 6
	case p.CaseInsensitive:
		return 5
	case p.Op == planner.OpContains:
		return 4
	}
	return 3
}

// compilePreds compiles preds (an AND chain) against the schema of the
// rows they filter, cheapest first: predicates have no side effects, so
// their order changes nothing but the work.
func compilePreds(preds []planner.Predicate, schema *arrow.Schema) ([]predicate, error) {
	out := make([]predicate, 0, len(preds))
	for _, p := range preds {
		c, err := compilePred(p, schema)
		if err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	slices.SortStableFunc(out, func(a, b predicate) int { return cmp.Compare(a.cost, b.cost) })
	return out, nil
}

// compileAny compiles an OR group: a row passes when any member holds.
// Each member is evaluated only on the rows still alive and not yet
// accepted by an earlier member.
func compileAny(p planner.Predicate, schema *arrow.Schema) (predicate, error) {
	if len(p.Any) == 0 {
		return predicate{}, qerr.Invalid(qerr.CodeInvalidFilter, "an any group needs at least one filter")
	}
	members := make([]predicate, len(p.Any))
	for i, m := range p.Any {
		if m.Op == planner.OpAny {
			return predicate{}, qerr.Invalid(qerr.CodeInvalidFilter, "any groups cannot be nested")
		}
		c, err := compilePred(m, schema)
		if err != nil {
			return predicate{}, err
		}
		members[i] = c
	}
	cost := 0
	for _, m := range members {
		cost = max(cost, m.cost+1)
	}
	var acc, tmp []bool
	return predicate{cost: cost, eval: func(cols []arrow.Array, mask []bool, sc *scratch) {
		n := len(mask)
		if cap(acc) < n {
			acc, tmp = make([]bool, n), make([]bool, n)
		}
		acc, tmp = acc[:n], tmp[:n]
		clear(acc)
		for _, m := range members {
			left := false
			for i := range tmp {
				tmp[i] = mask[i] && !acc[i]
				left = left || tmp[i]
			}
			if !left {
				break
			}
			m.eval(cols, tmp, sc)
			for i, ok := range tmp {
				if ok {
					acc[i] = true
				}
			}
		}
		copy(mask, acc)
	}}, nil
}

func compilePred(p planner.Predicate, schema *arrow.Schema) (predicate, error) {
	if p.Op == planner.OpAny {
		return compileAny(p, schema)
	}
	if p.Index < 0 || p.Index >= schema.NumFields() {
		return predicate{}, qerr.Internal(nil, "filter on %q: column index %d out of range for %d input columns", p.Col, p.Index, schema.NumFields())
	}
	dt := schema.Field(p.Index).Type
	ci := p.Index
	switch p.Op {
	case planner.OpIsNull:
		return predicate{nullTest: nullIs, nullCol: ci, eval: func(cols []arrow.Array, mask []bool, _ *scratch) {
			col := cols[ci]
			if col.DataType().ID() == arrow.NULL {
				return
			}
			v := validityOf(col)
			if v.bits == nil {
				clear(mask)
				return
			}
			andBitmap(mask, v.bits, v.off, true)
		}}, nil
	case planner.OpIsNotNull:
		return predicate{nullTest: nullIsNot, nullCol: ci, eval: func(cols []arrow.Array, mask []bool, _ *scratch) {
			col := cols[ci]
			if col.DataType().ID() == arrow.NULL {
				clear(mask)
				return
			}
			andValid(col, mask)
		}}, nil
	}
	decl, ok := p.Op.Lookup()
	if !ok {
		return predicate{}, qerr.Invalid(qerr.CodeInvalidFilter, "unknown filter op %q on column %q", p.Op, p.Col).
			WithHint("use one of %s", strings.Join(funcs.OpNames(), ", "))
	}
	if decl.StringOnly && !isStringLike(dt) {
		return predicate{}, qerr.Unsupported(qerr.CodeInvalidFilter, "%s needs a string column; %q is %s", p.Op, p.Col, dt).
			WithHint("use eq/in/range on non-string columns")
	}
	if p.CaseInsensitive && !isStringLike(dt) {
		return predicate{}, qerr.Invalid(qerr.CodeInvalidFilter, "case_insensitive needs a string column; %q is %s", p.Col, dt).
			WithHint("drop case_insensitive")
	}
	var (
		eval func(arrow.Array, []bool, *scratch)
		err  error
	)
	switch dt.ID() {
	case arrow.INT8:
		eval, err = intPred[int8](p)
	case arrow.INT16:
		eval, err = intPred[int16](p)
	case arrow.INT32:
		eval, err = intPred[int32](p)
	case arrow.INT64:
		eval, err = intPred[int64](p)
	case arrow.UINT8:
		eval, err = intPred[uint8](p)
	case arrow.UINT16:
		eval, err = intPred[uint16](p)
	case arrow.UINT32:
		eval, err = intPred[uint32](p)
	case arrow.UINT64:
		eval, err = intPred[uint64](p)
	case arrow.DATE32:
		eval, err = intPred[arrow.Date32](p)
	case arrow.TIMESTAMP:
		eval, err = intPred[arrow.Timestamp](p)
	case arrow.FLOAT32:
		eval, err = floatPred[float32](p)
	case arrow.FLOAT64:
		eval, err = floatPred[float64](p)
	case arrow.BOOL:
		eval, err = boolPred(p)
	case arrow.STRING, arrow.LARGE_STRING, arrow.DICTIONARY:
		if !isStringLike(dt) {
			return predicate{}, qerr.Unsupported(qerr.CodeInvalidFilter, "cannot filter column %q of type %s with %s", p.Col, dt, p.Op).
				WithHint("only is_null/is_not_null work on this column type")
		}
		var k strKernel
		if k, err = stringKernel(p); err == nil {
			eval = stringEval(k, newPlainKernel(p))
		}
	default:
		return predicate{}, qerr.Unsupported(qerr.CodeInvalidFilter, "cannot filter column %q of type %s with %s", p.Col, dt, p.Op).
			WithHint("only is_null/is_not_null work on this column type")
	}
	if err != nil {
		return predicate{}, err
	}
	return predicate{cost: predCost(p, dt), eval: func(cols []arrow.Array, mask []bool, sc *scratch) {
		col := cols[ci]
		andValid(col, mask) // first: the kernel may skip the null rows
		eval(col, mask, sc)
	}}, nil
}

// operands returns the literals an op compares with, in order: one for the
// comparisons and string ops, the list for in/not_in, [min, max] (nil =
// open) for range.
func operands(p planner.Predicate) ([]*planner.Literal, error) {
	switch p.Op {
	case planner.OpIn, planner.OpNotIn:
		out := make([]*planner.Literal, len(p.Values))
		for i := range p.Values {
			out[i] = &p.Values[i]
		}
		return out, nil
	case planner.OpRange:
		return []*planner.Literal{p.Min, p.Max}, nil
	}
	if p.Value == nil {
		return nil, qerr.Invalid(qerr.CodeInvalidFilter, "filter %s on %q needs a value", p.Op, p.Col)
	}
	return []*planner.Literal{p.Value}, nil
}

func badLiteral(p planner.Predicate, l *planner.Literal, want string) error {
	return qerr.Invalid(qerr.CodeInvalidFilter, "filter %s on %q: value %v (%T) is not %s", p.Op, p.Col, l.Value, l.Value, want)
}

func litInt(p planner.Predicate, l *planner.Literal) (int64, error) {
	switch v := l.Value.(type) {
	case int64:
		return v, nil
	case int32:
		return int64(v), nil
	case int:
		return int64(v), nil
	case int16:
		return int64(v), nil
	case int8:
		return int64(v), nil
	case uint8:
		return int64(v), nil
	case uint16:
		return int64(v), nil
	case uint32:
		return int64(v), nil
	case uint64:
		if v <= math.MaxInt64 {
			return int64(v), nil
		}
	case arrow.Date32:
		return int64(v), nil
	case arrow.Timestamp:
		return int64(v), nil
	}
	return 0, badLiteral(p, l, "an integer")
}

func litFloat(p planner.Predicate, l *planner.Literal) (float64, error) {
	switch v := l.Value.(type) {
	case float64:
		return v, nil
	case float32:
		return float64(v), nil
	case int64:
		return float64(v), nil
	case int:
		return float64(v), nil
	}
	return 0, badLiteral(p, l, "a number")
}

// intRange classifies an int64 literal against T's range: -1 below, +1 above, 0 inside.
func intRange[T integer](v int64) int {
	var z T
	bits := int(unsafe.Sizeof(z)) * 8
	signed := ^z < 0
	if signed {
		if bits == 64 {
			return 0
		}
		lo, hi := -(int64(1) << (bits - 1)), int64(1)<<(bits-1)-1
		switch {
		case v < lo:
			return -1
		case v > hi:
			return 1
		}
		return 0
	}
	if v < 0 {
		return -1
	}
	if bits < 64 && v > int64(1)<<bits-1 {
		return 1
	}
	return 0
}

// place places the integer k against T's range: k as a T and 0 when T
// holds it, else -1 (below every T) or +1 (above every T).
func place[T integer](k planner.Int) (T, int) {
	if v, ok := k.Int64(); ok {
		if cls := intRange[T](v); cls != 0 {
			return 0, cls
		}
		return T(v), 0
	}
	var z T
	if k.Side == 0 && !k.Neg && ^z > 0 && unsafe.Sizeof(z) == 8 { // uint64 above MaxInt64
		return T(k.Abs), 0
	}
	if k.Side < 0 || k.Neg {
		return 0, -1
	}
	return 0, 1
}

// litBounds returns the floor and ceiling of an integer-column operand
// (equal for an integer; see planner.Number for how the comparisons use
// them).
func litBounds(p planner.Predicate, l *planner.Literal) (floor, ceil planner.Int, err error) {
	if n, ok := l.Value.(planner.Number); ok {
		return n.Floor(), n.Ceil(), nil
	}
	v, err := litInt(p, l)
	k := planner.IntOf(v)
	return k, k, err
}

// constOutcome is the result of comparing any value with a literal outside
// the column type's range (cls -1 below, +1 above).
func constOutcome(op planner.Op, cls int) bool {
	switch op {
	case planner.OpNeq:
		return true
	case planner.OpLt, planner.OpLte:
		return cls > 0
	case planner.OpGt, planner.OpGte:
		return cls < 0
	}
	return false // eq
}

// intPred compiles p on an integer column of type T. Operands compare
// exactly (planner.Number): v < x is v < ceil(x), v <= x is v <= floor(x),
// v > x is v > floor(x), v >= x is v >= ceil(x); a fraction equals no value.
func intPred[T integer](p planner.Predicate) (func(arrow.Array, []bool, *scratch), error) {
	lits, err := operands(p)
	if err != nil {
		return nil, err
	}
	switch p.Op {
	case planner.OpIn, planner.OpNotIn:
		set := make([]T, 0, len(lits))
		for _, l := range lits {
			lo, hi, err := litBounds(p, l)
			if err != nil {
				return nil, err
			}
			if v, cls := place[T](lo); lo == hi && cls == 0 {
				set = append(set, v)
			}
		}
		return inEval(set, p.Op == planner.OpNotIn, func(col arrow.Array, _ *scratch) []T { return values[T](col) }), nil
	case planner.OpRange:
		var steps []func(arrow.Array, []bool, *scratch)
		var bounds []T
		for i, op := range []planner.Op{planner.OpGte, planner.OpLte} {
			if lits[i] == nil {
				continue
			}
			lo, hi, err := litBounds(p, lits[i])
			if err != nil {
				return nil, err
			}
			k := lo // max: v <= floor
			if op == planner.OpGte {
				k = hi // min: v >= ceil
			}
			steps = append(steps, intCmp[T](op, k))
			if v, cls := place[T](k); cls == 0 {
				bounds = append(bounds, v)
			}
		}
		if len(bounds) == 2 { // both bounds inside T's range: one pass
			lo, hi := bounds[0], bounds[1]
			return func(col arrow.Array, mask []bool, _ *scratch) { betweenLoop(values[T](col), lo, hi, mask) }, nil
		}
		return chain(steps), nil
	}
	lo, hi, err := litBounds(p, lits[0])
	if err != nil {
		return nil, err
	}
	switch p.Op {
	case planner.OpEq, planner.OpNeq:
		if lo != hi { // a fraction: equal to no value
			return constPred(p.Op == planner.OpNeq), nil
		}
	case planner.OpLt, planner.OpGte:
		return intCmp[T](p.Op, hi), nil
	}
	return intCmp[T](p.Op, lo), nil
}

// constPred is a predicate with the same outcome for every non-null row.
func constPred(pass bool) func(arrow.Array, []bool, *scratch) {
	if pass {
		return func(arrow.Array, []bool, *scratch) {}
	}
	return func(_ arrow.Array, mask []bool, _ *scratch) { clear(mask) }
}

func intCmp[T integer](op planner.Op, k planner.Int) func(arrow.Array, []bool, *scratch) {
	lit, cls := place[T](k)
	if cls != 0 {
		return constPred(constOutcome(op, cls))
	}
	return func(col arrow.Array, mask []bool, _ *scratch) {
		cmpLoop(values[T](col), op, lit, mask)
	}
}

func chain(steps []func(arrow.Array, []bool, *scratch)) func(arrow.Array, []bool, *scratch) {
	return func(col arrow.Array, mask []bool, sc *scratch) {
		for _, s := range steps {
			s(col, mask, sc)
		}
	}
}

// cmpLoop ANDs (vals[i] op lit) into mask, without branches. Go's
// operators give IEEE semantics for floats (NaN compares false except
// with neq).
func cmpLoop[T cmp.Ordered](vals []T, op planner.Op, lit T, mask []bool) {
	m := maskBytes(mask)[:len(vals)]
	switch op {
	case planner.OpEq:
		for i, v := range vals {
			m[i] &= b2u(v == lit)
		}
	case planner.OpNeq:
		for i, v := range vals {
			m[i] &= b2u(v != lit)
		}
	case planner.OpLt:
		for i, v := range vals {
			m[i] &= b2u(v < lit)
		}
	case planner.OpLte:
		for i, v := range vals {
			m[i] &= b2u(v <= lit)
		}
	case planner.OpGt:
		for i, v := range vals {
			m[i] &= b2u(v > lit)
		}
	case planner.OpGte:
		for i, v := range vals {
			m[i] &= b2u(v >= lit)
		}
	}
}

// betweenLoop ANDs (lo <= vals[i] <= hi) into mask in one pass (NaN fails).
func betweenLoop[T cmp.Ordered](vals []T, lo, hi T, mask []bool) {
	m := maskBytes(mask)[:len(vals)]
	for i, v := range vals {
		m[i] &= b2u(v >= lo) & b2u(v <= hi)
	}
}

// inEval ANDs membership in set (non-membership when not) into mask; load
// extracts the typed values.
func inEval[T comparable](set []T, not bool, load func(arrow.Array, *scratch) []T) func(arrow.Array, []bool, *scratch) {
	k := inKernel(set, not)
	return func(col arrow.Array, mask []bool, sc *scratch) { k(load(col, sc), mask) }
}

// inKernel ANDs membership in set (non-membership when not) of vals into mask.
func inKernel[T comparable](set []T, not bool) func(vals []T, mask []bool) {
	if len(set) == 0 {
		if not {
			return func([]T, []bool) {}
		}
		return func(_ []T, mask []bool) { clear(mask) }
	}
	if len(set) <= 8 {
		return func(vals []T, mask []bool) {
			for i, v := range vals {
				if !mask[i] {
					continue
				}
				hit := false
				for _, s := range set {
					if v == s {
						hit = true
						break
					}
				}
				mask[i] = hit != not
			}
		}
	}
	m := make(map[T]struct{}, len(set))
	for _, s := range set {
		m[s] = struct{}{}
	}
	return func(vals []T, mask []bool) {
		for i, v := range vals {
			if mask[i] {
				_, hit := m[v]
				mask[i] = hit != not
			}
		}
	}
}

func floatPred[T float](p planner.Predicate) (func(arrow.Array, []bool, *scratch), error) {
	lits, err := operands(p)
	if err != nil {
		return nil, err
	}
	switch p.Op {
	case planner.OpIn, planner.OpNotIn:
		set := make([]float64, 0, len(lits))
		for _, l := range lits {
			v, err := litFloat(p, l)
			if err != nil {
				return nil, err
			}
			if v == v { // NaN is never a member
				set = append(set, v)
			}
		}
		return inEval(set, p.Op == planner.OpNotIn, func(col arrow.Array, _ *scratch) []float64 {
			return widenFloats(values[T](col))
		}), nil
	case planner.OpRange:
		var steps []func(arrow.Array, []bool, *scratch)
		var bounds []float64
		for i, op := range []planner.Op{planner.OpGte, planner.OpLte} {
			if lits[i] == nil {
				continue
			}
			v, err := litFloat(p, lits[i])
			if err != nil {
				return nil, err
			}
			steps = append(steps, floatCmp[T](op, v))
			bounds = append(bounds, v)
		}
		var z T
		if len(bounds) == 2 && unsafe.Sizeof(z) == 8 { // float64: one pass
			lo, hi := bounds[0], bounds[1]
			return func(col arrow.Array, mask []bool, _ *scratch) { betweenLoop(values[float64](col), lo, hi, mask) }, nil
		}
		return chain(steps), nil
	}
	v, err := litFloat(p, lits[0])
	if err != nil {
		return nil, err
	}
	return floatCmp[T](p.Op, v), nil
}

// widenFloats returns vs as float64 (no copy for float64).
func widenFloats[T float](vs []T) []float64 {
	if f, ok := any(vs).([]float64); ok {
		return f
	}
	out := make([]float64, len(vs))
	for i, v := range vs {
		out[i] = float64(v)
	}
	return out
}

func floatCmp[T float](op planner.Op, lit float64) func(arrow.Array, []bool, *scratch) {
	var z T
	if unsafe.Sizeof(z) == 8 {
		return func(col arrow.Array, mask []bool, _ *scratch) {
			cmpLoop(values[float64](col), op, lit, mask)
		}
	}
	// float32 column: compare exactly in float64.
	return func(col arrow.Array, mask []bool, _ *scratch) {
		vals := values[float32](col)
		m := maskBytes(mask)[:len(vals)]
		switch op {
		case planner.OpEq:
			for i, v := range vals {
				m[i] &= b2u(float64(v) == lit)
			}
		case planner.OpNeq:
			for i, v := range vals {
				m[i] &= b2u(float64(v) != lit)
			}
		case planner.OpLt:
			for i, v := range vals {
				m[i] &= b2u(float64(v) < lit)
			}
		case planner.OpLte:
			for i, v := range vals {
				m[i] &= b2u(float64(v) <= lit)
			}
		case planner.OpGt:
			for i, v := range vals {
				m[i] &= b2u(float64(v) > lit)
			}
		case planner.OpGte:
			for i, v := range vals {
				m[i] &= b2u(float64(v) >= lit)
			}
		}
	}
}

func boolPred(p planner.Predicate) (func(arrow.Array, []bool, *scratch), error) {
	lits, err := operands(p)
	if err != nil {
		return nil, err
	}
	conv := func(l *planner.Literal) (uint8, error) {
		b, ok := l.Value.(bool)
		if !ok {
			return 0, badLiteral(p, l, "a boolean")
		}
		if b {
			return 1, nil
		}
		return 0, nil
	}
	load := func(col arrow.Array, sc *scratch) []uint8 {
		sc.bytes = boolBytes(col, sc.bytes)
		return sc.bytes
	}
	switch p.Op {
	case planner.OpIn, planner.OpNotIn:
		var has [2]bool
		for _, l := range lits {
			v, err := conv(l)
			if err != nil {
				return nil, err
			}
			has[v] = true
		}
		if p.Op == planner.OpNotIn {
			has[0], has[1] = !has[0], !has[1]
		}
		return func(col arrow.Array, mask []bool, sc *scratch) {
			for i, v := range load(col, sc) {
				mask[i] = mask[i] && has[v]
			}
		}, nil
	case planner.OpRange:
		var steps []func(arrow.Array, []bool, *scratch)
		for i, op := range []planner.Op{planner.OpGte, planner.OpLte} {
			if lits[i] == nil {
				continue
			}
			v, err := conv(lits[i])
			if err != nil {
				return nil, err
			}
			steps = append(steps, func(col arrow.Array, mask []bool, sc *scratch) {
				cmpLoop(load(col, sc), op, v, mask)
			})
		}
		return chain(steps), nil
	}
	v, err := conv(lits[0])
	if err != nil {
		return nil, err
	}
	return func(col arrow.Array, mask []bool, sc *scratch) {
		cmpLoop(load(col, sc), p.Op, v, mask)
	}, nil
}
