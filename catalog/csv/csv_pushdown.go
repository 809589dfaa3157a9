package csv

import (
	"cmp"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/quarrydb/quarry/catalog/infer"
	"github.com/quarrydb/quarry/planner"
)

// Filter pushdown into the fast CSV reader: predicates the scan is given
// (ScanOptions.Filters) are tested on the tokenized cells of their columns
// before any column is parsed into an Arrow builder, so rejected rows are
// never materialized. A test reads the cell's bytes as the column's builder
// would (parseInt64Bytes, parseFloatCell, the raw bytes of a string) and
// compares as the engine does (Go operators: NaN fails every comparison but
// neq; strings bytewise; an empty cell is null and fails everything but
// is_null). A cell that does not parse passes, so the builder still reports
// it. Only what csvSource.HandlesFilter accepts is pushed; the engine
// applies the same predicates again to the rows that come back.

var _ planner.FilterPushdowner = (*csvSource)(nil)

// HandlesFilter implements planner.FilterPushdowner: is_null and
// is_not_null on any column; eq, neq, lt, lte, gt, gte, range, in and
// not_in on int64 columns (integer literals), the same but in/not_in on
// float64 columns, and those plus contains, starts_with and ends_with on
// string columns (not case-insensitive); an OR group of such predicates.
// A file with a multi-byte delimiter is read by the reference reader,
// which takes no filters.
func (s *csvSource) HandlesFilter(p planner.Predicate) bool {
	_, ok := s.cellTest(p)
	return ok && s.delim < utf8.RuneSelf
}

// rowTest is one pushed predicate: a row passes when any of its cell
// tests holds (one test for a plain predicate, the members of an OR group).
type rowTest []cellTest

// cellTest tests the cell of one scanned column (slot in the projection).
type cellTest struct {
	slot int
	pass func(f []byte) bool // f empty: a null cell
}

// compileFilters compiles preds for a scan of the file columns proj; ok is
// false when one of them cannot be pushed (then none is: the engine's
// filter applies them all).
func (s *csvSource) compileFilters(preds []planner.Predicate, proj []int) ([]rowTest, bool) {
	if len(preds) == 0 {
		return nil, true
	}
	out := make([]rowTest, 0, len(preds))
	for _, p := range preds {
		members := []planner.Predicate{p}
		if p.Op == planner.OpAny {
			members = p.Any
		}
		var rt rowTest
		for _, m := range members {
			c, ok := s.cellTest(m)
			if !ok {
				return nil, false
			}
			fi := s.schema.FieldIndices(m.Col)
			if len(fi) == 0 {
				return nil, false
			}
			if c.slot = slices.Index(proj, fi[0]); c.slot < 0 {
				return nil, false
			}
			rt = append(rt, c)
		}
		out = append(out, rt)
	}
	return out, true
}

// cellTest compiles p (an OR group: all its members) into a cell test
// (slot not set); ok is false when the reader cannot apply p exactly.
func (s *csvSource) cellTest(p planner.Predicate) (cellTest, bool) {
	if p.Op == planner.OpAny {
		for _, m := range p.Any {
			if _, ok := s.cellTest(m); !ok || m.Op == planner.OpAny {
				return cellTest{}, false
			}
		}
		return cellTest{}, len(p.Any) > 0
	}
	fi := s.schema.FieldIndices(p.Col)
	if len(fi) != 1 {
		return cellTest{}, false
	}
	switch p.Op {
	case planner.OpIsNull:
		return cellTest{pass: func(f []byte) bool { return len(f) == 0 }}, true
	case planner.OpIsNotNull:
		return cellTest{pass: func(f []byte) bool { return len(f) > 0 }}, true
	}
	if p.CaseInsensitive {
		return cellTest{}, false
	}
	var pass func(f []byte) bool
	switch k := s.kinds[fi[0]]; {
	case k == infer.KindInt || k == infer.KindIntWide:
		pass = orderedTest(p, parseInt64Bytes, litInt64)
	case k == infer.KindFloat:
		if p.Op != planner.OpIn && p.Op != planner.OpNotIn {
			pass = orderedTest(p, parseFloatValue, litFloat64)
		}
	case k.Textual():
		pass = stringTest(p)
	}
	return cellTest{pass: pass}, pass != nil
}

func litInt64(l *planner.Literal) (int64, bool) {
	v, ok := l.Value.(int64)
	return v, ok
}

// litFloat64 converts a float column's literal as the engine does.
func litFloat64(l *planner.Literal) (float64, bool) {
	switch v := l.Value.(type) {
	case float64:
		return v, true
	case int64:
		return float64(v), true
	}
	return 0, false
}

