package zonemap

import (
	"math"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/quarrydb/quarry/planner"
)

func lit(v any) *planner.Literal { return &planner.Literal{Value: v} }

func pred(op planner.Op, v any) planner.Predicate {
	p := planner.Predicate{Op: op}
	switch op {
	case planner.OpIn:
		for _, x := range v.([]any) {
			p.Values = append(p.Values, planner.Literal{Value: x})
		}
	case planner.OpRange:
		b := v.([2]any)
		if b[0] != nil {
			p.Min = lit(b[0])
		}
		if b[1] != nil {
			p.Max = lit(b[1])
		}
	case planner.OpIsNull, planner.OpIsNotNull:
	default:
		p.Value = lit(v)
	}
	return p
}

// build makes an array of type dt from vals (nil = null).
func build(t *testing.T, mem memory.Allocator, dt arrow.DataType, vals ...any) arrow.Array {
	t.Helper()
	b := array.NewBuilder(mem, dt)
	defer b.Release()
	for _, v := range vals {
		if v == nil {
			b.AppendNull()
			continue
		}
		switch b := b.(type) {
		case *array.Int8Builder:
			b.Append(int8(v.(int)))
		case *array.Int64Builder:
			b.Append(int64(v.(int)))
		case *array.Uint64Builder:
			b.Append(v.(uint64))
		case *array.Float32Builder:
			b.Append(float32(v.(float64)))
		case *array.Float64Builder:
			b.Append(v.(float64))
		case *array.Date32Builder:
			b.Append(arrow.Date32(v.(int)))
		case *array.TimestampBuilder:
			b.Append(arrow.Timestamp(v.(int)))
		case *array.StringBuilder:
			b.Append(v.(string))
		case *array.BinaryDictionaryBuilder:
			if err := b.AppendString(v.(string)); err != nil {
				t.Fatal(err)
			}
		default:
			t.Fatalf("no builder for %s", dt)
		}
	}
	return b.NewArray()
}

// zoneOf is the zone of an array of vals, and the zone function of a
// batch of that one column.
func zoneOf(t *testing.T, mem memory.Allocator, dt arrow.DataType, vals []any) (*Zone, func(int) *Zone) {
	t.Helper()
	a := build(t, mem, dt, vals...)
	z := Of(a)
	a.Release()
	return &z, func(i int) *Zone {
		if i != 0 {
			t.Fatalf("zone of column %d", i)
		}
		return &z
	}
}

