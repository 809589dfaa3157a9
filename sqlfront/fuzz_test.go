package sqlfront

import (
	"context"
	"errors"
	"testing"

	"github.com/quarrydb/quarry/internal/qerr"
	"github.com/quarrydb/quarry/planner"
)

// FuzzSQL feeds arbitrary text through parse, the safety walk, binding
// and planning: it must never panic, and every failure must be a
// structured *qerr.Error (never an internal one).
func FuzzSQL(f *testing.F) {
	for _, s := range []string{
		`SELECT * FROM "shop/orders"`,
		`SELECT region, sum(qty) FROM orders WHERE qty > $1 GROUP BY 1 HAVING count(*) > 2 ORDER BY 2 DESC LIMIT 3`,
		`WITH t AS (SELECT id, rank() OVER (PARTITION BY region ORDER BY price) AS r FROM orders) SELECT * FROM t WHERE r = 1`,
		`SELECT o.id, c.name FROM orders o LEFT JOIN customers c ON o.customer = c.id`,
		`SELECT id FROM orders WHERE customer IN (SELECT id FROM customers)`,
		`SELECT id FROM orders UNION ALL SELECT id FROM customers ORDER BY 1 LIMIT 2`,
		`SELECT * FROM (VALUES (1, 'a'), (2, NULL)) t(a, b) JOIN orders o ON o.id = t.a`, `SELECT 1 AS x`,
		`SELECT o.id FROM orders o FULL JOIN customers c ON o.customer = c.id AND o.qty < c.id`,
		`SELECT id FROM customers c WHERE EXISTS (SELECT 1 FROM orders o WHERE o.customer = c.id AND o.qty > c.id)`, `SELECT id FROM customers c WHERE id NOT IN (SELECT customer FROM orders o WHERE o.region = c.country)`, `SELECT id, (SELECT count(*) FROM orders o WHERE o.customer = c.id) AS n FROM customers c`, `SELECT region, sum(qty) FROM orders GROUP BY region HAVING sum(qty) > (SELECT avg(qty) FROM orders)`,
		`SELECT region, day, grouping(region, day), sum(qty) FROM orders GROUP BY CUBE (region, day) ORDER BY 1 NULLS FIRST`,
		`COPY orders TO '/tmp/x'`, `SELECT 1; DROP TABLE x`, `SELECT * FROM read_csv('/etc/passwd')`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, sql string) {
		st, err := Parse(sql)
		if err == nil {
			var c *Compiled
			c, err = st.Compile(context.Background(), testCatalog, []any{int64(1)})
			if err == nil {
				_, err = planner.Optimize(c.Plan, planner.OptimizeOptions{})
			}
		}
		if err == nil {
			return
		}
		var qe *qerr.Error
		if !errors.As(err, &qe) {
			t.Fatalf("%q: unstructured error %v", sql, err)
		}
		if errors.Is(err, qerr.ErrInternal) {
			t.Fatalf("%q: internal error %v", sql, err)
		}
	})
}
