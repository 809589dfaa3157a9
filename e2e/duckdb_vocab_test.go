package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// TestDuckDBVocabulary is the DuckDB differential over the whole query
// vocabulary: 600 random specs (seeded) over a generated CSV, each sent to
// Quarry (query_data through the MCP client) and, as the SQL it means, to
// DuckDB (interop/duckdb/queries.js). A spec draws typed expressions
// (numbers, strings, dates with INTERVAL arithmetic, CASE, casts), plain and
// expression filters, group_by columns and expressions, aggregates (with
// per-aggregate filters), having (plain and expressions), window functions
// (ranking, lag/lead with defaults, frames, the statistics) over rows or over
// the groups, and order_by with limit/offset. Every output column is in the
// order, so the row set is determined; rows are compared as sorted sets of
// text with numbers to 9 significant digits.
func TestDuckDBVocabulary(t *testing.T) {
	root := t.TempDir()
	r := rand.New(rand.NewPCG(13, 2026))
	csvPath := filepath.Join(root, "vocab.csv")
	if err := os.WriteFile(csvPath, []byte(vocabCSV(r, 45)), 0o644); err != nil {
		t.Fatal(err)
	}
	const n = 600
	var specs []map[string]any
	var sqls []string
	for range n {
		spec, sql := randVocabSpec(r)
		spec["dataset"] = "vocab"
		specs, sqls = append(specs, spec), append(sqls, sql)
	}
	specPath := writeSpec(t, map[string]any{"csv": csvPath, "queries": sqls, "columns": [][]string{
		{"id", "BIGINT"}, {"g", "VARCHAR"}, {"k", "BIGINT"}, {"x", "DOUBLE"}, {"y", "BIGINT"}, {"d", "DATE"}, {"s", "VARCHAR"}, {"b", "BOOLEAN"}}})
	var duck struct {
		DuckDB  string `json:"duckdb"`
		Results []struct {
			Error string      `json:"error"`
			Rows  [][]*string `json:"rows"`
		} `json:"results"`
	}
	if out := duckdbScript(t, "queries.js", specPath); json.Unmarshal(out, &duck) != nil || len(duck.Results) != n {
		t.Fatalf("queries.js output: %.2000s", out)
	}
	c := startStdio(t, "--data", root)
	compared, rows := 0, 0
	for i, spec := range specs {
		want := duck.Results[i]
		if want.Error != "" {
			t.Errorf("spec %d: DuckDB refuses %s: %s", i, sqls[i], want.Error)
			continue
		}
		res := callRaw(t, c, "query_data", spec)
		b, _ := json.Marshal(res.StructuredContent)
		if res.IsError {
			t.Errorf("spec %d: Quarry refuses %s: %s\nSQL: %s", i, b, text(res), sqls[i])
			continue
		}
		var got struct {
			Method    string                       `json:"method"`
			Truncated bool                         `json:"truncated"`
			Data      []map[string]json.RawMessage `json:"data"`
		}
		dec := json.NewDecoder(bytes.NewReader(b))
		if err := dec.Decode(&got); err != nil || got.Method != "direct" || got.Truncated {
			t.Fatalf("spec %d: not an inline result (%v): %.500s", i, err, b)
		}
		cols := spec["columns"].([]string)
		var g, w []string
		for _, row := range got.Data {
			var cells []string
			for _, name := range cols {
				cells = append(cells, vocabCell(outName(name), row[outName(name)]))
			}
			g = append(g, strings.Join(cells, " | "))
		}
		for _, row := range want.Rows {
			var cells []string
			for _, v := range row {
				cells = append(cells, vocabDuckCell(v))
			}
			w = append(w, strings.Join(cells, " | "))
		}
		slices.Sort(g)
		slices.Sort(w)
		if !slices.Equal(g, w) {
			gs, _ := json.Marshal(spec)
			t.Errorf("spec %d differs:\nQuarry %s\n  %s\nDuckDB %s\n  %s\nquarry rows:\n  %s\nduckdb rows:\n  %s", i, gs, "", duck.DuckDB, sqls[i],
				strings.Join(g, "\n  "), strings.Join(w, "\n  "))
			continue
		}
		compared++
		rows += len(g)
	}
	t.Logf("%d of %d random specs agree with DuckDB %s (%d rows)", compared, n, duck.DuckDB, rows)
}

