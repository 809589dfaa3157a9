package planner_test

import (
	"strconv"

	"testing"

	"github.com/quarrydb/quarry/planner"
)

// TestRuleOrColumnPreds: an OR whose every branch constrains a column
// gives that column a predicate group (an IN list for equalities); it
// replaces the OR when it says exactly the same.
func TestRuleOrColumnPreds(t *testing.T) {
	for _, tc := range []struct {
		name, expr string
		want       []string
	}{
		{"ranges replace the OR", "qty >= 1 AND qty <= 11 OR qty >= 10 AND qty <= 20 OR qty = 40", []string{
			"Project: order_id",
			"  Filter: (qty = 40 OR qty BETWEEN 1 AND 20)",
			"    Scan: sales/orders"}},
		{"touching ranges merge into one", "qty BETWEEN 12 AND 20 OR qty >= 1 AND qty <= 11", []string{
			"Project: order_id",
			"  Filter: qty BETWEEN 1 AND 20",
			"    Scan: sales/orders"}},
		{"apart ranges stay apart", "qty BETWEEN 13 AND 20 OR qty >= 1 AND qty <= 11", []string{
			"Project: order_id",
			"  Filter: (qty BETWEEN 1 AND 11 OR qty BETWEEN 13 AND 20)",
			"    Scan: sales/orders"}},
		{"equalities become one IN list; the OR stays", "region = 'n' AND qty > 1 OR region IN ('s', 'n') AND day < CAST('2024-01-01' AS date)", []string{
			"Project: order_id",
			"  Project: order_id, ordered_at, day, region, qty, price, paid, blob",
			"    Filter: __filter_0 = true",
			"      Compute: region = 'n' AND qty > 1 OR region IN ('s', 'n') AND day < CAST('2024-01-01' AS date) AS __filter_0",
			"        Filter: region IN ('n', 's')",
			"          Scan: sales/orders"}},
		{"a column missing from one branch gives nothing", "region = 'n' OR qty > 1", nil},
		{"floats do not convert", "price < 1 OR price > 5", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			js := `{"columns":["order_id"],"filters":[{"expr":` + strconv.Quote(tc.expr) + `}]}`
			got := applyRule(t, js, planner.OrColumnPreds, planner.OptimizeOptions{})
			if tc.want == nil {
				if before := applyRule(t, js, func(n planner.Node, _ planner.OptimizeOptions) (planner.Node, error) { return n, nil }, planner.OptimizeOptions{}); got != before {
					t.Fatalf("rewritten:\n%s", got)
				}
				return
			}
			wantPlan(t, got, tc.want...)
		})
	}
}
