package mcpapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/quarrydb/quarry/demodata"
	"github.com/quarrydb/quarry/internal/app"
	"github.com/quarrydb/quarry/internal/testutil/golden"
	"github.com/quarrydb/quarry/mcpapi"
)

// example is one documented tool call, run for real against the demo data.
type example struct {
	tool, title string
	args        string
	// after runs the call with the previous example's result (for paging).
	next func(prev map[string]any) string
}

var examples = []example{
	{tool: "get_catalog", title: "Datasets whose id or path contains \"weather\"", args: `{"query": "weather"}`},
	{tool: "get_schema", title: "Columns and sample rows", args: `{"dataset": "weather/stations"}`},
	{tool: "estimate_query", title: "Size and plan of a grouped query", args: `{"dataset": "sales/orders", "filters": [{"col": "region", "op": "in", "value": ["Shirak", "Lori"]}], "group_by": ["category"], "aggs": [{"col": "qty", "fn": "sum"}, {"col": "*", "fn": "count"}], "order_by": [{"col": "sum_qty", "desc": true}]}`},
	{tool: "query_data", title: "A small aggregate comes back inline (direct)", args: `{"dataset": "sales/orders", "group_by": ["region"], "aggs": [{"col": "*", "fn": "count"}, {"col": "unit_price", "fn": "avg", "as": "avg_price"}], "order_by": [{"col": "count_all", "desc": true}], "limit": 3}`},
	{tool: "query_data", title: "A large result as a file resource (parquet)", args: `{"dataset": "weather/daily", "columns": ["station_id", "date", "tmax_c"], "filters": [{"col": "tmax_c", "op": "gte", "value": 30}], "output_format": "parquet"}`},
	{tool: "query_data", title: "A large result as a result handle (json pages)", args: `{"dataset": "sensors/readings", "columns": ["id", "sensor", "value"], "filters": [{"col": "sensor", "op": "eq", "value": "S-001"}]}`},
	{tool: "query_next_page", title: "The next page of that handle", next: func(prev map[string]any) string {
		pi := prev["page_info"].(map[string]any)
		b, _ := json.Marshal(map[string]any{"result_handle": prev["result_handle"], "page_token": pi["page_token"]})
		return string(b)
	}},
	{tool: "read_dataset_slice", title: "A 2x3 block of a chunked, compressed 2-D HDF5 array", args: `{"uri": "h5://physics/experiment.h5?path=/detector/image", "slice_str": "0:2, 0:3"}`},
	{tool: "query_data", title: "Per-operator statistics (explain analyze)", args: `{"dataset": "sales/orders", "filters": [{"col": "region", "op": "eq", "value": "Lori"}], "group_by": ["category"], "aggs": [{"col": "qty", "fn": "sum"}], "order_by": [{"col": "sum_qty", "desc": true}], "limit": 2, "explain": "analyze"}`},
	{tool: "advanced_query", title: "SQL: a join, a group by and a window (rank within country)", args: `{"sql": "SELECT s.country, s.name, max(d.tmax_c) AS hottest, rank() OVER (PARTITION BY s.country ORDER BY max(d.tmax_c) DESC) AS r FROM \"weather/daily\" d JOIN \"weather/stations\" s ON d.station_id = s.station_id GROUP BY s.country, s.name ORDER BY s.country, r LIMIT 4"}`},
	{tool: "distinct_values", title: "Valid filter values, most frequent first", args: `{"dataset": "sales/orders", "column": "category", "limit": 3}`},
	{tool: "distinct_values", title: "Within a subset, only values seen at least 30 times", args: `{"dataset": "weather/daily", "column": "snow", "filters": [{"col": "station_id", "op": "in", "value": ["AM01", "AM02"]}], "min_count": 30}`},
	{tool: "aggregate", title: "Top 3 categories by units sold in two regions", args: `{"dataset": "sales/orders", "group_by": ["category"], "aggs": [{"col": "qty", "fn": "sum", "as": "units"}, {"col": "*", "fn": "count"}], "filters": [{"col": "region", "op": "in", "value": ["Shirak", "Lori"]}], "top_n": 3}`},
	{tool: "aggregate", title: "Stations with more than 13 snow days: having filters the groups", args: `{"dataset": "weather/daily", "group_by": ["station_id"], "aggs": [{"col": "*", "fn": "count", "as": "snow_days"}], "filters": [{"col": "snow", "op": "eq", "value": true}], "having": [{"col": "snow_days", "op": "gt", "value": 13}], "order_by": [{"col": "snow_days", "desc": true}]}`},
	{tool: "aggregate", title: "Histogram of daily highs: group by an expression, 5-degree buckets", args: `{"dataset": "weather/daily", "group_by": [{"expr": "floor(tmax_c / 5) * 5", "as": "bucket"}], "aggs": [{"col": "*", "fn": "count", "as": "days"}], "order_by": [{"col": "bucket"}]}`},
	{tool: "get_server_info", title: "Limits and features", args: `{}`},
	{tool: "plot", title: "A histogram of daily highs (the PNG comes as an image content item beside this summary)", args: `{"dataset": "weather/daily", "chart": {"kind": "histogram", "x": "tmax_c", "bins": 10}}`},
	{tool: "plot", title: "Average high per month and country as a line chart, Vega-Lite instead of PNG (data shortened)", args: `{"dataset": "weather/daily", "spec": {"join": [{"dataset": "weather/stations", "on": [{"left": "station_id", "right": "station_id"}], "columns": ["country"]}], "filters": [{"col": "stations.country", "op": "in", "value": ["Armenia", "Iceland"]}], "group_by": ["month(date) AS month", "stations.country"], "aggs": [{"col": "tmax_c", "fn": "avg", "as": "avg_high"}]}, "chart": {"kind": "line", "x": "month", "y": "avg_high", "color": "stations.country"}, "format": "vega-lite"}`},
	{tool: "pattern_filter", title: "Ambiguous words: candidates to confirm (the pattern also occurs inside հանրակրթական)", args: `{"dataset": "budget/2024/expenses", "field": "program", "patterns": ["կրթական"], "mode": "balanced"}`},
	{tool: "pattern_filter", title: "The user's choice confirmed: a filter token", args: `{"dataset": "budget/2024/expenses", "field": "program", "patterns": ["կրթական"], "confirmed": {"include": ["ՏՏ կրթական ծրագրեր (միջոցառում 1091)", "ՏՏ կրթական ծրագրեր, Արագածոտնի մարզ (միջոցառում 1003)"], "exclude": ["Հանրակրթական ծրագրեր (միջոցառում 1077)"]}}`},
	{tool: "aggregate", title: "A pattern_filter token as a filter", next: func(prev map[string]any) string {
		b, _ := json.Marshal(map[string]any{"dataset": "budget/2024/expenses", "filters": []map[string]any{{"filter_token": prev["filter_token"]}},
			"group_by": []string{"ministry"}, "aggs": []map[string]any{{"col": "allocated", "fn": "sum"}}})
		return string(b)
	}},
}

