package sqlfront

import (
	"strings"
	"testing"
)

// TestDecorrelate: subqueries reading columns of the enclosing query lower
// to joins (results are checked against DuckDB in e2e TestSQLAgainstDuckDB
// and TestTPCHAgainstDuckDB); each want fragment must appear in the
// optimized plan, in order.
func TestDecorrelate(t *testing.T) {
	cases := []struct {
		name, sql string
		want      []string
	}{
		{"exists", "SELECT id FROM customers c WHERE EXISTS (SELECT 1 FROM orders o WHERE o.customer = c.id AND o.qty > 2)",
			[]string{"Join: semi __ex0 AS __ex0 ON id = __ex0.__k0", "Scan: shop/customers", "Scan: shop/orders"}},
		{"not exists with a residual", "SELECT id FROM orders o1 WHERE NOT EXISTS (SELECT * FROM orders o2 WHERE o2.customer = o1.customer AND o2.id <> o1.id)",
			[]string{"Join: anti __ex0 AS __ex0 ON customer = __ex0.__k0 WHERE __ex0.__r0 != id"}},
		{"uncorrelated exists", "SELECT id FROM customers WHERE EXISTS (SELECT 1 FROM orders WHERE qty > 100)",
			[]string{"Join: cross __s0", "Filter: __n0 > 0", "Aggregate: count(*) AS __n0"}},
		{"correlated in", "SELECT id FROM customers c WHERE id IN (SELECT customer FROM orders o WHERE o.region = c.country)",
			[]string{"Join: semi __in0 AS __in0 ON id = __in0.__v0 AND country = __in0.__k0"}},
		{"not in", "SELECT id FROM customers WHERE id NOT IN (SELECT customer FROM orders)",
			[]string{"Join: anti __in0 AS __in0 null-aware ON id = __in0.__v0", "Scan: shop/customers", "Scan: shop/orders"}},
		{"correlated not in", "SELECT id FROM customers c WHERE id NOT IN (SELECT customer FROM orders o WHERE o.region = c.country)",
			[]string{"Join: left __cnt1 AS __cnt1 ON country = __cnt1.__k0", "Join: anti __in0 AS __in0 ON id = __in0.__v0 AND country = __in0.__k0"}},
		{"correlated aggregate", "SELECT id FROM orders o WHERE qty > (SELECT 0.5 * avg(qty) FROM orders p WHERE p.customer = o.customer)",
			[]string{"qty > __s0.__v0", "Join: left __s0 AS __s0 ON customer = __s0.__k0", "BY customer"}},
		{"correlated count is 0 on no rows", "SELECT id, (SELECT count(*) FROM orders o WHERE o.customer = c.id) AS n FROM customers c",
			[]string{"CASE WHEN __s0.__k0 IS NULL THEN 0 ELSE __s0.__v0 END AS n", "Join: left __s0"}},
		{"exists in an expression", "SELECT id, EXISTS (SELECT 1 FROM orders o WHERE o.customer = c.id) AS has FROM customers c",
			[]string{"CASE WHEN __s0.__k0 IS NULL THEN 0 ELSE __s0.__v0 END > 0 AS has", "Aggregate: count(*) AS __v0 BY customer"}},
		{"IN in CASE", "SELECT id, CASE WHEN id IN (SELECT customer FROM orders) THEN 'buyer' ELSE 'none' END AS k FROM customers",
			[]string{"CASE WHEN CASE WHEN coalesce(__cnt1.__n0, 0) = 0 THEN false WHEN __m0.__v0 IS NOT NULL THEN true WHEN id IS NULL OR __cnt1.__n0 != __cnt1.__nn0 THEN null ELSE false END THEN 'buyer'",
				"Join: cross __cnt1", "Join: left __m0 AS __m0 ON id = __m0.__v0", "Distinct", "count(*) AS __n0, count(__v0) AS __nn0"}},
		{"correlated IN in OR", "SELECT id FROM customers c WHERE id IN (SELECT customer FROM orders o WHERE o.region = c.country) OR name = 'x'",
			[]string{"Join: left __cnt1 AS __cnt1 ON country = __cnt1.__k0", "Join: left __m0 AS __m0 ON id = __m0.__v0 AND country = __m0.__k0", "BY __k0"}},
		{"correlated EXISTS in HAVING", "SELECT region, sum(qty) FROM orders o GROUP BY region HAVING EXISTS (SELECT 1 FROM customers c WHERE c.country = o.region)",
			[]string{"__hex0.__k0 IS NOT NULL", "Join: left __hex0 AS __hex0 ON region = __hex0.__k0", "Aggregate: sum(qty) AS sum_qty BY region", "Distinct"}},
		{"IN in HAVING", "SELECT region, sum(qty) FROM orders GROUP BY region HAVING region IN (SELECT country FROM customers)",
			[]string{"Join: cross __hcnt1", "Join: left __hm0 AS __hm0 ON region = __hm0.__v0", "Aggregate: sum(qty) AS sum_qty BY region"}},
		{"correlated scalar over the groups", "SELECT region, sum(qty), (SELECT count(*) FROM customers c WHERE c.country = o.region) AS n FROM orders o GROUP BY region",
			[]string{"CASE WHEN __hs0.__k0 IS NULL THEN 0 ELSE __hs0.__v0 END AS n", "Join: left __hs0 AS __hs0 ON region = __hs0.__k0", "Aggregate: sum(qty) AS sum_qty BY region", "Aggregate: count(*) AS __v0 BY country"}},
		{"scalar subquery in HAVING", "SELECT region, sum(qty) AS q FROM orders GROUP BY region HAVING sum(qty) > (SELECT avg(qty) FROM orders)",
			[]string{"q > __h0.avg_qty", "Join: cross __h0", "Aggregate: sum(qty) AS q BY region"}},
		{"scalar subquery over the groups in SELECT", "SELECT region, sum(qty) / (SELECT sum(qty) FROM orders) AS share FROM orders GROUP BY region",
			[]string{"/ __h0.", "Join: cross __h0", "Aggregate: sum(qty)"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) { planHas(t, tc.sql, tc.want) })
	}
}

// planHas checks that each want fragment appears in the optimized plan of
// sql, in order.
func planHas(t *testing.T, sql string, want []string) {
	t.Helper()
	got, err := compile(sql)
	if err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	rest := got
	for _, w := range want {
		i := strings.Index(rest, w)
		if i < 0 {
			t.Fatalf("%s: plan lacks %q (in order):\n%s", sql, w, got)
		}
		rest = rest[i+len(w):]
	}
}
