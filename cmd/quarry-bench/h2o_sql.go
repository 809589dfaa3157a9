package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/quarrydb/quarry/catalog"
	"github.com/quarrydb/quarry/internal/qerr"
	"github.com/quarrydb/quarry/planner"
	"github.com/quarrydb/quarry/sqlfront"
)

// The H2O questions written in SQL, as a model would write them for
// advanced_query: with --h2o-sql quarry-bench plans G1-G10 from this text
// (sqlfront, the compiler behind advanced_query) instead of their knob
// specs. TestH2OSQLPlans checks that each compiles to the same optimized
// plan as its knob spec, so the two run alike (docs/BENCHMARKS.md).

// h2oSQL is question q over table (quoted), its answer ordered by its keys
// and limited to the first rows when first is set (the untimed answer).
func h2oSQL(q, table string, first bool) (string, error) {
	keys := strings.Join(h2oKeys(q), ", ")
	var sel string
	switch q {
	case "G1", "G2":
		sel = "sum(v1) AS sum_v1"
	case "G3":
		sel = "sum(v1) AS sum_v1, avg(v3) AS avg_v3"
	case "G4":
		sel = "avg(v1) AS avg_v1, avg(v2) AS avg_v2, avg(v3) AS avg_v3"
	case "G5":
		sel = "sum(v1) AS sum_v1, sum(v2) AS sum_v2, sum(v3) AS sum_v3"
	case "G6":
		sel = "median(v3) AS median_v3, stddev(v3) AS sd_v3"
	case "G7":
		sel = "max(v1) - min(v2) AS range_v1_v2"
	case "G8":
		text := fmt.Sprintf("SELECT id6, v3 AS largest2_v3 FROM (SELECT id6, v3, row_number() OVER (PARTITION BY id6 ORDER BY v3 DESC) AS rn FROM %s WHERE v3 IS NOT NULL) s WHERE rn <= 2", table)
		if first {
			text += fmt.Sprintf(" ORDER BY %s, largest2_v3 DESC LIMIT %d", keys, firstRows)
		}
		return text, nil
	case "G9":
		sel = "power(corr(v1, v2), 2) AS r2"
	case "G10":
		sel = "sum(v3) AS sum_v3, count(*) AS count"
	default:
		return "", fmt.Errorf("unknown query %q", q)
	}
	text := fmt.Sprintf("SELECT %s, %s FROM %s GROUP BY %s", keys, sel, table, keys)
	if first {
		text += fmt.Sprintf(" ORDER BY %s LIMIT %d", keys, firstRows)
	}
	return text, nil
}

// sqlTable is a dataset id as a SQL table name (always double-quoted:
// unquoted names fold to lower case).
func sqlTable(id string) string { return `"` + strings.ReplaceAll(id, `"`, `""`) + `"` }

// oneTable is the SQL catalog of one dataset.
type oneTable planner.Input

func (t oneTable) Input(_ context.Context, name string) (planner.Input, error) {
	if name != t.Dataset {
		return planner.Input{}, qerr.NotFound(qerr.CodeDatasetNotFound, "dataset %q not found (only %q)", name, t.Dataset)
	}
	return planner.Input(t), nil
}

// sqlPlan compiles text over in (the only table) and optimizes the plan.
func sqlPlan(ctx context.Context, text string, in planner.Input) (planner.Node, error) {
	st, err := sqlfront.Parse(text)
	if err != nil {
		return nil, err
	}
	c, err := st.Compile(ctx, oneTable(in), nil)
	if err != nil {
		return nil, err
	}
	return planner.Optimize(c.Plan, planner.OptimizeOptions{})
}

// queryPlan is the optimized plan of query q over ds: from its SQL text
// for an H2O question under --h2o-sql, else from its knob spec; first: the
// key-ordered first rows of an H2O question.
func (r *runner) queryPlan(ctx context.Context, q string, ds *catalog.Dataset, src catalog.Source, first bool) (planner.Node, error) {
	in := datasetInput(ds, src)
	if r.o.h2oSQL && isH2OQuery(q) {
		text, err := h2oSQL(q, sqlTable(ds.ID), first)
		if err != nil {
			return nil, err
		}
		plan, err := sqlPlan(ctx, text, in)
		if err != nil {
			return nil, err
		}
		return pushSubtrees(plan, ds, src)
	}
	sp, err := spec(q)
	if first {
		sp, err = h2oFirstRows(q)
	}
	if err != nil {
		return nil, err
	}
	// Filters go into the source that takes them, as the service's
	// prepared queries push them (a Parquet file's scan, or a CSV file too
	// big for the cache).
	pushdown, _ := src.(planner.FilterPushdowner)
	plan, err := specPlanWith(sp, in, planner.OptimizeOptions{Pushdown: pushdown})
	if err != nil {
		return nil, err
	}
	return pushSubtrees(plan, ds, src)
}

// pushSubtrees hands src the subtrees it runs itself, as the service does
// after optimizing (a Parquet file's counts, planner.SubtreePusher).
func pushSubtrees(plan planner.Node, ds *catalog.Dataset, src catalog.Source) (planner.Node, error) {
	return planner.PushSubtree(plan, func(dataset string) planner.SubtreePusher {
		if p, ok := src.(planner.SubtreePusher); ok && dataset == ds.ID {
			return p
		}
		return nil
	})
}