// vocabCSV is the test table: a unique id, a few string groups, small
// integers, floats, dates and words, with nulls.
func vocabCSV(r *rand.Rand, nrows int) string {
	var b strings.Builder
	b.WriteString("id,g,k,x,y,d,s,b\n")
	words := []string{"apple", "Banana", "cherry", "date", "elder", "fig", "grape", "ab", "  kiwi ", "melon"}
	cell := func(v string) string {
		if r.IntN(9) == 0 {
			return ""
		}
		return v
	}
	for i := range nrows {
		x := strconv.FormatFloat(float64(r.IntN(2000)-1000)/8, 'g', -1, 64)
		d := fmt.Sprintf("2024-%02d-%02d", 1+r.IntN(4), 1+r.IntN(28))
		if r.IntN(6) == 0 {
			d = "2024-01-31"
		}
		fmt.Fprintf(&b, "%d,%s,%s,%s,%d,%s,%s,%s\n", i+1, cell([]string{"a", "b", "c", "d"}[r.IntN(4)]), cell(strconv.Itoa(r.IntN(10))),
			cell(x), r.IntN(101)-50, cell(d), cell(words[r.IntN(len(words))]), cell(strconv.FormatBool(r.IntN(2) == 0)))
	}
	return b.String()
}

// The expression pools: the same text in Quarry and DuckDB.
var (
	vocabNum = []string{"x * 2 + y", "round(x, 1)", "abs(y - 7)", "x / (k + 10)", "y % 7", "coalesce(x, 0)", "greatest(k, 3)",
		"least(y, k)", "floor(x)", "ceil(x / 3)", "sign(y)", "sqrt(abs(x))", "length(s)", "year(d)", "month(d)", "day(d)",
		"date_diff('day', DATE '2024-01-01', d)", "d - DATE '2024-01-01'", "CASE WHEN x > 0 THEN 1 WHEN x < 0 THEN -1 ELSE 0 END",
		"strpos(s, 'a')", "nullif(k, 3)", "y * k", "quarter(d)", "-y"}
	vocabStr = []string{"lower(s)", "upper(left(s, 1))", "s || '-' || g", "concat(g, s)", "replace(s, 'a', 'A')",
		"CASE WHEN y > 0 THEN 'pos' ELSE 'neg' END", "trim(s)", "substr(s, 2, 3)", "strftime(d, '%Y-%m')", "CAST(y AS VARCHAR)",
		"reverse(s)", "lpad(g, 3, '*')", "regexp_replace(s, '[aeiou]', '_', 'g')", "coalesce(s, 'none')", "right(s, 2)"}
	vocabDate = []string{"d + INTERVAL '1 month'", "d - INTERVAL '10 days'", "d + 7", "d - CAST(k AS INTEGER)", "date_trunc('month', d)",
		"d + INTERVAL '1 year 2 months 3 days'", "INTERVAL '36 hours' + d", "date_add(d, INTERVAL '2 months')"}
	vocabCond = []string{"x > 0 AND k < 5", "s LIKE '%a%'", "s ILIKE 'b%'", "g IN ('a', 'b')", "y BETWEEN -10 AND 10",
		"d >= DATE '2024-02-01'", "d + INTERVAL '1 month' > DATE '2024-03-15'", "NOT b", "k IS NULL OR x IS NULL",
		"starts_with(s, 'b')", "regexp_matches(s, '^[a-m]')", "month(d) IN (1, 3)", "length(s) > 4", "contains(s, 'e')",
		"x * y > 10", "d - DATE '2024-02-01' BETWEEN 0 AND 30", "g NOT IN ('c')", "s NOT LIKE '%e%'"}
)

