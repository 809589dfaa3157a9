package sqlfront

import "testing"

// TestNullsOrder: ORDER BY ... NULLS FIRST / NULLS LAST lower to the sort
// keys' null order (results are checked against DuckDB in e2e).
func TestNullsOrder(t *testing.T) {
	cases := []struct {
		name, sql string
		want      []string
	}{
		{"nulls first", "SELECT id FROM orders ORDER BY qty NULLS FIRST, id", []string{"Sort: qty asc nulls first, id asc (nulls last)"}},
		{"desc nulls first", "SELECT id FROM orders ORDER BY qty DESC NULLS FIRST LIMIT 3", []string{"Limit: offset=0 count=3", "Sort: qty desc nulls first"}},
		{"nulls last is the default", "SELECT id FROM orders ORDER BY qty DESC NULLS LAST", []string{"Sort: qty desc (nulls last)"}},
		{"set operation", "SELECT id FROM orders UNION SELECT id FROM customers ORDER BY 1 NULLS FIRST", []string{"Sort: id asc nulls first", "SetOp: UNION"}},
		{"grouped", "SELECT region, sum(qty) AS q FROM orders GROUP BY region ORDER BY q DESC NULLS FIRST", []string{"Sort: q desc nulls first"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) { planHas(t, tc.sql, tc.want) })
	}
}