// TestCanMatch decides predicates from the zone of one batch; want is
// whether some row may match (false only when none does).
func TestCanMatch(t *testing.T) {
	nan := math.NaN()
	dict := &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int16, ValueType: arrow.BinaryTypes.String}
	tests := []struct {
		name string
		dt   arrow.DataType
		vals []any
		p    planner.Predicate
		want bool
	}{
		{"int eq inside", arrow.PrimitiveTypes.Int64, []any{1, 5, 9}, pred(planner.OpEq, int64(4)), true},
		{"int eq below", arrow.PrimitiveTypes.Int64, []any{1, 5, 9}, pred(planner.OpEq, int64(0)), false},
		{"int gt max", arrow.PrimitiveTypes.Int64, []any{1, 5, 9}, pred(planner.OpGt, int64(9)), false},
		{"int gte max", arrow.PrimitiveTypes.Int64, []any{1, 5, 9}, pred(planner.OpGte, int64(9)), true},
		{"int lt min", arrow.PrimitiveTypes.Int64, []any{1, 5, 9}, pred(planner.OpLt, int64(1)), false},
		{"int lte min", arrow.PrimitiveTypes.Int64, []any{1, 5, 9}, pred(planner.OpLte, int64(1)), true},
		{"int nulls left out", arrow.PrimitiveTypes.Int64, []any{nil, 5, nil}, pred(planner.OpLt, int64(5)), false},
		{"all null: no comparison holds", arrow.PrimitiveTypes.Int64, []any{nil, nil}, pred(planner.OpGte, int64(math.MinInt64)), false},
		{"all null: is_null", arrow.PrimitiveTypes.Int64, []any{nil, nil}, pred(planner.OpIsNull, nil), true},
		{"all null: is_not_null", arrow.PrimitiveTypes.Int64, []any{nil, nil}, pred(planner.OpIsNotNull, nil), false},
		{"no nulls: is_null", arrow.PrimitiveTypes.Int64, []any{1}, pred(planner.OpIsNull, nil), false},
		{"range overlap", arrow.PrimitiveTypes.Int64, []any{1, 9}, pred(planner.OpRange, [2]any{int64(9), int64(20)}), true},
		{"range above", arrow.PrimitiveTypes.Int64, []any{1, 9}, pred(planner.OpRange, [2]any{int64(10), nil}), false},
		{"range below", arrow.PrimitiveTypes.Int64, []any{1, 9}, pred(planner.OpRange, [2]any{nil, int64(0)}), false},
		{"range open", arrow.PrimitiveTypes.Int64, []any{1, 9}, pred(planner.OpRange, [2]any{nil, nil}), true},
		{"in miss", arrow.PrimitiveTypes.Int64, []any{1, 9}, pred(planner.OpIn, []any{int64(0), int64(10)}), false},
		{"in hit", arrow.PrimitiveTypes.Int64, []any{1, 9}, pred(planner.OpIn, []any{int64(0), int64(3)}), true},
		{"in empty", arrow.PrimitiveTypes.Int64, []any{1, 9}, pred(planner.OpIn, []any{}), false},
		{"int8 literal above the type", arrow.PrimitiveTypes.Int8, []any{-5, 100}, pred(planner.OpLt, int64(300)), true},
		{"int8 eq above the type", arrow.PrimitiveTypes.Int8, []any{-5, 127}, pred(planner.OpEq, int64(383)), false},
		{"uint64 huge values", arrow.PrimitiveTypes.Uint64, []any{uint64(math.MaxUint64)}, pred(planner.OpGt, int64(math.MaxInt64)), true},
		{"uint64 negative literal gt", arrow.PrimitiveTypes.Uint64, []any{uint64(0)}, pred(planner.OpGt, int64(-1)), true},
		{"uint64 negative literal lt", arrow.PrimitiveTypes.Uint64, []any{uint64(0)}, pred(planner.OpLt, int64(-1)), false},
		{"float NaN left out", arrow.PrimitiveTypes.Float64, []any{nan, 1.0, nan}, pred(planner.OpGt, 1.0), false},
		{"float all NaN", arrow.PrimitiveTypes.Float64, []any{nan, nan}, pred(planner.OpLte, math.Inf(1)), false},
		{"float all NaN is_not_null", arrow.PrimitiveTypes.Float64, []any{nan}, pred(planner.OpIsNotNull, nil), true},
		{"float NaN literal", arrow.PrimitiveTypes.Float64, []any{1.0, 2.0}, pred(planner.OpLte, nan), false},
		{"float NaN in list", arrow.PrimitiveTypes.Float64, []any{1.0, 2.0}, pred(planner.OpIn, []any{nan}), false},
		{"float -0 eq +0", arrow.PrimitiveTypes.Float64, []any{math.Copysign(0, -1)}, pred(planner.OpEq, 0.0), true},
		{"float int literal", arrow.PrimitiveTypes.Float64, []any{1.5}, pred(planner.OpGt, int64(1)), true},
		{"float inf", arrow.PrimitiveTypes.Float64, []any{math.Inf(1), 3.0}, pred(planner.OpGt, 1e308), true},
		{"float32 widened exactly", arrow.PrimitiveTypes.Float32, []any{0.1}, pred(planner.OpEq, 0.1), false},
		{"float32 widened eq", arrow.PrimitiveTypes.Float32, []any{0.1}, pred(planner.OpEq, float64(float32(0.1))), true},
		{"date32", arrow.FixedWidthTypes.Date32, []any{19000, 19010}, pred(planner.OpGt, int32(19010)), false},
		{"timestamp", &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "Europe/Paris"}, []any{100, 200}, pred(planner.OpGte, int64(200)), true},
		{"string", arrow.BinaryTypes.String, []any{"apple", "banana"}, pred(planner.OpGt, "banana"), false},
		{"string bytewise", arrow.BinaryTypes.String, []any{"apple", "banana"}, pred(planner.OpEq, "Apple"), false},
		{"string empty", arrow.BinaryTypes.String, []any{"", "b"}, pred(planner.OpLt, "a"), true},
		{"string case-insensitive not decided", arrow.BinaryTypes.String, []any{"apple"}, planner.Predicate{Op: planner.OpEq, Value: lit("APPLE"), CaseInsensitive: true}, true},
		{"string contains not decided", arrow.BinaryTypes.String, []any{"apple"}, pred(planner.OpContains, "zz"), true},
		{"neq not decided", arrow.PrimitiveTypes.Int64, []any{1}, pred(planner.OpNeq, int64(1)), true},
		{"dict used values only", dict, []any{"b", "c", nil}, pred(planner.OpEq, "c"), true},
		{"dict miss", dict, []any{"b", "c"}, pred(planner.OpLt, "b"), false},
		{"unknown literal type: not decided", arrow.PrimitiveTypes.Int64, []any{1}, pred(planner.OpEq, "1"), true},
		{"or group: one member may match", arrow.PrimitiveTypes.Int64, []any{1, 9},
			planner.Predicate{Op: planner.OpAny, Index: -1, Any: []planner.Predicate{pred(planner.OpLt, int64(0)), pred(planner.OpGt, int64(8))}}, true},
		{"or group: none may match", arrow.PrimitiveTypes.Int64, []any{1, 9},
			planner.Predicate{Op: planner.OpAny, Index: -1, Any: []planner.Predicate{pred(planner.OpLt, int64(0)), pred(planner.OpIsNull, nil)}}, false},
	}
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			z, zone := zoneOf(t, mem, tc.dt, tc.vals)
			if got := CanMatch(tc.p, zone); got != tc.want {
				t.Errorf("CanMatch = %v, want %v (zone %+v)", got, tc.want, z)
			}
		})
	}
}