// vocabFilter is a plain filter and its SQL condition.
func vocabFilter(r *rand.Rand) (map[string]any, string) {
	switch r.IntN(7) {
	case 0:
		v := r.IntN(10)
		return map[string]any{"col": "k", "op": "gte", "value": v}, fmt.Sprintf("k >= %d", v)
	case 1:
		return map[string]any{"col": "g", "op": "in", "value": []string{"a", "c"}}, "g IN ('a', 'c')"
	case 2:
		return map[string]any{"col": "s", "op": "is_not_null"}, "s IS NOT NULL"
	case 3:
		return map[string]any{"col": "x", "op": "range", "value": map[string]any{"min": -50, "max": 60}}, "x BETWEEN -50 AND 60"
	case 4:
		return map[string]any{"col": "g", "op": "neq", "value": "a"}, "g != 'a'"
	case 5:
		return map[string]any{"col": "d", "op": "lt", "value": "2024-03-10"}, "d < DATE '2024-03-10'"
	}
	c := vocabCond[r.IntN(len(vocabCond))]
	return map[string]any{"expr": c}, c
}

// vocabAgg is an aggregate spec and its SQL.
func vocabAgg(r *rand.Rand) (map[string]any, string) {
	aggs := []struct {
		spec map[string]any
		sql  string
	}{
		{map[string]any{"col": "x", "fn": "sum"}, "sum(x)"}, {map[string]any{"col": "y", "fn": "avg"}, "avg(y)"},
		{map[string]any{"col": "s", "fn": "min"}, "min(s)"}, {map[string]any{"col": "d", "fn": "max"}, "max(d)"},
		{map[string]any{"col": "g", "fn": "count_distinct"}, "count(DISTINCT g)"}, {map[string]any{"col": "x", "fn": "median"}, "median(x)"},
		{map[string]any{"col": "x", "fn": "stddev"}, "stddev_samp(x)"}, {map[string]any{"col": "y", "fn": "var_pop"}, "var_pop(y)"},
		{map[string]any{"col": "y", "fn": "corr", "arg": "x"}, "corr(y, x)"}, {map[string]any{"col": "b", "fn": "bool_or"}, "bool_or(b)"},
		{map[string]any{"col": "b", "fn": "bool_and"}, "bool_and(b)"}, {map[string]any{"col": "b", "fn": "count_if"}, "count_if(b)"},
		{map[string]any{"col": "s", "fn": "count"}, "count(s)"}, {map[string]any{"col": "x * k", "fn": "sum"}, "sum(x * k)"},
		{map[string]any{"col": "x + y", "fn": "min"}, "min(x + y)"}, {map[string]any{"col": "y", "fn": "regr_slope", "arg": "x"}, "regr_slope(y, x)"},
		{map[string]any{"col": "x", "fn": "quantile", "q": 0.25}, "quantile_cont(x, 0.25)"}, {map[string]any{"col": "y", "fn": "stddev_pop"}, "stddev_pop(y)"},
	}
	a := aggs[r.IntN(len(aggs))]
	spec := map[string]any{}
	for k, v := range a.spec {
		spec[k] = v
	}
	sql := a.sql
	if r.IntN(4) == 0 {
		f, cond := vocabFilter(r)
		spec["filter"] = []map[string]any{f}
		sql += " FILTER (WHERE " + cond + ")"
	}
	return spec, sql
}

