package service

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/quarrydb/quarry/catalog"
	"github.com/quarrydb/quarry/internal/funcs"
	"github.com/quarrydb/quarry/planner"
)

// SQLExampleCount is how many worked examples the sql_reference prompt
// gives.
const SQLExampleCount = 10

// sqlExampleEnv is what the SQL example templates are written over: the
// example dataset (t, quoted), its dimension d and measure m (quoted
// column names; m is 1 when the dataset has no numeric column), a real
// value of d as a literal, and the optional date column and join partner.
type sqlExampleEnv struct {
	t, d, m, v string
	val        json.RawMessage
	date       string // quoted, "" when none
	join       *joinExample
}

// sqlExamples is the one declaration of the sql_reference examples: each
// applies when needs holds (nil: always); the first SQLExampleCount that
// apply are given, in this order.
var sqlExamples = []struct {
	title string
	needs func(x sqlExampleEnv) bool
	sql   func(x sqlExampleEnv) string
	param bool // the value goes as $1 in params
}{
	{title: "Filter on a real value, sort with nulls last, limit",
		sql: func(x sqlExampleEnv) string {
			return fmt.Sprintf("SELECT %s, %s FROM %s WHERE %s = %s ORDER BY %s DESC NULLS LAST LIMIT 10", x.d, x.m, x.t, x.d, x.v, x.m)
		}},
	{title: "Positional parameter ($1 in params)", param: true,
		sql: func(x sqlExampleEnv) string {
			return fmt.Sprintf("SELECT count(*) AS n FROM %s WHERE %s = $1", x.t, x.d)
		}},
	{title: "Group, aggregate, HAVING, ORDER BY an output",
		sql: func(x sqlExampleEnv) string {
			return fmt.Sprintf("SELECT %s, count(*) AS n, avg(%s) AS avg_m FROM %s GROUP BY %s HAVING count(*) >= 2 ORDER BY n DESC LIMIT 10", x.d, x.m, x.t, x.d)
		}},
	{title: "CTE and windows: each group's total, rank and share",
		sql: func(x sqlExampleEnv) string {
			return fmt.Sprintf("WITH g AS (SELECT %s, sum(%s) AS total FROM %s GROUP BY %s) SELECT %s, total, rank() OVER (ORDER BY total DESC) AS r, total / sum(total) OVER () AS share FROM g ORDER BY r LIMIT 10", x.d, x.m, x.t, x.d, x.d)
		}},
	{title: "Top 2 rows per group (row_number in a subquery)",
		sql: func(x sqlExampleEnv) string {
			return fmt.Sprintf("SELECT * FROM (SELECT %s, %s, row_number() OVER (PARTITION BY %s ORDER BY %s DESC) AS rn FROM %s) s WHERE rn <= 2", x.d, x.m, x.d, x.m, x.t)
		}},
	{title: "Scalar subquery: rows above the average",
		sql: func(x sqlExampleEnv) string {
			return fmt.Sprintf("SELECT count(*) AS above FROM %s WHERE %s > (SELECT avg(%s) FROM %s)", x.t, x.m, x.m, x.t)
		}},
	{title: "IN (SELECT ...) inside CASE, over the groups",
		sql: func(x sqlExampleEnv) string {
			return fmt.Sprintf("SELECT %s, count(*) AS n, CASE WHEN %s IN (SELECT %s FROM %s WHERE %s > (SELECT avg(%s) FROM %s)) THEN 'has above-average rows' ELSE 'none' END AS kind FROM %s GROUP BY %s",
				x.d, x.d, x.d, x.t, x.m, x.m, x.t, x.t, x.d)
		}},
	{title: "Correlated NOT EXISTS (an anti join): groups without a missing value",
		sql: func(x sqlExampleEnv) string {
			return fmt.Sprintf("SELECT DISTINCT a.%s FROM %s a WHERE NOT EXISTS (SELECT 1 FROM %s b WHERE b.%s = a.%s AND b.%s IS NULL)", x.d, x.t, x.t, x.d, x.d, x.m)
		}},
	{title: "Join another dataset on a shared key (USING)",
		needs: func(x sqlExampleEnv) bool { return x.join != nil },
		sql: func(x sqlExampleEnv) string {
			q := planner.QuoteIdent
			return fmt.Sprintf("SELECT o.%s, count(*) AS n FROM %s x JOIN %s o USING (%s) GROUP BY o.%s ORDER BY n DESC LIMIT 10",
				q(x.join.attr), x.t, q(x.join.other.ID), q(x.join.key), q(x.join.attr))
		}},
	{title: "Date bucketing: rows per month",
		needs: func(x sqlExampleEnv) bool { return x.date != "" },
		sql: func(x sqlExampleEnv) string {
			return fmt.Sprintf("SELECT date_trunc('month', %s) AS month, count(*) AS n FROM %s GROUP BY 1 ORDER BY 1", x.date, x.t)
		}},
	{title: "Aggregate FILTER and ROLLUP (subtotals and a grand total)",
		sql: func(x sqlExampleEnv) string {
			return fmt.Sprintf("SELECT %s, count(*) AS n, count(*) FILTER (WHERE %s IS NULL) AS missing FROM %s GROUP BY ROLLUP (%s)", x.d, x.m, x.t, x.d)
		}},
	{title: "Set operation: groups with rows both above and below the average",
		sql: func(x sqlExampleEnv) string {
			return fmt.Sprintf("SELECT %s FROM %s WHERE %s > (SELECT avg(%s) FROM %s) INTERSECT SELECT %s FROM %s WHERE %s < (SELECT avg(%s) FROM %s)",
				x.d, x.t, x.m, x.m, x.t, x.d, x.t, x.m, x.m, x.t)
		}},
}

