package engine

import (
	"context"
	"errors"
	"fmt"
	"math"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/quarrydb/quarry/internal/qerr"
	"github.com/quarrydb/quarry/planner"
)

var (
	tInt8   = arrow.PrimitiveTypes.Int8
	tInt32  = arrow.PrimitiveTypes.Int32
	tInt64  = arrow.PrimitiveTypes.Int64
	tUint8  = arrow.PrimitiveTypes.Uint8
	tUint64 = arrow.PrimitiveTypes.Uint64
	tF32    = arrow.PrimitiveTypes.Float32
	tF64    = arrow.PrimitiveTypes.Float64
	tBool   = arrow.FixedWidthTypes.Boolean
	tStr    = arrow.BinaryTypes.String
	tLStr   = arrow.BinaryTypes.LargeString
	tDate   = arrow.FixedWidthTypes.Date32
	tTsMs   = &arrow.TimestampType{Unit: arrow.Millisecond, TimeZone: "UTC"}
)

func ids(v ...int64) [][]any {
	out := [][]any{}
	for _, x := range v {
		out = append(out, []any{x})
	}
	return out
}

func filterData() []tcol {
	nan := math.NaN()
	return []tcol{
		{"id", tInt64, vals(int64(0), int64(1), int64(2), int64(3), int64(4), int64(5), int64(6))},
		{"i64", tInt64, vals(int64(5), int64(-3), nil, int64(0), int64(9), int64(math.MaxInt64), int64(math.MinInt64))},
		{"i8", tInt8, vals(int64(5), int64(-3), nil, int64(0), int64(9), int64(127), int64(-128))},
		{"u64", tUint64, vals(uint64(5), uint64(3), nil, uint64(0), uint64(9), uint64(math.MaxUint64), uint64(1)<<63)},
		{"f64", tF64, vals(5.5, -3.0, nil, nan, 9.0, math.Inf(1), math.Copysign(0, -1))},
		{"f32", tF32, vals(float64(float32(0.1)), 2.5, nil, nan, -1.0, 0.0, 7.0)},
		{"b", tBool, vals(true, false, nil, true, false, true, false)},
		{"s", tStr, vals("apple", "banana", nil, "", "cherry", "Apple", "pineapple")},
		{"ls", tLStr, vals("apple", "banana", nil, "", "cherry", "Apple", "pineapple")},
		{"d", tDate, vals(int32(0), int32(19000), nil, int32(-1), int32(5), int32(100), int32(19000))},
		{"ts", tTsMs, vals(int64(1000), int64(-5), nil, int64(0), int64(1700000000000), int64(3), int64(2))},
	}
}

