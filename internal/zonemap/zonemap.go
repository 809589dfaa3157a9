// Package zonemap keeps per-batch statistics of a column (a zone: row and
// null counts, minimum and maximum) and decides from them whether any row
// of the batch can satisfy a planner.Predicate, so scans can skip batches
// that cannot match (planner.Scan.ZoneFilters).
//
// The decision is exact with respect to the engine's predicate semantics:
// CanMatch returns false only when the engine would reject every row of
// the batch. Null rows fail every predicate but is_null; NaN fails every
// comparison (Go/IEEE operators) and is left out of a float zone's
// minimum and maximum; integers compare mathematically (a literal outside
// the column type's range matches as the engine's constant outcome does;
// an operand the planner holds as a planner.Number, beyond int64 or
// fractional, is not decided: nothing is skipped for it); float32 values
// compare as float64; dates and timestamps compare as their stored
// integers (the planner coerces literals to the column's unit); strings
// compare bytewise. Case-insensitive string predicates and the ops without
// a monotone test (neq, not_in, contains, regex, ...) are not used (Usable
// reports false). A dictionary-encoded string zone bounds the dictionary
// values the batch's indices use.
package zonemap

import (
	"cmp"
	"math"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/quarrydb/quarry/planner"
)

// kind is what a Zone's minimum and maximum hold.
type kind uint8

const (
	kindNone   kind = iota // no value statistics (unsupported type)
	kindInt                // signed integers, date32, timestamps
	kindUint               // unsigned integers
	kindFloat              // float32 (widened), float64
	kindString             // string, large_string, dictionary of either
)

// Zone is the statistics of one column over one batch of rows.
type Zone struct {
	// Rows and Nulls count the batch's rows and its null rows (validity
	// bitmap; for a dictionary array, null indices).
	Rows, Nulls int64
	kind        kind
	// any reports at least one non-null value (not NaN) in min..max.
	any bool
	// unordered counts the valid rows no comparison holds for (NaN), or
	// is 1 when such rows may exist (a dictionary with null values).
	unordered  int64
	imin, imax int64
	umin, umax uint64
	fmin, fmax float64
	smin, smax string
}

// IntRange returns the least and greatest non-null value of a zone of
// signed integers, dates (days) or timestamps (the type's unit): ok is
// false for other types, values false when the zone has no non-null value.
func (z Zone) IntRange() (lo, hi int64, values, ok bool) {
	if z.kind != kindInt {
		return 0, 0, false, false
	}
	return z.imin, z.imax, z.any, true
}

// Of computes the zone of a. Strings are copied: the zone does not keep a
// reference to a's buffers.
func Of(a arrow.Array) Zone {
	z := Zone{Rows: int64(a.Len()), Nulls: int64(a.NullN())}
	switch a := a.(type) {
	case *array.Int8:
		signedZone(&z, a, a.Int8Values())
	case *array.Int16:
		signedZone(&z, a, a.Int16Values())
	case *array.Int32:
		signedZone(&z, a, a.Int32Values())
	case *array.Int64:
		signedZone(&z, a, a.Int64Values())
	case *array.Date32:
		signedZone(&z, a, a.Date32Values())
	case *array.Timestamp:
		signedZone(&z, a, a.TimestampValues())
	case *array.Uint8:
		unsignedZone(&z, a, a.Uint8Values())
	case *array.Uint16:
		unsignedZone(&z, a, a.Uint16Values())
	case *array.Uint32:
		unsignedZone(&z, a, a.Uint32Values())
	case *array.Uint64:
		unsignedZone(&z, a, a.Uint64Values())
	case *array.Float32:
		floatZone(&z, a, a.Float32Values())
	case *array.Float64:
		floatZone(&z, a, a.Float64Values())
	case *array.String:
		stringZone(&z, a.Len(), a.IsValid, a.Value)
	case *array.LargeString:
		stringZone(&z, a.Len(), a.IsValid, a.Value)
	case *array.Dictionary:
		dictZone(&z, a)
	}
	return z
}

// valid returns the row filter of a: nil when it has no nulls.
func valid(a arrow.Array) func(int) bool {
	if a.NullN() == 0 {
		return nil
	}
	return a.IsValid
}