var volatile = []struct {
	re   *regexp.Regexp
	repl string
}{
	{regexp.MustCompile(`h_[A-Za-z0-9_-]{8,}`), "h_EXAMPLE"},
	{regexp.MustCompile(`a_[A-Za-z0-9]{20,}`), "a_EXAMPLE"},
	{regexp.MustCompile(`"page_token": "[^"]+"`), `"page_token": "PAGE_TOKEN"`},
	{regexp.MustCompile(`"last_modified_iso": "[^"]+"`), `"last_modified_iso": "2026-01-01T00:00:00Z"`},
	{regexp.MustCompile(`"data_root": "[^"]+"`), `"data_root": ".../demo"`},
	{regexp.MustCompile(`"time_ms": [0-9.e+-]+`), `"time_ms": 0.1`},
	{regexp.MustCompile(`"peak_bytes": [0-9]+`), `"peak_bytes": 1048576`},
	{regexp.MustCompile(`ft1\.[A-Za-z0-9_.-]+`), "FILTER_TOKEN"},
	{regexp.MustCompile(`"expires_at": "[^"]+"`), `"expires_at": "2026-01-01T01:00:00Z"`},
	{regexp.MustCompile(`"duration_ms": [0-9]+`), `"duration_ms": 1`},
}

// TestToolsDoc regenerates docs/TOOLS.md from the tool registry and real
// example calls, and fails when the checked-in file differs (run
// go test ./mcpapi -update to refresh it).
func TestToolsDoc(t *testing.T) {
	if testing.Short() {
		t.Skip("needs the demo data")
	}
	ctx := context.Background()
	dir, err := demodata.Extract(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	a, err := app.Open(ctx, app.Config{Data: dir, ArtifactDir: t.TempDir(), MaxRows: 5, PageRows: 3,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	c, err := client.NewInProcessClient(a.MCP)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.Start(ctx); err != nil {
		t.Fatal(err)
	}
	init := mcp.InitializeRequest{}
	init.Params.ProtocolVersion = mcp.LATEST_PROTOCOL_VERSION
	if _, err := c.Initialize(ctx, init); err != nil {
		t.Fatal(err)
	}

	var doc bytes.Buffer
	doc.WriteString(toolsDocHeader)
	byTool := map[string][]string{}
	var prev map[string]any
	for _, ex := range examples {
		args := ex.args
		if ex.next != nil {
			args = ex.next(prev)
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(args), &m); err != nil {
			t.Fatalf("example args: %v", err)
		}
		req := mcp.CallToolRequest{}
		req.Params.Name, req.Params.Arguments = ex.tool, m
		res, err := c.CallTool(ctx, req)
		if err != nil || res.IsError {
			t.Fatalf("example %s %s: %v %+v", ex.tool, args, err, res)
		}
		raw, _ := json.Marshal(res.StructuredContent)
		prev = map[string]any{}
		_ = json.Unmarshal(raw, &prev)
		out, _ := json.MarshalIndent(shorten(prev), "", "  ")
		text := string(out)
		shownArgs := args
		for _, v := range volatile {
			text = v.re.ReplaceAllString(text, v.repl)
			shownArgs = v.re.ReplaceAllString(shownArgs, v.repl)
		}
		shownArgs = regexp.MustCompile(`"page_token":"[^"]+"`).ReplaceAllString(shownArgs, `"page_token":"PAGE_TOKEN"`)
		byTool[ex.tool] = append(byTool[ex.tool], fmt.Sprintf("**%s**\n\n```json\n%s\n```\n\n```json\n%s\n```\n", ex.title, shownArgs, text))
	}
	for _, ctor := range mcpapi.Tools {
		tool, _ := ctor(nil)
		fmt.Fprintf(&doc, "## `%s` — %s\n\n%s\n\n", tool.Name, tool.Title, tool.Description)
		writeArgs(&doc, tool.RawInputSchema)
		doc.WriteString("\n### Examples\n\n")
		for _, e := range byTool[tool.Name] {
			doc.WriteString(e + "\n")
		}
	}
	doc.WriteString(toolsDocFooter)

	golden.Check(t, "../docs/TOOLS.md", doc.Bytes(), *update)
}

// shorten keeps the first 3 records of data/preview/sample_rows arrays so the
// document stays readable; it notes how many were left out.
func shorten(m map[string]any) map[string]any {
	for _, k := range []string{"data", "preview", "sample_rows", "datasets"} {
		if xs, ok := m[k].([]any); ok && len(xs) > 3 {
			m[k] = append(xs[:3:3], fmt.Sprintf("… %d more (shortened for this document)", len(xs)-3))
		}
	}
	if vl, ok := m["vega_lite"].(map[string]any); ok {
		if data, ok := vl["data"].(map[string]any); ok {
			if xs, ok := data["values"].([]any); ok && len(xs) > 3 {
				data["values"] = append(xs[:3:3], fmt.Sprintf("… %d more (shortened for this document)", len(xs)-3))
			}
		}
	}
	return m
}

// writeArgs renders the top-level properties of an input schema as a table.
func writeArgs(w io.Writer, schema json.RawMessage) {
	var s struct {
		Properties map[string]map[string]any `json:"properties"`
		Required   []string                  `json:"required"`
	}
	_ = json.Unmarshal(schema, &s)
	names := make([]string, 0, len(s.Properties))
	for n := range s.Properties {
		names = append(names, n)
	}
	sort.Strings(names)
	fmt.Fprintln(w, "| argument | type | required | description |")
	fmt.Fprintln(w, "| --- | --- | --- | --- |")
	for _, n := range names {
		p := s.Properties[n]
		typ := fmt.Sprint(p["type"])
		if e, ok := p["enum"].([]any); ok {
			parts := make([]string, len(e))
			for i, v := range e {
				parts[i] = fmt.Sprint(v)
			}
			typ = strings.Join(parts, " \\| ")
		}
		req := ""
		for _, r := range s.Required {
			if r == n {
				req = "yes"
			}
		}
		desc, _ := p["description"].(string)
		fmt.Fprintf(w, "| `%s` | %s | %s | %s |\n", n, strings.ReplaceAll(typ, "[null ", "["), req, strings.ReplaceAll(desc, "|", "\\|"))
	}
}

const toolsDocHeader = `# Tools

<!-- Generated by go test ./mcpapi -update from the tool registry and real calls over the demo data. Do not edit. -->

Every tool but ` + "`export`" + ` (which writes into ` + "`--export-dir`" + `, and is listed only when the server has one) is read-only, idempotent and closed-world; every tool returns
` + "`structuredContent`" + ` (plus the same JSON as text). Datasets are addressed by ` + "`dataset`" + `, an id from ` + "`get_catalog`" + `. The exact
schemas are snapshotted under ` + "`mcpapi/testdata/tools/`" + `.

## Schemas

What tools/list carries: each tool's input schema, with the query-spec types (filters, operators, aggregates, order
keys) declared once per tool under ` + "`$defs`" + ` and referenced with ` + "`$ref`" + `; windows, joins and per-group top-k as compact
signatures; arguments shared with query_data listed by name in the other query tools; no ` + "`additionalProperties: false`" + ` and
no empty ` + "`required`" + ` (an unknown argument is refused by name with the valid ones). Output schemas are not sent
(they would triple the listing): every result is still validated against its tool's output schema before it is sent,
and the schemas are in the snapshots. The whole listing stays under 16 KB (` + "`e2e/toolslist_test.go`" + `). Calls
are checked strictly whatever the listing shows: an unknown field is refused at any depth.

The examples below ran against the bundled demo data with small caps (` + "`--max-rows 5 --page-rows 3`" + `) so they stay
short; the defaults are 200 rows, 64 KiB of JSON and 10,000 cells inline, pages of 200 rows. Long arrays are shortened
here; handles, tokens and artifact ids are replaced by placeholders.

## Errors

A model-fixable error is a tool result with ` + "`isError: true`" + ` whose text is JSON
` + "`{error, code, hint, diagnostics?}`" + `. Codes are stable:

| code | when | diagnostics |
| --- | --- | --- |
| ` + "`dataset_not_found`" + ` | the dataset id does not exist | ` + "`suggestions`" + ` (closest ids) |
| ` + "`invalid_column`" + ` | a column name does not exist | ` + "`field`" + `, ` + "`column`" + `, ` + "`suggestions`" + ` |
| ` + "`invalid_filter`" + ` | unknown op, missing/extra value, value not coercible to the column type | ` + "`field`" + `, ` + "`column_type`" + `, ` + "`valid_ops`" + ` |
| ` + "`invalid_aggregate`" + ` | unknown function, sum/avg of a non-numeric column, ` + "`*`" + ` with anything but count | ` + "`field`" + `, ` + "`valid_fns`" + ` |
| ` + "`invalid_argument`" + ` | unknown or mistyped argument, negative limit/offset, duplicate output names, a JSON number float64 cannot hold (` + "`1e400`" + `) | ` + "`field`" + `, ` + "`valid_arguments`" + ` |
| ` + "`unsupported_format`" + ` | an output format Quarry does not write | |
| ` + "`unsupported_type`" + ` | a column whose source type cannot be queried | ` + "`column`" + ` |
| ` + "`forbidden_sql`" + ` | advanced_query: a statement that is not a read-only query (DDL, DML, COPY, SET, ATTACH, ...), a table function, file or URL access, a system catalog, stacked statements | ` + "`line`, `col`, `fragment`" + ` |
| ` + "`unsupported_sql`" + ` | advanced_query: a construct the SQL dialect does not support (yet), or a statement over the caps (length, nesting, IN list) | ` + "`line`, `col`, `fragment`, `limit`" + ` |
| ` + "`not_in_build`" + ` | the feature is not in this binary: HDF5 in a cgo-free or ` + "`-tags nohdf5`" + ` build, SQL in a cgo-free build | ` + "`feature`" + ` (` + "`hdf5`, `sql`" + `) |
| ` + "`handle_expired`" + ` | the result handle is unknown, expired or evicted, or the server restarted since: re-run the query | |
| ` + "`invalid_page_token`" + ` | the page token is malformed, tampered with, or belongs to another handle | |
| ` + "`invalid_filter_token`" + ` | a pattern_filter ` + "`filter_token`" + ` is malformed, tampered with, expired, from before a restart, or used on a dataset it was not confirmed for | ` + "`field`" + ` |
| ` + "`resource_exhausted`" + ` | the query exceeded its memory budget or the artifact quota, or the artifact directory is full or read-only (get the result inline) | |
| ` + "`remote_unavailable`" + ` | a Flight SQL remote (dataset ` + "`remote/<name>/...`" + `) cannot be reached | ` + "`remote`" + ` |
| ` + "`remote_auth_failed`" + ` | a Flight SQL remote refused the server's credentials for it | ` + "`remote`" + ` |
| ` + "`remote_error`" + ` | a Flight SQL remote failed the statement Quarry generated for it | ` + "`remote`, `remote_sql`, `grpc_code`" + ` |
| ` + "`remote_schema_changed`" + ` | a remote table's columns changed since the catalog listed it: call get_catalog and retry | ` + "`remote`" + ` |
| ` + "`timeout`" + ` | the query exceeded the server's time limit, or a Flight SQL remote its own timeout (` + "`remote`" + `) | |
| ` + "`cancelled`" + ` | the client cancelled the request, or the user declined to run a large query (confirmation) | |
| ` + "`internal`" + ` | a bug; the server log has the details under the request id | |

Malformed JSON-RPC (parse errors, unknown methods, invalid params) gets the standard JSON-RPC error codes.

## Explain

` + "`estimate_query`" + ` answers ` + "`plan`" + ` (the optimized logical plan, one node per line) and ` + "`physical_plan`" + `: the operators
the engine builds for it, root first, inputs indented below. Each line is the operator, its physical choices in parentheses,
and after ` + "`←`" + ` the plan nodes it runs. Nodes the engine runs as one operator are listed together: ` + "`filter+count`" + ` (a count
over a filter adds up the filter's mask, or the null counts for a lone ` + "`is_null`" + `, and copies no rows), ` + "`filter+project`" + `
(only the projected columns of passing rows are copied), ` + "`filter+top-k sort`" + ` (a small top-k takes the filter's selection and
copies only the winners), ` + "`scan+filter`" + ` (filters pushed into the scan, ` + "`filters=[...]`" + `: a CSV file read without the column
cache tests them on each row's cells before parsing it, so rejected rows are never built); ` + "`top-k sort`" + ` is a sort under a limit that keeps only
offset + limit rows; ` + "`dictionary kernel on COL`" + ` means the filter on a dictionary-encoded string column runs once per
dictionary entry; a scan's ` + "`zone-filter=[...]`" + ` lists the filters it skips cached blocks (or Parquet row groups) with.

` + "`query_data`" + ` and ` + "`aggregate`" + ` with ` + "`explain: \"analyze\"`" + ` run the query (in full, not the confirmation sample) and add
` + "`analyze`" + ` to the result: ` + "`operators`" + `, the same operators root first (an operator's inputs follow it with ` + "`depth`" + ` + 1),
each with ` + "`rows_in`" + ` (its inputs' rows out; for a scan the rows it read, those its pushed filters dropped included),
` + "`zones_skipped`" + ` and ` + "`rows_skipped`" + ` (scans: zones skipped unread by zone maps, and their rows), ` + "`rows_out`" + `, ` + "`batches`" + ` (out), ` + "`time_ms`" + ` (in the
operator itself, inputs excluded) and ` + "`peak_bytes`" + ` (the most query memory — Arrow buffers and operator state counted by the
query's memory budget — held while it or its inputs ran); ` + "`peak_bytes`" + ` and ` + "`time_ms`" + ` of the whole run. The server
logs the same numbers at debug level.

`

const toolsDocFooter = `## Resources

| URI | what |
| --- | --- |
| ` + "`quarry://catalog`" + ` | the catalog card: every dataset (as ` + "`get_catalog`" + ` returns) |
| ` + "`quarry://datasets/{dataset}/schema`" + ` | a dataset's schema card: ` + "`get_schema`" + `'s answer plus up to 3 example values per column; the id is percent-encoded (` + "`/`" + ` as ` + "`%2F`" + `) |
| ` + "`quarry://datasets/{dataset}/catalog`" + ` | a dataset's catalog entry: path, kind, size, rows, columns, modification time, description, tags |
| ` + "`quarry://datasets/{dataset}/summary`" + ` | a tiny per-column profile (null count, min, max, distinct estimate, top 3 values), safe to load at chat start; files with more rows than the sample size (100,000) are profiled from their first rows; cached per file version |
| ` + "`h5://{file}?path={internal path}`" + ` | any object of an HDF5 file under the root: a group's attributes and members, a dataset's shape, maxshape, dtype, chunks, filters, fill value and attributes, a link's target (not followed). Each HDF5 file is listed as ` + "`h5://<file>?path=/`" + ` |
| ` + "`quarry://artifacts/{id}.{ext}`" + ` | a result file from ` + "`query_data`" + ` / ` + "`query_next_page`" + `: Parquet (` + "`application/vnd.apache.parquet`" + `) or CSV (` + "`text/csv`" + `), returned as a blob |

` + "`resources/list`" + ` also lists one ` + "`schema: <dataset>`" + ` resource per dataset, kept in step with the catalog
(` + "`notifications/resources/list_changed`" + ` when it changes). ` + "`completion/complete`" + ` completes the ` + "`dataset`" + ` variable of every
template and the ` + "`dataset`" + ` argument of every prompt (prefix matches first, then substrings), and a prompt's ` + "`column`" + `
argument once ` + "`dataset`" + ` is given.

### Schema cards

A sidecar ` + "`<file>.schema.json`" + ` (or ` + "`<stem>.schema.json`" + `) next to a data file, and ` + "`_overall.json`" + ` in a folder (for the
folder and everything below it; nearer folders win), give a dataset description, tags and per-column ` + "`role`" + `,
` + "`description`" + ` and ` + "`unit`" + `:

` + "``" + `` + "`json\n{\"description\": \"Orders of 2024\", \"tags\": {\"year\": \"2024\", \"source_type\": \"sales\"},\n \"columns\": [{\"name\": \"qty\", \"role\": \"measure\", \"unit\": \"pcs\"}, {\"name\": \"region\", \"role\": \"dimension\"}]}\n`" + `` + "``" + `

Tags show in ` + "`get_catalog`" + ` entries and filter it (` + "`tags: {\"year\": \"2024\"}`" + `); roles and units show in ` + "`get_schema`" + `, the
schema card resource and the ` + "`schema_cards_overview`" + ` prompt. Invalid cards (bad JSON, unknown fields, bad roles, columns
the file does not have) are reported in ` + "`get_catalog`" + ` diagnostics and ignored; sidecars are never datasets and Quarry never
writes them. ` + "`quarry schema-card init <dataset> [--out FILE]`" + ` prints a starter card (` + "`quarry schema-card --help`" + `).

## Prompts

| prompt | arguments | what |
| --- | --- | --- |
| ` + "`schema_cards_overview`" + ` | ` + "`dataset?`" + ` | the datasets with size, description, tags and every column's type, role and unit, compact |
| ` + "`query_examples`" + ` | ` + "`dataset?`" + `, ` + "`column?`" + ` | small, correct tool calls generated from the live catalog with real column names and values: filter values, a filter, a group-by, per-group statistics with a filtered aggregate, window functions (share of total, rank), string functions, dates (month-over-month lag, INTERVAL arithmetic), a having expression, a join, top 2 per group, an estimate, a page walk, a Parquet export, and a ` + "`chart_examples`" + ` section of ` + "`plot`" + ` calls (bar, histogram, line over a date, scatter, box, Vega-Lite) |
| ` + "`sql_reference`" + ` | ` + "`dataset?`" + ` | the ` + "`advanced_query`" + ` dialect, the registry's functions, aggregates and window functions, and 10 worked SQL queries over the live catalog (filter, parameter, HAVING, CTE with windows, top 2 per group, scalar subquery, IN inside CASE over the groups, NOT EXISTS, a join or date bucketing, ROLLUP, INTERSECT), each run in tests; listed unless ` + "`--sql=false`" + ` |
| ` + "`size_management_guidelines`" + ` | | when to estimate, page, aggregate or export, with the caps and thresholds in force |
| ` + "`pattern_disambiguation_guidelines`" + ` | | how to turn the user's words into a confirmed filter with pattern_filter: the modes, asking before including or excluding ambiguous values, an Armenian and an English example |

## Confirmation, progress, cancellation, logging

- ` + "`query_data`" + ` and ` + "`aggregate`" + ` (and ` + "`advanced_query`" + `) size a query before running it (in full for files up to the sample size, whose result is
  then reused; from the first 100,000 rows otherwise), unless its plan proves the result is under both thresholds (a
  global aggregate, a ` + "`limit`" + ` under them, groups of a small table's columns, ...: ` + "`planner.ResultBound`" + `, see
  [QUERY.md](QUERY.md#result-bounds); ` + "`estimate_query`" + ` shows the proven ` + "`row_bound`" + `): such a query runs once, without the size check. Above the confirmation threshold (` + "`--confirm-rows`" + `, default
  1,000,000 rows; ` + "`--confirm-bytes`" + `, default 256 MiB of JSON) they do not run it: a client that declared elicitation gets a
  form (deliver as a Parquet file / first page only / cancel); any other client gets
  ` + "`{status: \"needs_confirmation\", estimate, options: [{choice, description, args}], hint}`" + ` and calls again with the chosen
  option's ` + "`args`" + ` merged in (e.g. ` + "`confirm: true, output_format: \"parquet\"`" + `). Declining is the error ` + "`cancelled`" + `.
- A call with a ` + "`progressToken`" + ` receives ` + "`notifications/progress`" + ` while scanning (rows scanned of the total; the
  progress only grows, also across the size check and the query).
- ` + "`notifications/cancelled`" + ` stops the query and frees its memory (error ` + "`cancelled`" + `); ` + "`--query-timeout`" + ` bounds every
  query (error ` + "`timeout`" + `) with one deadline per request, shared by the size check, the query and delivery. Queries run concurrently; a slow one does not hold up others.
- ` + "`notifications/message`" + ` (capability ` + "`logging`" + `) carries what a user should see: files skipped by the scan (` + "`warning`" + `),
  truncated results (` + "`notice`" + `), other caveats (` + "`info`" + `), filtered by the level the client set.
`