func TestFilterOps(t *testing.T) {
	all := []int64{0, 1, 3, 4, 5, 6} // every non-null row
	f32 := float64(float32(0.1))
	cases := []struct {
		col  string
		op   planner.Op
		v    []any
		want []int64
	}{
		{"i64", "eq", vals(int64(9)), []int64{4}},
		{"i64", "neq", vals(int64(9)), []int64{0, 1, 3, 5, 6}},
		{"i64", "lt", vals(int64(0)), []int64{1, 6}},
		{"i64", "lte", vals(int64(0)), []int64{1, 3, 6}},
		{"i64", "gt", vals(int64(5)), []int64{4, 5}},
		{"i64", "gte", vals(int64(5)), []int64{0, 4, 5}},
		{"i64", "eq", vals(int64(math.MaxInt64)), []int64{5}},
		{"i64", "gt", vals(int64(math.MaxInt64 - 1)), []int64{5}}, // exact, no float round trip
		{"i64", "in", vals(int64(5), int64(0), int64(math.MaxInt64), int64(42)), []int64{0, 3, 5}},
		{"i64", "in", vals(), []int64{}},
		{"i64", "in", vals(int64(1), int64(2), int64(3), int64(4), int64(5), int64(6), int64(7), int64(8), int64(9), int64(-3)), []int64{0, 1, 4}},
		{"i64", "range", vals(int64(-3), int64(5)), []int64{0, 1, 3}},
		{"i64", "range", vals(nil, int64(0)), []int64{1, 3, 6}},
		{"i64", "range", vals(int64(9), nil), []int64{4, 5}},
		{"i64", "range", vals(nil, nil), all},
		{"i64", "is_null", nil, []int64{2}},
		{"i64", "is_not_null", nil, all},
		{"i8", "eq", vals(int64(1000)), []int64{}},
		{"i8", "neq", vals(int64(1000)), all},
		{"i8", "lt", vals(int64(1000)), all},
		{"i8", "gt", vals(int64(-1000)), all},
		{"i8", "lt", vals(int64(-1000)), []int64{}},
		{"i8", "gte", vals(int64(127)), []int64{5}},
		{"i8", "lte", vals(int64(-128)), []int64{6}},
		{"i8", "in", vals(int64(127), int64(300), int64(-3)), []int64{1, 5}},
		{"i8", "range", vals(int64(-1000), int64(0)), []int64{1, 3, 6}},
		{"u64", "gt", vals(int64(math.MaxInt64)), []int64{5, 6}},
		{"u64", "lt", vals(int64(-1)), []int64{}},
		{"u64", "gt", vals(int64(-1)), all},
		{"u64", "eq", vals(int64(3)), []int64{1}},
		{"u64", "in", vals(int64(0), int64(-5)), []int64{3}},
		{"u64", "is_null", nil, []int64{2}},
		{"f64", "lt", vals(0.0), []int64{1}},
		{"f64", "lte", vals(0.0), []int64{1, 6}},
		{"f64", "eq", vals(0.0), []int64{6}},
		{"f64", "neq", vals(5.5), []int64{1, 3, 4, 5, 6}},
		{"f64", "gt", vals(5.5), []int64{4, 5}},
		{"f64", "gte", vals(-3.0), []int64{0, 1, 4, 5, 6}},
		{"f64", "in", vals(9.0, -3.0, math.NaN()), []int64{1, 4}},
		{"f64", "range", vals(0.0, 10.0), []int64{0, 4, 6}},
		{"f64", "is_null", nil, []int64{2}},
		{"f64", "is_not_null", nil, all},
		{"f32", "eq", vals(0.1), []int64{}},
		{"f32", "eq", vals(f32), []int64{0}},
		{"f32", "gt", vals(0.1), []int64{0, 1, 6}},
		{"f32", "lt", vals(0.0), []int64{4}},
		{"f32", "in", vals(f32, 7.0), []int64{0, 6}},
		{"f32", "range", vals(nil, 0.0), []int64{4, 5}},
		{"b", "eq", vals(true), []int64{0, 3, 5}},
		{"b", "neq", vals(true), []int64{1, 4, 6}},
		{"b", "lt", vals(true), []int64{1, 4, 6}},
		{"b", "in", vals(false), []int64{1, 4, 6}},
		{"b", "in", vals(false, true), all},
		{"b", "range", vals(true, nil), []int64{0, 3, 5}},
		{"b", "is_null", nil, []int64{2}},
		{"s", "eq", vals("apple"), []int64{0}},
		{"s", "neq", vals(""), []int64{0, 1, 4, 5, 6}},
		{"s", "lt", vals("b"), []int64{0, 3, 5}},
		{"s", "gte", vals("banana"), []int64{1, 4, 6}},
		{"s", "contains", vals("apple"), []int64{0, 6}},
		{"s", "contains", vals(""), all},
		{"s", "in", vals("cherry", "x", ""), []int64{3, 4}},
		{"s", "range", vals("a", "c"), []int64{0, 1}},
		{"s", "is_null", nil, []int64{2}},
		{"ls", "contains", vals("an"), []int64{1}},
		{"ls", "eq", vals("Apple"), []int64{5}},
		{"ls", "gt", vals("cherry"), []int64{6}},
		{"ls", "in", vals("apple", "pineapple"), []int64{0, 6}},
		{"d", "eq", vals(int32(19000)), []int64{1, 6}},
		{"d", "lt", vals(int32(0)), []int64{3}},
		{"d", "range", vals(int32(0), int32(100)), []int64{0, 4, 5}},
		{"d", "in", vals(int32(5), int32(-1)), []int64{3, 4}},
		{"ts", "gt", vals(int64(0)), []int64{0, 4, 5, 6}},
		{"ts", "in", vals(int64(3), int64(-5)), []int64{1, 5}},
		{"ts", "range", vals(int64(-5), int64(2)), []int64{1, 3, 6}},
		{"ts", "is_not_null", nil, all},
	}
	for _, tc := range cases {
		for _, pushed := range []bool{false, true} {
			name := fmt.Sprintf("%s_%s_%v_pushed=%v", tc.col, tc.op, tc.v, pushed)
			t.Run(name, func(t *testing.T) {
				alloc := newAlloc()
				defer alloc.AssertSize(t, 0)
				src := newSource(alloc, filterData())
				defer src.release()
				p := pred(src.schema, tc.col, tc.op, tc.v...)
				var plan planner.Node
				if pushed {
					s := scanOf(src.schema)
					s.Filters = []planner.Predicate{p}
					plan = s
				} else {
					plan = filterOf(scanOf(src.schema), p)
				}
				got, err := run(t, projectOf(plan, "id"), src, Options{Alloc: alloc, BatchSize: 3})
				if err != nil {
					t.Fatal(err)
				}
				if want := ids(tc.want...); !rowsEq(got, want) {
					t.Fatalf("got\n%swant\n%s", fmtRows(got), fmtRows(want))
				}
			})
		}
	}
}

func TestFilterAndProjectAllColumns(t *testing.T) {
	alloc := newAlloc()
	defer alloc.AssertSize(t, 0)
	src := newSource(alloc, filterData())
	defer src.release()
	s := src.schema
	plan := filterOf(scanOf(s), pred(s, "i64", "gte", int64(0)), pred(s, "b", "eq", true))
	got, err := run(t, plan, src, Options{Alloc: alloc, BatchSize: 2})
	if err != nil {
		t.Fatal(err)
	}
	data := filterData()
	var want [][]any
	for _, r := range []int{0, 3, 5} {
		row := make([]any, len(data))
		for c := range data {
			row[c] = data[c].vals[r]
		}
		want = append(want, row)
	}
	if !rowsEq(got, want) {
		t.Fatalf("got\n%swant\n%s", fmtRows(got), fmtRows(want))
	}
}