func signedZone[T int8 | int16 | int32 | int64 | arrow.Date32 | arrow.Timestamp](z *Zone, a arrow.Array, vs []T) {
	z.kind = kindInt
	ok := valid(a)
	for i, v := range vs {
		if ok != nil && !ok(i) {
			continue
		}
		x := int64(v)
		if !z.any {
			z.imin, z.imax, z.any = x, x, true
			continue
		}
		z.imin, z.imax = min(z.imin, x), max(z.imax, x)
	}
}

func unsignedZone[T uint8 | uint16 | uint32 | uint64](z *Zone, a arrow.Array, vs []T) {
	z.kind = kindUint
	ok := valid(a)
	for i, v := range vs {
		if ok != nil && !ok(i) {
			continue
		}
		x := uint64(v)
		if !z.any {
			z.umin, z.umax, z.any = x, x, true
			continue
		}
		z.umin, z.umax = min(z.umin, x), max(z.umax, x)
	}
}

func floatZone[T float32 | float64](z *Zone, a arrow.Array, vs []T) {
	z.kind = kindFloat
	ok := valid(a)
	for i, v := range vs {
		if ok != nil && !ok(i) {
			continue
		}
		if v != v { // NaN fails every comparison
			z.unordered++
			continue
		}
		x := float64(v)
		if !z.any {
			z.fmin, z.fmax, z.any = x, x, true
			continue
		}
		// -0 and +0 compare equal: either may bound the zone.
		if x < z.fmin {
			z.fmin = x
		}
		if x > z.fmax {
			z.fmax = x
		}
	}
}

func stringZone(z *Zone, n int, ok func(int) bool, value func(int) string) {
	z.kind = kindString
	for i := range n {
		if !ok(i) {
			continue
		}
		z.addString(value(i))
	}
	z.smin, z.smax = strings.Clone(z.smin), strings.Clone(z.smax)
}

func (z *Zone) addString(s string) {
	if !z.any {
		z.smin, z.smax, z.any = s, s, true
		return
	}
	if s < z.smin {
		z.smin = s
	}
	if s > z.smax {
		z.smax = s
	}
}

// dictZone bounds the dictionary values that a's valid indices use.
func dictZone(z *Zone, a *array.Dictionary) {
	var value func(int) string
	switch d := a.Dictionary().(type) {
	case *array.String:
		value = d.Value
	case *array.LargeString:
		value = d.Value
	default:
		return
	}
	z.kind = kindString
	if a.Dictionary().NullN() > 0 {
		z.unordered = 1
	}
	ok := valid(a)
	if a.Dictionary().Len() > 2*a.Len() { // a dictionary shared by many arrays (the cache's): read the rows' values
		for i := range a.Len() {
			if ok == nil || ok(i) {
				z.addString(value(a.GetValueIndex(i)))
			}
		}
		z.smin, z.smax = strings.Clone(z.smin), strings.Clone(z.smax)
		return
	}
	used := make([]bool, a.Dictionary().Len())
	switch idx := a.Indices().(type) {
	case *array.Int16: // the cache's CSV dictionaries
		for i, c := range idx.Int16Values() {
			if ok == nil || ok(i) {
				used[c] = true
			}
		}
	default:
		for i := range a.Len() {
			if ok == nil || ok(i) {
				used[a.GetValueIndex(i)] = true
			}
		}
	}
	for c, u := range used {
		if u {
			z.addString(value(c))
		}
	}
	z.smin, z.smax = strings.Clone(z.smin), strings.Clone(z.smax)
}

// valueOps are the ops CanMatch decides from a zone's minimum and maximum.
var valueOps = map[planner.Op]bool{
	planner.OpEq: true, planner.OpLt: true, planner.OpLte: true, planner.OpGt: true,
	planner.OpGte: true, planner.OpRange: true, planner.OpIn: true,
}