// operandsOf returns the literals of p in order (see engine operands): one
// for comparisons and string ops, the list for in/not_in, min and max (nil
// = open) for range; nil when p has none.
func operandsOf(p planner.Predicate) []*planner.Literal {
	switch p.Op {
	case planner.OpIn, planner.OpNotIn:
		out := make([]*planner.Literal, len(p.Values))
		for i := range p.Values {
			out[i] = &p.Values[i]
		}
		return out
	case planner.OpRange:
		return []*planner.Literal{p.Min, p.Max}
	}
	if p.Value == nil {
		return nil
	}
	return []*planner.Literal{p.Value}
}

// typedOperands converts p's operands with lit; ok is false when one does
// not convert (or p has none where it needs one).
func typedOperands[T any](p planner.Predicate, lit func(*planner.Literal) (T, bool)) (vals []T, open []bool, ok bool) {
	ls := operandsOf(p)
	if ls == nil && p.Op != planner.OpIn && p.Op != planner.OpNotIn {
		return nil, nil, false
	}
	vals, open = make([]T, len(ls)), make([]bool, len(ls))
	for i, l := range ls {
		if l == nil {
			open[i] = p.Op == planner.OpRange
			if !open[i] {
				return nil, nil, false
			}
			continue
		}
		if vals[i], ok = lit(l); !ok {
			return nil, nil, false
		}
	}
	return vals, open, true
}

// compare reports whether v op lit holds for a comparison op.
func compare[T cmp.Ordered](op planner.Op, v, lit T) bool {
	switch op {
	case planner.OpEq:
		return v == lit
	case planner.OpNeq:
		return v != lit
	case planner.OpLt:
		return v < lit
	case planner.OpLte:
		return v <= lit
	case planner.OpGt:
		return v > lit
	case planner.OpGte:
		return v >= lit
	}
	return false
}

// orderedTest is the test of a comparison, range, in or not_in predicate
// on values of type T (read from the cell by value); nil when p is none
// of those or its operands do not convert with lit.
func orderedTest[T cmp.Ordered](p planner.Predicate, value func(f []byte) (T, bool), lit func(*planner.Literal) (T, bool)) func(f []byte) bool {
	vals, open, ok := typedOperands(p, lit)
	if !ok {
		return nil
	}
	var test func(v T) bool
	switch p.Op {
	case planner.OpEq, planner.OpNeq, planner.OpLt, planner.OpLte, planner.OpGt, planner.OpGte:
		op, l := p.Op, vals[0]
		test = func(v T) bool { return compare(op, v, l) }
	case planner.OpRange:
		lo, hi, hasLo, hasHi := vals[0], vals[1], !open[0], !open[1]
		test = func(v T) bool { return (!hasLo || v >= lo) && (!hasHi || v <= hi) }
	case planner.OpIn, planner.OpNotIn:
		not := p.Op == planner.OpNotIn
		test = func(v T) bool { return slices.Contains(vals, v) != not }
	default:
		return nil
	}
	return func(f []byte) bool {
		if len(f) == 0 {
			return false
		}
		v, ok := value(f)
		return !ok || test(v) // a cell that does not parse is left to the builder
	}
}

// stringTest is the test of p on a string column (bytewise).
func stringTest(p planner.Predicate) func(f []byte) bool {
	str := func(l *planner.Literal) (string, bool) {
		v, ok := l.Value.(string)
		return v, ok
	}
	var match func(s, lit string) bool
	switch p.Op {
	case planner.OpContains:
		match = strings.Contains
	case planner.OpStartsWith:
		match = strings.HasPrefix
	case planner.OpEndsWith:
		match = strings.HasSuffix
	default:
		return orderedTest(p, func(f []byte) (string, bool) { return unsafeString(f), true }, str)
	}
	if p.Value == nil {
		return nil
	}
	lit, ok := str(p.Value)
	if !ok {
		return nil
	}
	return func(f []byte) bool { return len(f) > 0 && match(unsafeString(f), lit) }
}

// filterRows keeps the rows of spans (per scanned column, rows rows) that
// pass every test, compacting every column's spans in place; it returns
// the rows kept.
func filterRows(tests []rowTest, spans []colSpans, rows int, keep []bool, scratch *[]byte) int {
	keep = keep[:rows]
	for r := range keep {
		keep[r] = true
	}
	for _, t := range tests {
		for r := range rows {
			if !keep[r] {
				continue
			}
			ok := false
			for _, c := range t {
				if c.pass(spans[c.slot].at(r, scratch)) {
					ok = true
					break
				}
			}
			keep[r] = ok
		}
	}
	k := 0
	for r, ok := range keep {
		if !ok {
			continue
		}
		if k != r {
			for _, c := range spans {
				c.sp[2*k], c.sp[2*k+1] = c.sp[2*r], c.sp[2*r+1]
			}
		}
		k++
	}
	return k
}