func TestFilterErrors(t *testing.T) {
	dec := &arrow.Decimal128Type{Precision: 10, Scale: 2}
	schema := arrow.NewSchema([]arrow.Field{{Name: "i", Type: tInt64}, {Name: "dec", Type: dec}}, nil)
	cases := []struct {
		name string
		p    planner.Predicate
		cat  error
		code string
	}{
		{"contains on int", planner.Predicate{Col: "i", Index: 0, Op: "contains", Value: lit(tInt64, int64(1))}, qerr.ErrUnsupported, qerr.CodeInvalidFilter},
		{"decimal eq", planner.Predicate{Col: "dec", Index: 1, Op: "eq", Value: lit(dec, int64(1))}, qerr.ErrUnsupported, qerr.CodeInvalidFilter},
		{"bad literal", planner.Predicate{Col: "i", Index: 0, Op: "eq", Value: lit(tInt64, "x")}, qerr.ErrInvalidArgument, qerr.CodeInvalidFilter},
		{"missing value", planner.Predicate{Col: "i", Index: 0, Op: "lt"}, qerr.ErrInvalidArgument, qerr.CodeInvalidFilter},
		{"unknown op", planner.Predicate{Col: "i", Index: 0, Op: "like", Value: lit(tInt64, int64(1))}, qerr.ErrInvalidArgument, qerr.CodeInvalidFilter},
		{"index out of range", planner.Predicate{Col: "x", Index: 5, Op: "is_null"}, qerr.ErrInternal, qerr.CodeInternal},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			src := &memSource{schema: schema}
			_, err := Execute(context.Background(), filterOf(scanOf(schema), tc.p), src, Options{})
			if !errors.Is(err, tc.cat) || qerr.Code(err) != tc.code {
				t.Fatalf("err = %v (code %q), want %v / %s", err, qerr.Code(err), tc.cat, tc.code)
			}
			if src.open.Load() != 0 {
				t.Fatal("source opened for an invalid plan")
			}
		})
	}
}

// decimal columns pass through is_null and projection (generic copy path).
func TestFilterPassThroughOtherTypes(t *testing.T) {
	alloc := newAlloc()
	defer alloc.AssertSize(t, 0)
	src := newSource(alloc, []tcol{{"i", tInt64, vals(int64(1), nil, int64(3), int64(4))}, {"s", tStr, vals("a", "b", nil, "d")}})
	defer src.release()
	s := src.schema
	got, err := run(t, filterOf(scanOf(s), pred(s, "i", "is_not_null"), pred(s, "s", "is_not_null")), src, Options{Alloc: alloc, BatchSize: 4})
	if err != nil {
		t.Fatal(err)
	}
	if want := [][]any{{int64(1), "a"}, {int64(4), "d"}}; !rowsEq(got, want) {
		t.Fatalf("got %v", got)
	}
}

func aggData() []tcol {
	nan := math.NaN()
	return []tcol{
		{"k", tStr, vals("a", "b", nil, "a", "b", nil, "c")},
		{"k2", tInt64, vals(int64(1), int64(1), int64(2), int64(2), int64(1), int64(2), int64(3))},
		{"v", tInt64, vals(int64(1), nil, int64(3), int64(4), nil, int64(6), nil)},
		{"f", tF64, vals(1.5, nan, nil, -2.0, nan, 2.0, nil)},
		{"s", tStr, vals("x", "y", nil, "z", "a", "m", nil)},
		{"b", tBool, vals(true, false, nil, false, nil, true, nil)},
		{"d", tDate, vals(int32(3), nil, int32(1), int32(7), nil, int32(2), nil)},
		{"u", tUint8, vals(int64(200), int64(100), nil, int64(250), int64(1), int64(2), nil)},
	}
}

func TestAggregate(t *testing.T) {
	nan := math.NaN()
	cases := []struct {
		name   string
		keys   []string
		aggs   []string
		filter bool // filter every row out first
		want   [][]any
	}{
		{"count by k", []string{"k"}, []string{"count:*", "count:v", "count:f"}, false, [][]any{
			{"a", int64(2), int64(2), int64(2)}, {"b", int64(2), int64(0), int64(2)}, {nil, int64(2), int64(2), int64(1)}, {"c", int64(1), int64(0), int64(0)}}},
		{"sum avg int by k", []string{"k"}, []string{"sum:v", "avg:v", "min:v", "max:v"}, false, [][]any{
			{"a", int64(5), 2.5, int64(1), int64(4)}, {"b", nil, nil, nil, nil}, {nil, int64(9), 4.5, int64(3), int64(6)}, {"c", nil, nil, nil, nil}}},
		{"float by k", []string{"k"}, []string{"sum:f", "avg:f", "min:f", "max:f"}, false, [][]any{
			{"a", -0.5, -0.25, -2.0, 1.5}, {"b", nan, nan, nan, nan}, {nil, 2.0, 2.0, 2.0, 2.0}, {"c", nil, nil, nil, nil}}},
		{"string bool date by k", []string{"k"}, []string{"min:s", "max:s", "min:b", "max:b", "min:d", "max:d"}, false, [][]any{
			{"a", "x", "z", false, true, int32(3), int32(7)}, {"b", "a", "y", false, false, nil, nil}, {nil, "m", "m", true, true, int32(1), int32(2)}, {"c", nil, nil, nil, nil, nil, nil}}},
		{"uint8 sum by k", []string{"k"}, []string{"sum:u", "avg:u", "min:u", "max:u"}, false, [][]any{
			{"a", int64(450), 225.0, int64(200), int64(250)}, {"b", int64(101), 50.5, int64(1), int64(100)}, {nil, int64(2), 2.0, int64(2), int64(2)}, {"c", nil, nil, nil, nil}}},
		{"no keys", nil, []string{"count:*", "count:v", "sum:v", "avg:v", "min:v", "max:v", "sum:f", "min:f", "max:f", "min:s", "max:s", "min:b", "max:b", "sum:u"}, false, [][]any{
			{int64(7), int64(4), int64(14), 3.5, int64(1), int64(6), nan, -2.0, 2.0, "a", "z", false, true, int64(553)}}},
		{"no keys empty input", nil, []string{"count:*", "count:v", "sum:v", "avg:v", "min:v", "max:v", "sum:f", "min:s", "max:b"}, true, [][]any{
			{int64(0), int64(0), nil, nil, nil, nil, nil, nil, nil}}},
		{"keys empty input", []string{"k"}, []string{"count:*", "sum:v"}, true, [][]any{}},
		{"two keys", []string{"k", "k2"}, []string{"count:*", "sum:v"}, false, [][]any{
			{"a", int64(1), int64(1), int64(1)}, {"b", int64(1), int64(2), nil}, {nil, int64(2), int64(2), int64(9)}, {"a", int64(2), int64(1), int64(4)}, {"c", int64(3), int64(1), nil}}},
		{"int key", []string{"k2"}, []string{"count:*", "max:s"}, false, [][]any{
			{int64(1), int64(3), "y"}, {int64(2), int64(3), "z"}, {int64(3), int64(1), nil}}},
		{"float key NaN one group", []string{"f"}, []string{"count:*"}, false, [][]any{
			{1.5, int64(1)}, {nan, int64(2)}, {nil, int64(2)}, {-2.0, int64(1)}, {2.0, int64(1)}}},
		{"bool key", []string{"b"}, []string{"count:*", "sum:v"}, false, [][]any{
			{true, int64(2), int64(7)}, {false, int64(2), int64(4)}, {nil, int64(3), int64(3)}}},
		{"date and bool keys", []string{"d", "b"}, []string{"count:*"}, false, [][]any{
			{int32(3), true, int64(1)}, {nil, false, int64(1)}, {int32(1), nil, int64(1)}, {int32(7), false, int64(1)}, {nil, nil, int64(2)}, {int32(2), true, int64(1)}}},
	}
	for _, tc := range cases {
		for _, bs := range []int{1, 3, 100} {
			t.Run(fmt.Sprintf("%s/bs=%d", tc.name, bs), func(t *testing.T) {
				alloc := newAlloc()
				defer alloc.AssertSize(t, 0)
				src := newSource(alloc, aggData())
				defer src.release()
				var in planner.Node = scanOf(src.schema)
				if tc.filter {
					in = filterOf(in, pred(src.schema, "k2", "gt", int64(100)))
				}
				got, err := run(t, aggOf(in, tc.keys, tc.aggs...), src, Options{Alloc: alloc, BatchSize: bs})
				if err != nil {
					t.Fatal(err)
				}
				if !rowsEq(got, tc.want) {
					t.Fatalf("got\n%swant\n%s", fmtRows(got), fmtRows(tc.want))
				}
			})
		}
	}
}