// vocabWindow is a window spec over rows (rows true) or over groups, and its SQL.
func vocabWindow(r *rand.Rand, rows bool) (map[string]any, string) {
	if !rows {
		switch r.IntN(4) {
		case 0:
			return map[string]any{"fn": "rank", "order_by": []map[string]any{{"col": "n", "desc": true}}}, "rank() OVER (ORDER BY n DESC NULLS LAST)"
		case 1:
			return map[string]any{"fn": "sum", "col": "n"}, "sum(n) OVER ()"
		case 2:
			return map[string]any{"fn": "dense_rank", "order_by": []map[string]any{{"col": "n"}}}, "dense_rank() OVER (ORDER BY n NULLS LAST)"
		}
		return map[string]any{"fn": "cume_dist", "order_by": []map[string]any{{"col": "n"}}}, "cume_dist() OVER (ORDER BY n NULLS LAST)"
	}
	byID := []map[string]any{{"col": "id"}}
	part := map[string]any{"partition_by": []string{"g"}, "order_by": byID}
	with := func(m map[string]any) map[string]any {
		out := map[string]any{}
		for k, v := range part {
			out[k] = v
		}
		for k, v := range m {
			out[k] = v
		}
		return out
	}
	ws := []struct {
		spec map[string]any
		sql  string
	}{
		{with(map[string]any{"fn": "row_number"}), "row_number() OVER (PARTITION BY g ORDER BY id)"},
		{map[string]any{"fn": "rank", "partition_by": []string{"g"}, "order_by": []map[string]any{{"col": "x", "desc": true}}}, "rank() OVER (PARTITION BY g ORDER BY x DESC NULLS LAST)"},
		{map[string]any{"fn": "dense_rank", "order_by": []map[string]any{{"col": "k"}}}, "dense_rank() OVER (ORDER BY k NULLS LAST)"},
		{with(map[string]any{"fn": "lag", "col": "y", "default": 0}), "lag(y, 1, 0) OVER (PARTITION BY g ORDER BY id)"},
		{with(map[string]any{"fn": "lead", "col": "s", "args": []int{2}}), "lead(s, 2) OVER (PARTITION BY g ORDER BY id)"},
		{with(map[string]any{"fn": "lead", "col": "d", "args": []int{1}, "default": "2000-01-01"}), "lead(d, 1, DATE '2000-01-01') OVER (PARTITION BY g ORDER BY id)"},
		{with(map[string]any{"fn": "sum", "col": "x", "frame": map[string]any{"start": "2 preceding", "end": "current row"}}), "sum(x) OVER (PARTITION BY g ORDER BY id ROWS BETWEEN 2 PRECEDING AND CURRENT ROW)"},
		{map[string]any{"fn": "avg", "col": "y", "partition_by": []string{"g"}}, "avg(y) OVER (PARTITION BY g)"},
		{map[string]any{"fn": "count", "col": "*", "order_by": []map[string]any{{"col": "d"}}}, "count(*) OVER (ORDER BY d NULLS LAST)"},
		{with(map[string]any{"fn": "max", "col": "x", "frame": map[string]any{"start": "1 preceding", "end": "1 following"}}), "max(x) OVER (PARTITION BY g ORDER BY id ROWS BETWEEN 1 PRECEDING AND 1 FOLLOWING)"},
		{with(map[string]any{"fn": "first_value", "col": "s"}), "first_value(s) OVER (PARTITION BY g ORDER BY id)"},
		{with(map[string]any{"fn": "var_samp", "col": "x", "frame": map[string]any{"start": "unbounded preceding"}}), "var_samp(x) OVER (PARTITION BY g ORDER BY id ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW)"},
		{map[string]any{"fn": "corr", "col": "y", "arg": "x", "partition_by": []string{"g"}}, "corr(y, x) OVER (PARTITION BY g)"},
		{map[string]any{"fn": "count_if", "col": "b", "order_by": byID, "frame": map[string]any{"start": "3 preceding"}}, "count_if(b) OVER (ORDER BY id ROWS BETWEEN 3 PRECEDING AND CURRENT ROW)"},
		{map[string]any{"fn": "bool_or", "col": "b", "partition_by": []string{"g"}}, "bool_or(b) OVER (PARTITION BY g)"},
		{map[string]any{"fn": "percent_rank", "order_by": []map[string]any{{"col": "y"}}}, "percent_rank() OVER (ORDER BY y NULLS LAST)"},
		{map[string]any{"fn": "ntile", "args": []int{3}, "order_by": byID}, "ntile(3) OVER (ORDER BY id)"},
		{map[string]any{"fn": "sum", "col": "x", "order_by": []map[string]any{{"col": "y"}}, "frame": map[string]any{"type": "range", "start": "5 preceding", "end": "5 following"}},
			"sum(x) OVER (ORDER BY y RANGE BETWEEN 5 PRECEDING AND 5 FOLLOWING)"},
		{with(map[string]any{"fn": "stddev_pop", "col": "y", "frame": map[string]any{"start": "2 preceding", "end": "2 following"}}), "stddev_pop(y) OVER (PARTITION BY g ORDER BY id ROWS BETWEEN 2 PRECEDING AND 2 FOLLOWING)"},
		{with(map[string]any{"fn": "arg_max", "col": "s", "arg": "id", "frame": map[string]any{"start": "unbounded preceding"}}), "arg_max(s, id) OVER (PARTITION BY g ORDER BY id ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW)"},
	}
	w := ws[r.IntN(len(ws))]
	return w.spec, w.sql
}

