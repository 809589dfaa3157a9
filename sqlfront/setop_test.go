package sqlfront

import (
	"testing"
)

// TestSetOpsAndValues: set operations, VALUES and SELECT without FROM
// lower to SetOp and Values nodes (results are checked against DuckDB in
// e2e TestSQLAgainstDuckDB); each want line must appear in the optimized
// plan, in order.
func TestSetOpsAndValues(t *testing.T) {
	cases := []struct {
		name, sql string
		want      []string
	}{
		{"union", "SELECT id FROM orders UNION SELECT id FROM customers", []string{"SetOp: UNION", "Scan: shop/orders", "Scan: shop/customers"}},
		{"union all ordered", "SELECT id FROM orders UNION ALL SELECT id FROM customers ORDER BY 1 DESC LIMIT 3 OFFSET 1",
			[]string{"Limit: offset=1 count=3", "Sort: id desc", "SetOp: UNION ALL"}},
		{"order by output name", "SELECT id AS k FROM orders INTERSECT SELECT id FROM customers ORDER BY k", []string{"Sort: k asc", "SetOp: INTERSECT"}},
		{"except all", "SELECT region FROM orders EXCEPT ALL SELECT name FROM customers", []string{"SetOp: EXCEPT ALL"}},
		{"chain", "SELECT id FROM orders UNION SELECT id FROM customers EXCEPT SELECT customer FROM orders", []string{"SetOp: EXCEPT", "SetOp: UNION"}},
		{"in a CTE", "WITH u AS (SELECT id FROM orders UNION SELECT id FROM customers) SELECT count(*) FROM u", []string{"Aggregate: count(*)", "SetOp: UNION"}},
		{"in a subquery", "SELECT max(id) FROM (SELECT id FROM orders INTERSECT SELECT id FROM customers) t", []string{"Aggregate: max(id)", "SetOp: INTERSECT"}},
		{"parenthesized sides", "(SELECT id FROM orders ORDER BY id LIMIT 2) UNION ALL (SELECT id FROM customers LIMIT 1)",
			[]string{"SetOp: UNION ALL", "Limit: offset=0 count=2", "Limit: offset=0 count=1"}},
		{"no from", "SELECT 1 AS x, 'a' AS y", []string{"Compute: 1 AS x, 'a' AS y", "Values: 1 row"}},
		{"values", "SELECT * FROM (VALUES (1, 'a'), (2, 'b')) AS t(id, name) WHERE id > 1",
			[]string{"Filter: id > 1", "Compute: column1 AS id, column2 AS name", "Values: 2 rows (column1, column2) (1, 'a') (2, 'b')"}},
		{"bare values", "VALUES (1, NULL), (2.5, 'x')", []string{"Values: 2 rows (column1, column2) (1.0, null) (2.5, 'x')"}},
		{"values joined", "SELECT o.id, v.label FROM orders o JOIN (VALUES ('n', 'North')) v(region, label) ON o.region = v.region",
			[]string{"Join: inner v AS v ON region = v.region", "Scan: shop/orders", "Values: 1 row"}},
		{"CTE column aliases", "WITH t(a) AS (SELECT id FROM orders) SELECT a FROM t", []string{"Compute: id AS a", "Scan: shop/orders"}},
		{"union with constants", "SELECT id FROM orders UNION SELECT 7", []string{"SetOp: UNION", "Scan: shop/orders", "Values: 1 row"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) { planHas(t, tc.sql, tc.want) })
	}
}
