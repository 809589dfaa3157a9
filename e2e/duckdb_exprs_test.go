package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestDuckDBExpressions compares Quarry's expression filters ({"expr": ...})
// with DuckDB's WHERE on the same condition text, for string, date, number
// and conditional functions whose semantics the two share (docs/QUERY.md),
// including null rows.
func TestDuckDBExpressions(t *testing.T) {
	root := t.TempDir()
	// Columns in alphabetical order: filters.js takes their types from a JSON object (a Go map, sorted).
	csv := "day,id,n,name,x\n" +
		"2024-01-31,1,7,Alice,10.5\n" +
		"2023-12-01,2,-3,bob,-2.25\n" +
		"2024-02-29,3,0,Ünïcode straße,0\n" +
		",4,,,\n" +
		"2020-06-15,5,12,  padded  ,100\n" +
		"1999-12-31,6,5,a_b%c,3.5\n" +
		"2024-12-30,7,100,Bob,7\n"
	if err := os.WriteFile(filepath.Join(root, "people.csv"), []byte(csv), 0o644); err != nil {
		t.Fatal(err)
	}
	wheres := []string{
		"lower(name) = 'bob'", "upper(name) LIKE 'B%'", "length(name) > 5", "substr(name, 2, 3) = 'lic'",
		"left(name, 1) = 'A'", "right(name, 2) = 'ob'", "trim(name) = 'padded'", "ltrim(name) LIKE 'padded%'",
		"replace(name, 'b', 'B') = 'BoB'", "strpos(name, 'o') = 2", "position('c' IN name) > 0",
		"starts_with(name, 'Al')", "ends_with(name, 'ob')", "contains(name, 'ß')", "name LIKE 'a_b%'",
		"name ILIKE '%BOB%'", "name NOT LIKE '%o%'", "regexp_matches(name, '^[A-Z][a-z]+$')",
		"regexp_extract(name, '([a-z])o', 1) = 'b'", "regexp_replace(name, '[aeiou]', '', 'g') = 'bb'",
		"lpad(name, 7, '*') = '**Alice'", "rpad(name, 3, '-') = 'bob'", "repeat(left(name, 1), 2) = 'AA'",
		"reverse(name) = 'ecilA'", "split_part(name, ' ', 2) = 'straße'", "concat(name, '!') = 'bob!'",
		"name || '?' = 'Bob?'", "name IN ('bob', 'Bob', 'carol')", "name IS NULL", "name IS NOT NULL AND x IS NULL",
		"coalesce(name, 'none') = 'none'", "nullif(n, 0) IS NULL", "CASE WHEN n > 5 THEN 'big' ELSE 'small' END = 'big'",
		"least(n, 6) = 6", "greatest(x, n) > 10",
		"year(day) = 2024", "month(day) = 12", "day(day) = 31", "quarter(day) = 4", "week(day) = 1",
		"date_trunc('month', day) = DATE '2024-02-01'", "date_diff('day', day, DATE '2024-03-01') BETWEEN 0 AND 40",
		"date_diff('month', DATE '2024-01-01', day) = 1", "strftime(day, '%Y-%m') = '2024-01'",
		"day BETWEEN DATE '2020-01-01' AND DATE '2024-01-31'", "day < DATE '2000-01-01' OR day > DATE '2024-06-01'",
		"n % 4 = 3", "n % 5 = -3", "sign(x) = -1", "trunc(x) = 10", "sqrt(abs(n)) = 10", "power(n, 2) = 49",
		"ln(greatest(x, 1)) > 2", "abs(n) = 3", "x BETWEEN 0 AND 10", "NOT (x > 0)", "x > 0 AND n < 10 OR name = 'Bob'",
		"day + INTERVAL '1 month' = TIMESTAMP '2024-02-29 00:00:00'", "day - INTERVAL '1 month' < DATE '2024-01-01'",
		"day + 1 = DATE '2024-03-01'", "day - 30 > DATE '2024-01-01'", "DATE '2024-03-01' - day BETWEEN 0 AND 40",
		"day - DATE '2024-01-01' = 59", "CAST(n AS INTEGER) + day > DATE '2024-02-01'", "INTERVAL '10 days' + day > DATE '2024-12-31'",
		"day + INTERVAL '1 year 2 months 3 days 4 hours' > TIMESTAMP '2025-01-01 00:00:00'",
		"day - INTERVAL '36 hours' < DATE '2024-01-30'", "year(day + INTERVAL '2 days') = 2025",
		"CAST(day AS TIMESTAMP) - INTERVAL '1 month' = TIMESTAMP '2024-01-29 00:00:00'",
		"date_trunc('month', day) + INTERVAL '1 month' - INTERVAL '1 day' = DATE '2024-02-29'",
		"CAST(n AS VARCHAR) = '12'", "CAST(x AS BIGINT) = 11", "TRY_CAST(name AS INTEGER) IS NULL",
	}
	specPath := writeSpec(t, map[string]any{"csv": filepath.Join(root, "people.csv"),
		"columns": map[string]string{"id": "BIGINT", "name": "VARCHAR", "day": "DATE", "x": "DOUBLE", "n": "BIGINT"}, "where": wheres})
	var duck struct {
		DuckDB string     `json:"duckdb"`
		IDs    [][]string `json:"ids"`
	}
	if out := duckdbScript(t, "filters.js", specPath); json.Unmarshal(out, &duck) != nil || len(duck.IDs) != len(wheres) {
		t.Fatalf("filters.js output: %s", out)
	}
	c := startStdio(t, "--data", root)
	// Typed computed columns come back as JSON booleans, strings and dates.
	res := callRaw(t, c, "query_data", json.RawMessage(`{"dataset":"people","columns":["id","name ILIKE 'b%' AS isb",`+
		`"date_trunc('month', day) AS m","upper(name) || '!' AS u","CASE WHEN n > 5 THEN n END AS big"],"filters":[{"expr":"id IN (1, 2, 4)"}],"order_by":[{"col":"id"}]}`))
	if b, _ := json.Marshal(res.StructuredContent); res.IsError || !strings.Contains(string(b),
		`"data":[{"big":7,"id":1,"isb":false,"m":"2024-01-01","u":"ALICE!"},{"big":null,"id":2,"isb":true,"m":"2023-12-01","u":"BOB!"},{"big":null,"id":4,"isb":null,"m":null,"u":null}]`) {
		t.Errorf("typed columns: %s", b)
	}
	for i, w := range wheres {
		f, _ := json.Marshal(map[string]string{"expr": w})
		got, ok := queryIDs(t, c, "people", string(f))
		if !ok {
			continue
		}
		if !slices.Equal(got, duck.IDs[i]) {
			t.Errorf("%s: Quarry ids %v, DuckDB %s ids %v", w, got, duck.DuckDB, duck.IDs[i])
		}
	}
}