func TestAggregateZeroKeysNormalized(t *testing.T) {
	alloc := newAlloc()
	defer alloc.AssertSize(t, 0)
	src := newSource(alloc, []tcol{{"f", tF32, vals(math.Copysign(0, -1), 0.0, 1.0, 0.0)}})
	defer src.release()
	got, err := run(t, aggOf(scanOf(src.schema), []string{"f"}, "count:*"), src, Options{Alloc: alloc, BatchSize: 3})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0][1] != int64(3) || got[1][1] != int64(1) {
		t.Fatalf("got %v", got)
	}
}

func TestAggregateManyGroupsMultiBatchOutput(t *testing.T) {
	alloc := newAlloc()
	defer alloc.AssertSize(t, 0)
	n := 1000
	k, v := make([]any, n), make([]any, n)
	for i := range n {
		k[i] = fmt.Sprintf("g%03d", (i*7)%300)
		v[i] = int64(i)
	}
	src := newSource(alloc, []tcol{{"k", tStr, k}, {"v", tInt64, v}})
	defer src.release()
	got, err := run(t, aggOf(scanOf(src.schema), []string{"k"}, "sum:v", "count:*"), src, Options{Alloc: alloc, BatchSize: 64})
	if err != nil {
		t.Fatal(err)
	}
	sums := map[string]int64{}
	var order []string
	for i := range n {
		key := k[i].(string)
		if _, ok := sums[key]; !ok {
			order = append(order, key)
		}
		sums[key] += int64(i)
	}
	if len(got) != len(order) {
		t.Fatalf("got %d groups, want %d", len(got), len(order))
	}
	for i, key := range order {
		if got[i][0] != key || got[i][1] != sums[key] {
			t.Fatalf("group %d = %v, want %s %d", i, got[i], key, sums[key])
		}
	}
}

func TestSumOverflow(t *testing.T) {
	cases := []struct {
		name string
		col  tcol
	}{
		{"positive", tcol{"v", tInt64, vals(int64(math.MaxInt64), int64(1))}},
		{"negative", tcol{"v", tInt64, vals(int64(math.MinInt64), nil, int64(-1))}},
		{"uint64 above int64", tcol{"v", tUint64, vals(uint64(1) << 63)}},
		{"uint64 sum", tcol{"v", tUint64, vals(uint64(math.MaxInt64), uint64(1))}},
	}
	for _, tc := range cases {
		for _, keyed := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/keyed=%v", tc.name, keyed), func(t *testing.T) {
				alloc := newAlloc()
				defer alloc.AssertSize(t, 0)
				n := len(tc.col.vals)
				k := make([]any, n)
				for i := range k {
					k[i] = int64(1)
				}
				src := newSource(alloc, []tcol{{"k", tInt64, k}, tc.col})
				defer src.release()
				var keys []string
				if keyed {
					keys = []string{"k"}
				}
				_, err := run(t, aggOf(scanOf(src.schema), keys, "sum:v"), src, Options{Alloc: alloc, BatchSize: 1})
				if !errors.Is(err, qerr.ErrInvalidArgument) || qerr.Code(err) != qerr.CodeInvalidAggregate {
					t.Fatalf("err = %v", err)
				}
			})
		}
	}
}

