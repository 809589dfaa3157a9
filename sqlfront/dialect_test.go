package sqlfront

import (
	"strings"
	"testing"
)

// TestDialect: every construct docs/SQL.md lists as supported compiles to
// a plan, and the plan shows the node it lowers to.
func TestDialect(t *testing.T) {
	cases := []struct{ sql, want string }{
		{`SELECT id FROM orders WHERE qty > $1 AND region = $2`, "qty > 3 AND region = 'n'"},
		{`SELECT id, price::int AS p, CAST(day AS varchar) AS d FROM orders`, "CAST(price AS bigint) AS p"},
		{`SELECT id FROM orders WHERE region ILIKE 'N%' AND region NOT LIKE '%x'`, "ILIKE"},
		{`SELECT id FROM orders WHERE region IS NOT DISTINCT FROM 'n'`, "CASE WHEN"},
		{`SELECT id FROM orders WHERE region ~ '^n'`, "regexp_matches"},
		{`SELECT extract(month FROM day) AS m, count(*) FROM orders GROUP BY m`, "month(day) AS m"},
		{`SELECT coalesce(region, '?') AS r, nullif(qty, 0) AS q, greatest(qty, 1) AS g FROM orders`, "coalesce(region, '?') AS r"},
		{`SELECT CASE WHEN qty > 1 THEN 'many' ELSE 'one' END AS k, count(*) FROM orders GROUP BY 1 ORDER BY 2 DESC`, "Sort: count_all desc"},
		{`SELECT region, count(DISTINCT customer) AS c FROM orders GROUP BY region`, "count_distinct(customer) AS c"},
		{`SELECT region, quantile(price, 0.9) AS p90, corr(price, qty) AS r FROM orders GROUP BY region`, "quantile"},
		{`SELECT region, string_agg(region, '|') AS s FROM orders GROUP BY region`, "string_agg"},
		{`SELECT region, sum(qty) / count(*) AS avg_qty FROM orders GROUP BY region`, "Compute"},
		{`SELECT id, lag(price, 2) OVER (ORDER BY day) AS p FROM orders`, "lag(price, 2)"},
		{`SELECT id, avg(price) OVER (PARTITION BY region ORDER BY day ROWS BETWEEN 3 PRECEDING AND 1 FOLLOWING) AS m FROM orders`, "ROWS BETWEEN 3 PRECEDING AND 1 FOLLOWING"},
		{`SELECT id, ntile(4) OVER w AS q FROM orders WINDOW w AS (ORDER BY price)`, "ntile(4)"},
		{`SELECT id FROM orders ORDER BY price DESC NULLS LAST LIMIT ALL`, "Sort: price desc"},
		{`WITH a AS (SELECT region, sum(qty) AS q FROM orders GROUP BY region), b AS (SELECT * FROM a WHERE q > 1) SELECT * FROM b`, "Filter: q > 1"},
		{`SELECT t.r FROM (SELECT region AS r FROM orders) t`, "Compute: region AS r"},
		{`SELECT o.id, c.name FROM orders o JOIN customers c ON c.id = o.customer AND o.qty > c.id`, "Join: inner"},
		{`SELECT count(*) FROM orders CROSS JOIN customers`, "Join: cross"},
		{`SELECT o.id, c.name FROM orders o, customers c WHERE o.customer = c.id AND c.country = 'FR'`, "Join: inner shop/customers AS c ON customer = c.id"},
		{`SELECT count(*) FROM orders o, customers c`, "Join: cross"},
		{`SELECT o.id, c.name FROM orders o FULL JOIN customers c USING (id)`, "Join: full"},
		{`SELECT c.id, name FROM orders o RIGHT JOIN customers c ON o.customer = c.id`, "Join: right"},
		{`SELECT id FROM orders WHERE customer IN (SELECT id FROM customers)`, "Join: semi"},
		{`SELECT id, price - (SELECT avg(price) FROM orders) AS diff FROM orders WHERE price > (SELECT avg(price) FROM orders WHERE qty > 1)`, "Join: cross"},
		{`SELECT * FROM "shop/orders" -- a comment` + "\n" + `/* another */ LIMIT 1`, "Limit"},
		{`EXPLAIN ANALYZE SELECT id FROM orders`, "Project: id"},
	}
	for _, tc := range cases {
		p, err := compile(tc.sql, int64(3), "n")
		if err != nil {
			t.Errorf("%s: %v", tc.sql, err)
			continue
		}
		if !strings.Contains(p, tc.want) {
			t.Errorf("%s: plan lacks %q:\n%s", tc.sql, tc.want, p)
		}
	}
}