// randVocabSpec draws one query_data spec and its SQL. Output columns are
// named c0.. (plain) or k0.., a0.., n, w0.. (aggregate); every one is an
// order key, so a limit keeps a determined set of rows.
func randVocabSpec(r *rand.Rand) (map[string]any, string) {
	spec := map[string]any{}
	var where []string
	var filters []map[string]any
	for range r.IntN(3) {
		f, c := vocabFilter(r)
		filters, where = append(filters, f), append(where, "("+c+")")
	}
	if len(filters) > 0 {
		spec["filters"] = filters
	}
	whereSQL := ""
	if len(where) > 0 {
		whereSQL = " WHERE " + strings.Join(where, " AND ")
	}
	var cols, sel []string
	var sql string
	if r.IntN(2) == 0 { // plain
		pools := [][]string{vocabNum, vocabStr, vocabDate, {"id", "g", "k", "x", "s", "d", "b"}}
		for i := range 1 + r.IntN(3) {
			p := pools[r.IntN(len(pools))]
			e := p[r.IntN(len(p))]
			cols, sel = append(cols, fmt.Sprintf("%s AS c%d", e, i)), append(sel, fmt.Sprintf("%s AS c%d", e, i))
		}
		var wins []map[string]any
		for i := range r.IntN(3) {
			w, wsql := vocabWindow(r, true)
			w["as"] = fmt.Sprintf("w%d", i)
			wins = append(wins, w)
			cols, sel = append(cols, fmt.Sprintf("w%d", i)), append(sel, fmt.Sprintf("%s AS w%d", wsql, i))
		}
		if len(wins) > 0 {
			spec["windows"] = wins
		}
		sql = "SELECT " + strings.Join(sel, ", ") + " FROM t" + whereSQL
	} else { // aggregate
		keys := [][2]string{{"g", "g"}, {"k", "k"}, {"year(d) * 100 + month(d)", "year(d) * 100 + month(d)"}, {"upper(left(s, 1))", "upper(left(s, 1))"},
			{"k % 3", "k % 3"}, {"date_trunc('month', d)", "date_trunc('month', d)"}, {"b", "b"}, {"d + INTERVAL '1 month'", "d + INTERVAL '1 month'"}}
		var groupBy, gsql []string
		for i, j := range r.Perm(len(keys))[:r.IntN(3)] {
			groupBy = append(groupBy, fmt.Sprintf("%s AS k%d", keys[j][0], i))
			gsql = append(gsql, keys[j][1])
			cols, sel = append(cols, fmt.Sprintf("k%d", i)), append(sel, fmt.Sprintf("%s AS k%d", keys[j][1], i))
		}
		aggs := []map[string]any{}
		for i := range 1 + r.IntN(3) {
			a, asql := vocabAgg(r)
			a["as"] = fmt.Sprintf("a%d", i)
			aggs = append(aggs, a)
			cols, sel = append(cols, fmt.Sprintf("a%d", i)), append(sel, fmt.Sprintf("%s AS a%d", asql, i))
		}
		aggs = append(aggs, map[string]any{"col": "*", "fn": "count", "as": "n"})
		cols, sel = append(cols, "n"), append(sel, "count(*) AS n")
		spec["aggs"] = aggs
		if len(groupBy) > 0 {
			spec["group_by"] = groupBy
		}
		sql = "SELECT " + strings.Join(sel, ", ") + " FROM t" + whereSQL
		if len(gsql) > 0 {
			sql += " GROUP BY " + strings.Join(gsql, ", ")
		}
		if r.IntN(3) == 0 {
			var h map[string]any
			var hsql string
			switch r.IntN(3) {
			case 0:
				v := 1 + r.IntN(4)
				h, hsql = map[string]any{"col": "n", "op": "gte", "value": v}, fmt.Sprintf("n >= %d", v)
			case 1:
				hsql = "n * 2 > 5 OR a0 IS NULL"
				h = map[string]any{"expr": hsql}
			default:
				hsql = "a0 IS NOT NULL AND n BETWEEN 2 AND 20"
				h = map[string]any{"expr": hsql}
			}
			spec["having"] = []map[string]any{h}
			sql = "SELECT * FROM (" + sql + ") WHERE " + hsql
		}
		if r.IntN(3) == 0 {
			w, wsql := vocabWindow(r, false)
			w["as"] = "w0"
			spec["windows"] = []map[string]any{w}
			cols = append(cols, "w0")
			sql = "SELECT *, " + wsql + " AS w0 FROM (" + sql + ")"
		}
	}
	spec["columns"] = cols
	var order []map[string]any
	var osql []string
	for _, c := range cols {
		name := outName(c)
		order = append(order, map[string]any{"col": name})
		osql = append(osql, quoteIdentSQL(name)+" ASC NULLS LAST")
	}
	spec["order_by"] = order
	sql = "SELECT * FROM (" + sql + ") ORDER BY " + strings.Join(osql, ", ")
	if r.IntN(3) == 0 {
		lim, off := 1+r.IntN(10), r.IntN(4)
		spec["limit"], spec["offset"] = lim, off
		sql += fmt.Sprintf(" LIMIT %d OFFSET %d", lim, off)
	}
	return spec, sql
}