func TestAggregateErrors(t *testing.T) {
	schema := schemaOf([]tcol{{"s", tStr, nil}, {"b", tBool, nil}, {"d", tDate, nil}})
	for _, spec := range []string{"sum:s", "avg:s", "sum:b", "avg:d", "sum:d"} {
		t.Run(spec, func(t *testing.T) {
			src := &memSource{schema: schema}
			_, err := Execute(context.Background(), aggOf(scanOf(schema), nil, spec), src, Options{})
			if !errors.Is(err, qerr.ErrUnsupported) || qerr.Code(err) != qerr.CodeInvalidAggregate {
				t.Fatalf("err = %v", err)
			}
		})
	}
	t.Run("output type mismatch", func(t *testing.T) {
		a := aggOf(scanOf(schema), nil, "count:*")
		a.Out = arrow.NewSchema([]arrow.Field{{Name: "count_all", Type: tInt32}}, nil)
		_, err := Execute(context.Background(), a, &memSource{schema: schema}, Options{})
		if !errors.Is(err, qerr.ErrInternal) {
			t.Fatalf("err = %v", err)
		}
	})
}

func TestDistinct(t *testing.T) {
	nan := math.NaN()
	cases := []struct {
		name string
		cols []tcol
		want [][]any
	}{
		{"int string", []tcol{
			{"a", tInt64, vals(int64(1), int64(1), nil, nil, int64(1), int64(2), int64(1), nil, nil)},
			{"s", tStr, vals("x", "x", "x", "x", nil, "y", "x", nil, nil)},
		}, [][]any{{int64(1), "x"}, {nil, "x"}, {int64(1), nil}, {int64(2), "y"}, {nil, nil}}},
		{"float", []tcol{{"f", tF64, vals(nan, nan, 0.0, math.Copysign(0, -1), nil, 1.0, nil)}},
			[][]any{{nan}, {0.0}, {nil}, {1.0}}},
		{"bool date", []tcol{
			{"b", tBool, vals(true, true, false, nil, nil, true)},
			{"d", tDate, vals(int32(1), int32(1), int32(1), nil, nil, int32(2))},
		}, [][]any{{true, int32(1)}, {false, int32(1)}, {nil, nil}, {true, int32(2)}}},
		{"large string", []tcol{{"s", tLStr, vals("a", "", nil, "", "a", "b")}},
			[][]any{{"a"}, {""}, {nil}, {"b"}}},
	}
	for _, tc := range cases {
		for _, bs := range []int{1, 2, 100} {
			t.Run(fmt.Sprintf("%s/bs=%d", tc.name, bs), func(t *testing.T) {
				alloc := newAlloc()
				defer alloc.AssertSize(t, 0)
				src := newSource(alloc, tc.cols)
				defer src.release()
				got, err := run(t, &planner.Distinct{Input: scanOf(src.schema)}, src, Options{Alloc: alloc, BatchSize: bs})
				if err != nil {
					t.Fatal(err)
				}
				if !rowsEq(got, tc.want) {
					t.Fatalf("got\n%swant\n%s", fmtRows(got), fmtRows(tc.want))
				}
			})
		}
	}
}

func TestSort(t *testing.T) {
	nan := math.NaN()
	cols := []tcol{
		{"id", tInt64, vals(int64(0), int64(1), int64(2), int64(3), int64(4), int64(5), int64(6), int64(7))},
		{"g", tStr, vals("b", "a", nil, "b", "a", "b", nil, "a")},
		{"v", tInt64, vals(int64(1), int64(2), int64(3), nil, int64(2), int64(1), int64(0), int64(5))},
		{"f", tF64, vals(3.0, nan, nil, -1.0, nan, 0.0, 2.0, nil)},
		{"b", tBool, vals(true, false, nil, true, false, true, nil, false)},
		{"ts", tTsMs, vals(int64(5), int64(5), int64(1), nil, int64(-2), int64(5), int64(0), int64(9))},
	}
	cases := []struct {
		keys []string
		want []int64
	}{
		{[]string{"g"}, []int64{1, 4, 7, 0, 3, 5, 2, 6}},       // stable
		{[]string{"-g"}, []int64{0, 3, 5, 1, 4, 7, 2, 6}},      // nulls last when desc
		{[]string{"g", "-v"}, []int64{7, 1, 4, 0, 5, 3, 2, 6}}, // v nulls last in desc
		{[]string{"-v", "g"}, []int64{7, 2, 1, 4, 0, 5, 6, 3}}, // null v last
		{[]string{"f"}, []int64{3, 5, 6, 0, 1, 4, 2, 7}},       // NaN after numbers, before nulls
		{[]string{"-f"}, []int64{0, 6, 5, 3, 1, 4, 2, 7}},      // same for desc
		{[]string{"b", "id"}, []int64{1, 4, 7, 0, 3, 5, 2, 6}}, // false < true
		{[]string{"-b", "-id"}, []int64{5, 3, 0, 7, 4, 1, 6, 2}},
		{[]string{"ts"}, []int64{4, 6, 2, 0, 1, 5, 7, 3}},
		{[]string{"-ts", "g"}, []int64{7, 1, 0, 5, 2, 6, 4, 3}},
	}
	for _, tc := range cases {
		for _, bs := range []int{1, 3, 100} {
			t.Run(fmt.Sprintf("%v/bs=%d", tc.keys, bs), func(t *testing.T) {
				alloc := newAlloc()
				defer alloc.AssertSize(t, 0)
				src := newSource(alloc, cols)
				defer src.release()
				got, err := run(t, projectOf(sortOf(scanOf(src.schema), tc.keys...), "id"), src, Options{Alloc: alloc, BatchSize: bs})
				if err != nil {
					t.Fatal(err)
				}
				if want := ids(tc.want...); !rowsEq(got, want) {
					t.Fatalf("got\n%swant\n%s", fmtRows(got), fmtRows(want))
				}
			})
		}
	}
}

