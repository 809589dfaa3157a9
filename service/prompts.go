package service

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/quarrydb/quarry/catalog"
	"github.com/quarrydb/quarry/internal/qerr"
	"github.com/quarrydb/quarry/planner"
)

// overviewMaxDatasets bounds the datasets listed by SchemaCardsOverview.
const overviewMaxDatasets = 40

// SchemaCardsOverview is the text of the schema_cards_overview prompt: per
// dataset its id, size, description, tags and columns with type, role and
// unit, one compact block each. dataset "" lists every dataset (up to 40).
func (s *Service) SchemaCardsOverview(ctx context.Context, dataset string) (string, error) {
	var ds []*catalog.Dataset
	if dataset != "" {
		d, err := s.lookup(ctx, dataset)
		if err != nil {
			return "", err
		}
		ds = []*catalog.Dataset{d}
	} else {
		ds = s.cfg.Catalog.Datasets()
	}
	var b strings.Builder
	if dataset == "" {
		fmt.Fprintf(&b, "Quarry serves %d datasets (%s). Columns: name type [role, unit]; roles come from schema cards.\n",
			len(ds), s.DataRootLabel())
	}
	for i, d := range ds {
		if i == overviewMaxDatasets {
			fmt.Fprintf(&b, "\n... and %d more: call get_catalog (filter with query, kinds or tags).\n", len(ds)-i)
			break
		}
		fmt.Fprintf(&b, "\n%s — %s rows, %d columns", d.ID, approxCount(d.RowCount, d.RowCountExact), d.Schema.NumFields())
		if d.Description != "" {
			fmt.Fprintf(&b, ". %s", oneLine(d.Description, 200))
		}
		if d.Card != nil && len(d.Card.Tags) > 0 {
			keys := make([]string, 0, len(d.Card.Tags))
			for k := range d.Card.Tags {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			pairs := make([]string, len(keys))
			for j, k := range keys {
				pairs[j] = k + "=" + d.Card.Tags[k]
			}
			fmt.Fprintf(&b, " (tags: %s)", strings.Join(pairs, ", "))
		}
		b.WriteString("\n  ")
		cols := make([]string, 0, d.Schema.NumFields())
		for _, f := range d.Schema.Fields() {
			c := f.Name + " " + planner.TypeName(f.Type)
			cc := d.Card.Column(f.Name)
			var extra []string
			if cc.Role != "" {
				extra = append(extra, cc.Role)
			}
			if cc.Unit != "" {
				extra = append(extra, cc.Unit)
			}
			if len(extra) > 0 {
				c += " [" + strings.Join(extra, ", ") + "]"
			}
			cols = append(cols, c)
		}
		b.WriteString(strings.Join(cols, "; "))
		b.WriteString("\n")
	}
	b.WriteString("\nExact column descriptions and example values: resource quarry://datasets/{dataset}/schema (or get_schema).\n")
	return b.String(), nil
}

func approxCount(n int64, exact bool) string {
	s := groupDigits(n)
	if !exact {
		return "~" + s
	}
	return s
}

func groupDigits(n int64) string {
	s := fmt.Sprint(n)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var out []byte
	for i := range len(s) {
		if i > 0 && (len(s)-i)%3 == 0 {
			out = append(out, ',')
		}
		out = append(out, s[i])
	}
	if neg {
		return "-" + string(out)
	}
	return string(out)
}

func oneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}

