package e2e

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestDuckDBStatAggregates compares Quarry's statistical aggregates
// (var_*, stddev_*, covar_*, corr, regr_*), with and without a
// per-aggregate filter, with DuckDB's on random data: 8 groups of 20 to 80
// rows, float and integer columns with nulls. Floats agree within a
// relative 1e-9 (the two engines sum in different orders).
func TestDuckDBStatAggregates(t *testing.T) {
	root := t.TempDir()
	r := rand.New(rand.NewPCG(2026, 13))
	var csv strings.Builder
	csv.WriteString("g,n,s,x,y\n") // read_csv maps the columns by position: alphabetical, as JSON sorts them
	cell := func(v string) string {
		if r.IntN(12) == 0 {
			return ""
		}
		return v
	}
	for g := range 8 {
		slope, noise := r.NormFloat64()*3, 0.1+r.Float64()*5
		for range 20 + r.IntN(60) {
			x := r.NormFloat64()*10 + float64(g)
			y := slope*x + r.NormFloat64()*noise
			words := []string{"oak", "elm", "ash", "fir", "yew"}
			fmt.Fprintf(&csv, "%d,%s,%s,%s,%s\n", g, cell(strconv.Itoa(r.IntN(100)-30)), cell(words[r.IntN(1+g%5)]), cell(strconv.FormatFloat(x, 'g', -1, 64)), cell(strconv.FormatFloat(y, 'g', -1, 64)))
		}
	}
	csvPath := filepath.Join(root, "stats.csv")
	if err := os.WriteFile(csvPath, []byte(csv.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	one := []string{"var_samp", "var_pop", "stddev", "stddev_samp", "stddev_pop"}
	two := []string{"covar_samp", "covar_pop", "corr", "regr_slope", "regr_intercept", "regr_r2"}
	cols := []string{"x", "y", "n"}
	type agg struct {
		sql  string
		spec map[string]any
	}
	var queries [][]agg
	for range 60 {
		var q []agg
		for range 1 + r.IntN(4) {
			var a agg
			col := cols[r.IntN(len(cols))]
			if r.IntN(2) == 0 {
				fn := one[r.IntN(len(one))]
				a = agg{sql: fmt.Sprintf("%s(%s)", fn, col), spec: map[string]any{"fn": fn, "col": col}}
			} else {
				fn, x := two[r.IntN(len(two))], cols[r.IntN(len(cols))]
				a = agg{sql: fmt.Sprintf("%s(%s, %s)", fn, col, x), spec: map[string]any{"fn": fn, "col": col, "arg": x}}
			}
			if r.IntN(3) == 0 {
				k := r.IntN(60) - 20
				a.sql += fmt.Sprintf(" FILTER (WHERE n > %d)", k)
				a.spec["filter"] = []map[string]any{{"col": "n", "op": "gt", "value": k}}
			}
			a.spec["as"] = fmt.Sprintf("a%d", len(q))
			q = append(q, a)
		}
		queries = append(queries, q)
	}
	// Non-statistical aggregates, compared as DuckDB's text (lists as
	// "[a, NULL, b]").
	queries = append(queries, []agg{
		{sql: "mode(s)", spec: map[string]any{"fn": "mode", "col": "s", "as": "a0"}},
		{sql: "arg_max(s, x)", spec: map[string]any{"fn": "arg_max", "col": "s", "arg": "x", "as": "a1"}},
		{sql: "arg_min(n, y)", spec: map[string]any{"fn": "arg_min", "col": "n", "arg": "y", "as": "a2"}},
		{sql: "string_agg(s, '-')", spec: map[string]any{"fn": "string_agg", "col": "s", "arg": "-", "as": "a3"}},
		{sql: "list(n)", spec: map[string]any{"fn": "list", "col": "n", "as": "a4"}},
		{sql: "count_if(n > 0)", spec: map[string]any{"fn": "count", "col": "n", "filter": []map[string]any{{"col": "n", "op": "gt", "value": 0}}, "as": "a5"}},
		{sql: "bool_or(n > 60)", spec: map[string]any{"fn": "max", "col": "n", "as": "a6"}}, // checked below as max(n) > 60
		{sql: "sum(x) FILTER (WHERE s = 'oak')", spec: map[string]any{"fn": "sum", "col": "x", "filter": []map[string]any{{"col": "s", "op": "eq", "value": "oak"}}, "as": "a7"}},
	})
	var sqls [][]string
	for _, q := range queries {
		var s []string
		for _, a := range q {
			s = append(s, a.sql)
		}
		sqls = append(sqls, s)
	}
	specPath := writeSpec(t, map[string]any{"csv": csvPath, "columns": map[string]string{"g": "BIGINT", "n": "BIGINT", "s": "VARCHAR", "x": "DOUBLE", "y": "DOUBLE"},
		"group_by": "g", "queries": sqls})
	var duck struct {
		DuckDB string        `json:"duckdb"`
		Rows   [][][]*string `json:"rows"`
	}
	if out := duckdbScript(t, "aggs.js", specPath); json.Unmarshal(out, &duck) != nil || len(duck.Rows) != len(queries) {
		t.Fatalf("aggs.js output: %s", out)
	}

	c := startStdio(t, "--data", root)
	compared := 0
	for i, q := range queries {
		var aggs []map[string]any
		for _, a := range q {
			aggs = append(aggs, a.spec)
		}
		res := callRaw(t, c, "aggregate", map[string]any{"dataset": "stats", "group_by": []string{"g"}, "aggs": aggs, "order_by": []map[string]any{{"col": "g"}}})
		if res.IsError {
			t.Fatalf("%v: %s", sqls[i], text(res))
		}
		b, _ := json.Marshal(res.StructuredContent)
		var got struct {
			Data []map[string]any `json:"data"`
		}
		if err := json.Unmarshal(b, &got); err != nil {
			t.Fatal(err)
		}
		want := duck.Rows[i]
		if len(got.Data) != len(want) {
			t.Fatalf("%v: %d groups, DuckDB %d", sqls[i], len(got.Data), len(want))
		}
		for gi, row := range want {
			for j, a := range q {
				g, w := got.Data[gi][fmt.Sprintf("a%d", j)], row[j+1]
				if a.sql == "bool_or(n > 60)" && g != nil {
					g = fmt.Sprint(g.(float64) > 60)
				}
				if !statClose(g, w) && (w == nil || duckText(g) != *w) {
					t.Errorf("%s, group %s: Quarry %v, DuckDB %s %v (query %v)", a.sql, *row[0], g, duck.DuckDB, deref(w), sqls[i])
				}
				compared++
			}
		}
	}
	t.Logf("%d aggregate values agree with DuckDB %s", compared, duck.DuckDB)
}

// statClose compares a Quarry JSON value with DuckDB's text: both null, or
// numbers within a relative 1e-9.
func statClose(got any, want *string) bool {
	if want == nil || got == nil {
		return want == nil && got == nil
	}
	g, ok := got.(float64)
	w, err := strconv.ParseFloat(*want, 64)
	if !ok || err != nil {
		return false
	}
	return math.Abs(g-w) <= 1e-9*math.Max(1, math.Max(math.Abs(g), math.Abs(w)))
}

// duckText renders a Quarry JSON value as DuckDB prints it: lists as
// "[a, NULL, b]", integral floats without a fraction.
func duckText(v any) string {
	switch x := v.(type) {
	case nil:
		return "NULL"
	case []any:
		parts := make([]string, len(x))
		for i, e := range x {
			parts[i] = duckText(e)
		}
		return "[" + strings.Join(parts, ", ") + "]"
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64)
	}
	return fmt.Sprint(v)
}
