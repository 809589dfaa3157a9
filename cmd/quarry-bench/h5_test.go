package main

import (
	"encoding/json"
	"math"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/quarrydb/quarry/catalog/hdf5"
)

func float64s(alloc memory.Allocator, vals []float64) arrow.Array {
	b := array.NewFloat64Builder(alloc)
	defer b.Release()
	b.AppendValues(vals, nil)
	return b.NewArray()
}

func seq(n int) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = float64(i)
	}
	return out
}

// events builds a compound-like struct array: id int64, sensor uint16,
// kind string, value float64.
func events(alloc memory.Allocator) arrow.Array {
	st := arrow.StructOf(
		arrow.Field{Name: "id", Type: arrow.PrimitiveTypes.Int64},
		arrow.Field{Name: "sensor", Type: arrow.PrimitiveTypes.Uint16},
		arrow.Field{Name: "kind", Type: arrow.BinaryTypes.String},
		arrow.Field{Name: "value", Type: arrow.PrimitiveTypes.Float64},
	)
	b := array.NewStructBuilder(alloc, st)
	defer b.Release()
	for i := range 2 {
		b.Append(true)
		b.FieldBuilder(0).(*array.Int64Builder).Append(int64(1<<60 + i))
		b.FieldBuilder(1).(*array.Uint16Builder).Append(uint16(65535 - i))
		b.FieldBuilder(2).(*array.StringBuilder).Append([]string{"warn", "heartbea"}[i])
		b.FieldBuilder(3).(*array.Float64Builder).Append([]float64{1.5, math.Inf(1)}[i])
	}
	return b.NewArray()
}

func TestH5FirstRows(t *testing.T) {
	tests := []struct {
		name  string
		shape []int64
		vals  func(memory.Allocator) arrow.Array
		form  checkForm
		want  string // {"cols","kinds","rows"} as JSON
		err   bool
	}{
		{"values, capped at 100, NaN as null", []int64{150}, func(a memory.Allocator) arrow.Array {
			v := seq(150)
			v[1] = math.NaN()
			return float64s(a, v)
		}, formValues, func() string {
			rows := [][]any{{0.0}, {nil}}
			for i := 2; i < firstRows; i++ {
				rows = append(rows, []any{float64(i)})
			}
			b, _ := json.Marshal(map[string]any{"cols": []string{"price"}, "kinds": []string{"f"}, "rows": rows})
			return string(b)
		}(), false},
		{"compound values", []int64{2}, events, formValues,
			`{"cols":["id","sensor","kind","value"],"kinds":["i","i","s","f"],"rows":[["1152921504606846976","65535","warn",1.5],["1152921504606846977","65534","heartbea",null]]}`, false},
		{"sum then values", []int64{3}, func(a memory.Allocator) arrow.Array { return float64s(a, []float64{1, 2, 4}) }, formSumValues,
			`{"cols":["price"],"kinds":["f"],"rows":[[7],[1],[2],[4]]}`, false},
		{"NaN sum is null", []int64{2}, func(a memory.Allocator) arrow.Array { return float64s(a, []float64{math.NaN(), 2}) }, formSumValues,
			`{"cols":["price"],"kinds":["f"],"rows":[[null],[null],[2]]}`, false},
		{"sum then rows", []int64{2, 5}, func(a memory.Allocator) arrow.Array { return float64s(a, seq(10)) }, formSumRows,
			`{"cols":["sum","v0","v1","v2","v3"],"kinds":["f","f","f","f","f"],"rows":[[45,null,null,null,null],[null,0,1,2,3],[null,5,6,7,8]]}`, false},
		{"narrow rows", []int64{2, 2}, func(a memory.Allocator) arrow.Array { return float64s(a, seq(4)) }, formSumRows,
			`{"cols":["sum","v0","v1","v2","v3"],"kinds":["f","f","f","f","f"],"rows":[[6,null,null,null,null],[null,0,1],[null,2,3]]}`, false},
		{"rows need 2-D", []int64{4}, func(a memory.Allocator) arrow.Array { return float64s(a, seq(4)) }, formSumRows, "", true},
		{"sum needs numbers", []int64{2}, events, formSumValues, "", true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			alloc := memory.NewCheckedAllocator(memory.NewGoAllocator())
			defer alloc.AssertSize(t, 0)
			sl := &hdf5.Slice{Shape: tc.shape, Values: tc.vals(alloc)}
			defer sl.Release()
			cols, kinds, rows, err := h5FirstRows(sl, "price", tc.form)
			if tc.err {
				if err == nil {
					t.Errorf("no error; rows %v", rows)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got, _ := json.Marshal(map[string]any{"cols": cols, "kinds": kinds, "rows": rows})
			if string(got) != tc.want {
				t.Errorf("got  %s\nwant %s", got, tc.want)
			}
		})
	}
}

func TestH5QueriesAreKnown(t *testing.T) {
	if len(h5QueryNames) != len(h5Queries) {
		t.Fatalf("%d names for %d queries", len(h5QueryNames), len(h5Queries))
	}
	for _, q := range h5QueryNames {
		hq, ok := h5Queries[q]
		if !ok || !isH5Query(q) || hq.dataset == "" || hq.slice == "" {
			t.Errorf("query %s = %+v", q, hq)
		}
	}
}