// QueryExamples generates small, correct tool calls for the live catalog:
// finding filter values, a filter, a group-by, a histogram (group by an
// expression), a having, per-group statistics with a filtered aggregate
// (with a numeric column), window functions, a top 2 per group, a size
// estimate, a page walk and a Parquet export, with real column names and
// values. dataset and column focus them ("" picks a dataset and a column).
func (s *Service) QueryExamples(ctx context.Context, dataset, column string) ([]Example, error) {
	d, sum, err := s.exampleDataset(ctx, dataset)
	if err != nil {
		return nil, err
	}
	prof := map[string]ColumnProfile{}
	for _, c := range sum.Columns {
		prof[c.Name] = c
	}
	if column != "" {
		if _, ok := prof[column]; !ok {
			return nil, qerr.Invalid(qerr.CodeInvalidColumn, "dataset %q has no column %q", d.ID, column).
				With("suggestions", qerr.Suggest(column, columnNames(d.Schema), 3)).WithHint("get_schema lists the columns")
		}
	}
	dim := column
	if dim == "" {
		dim = pickDimension(d, sum)
	}
	measure := pickMeasure(d, sum, dim)
	others := []string{dim}
	if measure != "" {
		others = append(others, measure)
	}
	for _, f := range d.Schema.Fields() {
		if len(others) >= 3 {
			break
		}
		if f.Name != dim && f.Name != measure && profilable(f.Type) {
			others = append([]string{f.Name}, others...)
		}
	}
	var top []json.RawMessage
	for _, v := range prof[dim].TopValues {
		top = append(top, v.Value)
	}
	if len(top) == 0 && prof[dim].Min != nil {
		top = append(top, prof[dim].Min)
	}

	var out []Example
	out = append(out, Example{Title: fmt.Sprintf("Find valid filter values of %s (most frequent first)", dim), Tool: "distinct_values",
		Args: map[string]any{"dataset": d.ID, "column": dim, "limit": 10}})
	if len(top) > 0 {
		out = append(out, Example{Title: fmt.Sprintf("Filter rows where %s equals a real value", dim), Tool: "query_data",
			Args: map[string]any{"dataset": d.ID, "columns": others,
				"filters": []map[string]any{{"col": dim, "op": "eq", "value": top[0]}}, "limit": 10}})
	}
	aggs := []map[string]any{{"col": "*", "fn": "count"}}
	if measure != "" {
		aggs = append(aggs, map[string]any{"col": measure, "fn": "avg", "as": "avg_" + measure})
	}
	out = append(out, Example{Title: fmt.Sprintf("Group by %s: row count%s, top 5 groups", dim, map[bool]string{true: " and average " + measure}[measure != ""]),
		Tool: "aggregate", Args: map[string]any{"dataset": d.ID, "group_by": []string{dim}, "aggs": aggs,
			"order_by": []map[string]any{{"col": "count_all", "desc": true}}, "top_n": 5}})
	out = append(out, groupShapeExamples(d, prof, dim, measure)...)
	out = append(out, vocabExamples(s.cfg.Catalog.Datasets(), d, prof, dim, measure)...)
	if measure != "" {
		out = append(out, Example{Title: fmt.Sprintf("Per %s: spread and 90th percentile of %s, and the rows with %s > 0 (an aggregate with its own filter)", dim, measure, measure),
			Tool: "aggregate", Args: map[string]any{"dataset": d.ID, "group_by": []string{dim}, "aggs": []map[string]any{
				{"col": measure, "fn": "stddev_pop"},
				{"col": measure, "fn": "approx_quantile", "q": 0.9, "as": "p90_" + measure},
				{"col": "*", "fn": "count", "as": "rows_" + measure + "_gt_0", "filter": []map[string]any{{"col": measure, "op": "gt", "value": 0}}}},
				"top_n": 10}})
		out = append(out, Example{Title: fmt.Sprintf("Window functions: each %s's share of the total %s and its rank", dim, measure), Tool: "query_data",
			Args: map[string]any{"dataset": d.ID, "group_by": []string{dim}, "aggs": []map[string]any{{"col": measure, "fn": "sum", "as": "total"}},
				"windows": []map[string]any{{"fn": "sum", "col": "total", "as": "grand_total"},
					{"fn": "rank", "order_by": []map[string]any{{"col": "total", "desc": true}}, "as": "rank"}},
				"columns": []string{dim, "total", "total / grand_total AS share", "rank"}, "order_by": []map[string]any{{"col": "rank"}}}})
		out = append(out, Example{Title: fmt.Sprintf("Largest two %s per %s (rows, not aggregates)", measure, dim), Tool: "query_data",
			Args: map[string]any{"dataset": d.ID, "group_by": []string{dim}, "columns": []string{dim, measure},
				"filters":         []map[string]any{{"col": measure, "op": "is_not_null"}},
				"top_n_per_group": map[string]any{"n": 2, "by": []map[string]any{{"col": measure, "desc": true}}}}})
	}
	out = append(out, Example{Title: "Check the size of a query before running it", Tool: "estimate_query",
		Args: map[string]any{"dataset": d.ID, "columns": others}})
	big := d
	if dataset == "" {
		for _, x := range s.cfg.Catalog.Datasets() {
			if x.RowCount > big.RowCount && hasProfilable(x.Schema) {
				big = x
			}
		}
	}
	var pageCols []string
	for _, f := range big.Schema.Fields() {
		if len(pageCols) < 3 && profilable(f.Type) {
			pageCols = append(pageCols, f.Name)
		}
	}
	out = append(out, Example{Title: "Walk a bigger result page by page (100 rows a page, first 1,000 rows)", Tool: "query_data",
		Args: map[string]any{"dataset": big.ID, "columns": pageCols, "limit": 1000, "max_rows": 100},
		Then: "the answer has method=handle, result_handle and page_info.page_token: call query_next_page {result_handle, page_token} with the newest page_token until page_info.has_more is false"})
	exp := Example{Title: "Export a whole filtered result as a Parquet file resource", Tool: "query_data",
		Args: map[string]any{"dataset": d.ID, "output_format": "parquet"},
		Then: "the answer is method=file with resource_uri (however small the result): read its rows with read_result {resource_uri}"}
	if s.ExportEnabled() {
		exp.Then += ", or save it with export"
	}
	if len(top) > 1 {
		exp.Args["filters"] = []map[string]any{{"col": dim, "op": "in", "value": top[:2]}}
	}
	out = append(out, exp)
	out = append(out, chartExamples(d, prof, dim, measure)...)
	return out, nil
}