var asName = regexp.MustCompile(` AS (\w+)$`)

// outName is the output name of a columns entry ("expr AS c0" → c0).
func outName(c string) string {
	if m := asName.FindStringSubmatch(c); m != nil {
		return m[1]
	}
	return c
}

func quoteIdentSQL(s string) string { return `"` + strings.ReplaceAll(s, `"`, `""`) + `"` }

var vocabTS = regexp.MustCompile(`^(\d{4}-\d\d-\d\d)[T ](\d\d:\d\d:\d\d)(\.0+)?(Z|\+00(:00)?)?$`)

// vocabText normalizes a value's text: timestamps as "YYYY-MM-DD HH:MM:SS"
// (midnight as the date alone: DuckDB's date_trunc of a date is a
// timestamp), numbers to 9 significant digits, NaN as NaN.
func vocabText(s string) string {
	if m := vocabTS.FindStringSubmatch(s); m != nil {
		if m[2] == "00:00:00" {
			return m[1]
		}
		return m[1] + " " + m[2]
	}
	switch strings.ToLower(s) {
	case "nan", "-nan":
		return "NaN"
	}
	if f, err := strconv.ParseFloat(s, 64); err == nil {
		return strconv.FormatFloat(f, 'g', 9, 64)
	}
	return s
}

// vocabCell is a Quarry JSON value as normalized text.
func vocabCell(_ string, raw json.RawMessage) string {
	if len(raw) == 0 || string(raw) == "null" {
		return "NULL"
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return vocabText(s)
	}
	return vocabText(string(raw))
}

// vocabDuckCell is a DuckDB text value as normalized text.
func vocabDuckCell(v *string) string {
	if v == nil {
		return "NULL"
	}
	return vocabText(*v)
}