func TestTopKMatchesFullSort(t *testing.T) {
	n := 300
	g, v, s, id := make([]any, n), make([]any, n), make([]any, n), make([]any, n)
	for i := range n {
		id[i] = int64(i)
		if i%11 != 0 {
			g[i] = int64((i * 37) % 13)
		}
		if i%7 != 0 {
			v[i] = float64((i*53)%17) / 4
		}
		s[i] = fmt.Sprintf("s%d", (i*31)%23)
	}
	cols := []tcol{{"id", tInt64, id}, {"g", tInt64, g}, {"v", tF64, v}, {"s", tStr, s}, {"sd", tDict, s}}
	keysets := [][]string{{"g"}, {"-g", "v"}, {"v", "-s"}, {"s"}, {"-sd", "g"}}
	for _, keys := range keysets {
		for _, lim := range [][2]int64{{0, 0}, {0, 1}, {0, 10}, {5, 10}, {290, 20}, {0, 500}, {3, -1}, {400, 5}} {
			for _, bs := range []int{2, 7, 64} {
				t.Run(fmt.Sprintf("%v/%v/bs=%d", keys, lim, bs), func(t *testing.T) {
					alloc := newAlloc()
					defer alloc.AssertSize(t, 0)
					src := newSource(alloc, cols)
					defer src.release()
					opts := Options{Alloc: alloc, BatchSize: bs}
					full, err := run(t, sortOf(scanOf(src.schema), keys...), src, opts)
					if err != nil {
						t.Fatal(err)
					}
					got, err := run(t, limitOf(sortOf(scanOf(src.schema), keys...), lim[0], lim[1]), src, opts)
					if err != nil {
						t.Fatal(err)
					}
					lo := min(lim[0], int64(len(full)))
					hi := int64(len(full))
					if lim[1] >= 0 {
						hi = min(lo+lim[1], hi)
					}
					if want := full[lo:hi]; !rowsEq(got, want) {
						t.Fatalf("got\n%swant\n%s", fmtRows(got), fmtRows(want))
					}
				})
			}
		}
	}
}

func seqSource(alloc memory.Allocator, n int) *memSource {
	v := make([]any, n)
	for i := range v {
		v[i] = int64(i)
	}
	return newSource(alloc, []tcol{{"i", tInt64, v}})
}

func TestLimitEarlyExit(t *testing.T) {
	cases := []struct {
		offset, count int64
		want          []int64
		served        int64
	}{
		{0, 5, []int64{0, 1, 2, 3, 4}, 2},
		{4, 2, []int64{4, 5}, 2},
		{0, 0, nil, 0},
		{98, -1, []int64{98, 99}, 34},
		{99, 3, []int64{99}, 34},
		{200, 3, nil, 34},
		{2, 1, []int64{2}, 1},
	}
	for _, tc := range cases {
		t.Run(fmt.Sprintf("%d,%d", tc.offset, tc.count), func(t *testing.T) {
			alloc := newAlloc()
			defer alloc.AssertSize(t, 0)
			src := seqSource(alloc, 100)
			defer src.release()
			r, err := Execute(context.Background(), limitOf(scanOf(src.schema), tc.offset, tc.count), src, Options{Alloc: alloc, BatchSize: 3})
			if err != nil {
				t.Fatal(err)
			}
			defer r.Release()
			var got []int64
			for r.Next() {
				b := r.RecordBatch()
				for i := range int(b.NumRows()) {
					got = append(got, cell(b.Column(0), i).(int64))
				}
				if int64(len(got)) == tc.count && src.open.Load() != 0 {
					t.Fatal("source still open after the limit was reached")
				}
			}
			if r.Err() != nil {
				t.Fatal(r.Err())
			}
			if fmt.Sprint(got) != fmt.Sprint(tc.want) && len(got)+len(tc.want) > 0 {
				t.Fatalf("got %v want %v", got, tc.want)
			}
			if s := src.served.Load(); s != tc.served {
				t.Fatalf("source served %d batches, want %d", s, tc.served)
			}
			if src.open.Load() != 0 {
				t.Fatal("source reader not released")
			}
		})
	}
}

func TestLimitAboveFilter(t *testing.T) {
	alloc := newAlloc()
	defer alloc.AssertSize(t, 0)
	src := seqSource(alloc, 100)
	defer src.release()
	plan := limitOf(filterOf(scanOf(src.schema), pred(src.schema, "i", "gte", int64(10))), 1, 3)
	got, err := run(t, plan, src, Options{Alloc: alloc, BatchSize: 4})
	if err != nil {
		t.Fatal(err)
	}
	if want := ids(11, 12, 13); !rowsEq(got, want) {
		t.Fatalf("got %v", got)
	}
	if s := src.served.Load(); s != 4 {
		t.Fatalf("served %d batches, want 4", s)
	}
}

