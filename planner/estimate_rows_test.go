package planner_test

import (
	"math"
	"strconv"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/quarrydb/quarry/internal/funcs"
	"github.com/quarrydb/quarry/planner"
)

func TestEstimateRows(t *testing.T) {
	sch := arrow.NewSchema([]arrow.Field{{Name: "k", Type: arrow.PrimitiveTypes.Int64}, {Name: "v", Type: arrow.PrimitiveTypes.Int64}}, nil)
	scan := func(rows int64) *planner.Scan {
		return &planner.Scan{Dataset: "d", Out: sch, RowCount: rows, RowCountExact: true}
	}
	lit := &planner.Literal{Type: arrow.PrimitiveTypes.Int64, Value: int64(1)}
	eq := planner.Predicate{Col: "v", Op: funcs.OpEq, Value: lit}
	lt := planner.Predicate{Col: "v", Op: funcs.OpLt, Value: lit}
	filter := func(n planner.Node, ps ...planner.Predicate) planner.Node {
		return &planner.Filter{Input: n, Preds: ps}
	}
	join := func(typ planner.JoinType, l, r planner.Node) planner.Node {
		return &planner.Join{Left: l, Right: r, Type: typ, Alias: "r", LeftKeys: []string{"k"}, RightKeys: []string{"k"}, RightCols: []string{"v"}}
	}
	cases := []struct {
		name string
		n    planner.Node
		want float64
	}{
		{"scan", scan(1000), 1000},
		{"empty scan", scan(0), 0},
		{"eq", filter(scan(1000), eq), 100},
		{"eq and range", filter(scan(1000), eq, lt), 33},
		{"or group", filter(scan(1000), planner.Predicate{Op: funcs.OpAny, Any: []planner.Predicate{eq, eq}}), 190},
		{"never below one row", filter(filter(filter(scan(10), eq), eq), eq), 1},
		// A fact table joined to a filtered dimension keeps the share the filter kept.
		{"fact to filtered dimension", join(planner.JoinInner, scan(6000), filter(scan(1500), eq)), 600},
		{"filtered dimension to fact", join(planner.JoinInner, filter(scan(1500), eq), scan(6000)), 600},
		{"left join keeps the left rows", join(planner.JoinLeft, scan(6000), filter(scan(1500), eq)), 6000},
		{"semi", join(planner.JoinSemi, scan(6000), scan(10)), 3000},
		{"cross", &planner.Join{Left: scan(30), Right: scan(20), Type: planner.JoinCross, Alias: "r"}, 600},
		{"global aggregate", &planner.Aggregate{Input: scan(1000), Out: sch}, 1},
		{"grouped aggregate", &planner.Aggregate{Input: scan(1000), GroupBy: []string{"k"}, Out: sch}, 100},
		{"limit", &planner.Limit{Input: scan(1000), Count: 7}, 7},
	}
	for _, tc := range cases {
		if got := planner.EstimateRows(tc.n); math.Abs(got-tc.want) > 1e-6*tc.want {
			t.Errorf("%s: %g rows, want %g", tc.name, got, tc.want)
		}
	}
}

// TestEstimateExprFilters: an expression filter estimates by its shape
// (AND multiplies, OR combines independent branches, comparisons as the
// predicates of their kind), also once projection pushdown has narrowed
// the Project above it (the Filter over its Compute alone).
func TestEstimateExprFilters(t *testing.T) {
	for _, tc := range []struct {
		expr string
		want float64
	}{
		{"qty + 1 > price", 3000 * 0.33},
		{"qty = 1 AND price < 2", 3000 * 0.1 * 0.33},
		{"(qty = 1 AND price < 2) OR qty = 3", 3000 * (1 - (1-0.1*0.33)*(1-0.1))},
		{"region IN ('a', 'b', 'c') AND NOT (qty = 2)", 3000 * 0.3 * 0.9},
		{"qty BETWEEN 1 AND 5 OR region LIKE '%x%'", 3000 * (1 - 0.67*0.5)},
		{"NOT region LIKE '%x%requests%'", 3000 * 0.5},
	} {
		n, err := planner.Build(spec(t, `{"filters":[{"expr":`+strconv.Quote(tc.expr)+`}]}`), testInput())
		if err != nil {
			t.Fatal(err)
		}
		if got := planner.EstimateRows(n); math.Abs(got-tc.want) > 1e-6*tc.want {
			t.Errorf("%s: %g rows, want %g", tc.expr, got, tc.want)
		}
		var f planner.Node
		planner.Inspect(n, func(x planner.Node, _ int) bool {
			if _, ok := x.(*planner.Filter); ok && f == nil {
				f = x
			}
			return f == nil
		})
		if got := planner.EstimateRows(f); math.Abs(got-tc.want) > 1e-6*tc.want {
			t.Errorf("%s, filter without its project: %g rows, want %g", tc.expr, got, tc.want)
		}
	}
}
