package service

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/quarrydb/quarry/catalog"
	"github.com/quarrydb/quarry/internal/funcs"
	"github.com/quarrydb/quarry/planner"
)

// vocabExamples are the query_examples of the expression vocabulary: string
// functions (groups by the first letter of a string dimension), dates
// (monthly rows with month-over-month change by lag, and a date window with
// INTERVAL arithmetic), a having expression over aggregate outputs, and a
// join with another dataset of the catalog sharing a key column. Each is
// left out when the dataset lacks what it needs.
func vocabExamples(all []*catalog.Dataset, d *catalog.Dataset, prof map[string]ColumnProfile, dim, measure string) []Example {
	var out []Example
	q := planner.QuoteIdent
	if f, ok := fieldOf(d.Schema, dim); ok && funcs.IsString(funcs.Decoded(f.Type)) {
		out = append(out, Example{Title: fmt.Sprintf("Rows per first letter of %s (string functions in a group key)", dim), Tool: "aggregate",
			Args: map[string]any{"dataset": d.ID, "group_by": []string{fmt.Sprintf("upper(left(trim(%s), 1)) AS initial", q(dim))},
				"aggs": []map[string]any{{"col": "*", "fn": "count", "as": "rows"}}, "order_by": []map[string]any{{"col": "rows", "desc": true}}, "top_n": 5}})
	}
	if dc, min := dateColumn(d, prof); dc != "" {
		month := fmt.Sprintf("date_trunc('month', %s)", q(dc))
		out = append(out, Example{Title: fmt.Sprintf("Rows per month of %s and the change from the month before (dates, lag)", dc), Tool: "query_data",
			Args: map[string]any{"dataset": d.ID, "group_by": []string{month + " AS month"}, "aggs": []map[string]any{{"col": "*", "fn": "count", "as": "rows"}},
				"windows": []map[string]any{{"fn": "lag", "col": "rows", "order_by": []map[string]any{{"col": "month"}}, "default": 0, "as": "prev"}},
				"columns": []string{"month", "rows", "rows - prev AS change"}, "order_by": []map[string]any{{"col": "month"}}}})
		out = append(out, Example{Title: fmt.Sprintf("The first week of data: %s before its first value + INTERVAL '7 days' (date arithmetic)", dc), Tool: "query_data",
			Args: map[string]any{"dataset": d.ID, "filters": []map[string]any{{"expr": fmt.Sprintf("%s < CAST(%s AS timestamp) + INTERVAL '7 days'", q(dc), sqlString(min))}},
				"columns": []string{dc, fmt.Sprintf("strftime(%s, '%%Y-%%m-%%d') AS day", q(dc))}, "limit": 10}})
	}
	if lo, hi, ok := numRange(prof[measure]); ok && measure != "" {
		half := strconv.FormatFloat((hi-lo)/2, 'g', 6, 64)
		out = append(out, Example{Title: fmt.Sprintf("Values of %s whose %s spreads over more than half its whole range (having on an expression)", dim, measure), Tool: "aggregate",
			Args: map[string]any{"dataset": d.ID, "group_by": []string{dim},
				"aggs":   []map[string]any{{"col": measure, "fn": "max"}, {"col": measure, "fn": "min"}},
				"having": []map[string]any{{"expr": fmt.Sprintf("%s - %s > %s", q("max_"+measure), q("min_"+measure), half)}}}})
	}
	if j, ok := joinPartner(all, d); ok {
		out = append(out, Example{Title: fmt.Sprintf("Join %s on %s: rows per %s", j.other.ID, j.key, j.by), Tool: "aggregate",
			Args: map[string]any{"dataset": d.ID, "join": []map[string]any{{"dataset": j.other.ID, "on": []map[string]any{{"left": j.key, "right": j.key}}, "columns": []string{j.attr}}},
				"group_by": []string{j.by}, "aggs": []map[string]any{{"col": "*", "fn": "count", "as": "rows"}}, "order_by": []map[string]any{{"col": "rows", "desc": true}}}})
	}
	return out
}

// dateColumn is d's first date or timestamp column with a profiled
// minimum, and that minimum as text.
func dateColumn(d *catalog.Dataset, prof map[string]ColumnProfile) (string, string) {
	for _, f := range d.Schema.Fields() {
		if id := f.Type.ID(); id != arrow.DATE32 && id != arrow.TIMESTAMP {
			continue
		}
		var min string
		if json.Unmarshal(prof[f.Name].Min, &min) == nil && min != "" {
			return f.Name, min
		}
	}
	return "", ""
}

func numRange(p ColumnProfile) (lo, hi float64, ok bool) {
	if json.Unmarshal(p.Min, &lo) != nil || json.Unmarshal(p.Max, &hi) != nil || !(hi > lo) {
		return 0, 0, false
	}
	return lo, hi, true
}

func sqlString(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

type joinExample struct {
	other    *catalog.Dataset
	key      string // the shared key column
	attr, by string // a string column of other, and its joined name (alias.col)
}

// joinPartner finds a smaller dataset of the catalog with a column of d's
// name and kind (string or integer) ending in "id" or "code", and a string
// attribute to group by.
func joinPartner(all []*catalog.Dataset, d *catalog.Dataset) (joinExample, bool) {
	kind := func(t arrow.DataType) string {
		switch t = funcs.Decoded(t); {
		case funcs.IsString(t):
			return "string"
		case arrow.IsInteger(t.ID()):
			return "integer"
		}
		return ""
	}
	for _, f := range d.Schema.Fields() {
		k := kind(f.Type)
		if low := strings.ToLower(f.Name); k == "" || !(strings.HasSuffix(low, "id") || strings.HasSuffix(low, "code")) {
			continue
		}
		for _, x := range all {
			if x.ID == d.ID || x.RowCount >= d.RowCount {
				continue
			}
			g, ok := fieldOf(x.Schema, f.Name)
			if !ok || kind(g.Type) != k {
				continue
			}
			for _, a := range x.Schema.Fields() {
				if a.Name != f.Name && kind(a.Type) == "string" && !strings.Contains(a.Name, ".") {
					return joinExample{other: x, key: f.Name, attr: a.Name, by: planner.JoinedName(planner.JoinAlias(x.ID), a.Name)}, true
				}
			}
		}
	}
	return joinExample{}, false
}