// exampleDataset is the dataset examples are built on (given, or picked
// from the catalog) and its summary.
func (s *Service) exampleDataset(ctx context.Context, dataset string) (*catalog.Dataset, *SummaryResponse, error) {
	var d *catalog.Dataset
	var err error
	if dataset != "" {
		if d, err = s.lookup(ctx, dataset); err != nil {
			return nil, nil, err
		}
	} else if d = pickExampleDataset(s.cfg.Catalog.Datasets()); d == nil {
		return nil, nil, qerr.NotFound(qerr.CodeDatasetNotFound, "the catalog has no datasets to build examples from").
			WithHint("add CSV files under the data root")
	}
	sum, err := s.Summary(ctx, d.ID)
	if err != nil {
		return nil, nil, err
	}
	return d, sum, nil
}

func columnNames(s *arrow.Schema) []string {
	out := make([]string, s.NumFields())
	for i, f := range s.Fields() {
		out[i] = f.Name
	}
	return out
}

func hasProfilable(s *arrow.Schema) bool {
	for _, f := range s.Fields() {
		if profilable(f.Type) {
			return true
		}
	}
	return false
}

// pickExampleDataset prefers a dataset with both a string and a numeric
// column, then more rows; nil when the catalog is empty.
func pickExampleDataset(ds []*catalog.Dataset) *catalog.Dataset {
	var best *catalog.Dataset
	bestScore := -1
	for _, d := range ds {
		score := 0
		var str, num bool
		for _, f := range d.Schema.Fields() {
			switch {
			case f.Type.ID() == arrow.STRING || f.Type.ID() == arrow.LARGE_STRING || f.Type.ID() == arrow.DICTIONARY:
				str = true
			case isNumber(f.Type):
				num = true
			}
		}
		if !hasProfilable(d.Schema) {
			continue
		}
		if str {
			score += 2
		}
		if num {
			score++
		}
		if best == nil || score > bestScore || (score == bestScore && d.RowCount > best.RowCount && d.RowCount <= 1_000_000) {
			best, bestScore = d, score
		}
	}
	return best
}

func isNumber(t arrow.DataType) bool {
	switch t.ID() {
	case arrow.INT8, arrow.INT16, arrow.INT32, arrow.INT64, arrow.UINT8, arrow.UINT16, arrow.UINT32, arrow.UINT64,
		arrow.FLOAT32, arrow.FLOAT64:
		return true
	}
	return false
}

// pickDimension chooses a column to filter and group by: a card role
// "dimension", else the string (or bool) column with the fewest distinct
// values (at least 2), else any profiled column.
func pickDimension(d *catalog.Dataset, sum *SummaryResponse) string {
	best, bestN := "", int64(-1)
	for _, c := range sum.Columns {
		f, _ := fieldOf(d.Schema, c.Name)
		if c.Role == "dimension" && profilable(f.Type) {
			return c.Name
		}
		id := f.Type.ID()
		if id != arrow.STRING && id != arrow.LARGE_STRING && id != arrow.DICTIONARY && id != arrow.BOOL {
			continue
		}
		if c.DistinctEstimate >= 2 && len(c.TopValues) > 0 && (bestN < 0 || c.DistinctEstimate < bestN) {
			best, bestN = c.Name, c.DistinctEstimate
		}
	}
	if best != "" {
		return best
	}
	for _, c := range sum.Columns {
		if f, _ := fieldOf(d.Schema, c.Name); profilable(f.Type) && len(c.TopValues) > 0 {
			return c.Name
		}
	}
	for _, f := range d.Schema.Fields() {
		if profilable(f.Type) {
			return f.Name
		}
	}
	return d.Schema.Field(0).Name
}

