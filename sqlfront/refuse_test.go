package sqlfront

import (
	"errors"
	"strings"
	"testing"

	"github.com/quarrydb/quarry/internal/qerr"
)

// TestRefusals: one case per refusal kind, with the code, and the line and
// column of the offending fragment.
func TestRefusals(t *testing.T) {
	huge := "SELECT id FROM orders WHERE id IN (" + strings.Repeat("1, ", MaxInList) + "1)"
	deep := "SELECT id FROM orders WHERE " + strings.Repeat("(", maxParenDepth+1) + "id = 1" + strings.Repeat(")", maxParenDepth+1)
	cases := []struct {
		name, sql, code string
		line, col       int // 0: no position expected
		frag            string
	}{
		{"stacked", "SELECT 1 FROM orders;\nDROP TABLE orders", qerr.CodeForbiddenSQL, 1, 22, ""},
		{"comment hides a statement", "SELECT id FROM orders /* x */; DELETE FROM orders", qerr.CodeForbiddenSQL, 1, 31, ""},
		{"insert", "INSERT INTO orders VALUES (1)", qerr.CodeForbiddenSQL, 1, 1, "INSERT"},
		{"update", "UPDATE orders SET qty = 1", qerr.CodeForbiddenSQL, 1, 1, "UPDATE"},
		{"delete", "DELETE FROM orders", qerr.CodeForbiddenSQL, 1, 1, "DELETE"},
		{"create", "CREATE TABLE x (a int)", qerr.CodeForbiddenSQL, 1, 1, "CREATE"},
		{"drop", "DROP TABLE orders", qerr.CodeForbiddenSQL, 1, 1, "DROP"},
		{"copy", "COPY orders TO '/tmp/x'", qerr.CodeForbiddenSQL, 1, 1, "COPY"},
		{"set", "SET search_path = x", qerr.CodeForbiddenSQL, 1, 1, "SET"},
		{"load", "LOAD 'httpfs'", qerr.CodeForbiddenSQL, 1, 1, "LOAD"},
		{"call", "CALL p()", qerr.CodeForbiddenSQL, 1, 1, "CALL"},
		{"select into", "SELECT id INTO t2 FROM orders", qerr.CodeForbiddenSQL, 0, 0, ""},
		{"for update", "SELECT id FROM orders FOR UPDATE", qerr.CodeForbiddenSQL, 0, 0, ""},
		{"data-modifying CTE", "WITH d AS (DELETE FROM orders RETURNING id) SELECT * FROM d", qerr.CodeForbiddenSQL, 1, 6, "d AS (DELETE"},
		{"table function", "SELECT * FROM read_csv('/etc/passwd')", qerr.CodeForbiddenSQL, 1, 15, "read_csv"},
		{"file function in expression", "SELECT pg_read_file('/etc/passwd') FROM orders", qerr.CodeForbiddenSQL, 1, 8, "pg_read_file"},
		{"glob", "SELECT glob('*') FROM orders", qerr.CodeForbiddenSQL, 1, 8, "glob"},
		{"system catalog", "SELECT * FROM pg_catalog.pg_tables", qerr.CodeForbiddenSQL, 1, 15, "pg_catalog"},
		{"information_schema", "SELECT * FROM information_schema.tables", qerr.CodeForbiddenSQL, 1, 15, "information_schema"},
		{"pg_ table", "SELECT * FROM pg_settings", qerr.CodeForbiddenSQL, 1, 15, "pg_settings"},
		{"huge IN list", huge, qerr.CodeUnsupportedSQL, 1, 29, "id IN"},
		{"deep nesting", deep, qerr.CodeUnsupportedSQL, 1, 29 + maxParenDepth, "("},
		{"too long", "SELECT " + strings.Repeat("id, ", MaxSQLLen/4) + "id FROM orders", qerr.CodeUnsupportedSQL, 0, 0, ""},
		{"recursive CTE", "WITH RECURSIVE r AS (SELECT 1) SELECT * FROM r", qerr.CodeUnsupportedSQL, 0, 0, ""},
		{"qualify", "SELECT id FROM orders QUALIFY row_number() OVER (ORDER BY id) = 1", qerr.CodeUnsupportedSQL, 1, 31, "row_number()"},
		{"nulls first in a window", "SELECT id, rank() OVER (ORDER BY qty NULLS FIRST) FROM orders", qerr.CodeUnsupportedSQL, 1, 34, "qty NULLS FIRST"},
		{"CUBE too large", "SELECT count(*) FROM orders GROUP BY CUBE (id, customer, region, qty, price, day, id + 1)", qerr.CodeUnsupportedSQL, 1, 38, "CUBE"},
		{"ROLLUP inside GROUPING SETS", "SELECT count(*) FROM orders GROUP BY GROUPING SETS ((region), ROLLUP (qty))", qerr.CodeUnsupportedSQL, 1, 63, "ROLLUP"},
		{"lateral", "SELECT * FROM orders o, LATERAL (SELECT 1) x", qerr.CodeUnsupportedSQL, 1, 41, "1) x"},
		{"parenthesized join in a comma list", "SELECT * FROM orders o, (customers c JOIN orders p ON c.id = p.id)", qerr.CodeUnsupportedSQL, 1, 26, "customers c"},
		{"scalar subquery of many rows", "SELECT (SELECT id FROM customers) FROM orders", qerr.CodeUnsupportedSQL, 1, 8, "(SELECT"},
		{"correlated EXISTS with LIMIT", "SELECT id FROM orders o WHERE EXISTS (SELECT 1 FROM customers c WHERE c.id = o.customer LIMIT 1)", qerr.CodeUnsupportedSQL, 1, 31, "EXISTS"},
		{"EXISTS over groups correlated by a column not grouped", "SELECT region FROM orders o GROUP BY region HAVING EXISTS (SELECT 1 FROM customers c WHERE c.id = o.customer)", qerr.CodeUnsupportedSQL, 1, 52, "EXISTS"},
		{"correlated NOT IN by an inequality", "SELECT id FROM orders WHERE customer NOT IN (SELECT id FROM customers WHERE id > qty)", qerr.CodeUnsupportedSQL, 1, 38, "NOT IN"},
		{"NOT IN over an expression", "SELECT id FROM orders WHERE qty + 1 NOT IN (SELECT id FROM customers)", qerr.CodeUnsupportedSQL, 1, 37, "NOT IN"},
		{"distinct on", "SELECT DISTINCT ON (region) id FROM orders", qerr.CodeUnsupportedSQL, 1, 21, "region"},
		{"union width", "SELECT id, qty FROM orders UNION SELECT id FROM customers", qerr.CodeInvalidArgument, 1, 41, "id FROM customers"},
		{"union types", "SELECT region FROM orders EXCEPT SELECT id FROM customers", qerr.CodeInvalidArgument, 0, 0, ""},
		{"set operation order by", "SELECT id FROM orders UNION SELECT id FROM customers ORDER BY qty", qerr.CodeInvalidColumn, 1, 63, "qty"},
		{"values width", "SELECT * FROM (VALUES (1, 2), (3)) t", qerr.CodeInvalidArgument, 0, 0, ""},
		{"values column", "VALUES (id)", qerr.CodeInvalidColumn, 1, 9, "id"},
		{"too many column aliases", "SELECT * FROM (VALUES (1)) t(a, b)", qerr.CodeInvalidArgument, 0, 0, ""},
		{"join condition in outer join", "SELECT o.id FROM orders o LEFT JOIN customers c ON o.customer = c.id AND c.nosuch > 1", qerr.CodeInvalidColumn, 1, 74, "c.nosuch"},
		{"correlated column in a subquery's SELECT list", "SELECT id FROM orders o WHERE qty > (SELECT avg(p.qty + o.qty) FROM orders p WHERE p.customer = o.customer)", qerr.CodeUnsupportedSQL, 1, 57, "o.qty"},
		{"correlated scalar subquery by an inequality", "SELECT id FROM orders o WHERE qty > (SELECT avg(qty) FROM orders p WHERE p.day < o.day)", qerr.CodeUnsupportedSQL, 1, 74, "p.day < o.day"},
		{"correlated inequality in a subquery in OR", "SELECT id FROM orders o WHERE qty > 1 OR customer IN (SELECT id FROM customers c WHERE c.id > o.qty)", qerr.CodeUnsupportedSQL, 1, 88, "c.id > o.qty"},
		{"unknown column in a subquery", "SELECT id FROM orders WHERE qty > (SELECT avg(nosuch) FROM orders)", qerr.CodeInvalidColumn, 1, 47, "nosuch"},
		{"syntax", "SELEC id FROM orders", qerr.CodeInvalidArgument, 1, 1, "SELEC"},
		{"unknown column", "SELECT idd FROM orders", qerr.CodeInvalidColumn, 1, 8, "idd"},
		{"unknown table", "SELECT id FROM \"../etc/passwd\"", qerr.CodeDatasetNotFound, 1, 16, `"../etc/passwd"`},
		{"ambiguous column", "SELECT id FROM orders o JOIN customers c ON o.customer = c.id", qerr.CodeInvalidColumn, 1, 8, "id"},
		{"ungrouped column", "SELECT region, qty, count(*) FROM orders GROUP BY region", qerr.CodeInvalidAggregate, 1, 16, "qty"},
		{"aggregate in where", "SELECT id FROM orders WHERE sum(qty) > 1", qerr.CodeInvalidArgument, 1, 29, "sum(qty)"},
		{"missing param", "SELECT id FROM orders WHERE qty > $2", qerr.CodeInvalidArgument, 1, 35, "$2"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := compile(tc.sql, 1)
			var qe *qerr.Error
			if !errors.As(err, &qe) {
				t.Fatalf("%s: got %v, want a %s error", tc.sql, err, tc.code)
			}
			if qe.Code != tc.code {
				t.Fatalf("%s: code %s (%s), want %s", tc.sql, qe.Code, qe.Message, tc.code)
			}
			if qe.Hint == "" {
				t.Errorf("%s: no hint", tc.sql)
			}
			if tc.line == 0 {
				return
			}
			if qe.Diagnostics["line"] != tc.line || qe.Diagnostics["col"] != tc.col {
				t.Errorf("%s: at line %v column %v, want %d:%d (%s)", tc.sql, qe.Diagnostics["line"], qe.Diagnostics["col"], tc.line, tc.col, qe.Message)
			}
			if f, _ := qe.Diagnostics["fragment"].(string); !strings.HasPrefix(f, tc.frag) {
				t.Errorf("%s: fragment %q, want it to start with %q", tc.sql, f, tc.frag)
			}
		})
	}
}