func TestMemoryLimit(t *testing.T) {
	n := 20000
	k, s := make([]any, n), make([]any, n)
	for i := range n {
		k[i] = int64(i)
		s[i] = fmt.Sprintf("value-%06d", i)
	}
	cols := []tcol{{"k", tInt64, k}, {"s", tStr, s}}
	sch := schemaOf(cols)
	cases := []struct {
		name  string
		plan  planner.Node
		limit int64
	}{
		{"aggregate", aggOf(scanOf(sch), []string{"k"}, "count:*", "max:s"), 256 << 10},
		{"aggregate strings", aggOf(scanOf(sch), []string{"s"}, "count:*"), 256 << 10},
		{"sort", sortOf(scanOf(sch), "-s"), 256 << 10},
		{"distinct", &planner.Distinct{Input: scanOf(sch)}, 256 << 10},
		{"scan", scanOf(sch), 1000},
		{"top-k", limitOf(sortOf(scanOf(sch), "s"), 0, 15000), 256 << 10},
		{"filter", filterOf(scanOf(sch), pred(sch, "k", "gt", int64(2))), 40 << 10},
		{"count_distinct strings", aggOf(scanOf(sch), nil, "count_distinct:s"), 256 << 10},
		{"count_distinct ints", aggOf(scanOf(sch), nil, "count_distinct:k"), 64 << 10}, // (dense ids: 4 bytes a value)
		{"median", aggOf(scanOf(sch), nil, "median:k", "quantile:k:0.9"), 64 << 10},
		{"first last strings", aggOf(scanOf(sch), []string{"k"}, "first:s", "last:s"), 256 << 10},
		{"deduplicate", &planner.Deduplicate{Input: scanOf(sch), Columns: []string{"s"}, Indices: []int{1}}, 256 << 10},
		{"compute", computeOf(scanOf(sch), "k * 2 + k"), 40 << 10},
		{"list strings", moreAggOf(scanOf(sch), nil, "list:s"), 256 << 10},
		{"string_agg", moreAggOf(scanOf(sch), nil, "string_agg:s:,"), 256 << 10},
		{"mode", moreAggOf(scanOf(sch), nil, "mode:s"), 256 << 10},
		{"arg_max strings", moreAggOf(scanOf(sch), []string{"k"}, "arg_max:s:s"), 256 << 10},
		{"approx_count_distinct", moreAggOf(scanOf(sch), []string{"k"}, "approx_count_distinct:s"), 256 << 10},
		{"approx_quantile", moreAggOf(scanOf(sch), []string{"k"}, "approx_quantile:k"), 256 << 10},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			alloc := newAlloc()
			defer alloc.AssertSize(t, 0)
			src := newSource(alloc, cols)
			defer src.release()
			_, err := run(t, tc.plan, src, Options{Alloc: alloc, BatchSize: 1024, MemoryLimit: tc.limit})
			if !errors.Is(err, qerr.ErrLimitExceeded) || qerr.Code(err) != qerr.CodeResourceExhausted {
				t.Fatalf("err = %v", err)
			}
			if qerr.As(err).Hint == "" {
				t.Fatal("no hint")
			}
			if src.open.Load() != 0 {
				t.Fatal("source reader not released")
			}
			// The same plan runs within a generous limit.
			if _, err := run(t, tc.plan, src, Options{Alloc: alloc, BatchSize: 1024, MemoryLimit: 1 << 30}); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// The engine's own allocations fail before taking memory and leak nothing.
func TestHardAllocationLimit(t *testing.T) {
	alloc := newAlloc()
	defer alloc.AssertSize(t, 0)
	b := makeBatch(alloc, []tcol{{"s", tStr, vals("aaaaaaaaaa", "bbbbbbbbbbbbbbbbbbbb", nil, "c")}, {"i", tInt64, vals(int64(1), nil, int64(3), int64(4))}})
	defer b.Release()
	for _, limit := range []int64{1, 64, 128, 200, 300} {
		bud := &budget{limit: limit}
		hard := &hardAlloc{b: bud, mem: alloc}
		out, err := gatherBatch(hard, &softAlloc{b: bud, mem: alloc}, b.Schema(), b, []rowRef{{0, 3}, {0, 1}, {0, 0}})
		if err != nil {
			if !errors.Is(err, qerr.ErrLimitExceeded) {
				t.Fatalf("limit %d: %v", limit, err)
			}
			if bud.live.Load() != 0 {
				t.Fatalf("limit %d: %d bytes still counted", limit, bud.live.Load())
			}
			continue
		}
		if bud.live.Load() > limit {
			t.Fatalf("limit %d: live %d", limit, bud.live.Load())
		}
		out.Release()
	}
}

func TestCancellation(t *testing.T) {
	sch := schemaOf([]tcol{{"i", tInt64, nil}})
	plans := map[string]planner.Node{
		"scan":      scanOf(sch),
		"filter":    filterOf(scanOf(sch), pred(sch, "i", "gte", int64(0))),
		"sort":      sortOf(scanOf(sch), "-i"),
		"top-k":     limitOf(sortOf(scanOf(sch), "-i"), 0, 5),
		"aggregate": aggOf(scanOf(sch), []string{"i"}, "count:*"),
		"distinct":  &planner.Distinct{Input: scanOf(sch)},
		"limit":     limitOf(scanOf(sch), 1, 50),
		"compute":   computeOf(scanOf(sch), "i * 2 AS j"),
		"dedup":     &planner.Deduplicate{Input: scanOf(sch), Columns: []string{"i"}, Indices: []int{0}},
		"median":    aggOf(scanOf(sch), []string{"i"}, "median:i", "count_distinct:i"),
	}
	for name, plan := range plans {
		t.Run(name, func(t *testing.T) {
			alloc := newAlloc()
			defer alloc.AssertSize(t, 0)
			src := seqSource(alloc, 100)
			defer src.release()
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			src.onBatch = func(i int) {
				if i == 5 {
					cancel()
				}
			}
			r, err := Execute(ctx, plan, src, Options{Alloc: alloc, BatchSize: 3})
			if err != nil {
				t.Fatal(err)
			}
			_, err = drain(t, r)
			if !errors.Is(err, context.Canceled) {
				t.Fatalf("err = %v, want context.Canceled", err)
			}
			if qerr.Code(err) != qerr.CodeCancelled {
				t.Fatalf("code = %q", qerr.Code(err))
			}
			if src.open.Load() != 0 {
				t.Fatal("source reader not released")
			}
			if s := src.served.Load(); s > 6 {
				t.Fatalf("source served %d batches after cancellation", s)
			}
		})
	}
}

func TestCancelBetweenBatchesAndEarlyRelease(t *testing.T) {
	alloc := newAlloc()
	defer alloc.AssertSize(t, 0)
	src := seqSource(alloc, 100)
	defer src.release()
	ctx, cancel := context.WithCancel(context.Background())
	r, err := Execute(ctx, sortOf(scanOf(src.schema), "-i"), src, Options{Alloc: alloc, BatchSize: 10})
	if err != nil {
		t.Fatal(err)
	}
	if !r.Next() {
		t.Fatal(r.Err())
	}
	cancel()
	if r.Next() {
		t.Fatal("Next after cancel")
	}
	if !errors.Is(r.Err(), context.Canceled) {
		t.Fatalf("err = %v", r.Err())
	}
	r.Release()

	// Releasing a reader mid-stream frees everything.
	r, err = Execute(context.Background(), aggOf(scanOf(src.schema), []string{"i"}, "count:*"), src, Options{Alloc: alloc, BatchSize: 10})
	if err != nil {
		t.Fatal(err)
	}
	if !r.Next() {
		t.Fatal(r.Err())
	}
	r.Retain()
	r.Release()
	r.Release()
	if src.open.Load() != 0 {
		t.Fatal("source reader not released")
	}

	// A context cancelled before Execute fails at once.
	if _, err := Execute(ctx, scanOf(src.schema), src, Options{}); !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v", err)
	}
}

type bogusNode struct{}

func (bogusNode) Schema() *arrow.Schema    { return arrow.NewSchema(nil, nil) }
func (bogusNode) Children() []planner.Node { return nil }
func (bogusNode) Describe() string         { return "Bogus" }
func (b bogusNode) WithChildren(c ...planner.Node) (planner.Node, error) {
	return b, planner.CheckChildren(b, 0, c)
}

// wrapNode is a single-input node type the engine has no operator for.
type wrapNode struct{ in planner.Node }

func (w wrapNode) Schema() *arrow.Schema    { return w.in.Schema() }
func (w wrapNode) Children() []planner.Node { return []planner.Node{w.in} }
func (wrapNode) Describe() string           { return "Wrap" }
func (w wrapNode) WithChildren(c ...planner.Node) (planner.Node, error) {
	if err := planner.CheckChildren(w, 1, c); err != nil {
		return nil, err
	}
	return wrapNode{in: c[0]}, nil
}

func TestPlanShapeErrors(t *testing.T) {
	sch := schemaOf([]tcol{{"i", tInt64, nil}})
	cases := map[string]planner.Node{
		"nil plan":          nil,
		"nil input":         &planner.Filter{},
		"typed nil":         (*planner.Scan)(nil),
		"unknown node":      bogusNode{},
		"unknown over scan": &planner.Limit{Input: wrapNode{in: scanOf(sch)}, Count: 1},
		"nil child":         wrapNode{},
		"no scan":           &planner.Distinct{Input: bogusNode{}},
		"project bad index": &planner.Project{Input: scanOf(sch), Indices: []int{3}, Out: sch},
		"sort bad index":    &planner.Sort{Input: scanOf(sch), Keys: []planner.SortKey{{Col: "x", Index: 2}}},
		"agg bad key":       &planner.Aggregate{Input: scanOf(sch), GroupIdx: []int{4}, Out: sch},
		"scan schema":       &planner.Scan{Dataset: "t", Out: schemaOf([]tcol{{"i", tStr, nil}})},
	}
	for name, plan := range cases {
		t.Run(name, func(t *testing.T) {
			alloc := newAlloc()
			defer alloc.AssertSize(t, 0)
			src := seqSource(alloc, 10)
			defer src.release()
			_, err := Execute(context.Background(), plan, src, Options{Alloc: alloc})
			if !errors.Is(err, qerr.ErrInternal) || qerr.Code(err) != qerr.CodeInternal {
				t.Fatalf("err = %v", err)
			}
			if src.open.Load() != 0 {
				t.Fatal("source reader not released")
			}
		})
	}
	t.Run("no source", func(t *testing.T) {
		if _, err := Execute(context.Background(), scanOf(sch), nil, Options{}); !errors.Is(err, qerr.ErrInternal) {
			t.Fatalf("err = %v", err)
		}
	})
	t.Run("sort on decimal", func(t *testing.T) {
		dec := arrow.NewSchema([]arrow.Field{{Name: "d", Type: &arrow.Decimal128Type{Precision: 5, Scale: 1}}}, nil)
		_, err := Execute(context.Background(), sortOf(scanOf(dec), "d"), &memSource{schema: dec}, Options{})
		if !errors.Is(err, qerr.ErrUnsupported) {
			t.Fatalf("err = %v", err)
		}
	})
}

func TestSourceErrorsAndPanics(t *testing.T) {
	alloc := newAlloc()
	defer alloc.AssertSize(t, 0)
	src := seqSource(alloc, 30)
	defer src.release()
	src.onBatch = func(i int) {
		if i == 2 {
			panic("boom")
		}
	}
	r, err := Execute(context.Background(), sortOf(scanOf(src.schema), "i"), src, Options{Alloc: alloc, BatchSize: 4})
	if err != nil {
		t.Fatal(err)
	}
	_, err = drain(t, r)
	if !errors.Is(err, qerr.ErrInternal) {
		t.Fatalf("err = %v", err)
	}
	if src.open.Load() != 0 {
		t.Fatal("source reader not released")
	}
}