// SQLExamples are the sql_reference prompt's worked advanced_query calls
// over the live catalog (the dataset given, or the one query_examples
// picks), with its dimension, measure and a real value; SQLExampleCount
// of them, the first of sqlExamples that apply.
func (s *Service) SQLExamples(ctx context.Context, dataset string) ([]Example, error) {
	d, prof, dim, measure, err := s.exampleColumns(ctx, dataset, "")
	if err != nil {
		return nil, err
	}
	q := planner.QuoteIdent
	x := sqlExampleEnv{t: q(d.ID), d: q(dim), m: "1", val: json.RawMessage("null"), v: "NULL"}
	if measure != "" {
		x.m = q(measure)
	}
	if top := prof[dim].TopValues; len(top) > 0 {
		x.val = top[0].Value
		x.v = sqlLiteral(top[0].Value)
	}
	if dc, _ := dateColumn(d, prof); dc != "" {
		x.date = q(dc)
	}
	if j, ok := joinPartner(s.cfg.Catalog.Datasets(), d); ok {
		x.join = &j
	}
	var out []Example
	for _, e := range sqlExamples {
		if len(out) == SQLExampleCount {
			break
		}
		if e.needs != nil && !e.needs(x) {
			continue
		}
		args := map[string]any{"sql": e.sql(x)}
		if e.param {
			args["params"] = []json.RawMessage{x.val}
		}
		out = append(out, Example{Title: e.title, Tool: "advanced_query", Args: args})
	}
	return out, nil
}

// sqlLiteral is a profiled value (JSON) as a SQL literal.
func sqlLiteral(v json.RawMessage) string {
	var s string
	if json.Unmarshal(v, &s) == nil {
		return sqlString(s)
	}
	return string(v)
}

// SQLDialect is the sql_reference prompt's summary of the dialect and the
// registry's function names (docs/SQL.md is the full reference).
func SQLDialect() string {
	var b strings.Builder
	b.WriteString(`advanced_query runs one read-only SELECT (PostgreSQL/DuckDB flavour) over catalog datasets; prefer query_data/aggregate for simple lookups.
Tables: dataset ids in double quotes ("weather/daily"), or the bare name when unique. Columns with odd names in double quotes.
Supported: SELECT [DISTINCT], JOIN (inner/left/right/full/cross, ON or USING), WHERE, GROUP BY (ordinals, expressions, GROUPING SETS/ROLLUP/CUBE), HAVING, WINDOW, ORDER BY [NULLS FIRST|LAST], LIMIT/OFFSET, WITH (non-recursive), subqueries in FROM, scalar, IN and EXISTS subqueries (correlated ones by equalities), UNION [ALL]/INTERSECT/EXCEPT, VALUES, CAST and ::, ILIKE, BETWEEN, IS [NOT] DISTINCT FROM, FILTER (WHERE ...), $1 parameters (params), EXPLAIN [ANALYZE].
Refused: anything but SELECT (forbidden_sql), table functions and file access, recursive CTEs, DISTINCT ON, LATERAL.
`)
	fmt.Fprintf(&b, "Functions: %s.\n", strings.Join(funcs.ScalarNames(), ", "))
	fmt.Fprintf(&b, "Aggregates: %s.\n", strings.Join(funcs.AggNames(), ", "))
	fmt.Fprintf(&b, "Window functions: %s.\n", strings.Join(funcs.WindowNames(), ", "))
	return b.String()
}

// exampleColumns resolves the examples' dataset (given, or picked from
// the catalog), its profile, dimension (column, or picked) and measure.
func (s *Service) exampleColumns(ctx context.Context, dataset, column string) (*catalog.Dataset, map[string]ColumnProfile, string, string, error) {
	d, sum, err := s.exampleDataset(ctx, dataset)
	if err != nil {
		return nil, nil, "", "", err
	}
	prof := map[string]ColumnProfile{}
	for _, c := range sum.Columns {
		prof[c.Name] = c
	}
	dim := column
	if dim == "" {
		dim = pickDimension(d, sum)
	}
	return d, prof, dim, pickMeasure(d, sum, dim), nil
}