// Usable reports whether CanMatch can decide p (over a batch of schema in)
// from zones: is_null and is_not_null on any column; eq, lt, lte, gt, gte,
// range and in (not case-insensitive) on integer, float, date32,
// timestamp, string and dictionary-encoded string columns; an OR group
// whose members all are.
func Usable(p planner.Predicate, in *arrow.Schema) bool {
	if p.Op == planner.OpAny {
		if len(p.Any) == 0 {
			return false
		}
		for _, m := range p.Any {
			if m.Op == planner.OpAny || !Usable(m, in) {
				return false
			}
		}
		return true
	}
	if p.Index < 0 || p.Index >= in.NumFields() {
		return false
	}
	if p.Op == planner.OpIsNull || p.Op == planner.OpIsNotNull {
		return true
	}
	return valueOps[p.Op] && !p.CaseInsensitive && kindOf(in.Field(p.Index).Type) != kindNone
}

// kindOf is the zone kind Of computes for arrays of type t.
func kindOf(t arrow.DataType) kind {
	switch t.ID() {
	case arrow.INT8, arrow.INT16, arrow.INT32, arrow.INT64, arrow.DATE32, arrow.TIMESTAMP:
		return kindInt
	case arrow.UINT8, arrow.UINT16, arrow.UINT32, arrow.UINT64:
		return kindUint
	case arrow.FLOAT32, arrow.FLOAT64:
		return kindFloat
	case arrow.STRING, arrow.LARGE_STRING:
		return kindString
	}
	if planner.IsDictString(t) {
		return kindString
	}
	return kindNone
}

// CanMatch reports whether some row of a batch may satisfy p, given the
// zones of the batch's columns (zone(i) for column index i; nil when
// unknown). It returns false only when no row can.
func CanMatch(p planner.Predicate, zone func(int) *Zone) bool {
	if p.Op == planner.OpAny {
		for _, m := range p.Any {
			if CanMatch(m, zone) {
				return true
			}
		}
		return len(p.Any) == 0
	}
	z := zone(p.Index)
	if z == nil {
		return true
	}
	switch p.Op {
	case planner.OpIsNull:
		return z.Nulls > 0
	case planner.OpIsNotNull:
		return z.Nulls < z.Rows
	}
	if !valueOps[p.Op] || p.CaseInsensitive || z.kind == kindNone {
		return true
	}
	if !z.any { // every row is null (or NaN): no comparison holds
		return false
	}
	switch p.Op {
	case planner.OpEq:
		return z.holds(p.Value, lower|equal, true) && z.holds(p.Value, higher|equal, false)
	case planner.OpLt: // some v < lit: min < lit
		return z.holds(p.Value, lower, true)
	case planner.OpLte:
		return z.holds(p.Value, lower|equal, true)
	case planner.OpGt:
		return z.holds(p.Value, higher, false)
	case planner.OpGte:
		return z.holds(p.Value, higher|equal, false)
	case planner.OpRange:
		return (p.Min == nil || z.holds(p.Min, higher|equal, false)) && (p.Max == nil || z.holds(p.Max, lower|equal, true))
	case planner.OpIn:
		for i := range p.Values {
			l := &p.Values[i]
			if z.holds(l, lower|equal, true) && z.holds(l, higher|equal, false) {
				return true
			}
		}
		return false
	}
	return true
}

// AllMatch reports whether every row of a batch satisfies p, given the
// zones of the batch's columns (as for CanMatch). It returns true only
// when the engine would keep every row; false means "not known".
func AllMatch(p planner.Predicate, zone func(int) *Zone) bool {
	if p.Op == planner.OpAny {
		for _, m := range p.Any {
			if AllMatch(m, zone) {
				return true
			}
		}
		return false
	}
	z := zone(p.Index)
	if z == nil {
		return false
	}
	switch p.Op {
	case planner.OpIsNull:
		return z.Nulls == z.Rows
	case planner.OpIsNotNull:
		return z.Nulls == 0
	}
	if !valueOps[p.Op] || p.CaseInsensitive || z.kind == kindNone || !z.any || z.Nulls > 0 || z.unordered > 0 {
		return false
	}
	switch p.Op {
	case planner.OpEq:
		return z.sure(p.Value, equal, true) && z.sure(p.Value, equal, false)
	case planner.OpLt: // every v < lit: max < lit
		return z.sure(p.Value, lower, false)
	case planner.OpLte:
		return z.sure(p.Value, lower|equal, false)
	case planner.OpGt:
		return z.sure(p.Value, higher, true)
	case planner.OpGte:
		return z.sure(p.Value, higher|equal, true)
	case planner.OpRange:
		return (p.Min != nil || p.Max != nil) &&
			(p.Min == nil || z.sure(p.Min, higher|equal, true)) && (p.Max == nil || z.sure(p.Max, lower|equal, false))
	case planner.OpIn:
		for i := range p.Values {
			if l := &p.Values[i]; z.sure(l, equal, true) && z.sure(l, equal, false) {
				return true
			}
		}
	}
	return false
}