// TestUsable lists what zones decide.
func TestUsable(t *testing.T) {
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "i", Type: arrow.PrimitiveTypes.Int32},
		{Name: "s", Type: arrow.BinaryTypes.String},
		{Name: "b", Type: arrow.FixedWidthTypes.Boolean},
		{Name: "d", Type: &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int16, ValueType: arrow.BinaryTypes.String}},
	}, nil)
	at := func(i int, op planner.Op) planner.Predicate { return planner.Predicate{Index: i, Op: op} }
	tests := []struct {
		p    planner.Predicate
		want bool
	}{
		{at(0, planner.OpRange), true},
		{at(0, planner.OpNeq), false},
		{at(1, planner.OpIn), true},
		{at(1, planner.OpStartsWith), false},
		{planner.Predicate{Index: 1, Op: planner.OpEq, CaseInsensitive: true}, false},
		{at(2, planner.OpEq), false},
		{at(2, planner.OpIsNull), true},
		{at(3, planner.OpLt), true},
		{at(4, planner.OpEq), false},
		{planner.Predicate{Op: planner.OpAny, Index: -1, Any: []planner.Predicate{at(0, planner.OpEq), at(3, planner.OpGt)}}, true},
		{planner.Predicate{Op: planner.OpAny, Index: -1, Any: []planner.Predicate{at(0, planner.OpEq), at(2, planner.OpGt)}}, false},
		{planner.Predicate{Op: planner.OpAny, Index: -1}, false},
	}
	for i, tc := range tests {
		if got := Usable(tc.p, schema); got != tc.want {
			t.Errorf("%d: Usable(%+v) = %v, want %v", i, tc.p, got, tc.want)
		}
	}
}

// TestAllMatch decides from the zone of one batch that every row matches;
// want is true only when each does.
func TestAllMatch(t *testing.T) {
	nan := math.NaN()
	i64 := arrow.PrimitiveTypes.Int64
	tests := []struct {
		name string
		dt   arrow.DataType
		vals []any
		p    planner.Predicate
		want bool
	}{
		{"range inside", i64, []any{3, 5, 7}, pred(planner.OpRange, [2]any{int64(3), int64(7)}), true},
		{"range cut", i64, []any{3, 5, 8}, pred(planner.OpRange, [2]any{int64(3), int64(7)}), false},
		{"range half open", i64, []any{3, 5}, pred(planner.OpRange, [2]any{int64(3), nil}), true},
		{"range open", i64, []any{3, 5}, pred(planner.OpRange, [2]any{nil, nil}), false},
		{"a null fails", i64, []any{3, nil}, pred(planner.OpGte, int64(0)), false},
		{"lt max", i64, []any{1, 9}, pred(planner.OpLt, int64(10)), true},
		{"lt at max", i64, []any{1, 9}, pred(planner.OpLt, int64(9)), false},
		{"lte at max", i64, []any{1, 9}, pred(planner.OpLte, int64(9)), true},
		{"gt min", i64, []any{1, 9}, pred(planner.OpGt, int64(0)), true},
		{"gt at min", i64, []any{1, 9}, pred(planner.OpGt, int64(1)), false},
		{"eq constant", i64, []any{4, 4}, pred(planner.OpEq, int64(4)), true},
		{"eq varying", i64, []any{4, 5}, pred(planner.OpEq, int64(4)), false},
		{"in constant", i64, []any{4, 4}, pred(planner.OpIn, []any{int64(1), int64(4)}), true},
		{"is_null all", i64, []any{nil, nil}, pred(planner.OpIsNull, nil), true},
		{"is_not_null none null", i64, []any{1, 2}, pred(planner.OpIsNotNull, nil), true},
		{"float NaN row fails", arrow.PrimitiveTypes.Float64, []any{1.0, nan}, pred(planner.OpGt, 0.0), false},
		{"float NaN literal", arrow.PrimitiveTypes.Float64, []any{1.0}, pred(planner.OpLte, nan), false},
		{"float inside", arrow.PrimitiveTypes.Float64, []any{1.0, 2.5}, pred(planner.OpLt, 3.0), true},
		{"unknown literal type", i64, []any{1}, pred(planner.OpEq, "1"), false},
		{"string", arrow.BinaryTypes.String, []any{"b", "c"}, pred(planner.OpGte, "b"), true},
		{"neq not decided", i64, []any{1}, pred(planner.OpNeq, int64(2)), false},
		{"or group: one member holds everywhere", i64, []any{1, 9},
			planner.Predicate{Op: planner.OpAny, Index: -1, Any: []planner.Predicate{pred(planner.OpLt, int64(0)), pred(planner.OpGt, int64(0))}}, true},
	}
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			z, zone := zoneOf(t, mem, tc.dt, tc.vals)
			if got := AllMatch(tc.p, zone); got != tc.want {
				t.Errorf("AllMatch = %v, want %v (zone %+v)", got, tc.want, z)
			}
			if tc.want && !CanMatch(tc.p, zone) {
				t.Errorf("AllMatch but not CanMatch")
			}
		})
	}
}