// pickMeasure chooses a numeric column to average: a card role "measure",
// else a float column, else a non-unique integer column ("" if none).
func pickMeasure(d *catalog.Dataset, sum *SummaryResponse, not string) string {
	var fallback string
	for _, c := range sum.Columns {
		f, _ := fieldOf(d.Schema, c.Name)
		if c.Name == not || !isNumber(f.Type) {
			continue
		}
		if c.Role == "measure" {
			return c.Name
		}
		if f.Type.ID() == arrow.FLOAT64 || f.Type.ID() == arrow.FLOAT32 {
			if fallback == "" || !strings.HasPrefix(fallback, "f:") {
				fallback = "f:" + c.Name
			}
		} else if fallback == "" && c.DistinctEstimate < sum.ProfiledRows {
			fallback = "i:" + c.Name
		}
	}
	if fallback == "" {
		return ""
	}
	return fallback[2:]
}

func fieldOf(s *arrow.Schema, name string) (arrow.Field, bool) {
	idx := s.FieldIndices(name)
	if len(idx) == 0 {
		return arrow.Field{Type: arrow.Null}, false
	}
	return s.Field(idx[0]), true
}

// SizeGuidelines is the text of the size_management_guidelines prompt:
// when to estimate, page or export, with the caps in force.
func (s *Service) SizeGuidelines() string {
	caps := s.cfg.Materializer.Caps()
	rows, bytes := s.ConfirmThresholds()
	confirm := "Confirmation is off on this server."
	if rows > 0 || bytes > 0 {
		confirm = fmt.Sprintf("query_data and aggregate ask first when the estimate exceeds %s rows or %s of JSON: "+
			"the client shows the user a choice (Parquet file / first page / cancel), or the tool answers status=needs_confirmation "+
			"with options; ask the user, then call again with the chosen option's args (e.g. confirm: true).",
			thresholdText(rows), thresholdBytes(bytes))
	}
	return fmt.Sprintf(`Size management on this Quarry server

Hard caps for inline results: %d rows, %s of JSON, %d cells (rows x columns). max_rows / max_bytes may lower them per call, never raise them.
- Small results come back inline (method=direct). Nothing is ever cut silently: total_rows is exact and truncated says whether rows are withheld.
- Start cheap: get_catalog (row counts), get_schema, distinct_values (valid filter values), get_schema with include_summary.
- Before a query that may be big, call estimate_query: row_estimate, byte_estimate (JSON), warnings, suggested caps. Estimates of files over %s are sampled from the first %d rows.
- Prefer to shrink the result: filters, fewer columns, aggregate (group_by + aggs, top_n), a limit.
- Need the rows themselves? With output_format=json (default) a big result becomes a result handle: page with query_next_page (%d rows a page; handles expire after %s idle).
- Need everything at once (for a file, a notebook, another tool)? Use output_format=parquet (or csv): a file (quarry://artifacts/...) whose rows read_result pages through (resources/read returns up to %s a message), kept for %s.
- %s
- Each query may run %s and use %s of memory; a query over it fails with timeout or resource_exhausted: narrow it.
`, caps.MaxRows, humanBytes(caps.MaxBytes), caps.MaxCells, humanBytes(s.cfg.ExactEstimateBytes), s.cfg.SampleRows,
		caps.PageRows, s.cfg.HandleTTL, humanBytes(s.cfg.ResourceReadLimit), s.cfg.ArtifactTTL, confirm,
		s.cfg.QueryTimeout, humanBytes(s.cfg.QueryMemory))
}

func thresholdText(n int64) string {
	if n <= 0 {
		return "(no limit)"
	}
	return groupDigits(n)
}

func thresholdBytes(n int64) string {
	if n <= 0 {
		return "(no limit)"
	}
	return humanBytes(n)
}