// Outcomes of comparing a zone bound with a literal.
const (
	lower  = 1 << iota // bound < literal
	equal              // bound == literal
	higher             // bound > literal
)

// holds reports whether the zone's minimum (atMin) or maximum compares
// with l as one of want (a set of lower, equal, higher). A literal of a
// type the engine does not accept for the column gives true (the engine
// reports the error; nothing is skipped); a NaN literal gives false (every
// comparison with NaN is false).
func (z *Zone) holds(l *planner.Literal, want int, atMin bool) bool {
	if l == nil {
		return true
	}
	c, st := z.compare(l, atMin)
	switch st {
	case undecided:
		return true
	case never:
		return false
	}
	return c&want != 0
}

// sure is holds when the comparison is decided: it reports false for a
// literal the zone cannot compare.
func (z *Zone) sure(l *planner.Literal, want int, atMin bool) bool {
	if l == nil {
		return false
	}
	c, st := z.compare(l, atMin)
	return st == decided && c&want != 0
}

// How a zone bound compares with a literal.
const (
	decided   = iota // the outcome is one of lower, equal, higher
	undecided        // a literal the zone cannot compare with
	never            // no comparison with the literal holds (NaN)
)

// compare compares the zone's minimum (atMin) or maximum with l: the
// outcome (lower, equal or higher) and whether it is decided.
func (z *Zone) compare(l *planner.Literal, atMin bool) (int, int) {
	var c int
	switch z.kind {
	case kindInt, kindUint:
		v, ok := litInt(l.Value)
		if !ok {
			return 0, undecided
		}
		switch {
		case z.kind == kindInt:
			c = cmp.Compare(pick(atMin, z.imin, z.imax), v)
		case v < 0: // every unsigned value is above a negative literal
			c = 1
		default:
			c = cmp.Compare(pick(atMin, z.umin, z.umax), uint64(v))
		}
	case kindFloat:
		v, ok := litFloat(l.Value)
		if !ok {
			return 0, undecided
		}
		if math.IsNaN(v) {
			return 0, never
		}
		c = cmp.Compare(pick(atMin, z.fmin, z.fmax), v) // bounds are never NaN
	case kindString:
		v, ok := l.Value.(string)
		if !ok {
			return 0, undecided
		}
		c = strings.Compare(pick(atMin, z.smin, z.smax), v)
	default:
		return 0, undecided
	}
	switch {
	case c < 0:
		return lower, decided
	case c > 0:
		return higher, decided
	}
	return equal, decided
}

func pick[T any](first bool, a, b T) T {
	if first {
		return a
	}
	return b
}

// litInt converts an integer literal as the engine does for integer,
// date32 and timestamp columns.
func litInt(v any) (int64, bool) {
	switch v := v.(type) {
	case int64:
		return v, true
	case int32:
		return int64(v), true
	case int:
		return int64(v), true
	case int16:
		return int64(v), true
	case int8:
		return int64(v), true
	case uint8:
		return int64(v), true
	case uint16:
		return int64(v), true
	case uint32:
		return int64(v), true
	case uint64:
		return int64(v), v <= math.MaxInt64
	case arrow.Date32:
		return int64(v), true
	case arrow.Timestamp:
		return int64(v), true
	}
	return 0, false
}

// litFloat converts a literal as the engine does for float columns.
func litFloat(v any) (float64, bool) {
	switch v := v.(type) {
	case float64:
		return v, true
	case float32:
		return float64(v), true
	case int64:
		return float64(v), true
	case int:
		return float64(v), true
	}
	return 0, false
}
