package sqlfront

import "testing"

// TestGroupingSets: GROUPING SETS, ROLLUP and CUBE lower to a UNION ALL of
// one aggregate per grouping set (results are checked against DuckDB in
// e2e TestSQLAgainstDuckDB).
func TestGroupingSets(t *testing.T) {
	cases := []struct {
		name, sql string
		want      []string
	}{
		{"rollup", "SELECT region, qty, count(*) AS n FROM orders GROUP BY ROLLUP (region, qty) ORDER BY 1, 2",
			[]string{"Sort: region asc, qty asc", "SetOp: UNION ALL", "SetOp: UNION ALL", "Aggregate: count(*) AS n BY region, qty",
				"Aggregate: min(qty) AS __a0, count(*) AS n BY region", "Aggregate: min(region) AS __a0, min(qty) AS __a1, count(*) AS n"}},
		{"cube with grouping()", "SELECT region, day, grouping(region, day) AS g, sum(qty) FROM orders GROUP BY CUBE (region, day)",
			[]string{"SetOp: UNION ALL", "3 AS g"}},
		{"grouping sets with a plain key", "SELECT customer, region, sum(qty) FROM orders GROUP BY customer, GROUPING SETS ((region), ())",
			[]string{"SetOp: UNION ALL", "BY customer, region", "BY customer"}},
		{"one set", "SELECT region, grouping(region) AS g FROM orders GROUP BY GROUPING SETS ((region)) ORDER BY region LIMIT 2",
			[]string{"Limit: offset=0 count=2", "Sort: region asc", "0 AS g", "BY region"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) { planHas(t, tc.sql, tc.want) })
	}
}
