package sqlfront

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/quarrydb/quarry/planner"
)

// TestSameAsKnobs: a knob query and its SQL translation build the same
// optimized plan (one planner, one optimizer for both front-ends).
func TestSameAsKnobs(t *testing.T) {
	cases := []struct {
		name, sql, dataset, knobs string
	}{
		{"filters", `SELECT * FROM "shop/orders" WHERE qty > 2 AND region IN ('n', 's') AND price BETWEEN 1 AND 5.5 AND customer IS NOT NULL`, "shop/orders",
			`{"filters": [{"col": "qty", "op": "gt", "value": 2}, {"col": "region", "op": "in", "value": ["n", "s"]}, {"col": "price", "op": "range", "value": {"min": 1, "max": 5.5}}, {"col": "customer", "op": "is_not_null"}]}`},
		{"or group", `SELECT id FROM orders WHERE qty < 1 OR region = 'n'`, "shop/orders",
			`{"columns": ["id"], "filters": [{"any": [{"col": "qty", "op": "lt", "value": 1}, {"col": "region", "op": "eq", "value": "n"}]}]}`},
		{"expression filter", `SELECT id FROM orders WHERE lower(region) LIKE 'n%'`, "shop/orders",
			`{"columns": ["id"], "filters": [{"expr": "(lower(\"region\") LIKE 'n%')"}]}`},
		{"projection", `SELECT id, qty * price AS revenue, upper(region) AS r FROM orders`, "shop/orders",
			`{"columns": ["id", "qty * price AS revenue", "upper(region) AS r"]}`},
		{"group by", `SELECT region, sum(qty) AS units, count(*) FROM orders GROUP BY region`, "shop/orders",
			`{"group_by": ["region"], "aggs": [{"col": "qty", "fn": "sum", "as": "units"}, {"col": "*", "fn": "count"}]}`},
		{"group by expression", `SELECT year(day) AS y, avg(price) FROM orders GROUP BY 1`, "shop/orders",
			`{"group_by": ["year(day) AS y"], "aggs": [{"col": "price", "fn": "avg"}]}`},
		{"having", `SELECT region, count(*) FROM orders GROUP BY region HAVING count(*) > 10`, "shop/orders",
			`{"group_by": ["region"], "aggs": [{"col": "*", "fn": "count"}], "having": [{"col": "count_all", "op": "gt", "value": 10}]}`},
		{"aggregate filter", `SELECT region, count(*) FILTER (WHERE qty > 1) AS big FROM orders GROUP BY region`, "shop/orders",
			`{"group_by": ["region"], "aggs": [{"col": "*", "fn": "count", "as": "big", "filter": [{"col": "qty", "op": "gt", "value": 1}]}]}`},
		{"order and limit", `SELECT id, price FROM orders ORDER BY price DESC, id LIMIT 10 OFFSET 5`, "shop/orders",
			`{"columns": ["id", "price"], "order_by": [{"col": "price", "desc": true}, {"col": "id"}], "limit": 10, "offset": 5}`},
		{"nulls first", `SELECT id, price FROM orders ORDER BY price DESC NULLS FIRST, region NULLS LAST LIMIT 3`, "shop/orders",
			`{"columns": ["id", "price"], "order_by": [{"col": "price", "desc": true, "nulls_first": true}, {"col": "region"}], "limit": 3}`},
		{"nulls first without limit", `SELECT id FROM orders ORDER BY day NULLS FIRST`, "shop/orders",
			`{"columns": ["id"], "order_by": [{"col": "day", "nulls_first": true}]}`},
		{"distinct", `SELECT DISTINCT region FROM orders`, "shop/orders", `{"columns": ["region"], "distinct": true}`},
		{"window", `SELECT id, rank() OVER (PARTITION BY region ORDER BY price DESC) AS r FROM orders`, "shop/orders",
			`{"columns": ["id", "r"], "windows": [{"fn": "rank", "partition_by": ["region"], "order_by": [{"col": "price", "desc": true}], "as": "r"}]}`},
		{"running total", `SELECT id, sum(qty) OVER (ORDER BY day ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) AS run FROM orders`, "shop/orders",
			`{"columns": ["id", "run"], "windows": [{"fn": "sum", "col": "qty", "order_by": [{"col": "day"}], "frame": {"type": "rows", "start": "unbounded preceding", "end": "current row"}, "as": "run"}]}`},
		{"join", `SELECT o.id, c.name FROM orders o JOIN customers c ON o.customer = c.id WHERE c.country = 'FR'`, "shop/orders",
			`{"join": [{"dataset": "shop/customers", "as": "c", "on": [{"left": "customer", "right": "id"}]}], "columns": ["id", "\"c.name\" AS name"], "filters": [{"col": "c.country", "op": "eq", "value": "FR"}]}`},
		{"left join aggregate", `SELECT c.country, count(*) FROM orders o LEFT JOIN customers c ON o.customer = c.id GROUP BY c.country`, "shop/orders",
			`{"join": [{"dataset": "shop/customers", "as": "c", "type": "left", "on": [{"left": "customer", "right": "id"}]}], "group_by": ["c.country"], "aggs": [{"col": "*", "fn": "count"}], "columns": ["\"c.country\" AS country", "count_all"]}`},
		{"left join with extra condition", `SELECT o.id, c.name FROM orders o LEFT JOIN customers c ON o.customer = c.id AND o.qty > c.id`, "shop/orders",
			`{"join": [{"dataset": "shop/customers", "as": "c", "type": "left", "on": [{"left": "customer", "right": "id"}], "where": "qty > c.id"}], "columns": ["id", "\"c.name\" AS name"]}`},
		{"join key common to every OR branch", `SELECT o.id FROM orders o, customers c WHERE (o.customer = c.id AND o.qty > 2) OR (c.country = 'FR' AND o.customer = c.id)`, "shop/orders",
			`{"join": [{"dataset": "shop/customers", "as": "c", "on": [{"left": "customer", "right": "id"}]}], "columns": ["id"], "filters": [{"any": [{"col": "qty", "op": "gt", "value": 2}, {"col": "c.country", "op": "eq", "value": "FR"}]}]}`},
		{"full join on an inequality", `SELECT o.id, c.id AS cid FROM orders o FULL JOIN customers c ON o.customer < c.id`, "shop/orders",
			`{"join": [{"dataset": "shop/customers", "as": "c", "type": "full", "where": "customer < c.id"}], "columns": ["id", "\"c.id\" AS cid"]}`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := compile(tc.sql)
			if err != nil {
				t.Fatalf("%s: %v", tc.sql, err)
			}
			var spec planner.Spec
			if err := json.Unmarshal([]byte(tc.knobs), &spec); err != nil {
				t.Fatal(err)
			}
			in, _ := testCatalog.Input(context.Background(), tc.dataset)
			for _, j := range spec.Join {
				jin, _ := testCatalog.Input(context.Background(), j.Dataset)
				in.Joins = append(in.Joins, jin)
			}
			plan, err := planner.Build(spec, in)
			if err != nil {
				t.Fatalf("knobs: %v", err)
			}
			if plan, err = planner.Optimize(plan, planner.OptimizeOptions{}); err != nil {
				t.Fatal(err)
			}
			if want := planner.String(plan); got != want {
				t.Errorf("%s\nSQL plan:\n%s\nknob plan:\n%s", tc.sql, got, want)
			}
		})
	}
}
