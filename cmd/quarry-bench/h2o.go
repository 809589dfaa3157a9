package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/quarrydb/quarry/catalog"
	"github.com/quarrydb/quarry/planner"
)

// The H2O / DuckDB Labs db-benchmark groupby questions (bench/h2o/README.md)
// as Quarry specs, G1-G10 over the table G1_<N>_1e2 (id1..id6, v1..v3),
// each stated as db-benchmark's SQL states it (never rewritten).

var h2oQueryNames = []string{"G1", "G2", "G3", "G4", "G5", "G6", "G7", "G8", "G9", "G10"}

func isH2OQuery(q string) bool {
	for _, n := range h2oQueryNames {
		if q == n {
			return true
		}
	}
	return false
}

// h2oSpec is question q; its group keys are h2oKeys(q).
func h2oSpec(q string) (planner.Spec, error) {
	agg := func(fn planner.AggFn, col, as string) planner.AggSpec {
		return planner.AggSpec{Col: col, Fn: fn, As: as}
	}
	sp := planner.Spec{GroupBy: h2oKeys(q)}
	switch q {
	case "G1", "G2":
		sp.Aggs = []planner.AggSpec{agg(planner.AggSum, "v1", "sum_v1")}
	case "G3":
		sp.Aggs = []planner.AggSpec{agg(planner.AggSum, "v1", "sum_v1"), agg(planner.AggAvg, "v3", "avg_v3")}
	case "G4":
		sp.Aggs = []planner.AggSpec{agg(planner.AggAvg, "v1", "avg_v1"), agg(planner.AggAvg, "v2", "avg_v2"), agg(planner.AggAvg, "v3", "avg_v3")}
	case "G5":
		sp.Aggs = []planner.AggSpec{agg(planner.AggSum, "v1", "sum_v1"), agg(planner.AggSum, "v2", "sum_v2"), agg(planner.AggSum, "v3", "sum_v3")}
	case "G6":
		sp.Aggs = []planner.AggSpec{agg(planner.AggMedian, "v3", "median_v3"), agg(planner.AggStddev, "v3", "sd_v3")}
	case "G7":
		sp.Aggs = []planner.AggSpec{agg(planner.AggMax, "v1", "max_v1"), agg(planner.AggMin, "v2", "min_v2")}
		sp.Columns = []string{"id3", "max_v1 - min_v2 AS range_v1_v2"}
	case "G8": // as db-benchmark's SQL: row_number() <= 2 per id6 by v3 descending, over the non-null v3
		return planner.Spec{
			Filters:      []planner.FilterSpec{{Col: "v3", Op: planner.OpIsNotNull}},
			TopNPerGroup: &planner.TopNPerGroupSpec{N: 2, By: []planner.OrderSpec{{Col: "v3", Desc: true}}, PartitionBy: h2oKeys(q)},
			Columns:      []string{"id6", "v3 AS largest2_v3"},
		}, nil
	case "G9":
		v2 := "v2"
		sp.Aggs = []planner.AggSpec{{Col: "v1", Fn: "corr", Arg: &v2, As: "r"}}
		sp.Columns = []string{"id2", "id4", "power(r, 2) AS r2"}
	case "G10":
		sp.Aggs = []planner.AggSpec{agg(planner.AggSum, "v3", "sum_v3"), agg(planner.AggCount, "*", "count")}
	default:
		return planner.Spec{}, fmt.Errorf("unknown query %q", q)
	}
	return sp, nil
}

// h2oKeys are question q's group keys (its answer's canonical order).
func h2oKeys(q string) []string {
	switch q {
	case "G1":
		return []string{"id1"}
	case "G2":
		return []string{"id1", "id2"}
	case "G3", "G7":
		return []string{"id3"}
	case "G4":
		return []string{"id4"}
	case "G5", "G8":
		return []string{"id6"}
	case "G6":
		return []string{"id4", "id5"}
	case "G9":
		return []string{"id2", "id4"}
	case "G10":
		return strings.Fields("id1 id2 id3 id4 id5 id6")
	}
	return nil
}

// h2oFirstRows is question q ordered by its keys, first rows only: the
// untimed query whose rows the RESULT line carries for the checksum.
func h2oFirstRows(q string) (planner.Spec, error) {
	sp, err := h2oSpec(q)
	if err != nil {
		return sp, err
	}
	for _, k := range h2oKeys(q) {
		sp.OrderBy = append(sp.OrderBy, planner.OrderSpec{Col: k})
	}
	if q == "G8" {
		sp.OrderBy = append(sp.OrderBy, planner.OrderSpec{Col: "largest2_v3", Desc: true})
	}
	n := int64(firstRows)
	sp.Limit = &n
	return sp, nil
}

// describeH2O sets cols, kinds and first_rows of question q from its
// key-ordered first rows (run untimed, after the timed run).
func (r *runner) describeH2O(ctx context.Context, q string, ds *catalog.Dataset, src catalog.Source, rec map[string]any) error {
	plan, err := r.queryPlan(ctx, q, ds, src, true)
	if err != nil {
		return err
	}
	schema, batches, _, err := r.executePlan(ctx, plan, src)
	defer func() {
		for _, b := range batches {
			b.Release()
		}
	}()
	if err != nil {
		return err
	}
	describe(schema, batches, rec)
	return nil
}
