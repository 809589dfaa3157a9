package catalog

import (
	"cmp"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/quarrydb/quarry/planner"
)

// Filters pushed into Parquet scans (planner.FilterPushdowner): the
// parquet-go read path (parquet_go.go) decodes a batch's columns that
// predicates test, other than plain strings, first, tests them, and then
// decodes the other columns for the rows that passed only: a plain string
// column's values are copied for those rows alone (a free-text column
// under a numeric range costs its page decoding, not a copy of every
// value); its own predicates are tested on what was copied. Tests follow
// the engine (Go operators: NaN fails every comparison but neq; strings
// bytewise; a null fails everything but is_null); the engine applies the
// predicates again to what the scan returns. Row groups left to pqarrow,
// and files parquet-go does not read, are returned unfiltered.

var _ planner.FilterPushdowner = (*parquetSource)(nil)

// HandlesFilter implements planner.FilterPushdowner: is_null and
// is_not_null on a flat column; eq, neq, lt, lte, gt, gte and range on
// int64 and float64 columns; eq, neq, contains, starts_with and
// ends_with on string columns (not case-insensitive). Only columns whose
// stored type is the exposed one.
func (s *parquetSource) HandlesFilter(p planner.Predicate) bool {
	fi := s.schema.FieldIndices(p.Col)
	if p.Op == planner.OpAny || len(fi) != 1 || s.leaves == nil || s.leaves[fi[0]] < 0 ||
		!arrow.TypeEqual(s.stored.Field(fi[0]).Type, s.schema.Field(fi[0]).Type) {
		return false
	}
	return rowTestOf(p, s.stored.Field(fi[0]).Type) != nil
}

// rowTest narrows keep (one entry per row of a) to the rows of a that
// pass one predicate.
type rowTest func(a arrow.Array, keep []bool)

// rowTestOf compiles p for a column of type dt (nil: not handled).
func rowTestOf(p planner.Predicate, dt arrow.DataType) rowTest {
	switch p.Op {
	case planner.OpIsNull:
		return func(a arrow.Array, keep []bool) {
			for i := range keep {
				keep[i] = keep[i] && a.IsNull(i)
			}
		}
	case planner.OpIsNotNull:
		return func(a arrow.Array, keep []bool) {
			for i := range keep {
				keep[i] = keep[i] && a.IsValid(i)
			}
		}
	}
	if p.CaseInsensitive {
		return nil
	}
	switch dt.ID() {
	case arrow.INT64:
		if f := orderedPass[int64](p); f != nil {
			return func(a arrow.Array, keep []bool) { testValues(a, a.(*array.Int64).Int64Values(), f, keep) }
		}
	case arrow.FLOAT64:
		if f := orderedPass[float64](p); f != nil {
			return func(a arrow.Array, keep []bool) { testValues(a, a.(*array.Float64).Float64Values(), f, keep) }
		}
	case arrow.STRING:
		if f := stringPass(p); f != nil {
			return func(a arrow.Array, keep []bool) { testStrings(a, f, keep) }
		}
	}
	return nil
}

// orderedPass is the test of a comparison with literals of type T (nil
// when p is not one, or a literal is of another type): it narrows keep
// (one entry per value) by the values alone, each loop with its
// comparison inlined.
func orderedPass[T cmp.Ordered](p planner.Predicate) func(vals []T, keep []bool) {
	lit := func(l *planner.Literal) (T, bool) {
		if l == nil {
			var zero T
			return zero, false
		}
		v, ok := l.Value.(T)
		return v, ok
	}
	if p.Op == planner.OpRange {
		lo, hasLo := lit(p.Min)
		hi, hasHi := lit(p.Max)
		switch {
		case (p.Min != nil && !hasLo) || (p.Max != nil && !hasHi) || (!hasLo && !hasHi):
			return nil
		case !hasLo:
			return narrow(func(v T) bool { return v <= hi })
		case !hasHi:
			return narrow(func(v T) bool { return v >= lo })
		}
		return func(vals []T, keep []bool) {
			for i, v := range vals[:len(keep)] {
				keep[i] = keep[i] && v >= lo && v <= hi
			}
		}
	}
	x, ok := lit(p.Value)
	if !ok {
		return nil
	}
	switch p.Op {
	case planner.OpEq:
		return narrow(func(v T) bool { return v == x })
	case planner.OpNeq:
		return narrow(func(v T) bool { return v != x })
	case planner.OpLt:
		return narrow(func(v T) bool { return v < x })
	case planner.OpLte:
		return narrow(func(v T) bool { return v <= x })
	case planner.OpGt:
		return narrow(func(v T) bool { return v > x })
	case planner.OpGte:
		return narrow(func(v T) bool { return v >= x })
	}
	return nil
}

// narrow is the loop narrowing keep by f.
func narrow[T any](f func(T) bool) func(vals []T, keep []bool) {
	return func(vals []T, keep []bool) {
		for i, v := range vals[:len(keep)] {
			keep[i] = keep[i] && f(v)
		}
	}
}

// stringPass is the test of a string predicate (nil: not handled).
func stringPass(p planner.Predicate) func(string) bool {
	if p.Value == nil {
		return nil
	}
	x, ok := p.Value.Value.(string)
	if !ok {
		return nil
	}
	switch p.Op {
	case planner.OpEq:
		return func(v string) bool { return v == x }
	case planner.OpNeq:
		return func(v string) bool { return v != x }
	case planner.OpContains:
		return func(v string) bool { return strings.Contains(v, x) }
	case planner.OpStartsWith:
		return func(v string) bool { return strings.HasPrefix(v, x) }
	case planner.OpEndsWith:
		return func(v string) bool { return strings.HasSuffix(v, x) }
	}
	return nil
}

// testValues narrows keep by f over vals (a's values), then drops a's
// nulls.
func testValues[T any](a arrow.Array, vals []T, f func(vals []T, keep []bool), keep []bool) {
	f(vals, keep)
	if a.NullN() > 0 {
		for i := range keep {
			keep[i] = keep[i] && a.IsValid(i)
		}
	}
}

// testStrings narrows keep by f over a plain or dictionary-encoded string
// array (a dictionary entry is tested once).
func testStrings(a arrow.Array, f func(string) bool, keep []bool) {
	switch a := a.(type) {
	case *array.String:
		for i := range keep {
			keep[i] = keep[i] && a.IsValid(i) && f(a.Value(i))
		}
	case *array.Dictionary:
		dict := a.Dictionary().(*array.String)
		pass := make([]bool, dict.Len())
		for j := range pass {
			pass[j] = dict.IsValid(j) && f(dict.Value(j))
		}
		for i := range keep {
			keep[i] = keep[i] && a.IsValid(i) && pass[a.GetValueIndex(i)]
		}
	default: // not a type rowTestOf compiles for: keep every row
	}
}
