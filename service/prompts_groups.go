package service

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"

	"github.com/quarrydb/quarry/catalog"
	"github.com/quarrydb/quarry/planner"
)

// groupShapeExamples are the query_examples of group_by expressions and
// having: a histogram of measure (buckets of a round width spanning its
// profiled range in about ten steps) and the groups of dim with at least as
// many rows as its third most frequent value. Either is left out when the
// profile lacks what it needs.
func groupShapeExamples(d *catalog.Dataset, prof map[string]ColumnProfile, dim, measure string) []Example {
	var out []Example
	if w, ok := bucketWidth(prof[measure]); ok && measure != "" {
		ws := strconv.FormatFloat(w, 'g', -1, 64)
		key := fmt.Sprintf("floor(%s / %s) * %s", planner.QuoteIdent(measure), ws, ws)
		out = append(out, Example{Title: fmt.Sprintf("Histogram of %s: rows per bucket of width %s (group by an expression)", measure, ws), Tool: "aggregate",
			Args: map[string]any{"dataset": d.ID, "group_by": []any{map[string]any{"expr": key, "as": "bucket"}},
				"aggs": []map[string]any{{"col": "*", "fn": "count", "as": "rows"}}, "order_by": []map[string]any{{"col": "bucket"}}}})
	}
	if top := prof[dim].TopValues; len(top) > 0 {
		n := top[min(2, len(top)-1)].Count
		out = append(out, Example{Title: fmt.Sprintf("Values of %s with at least %d rows (having filters the groups)", dim, n), Tool: "aggregate",
			Args: map[string]any{"dataset": d.ID, "group_by": []string{dim}, "aggs": []map[string]any{{"col": "*", "fn": "count"}},
				"having":   []map[string]any{{"col": "count_all", "op": "gte", "value": n}},
				"order_by": []map[string]any{{"col": "count_all", "desc": true}}}})
	}
	return out
}

// bucketWidth is a round width (1, 2 or 5 times a power of ten) that cuts
// the profiled range of a numeric column into about ten buckets.
func bucketWidth(p ColumnProfile) (float64, bool) {
	var lo, hi float64
	if json.Unmarshal(p.Min, &lo) != nil || json.Unmarshal(p.Max, &hi) != nil || !(hi > lo) || math.IsInf(hi-lo, 0) {
		return 0, false
	}
	raw := (hi - lo) / 10
	exp := math.Pow(10, math.Floor(math.Log10(raw)))
	for _, m := range []float64{1, 2, 5} {
		if m*exp >= raw {
			return m * exp, true
		}
	}
	return 10 * exp, true
}
