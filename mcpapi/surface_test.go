package mcpapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/quarrydb/quarry/demodata"
	"github.com/quarrydb/quarry/internal/app"
	"github.com/quarrydb/quarry/mcpapi"
	"github.com/quarrydb/quarry/service"
)

var (
	demoOnce sync.Once
	demoDir  string
	demoErr  error
)

// demoRoot extracts the demo data once per test binary.
func demoRoot(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("needs the demo data")
	}
	demoOnce.Do(func() {
		dir := filepath.Join(t.TempDir(), "..", "..", "quarry-mcpapi-demo")
		demoDir, demoErr = demodata.Extract(dir)
	})
	if demoErr != nil {
		t.Fatal(demoErr)
	}
	return demoDir
}

// fixture is an in-process Quarry with a connected client.
type fixture struct {
	app *app.App
	c   *client.Client
	log *bytes.Buffer // JSON log lines of the server

	mu     sync.Mutex
	notifs []mcp.JSONRPCNotification
}

// open starts an app over the demo data (cfg.Data and ArtifactDir are
// filled in) and connects an in-process client with opts.
func open(t *testing.T, cfg app.Config, opts ...client.ClientOption) *fixture {
	t.Helper()
	ctx := context.Background()
	if cfg.Data == "" {
		cfg.Data = demoRoot(t)
	}
	cfg.ArtifactDir = t.TempDir()
	f := &fixture{log: &bytes.Buffer{}}
	cfg.Logger = slog.New(slog.NewJSONHandler(&lockedWriter{w: f.log, mu: &f.mu}, nil))
	a, err := app.Open(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(a.Close)
	c, err := client.NewInProcessClientWithOptions(a.MCP, opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	if err := c.Start(ctx); err != nil {
		t.Fatal(err)
	}
	c.OnNotification(func(n mcp.JSONRPCNotification) {
		f.mu.Lock()
		f.notifs = append(f.notifs, n)
		f.mu.Unlock()
	})
	init := mcp.InitializeRequest{}
	init.Params.ProtocolVersion = mcp.LATEST_PROTOCOL_VERSION
	init.Params.ClientInfo = mcp.Implementation{Name: "mcpapi-test", Version: "1"}
	if _, err := c.Initialize(ctx, init); err != nil {
		t.Fatal(err)
	}
	f.app, f.c = a, c
	return f
}

type lockedWriter struct {
	w  io.Writer
	mu *sync.Mutex
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// logLines returns the server's log records with the given msg.
func (f *fixture) logLines(msg string) []map[string]any {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []map[string]any
	for _, line := range strings.Split(f.log.String(), "\n") {
		var m map[string]any
		if json.Unmarshal([]byte(line), &m) == nil && m["msg"] == msg {
			out = append(out, m)
		}
	}
	return out
}

func (f *fixture) notifications(method string) []mcp.JSONRPCNotification {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []mcp.JSONRPCNotification
	for _, n := range f.notifs {
		if n.Method == method {
			out = append(out, n)
		}
	}
	return out
}

func (f *fixture) callRaw(t *testing.T, tool string, args any, meta *mcp.Meta) *mcp.CallToolResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	req := mcp.CallToolRequest{}
	req.Params.Name, req.Params.Arguments, req.Params.Meta = tool, args, meta
	res, err := f.c.CallTool(ctx, req)
	if err != nil {
		t.Fatalf("%s: protocol error: %v", tool, err)
	}
	return res
}

// call runs a tool that must succeed and decodes its structured result.
func (f *fixture) call(t *testing.T, tool string, args any, out any) {
	t.Helper()
	res := f.callRaw(t, tool, args, nil)
	if res.IsError {
		t.Fatalf("%s(%v) failed: %s", tool, args, resultText(res))
	}
	b, _ := json.Marshal(res.StructuredContent)
	if err := json.Unmarshal(b, out); err != nil {
		t.Fatalf("decoding %s: %v\n%s", tool, err, b)
	}
}

// callErr runs a tool that must fail and returns its error code.
func (f *fixture) callErr(t *testing.T, tool string, args any) map[string]any {
	t.Helper()
	res := f.callRaw(t, tool, args, nil)
	if !res.IsError {
		t.Fatalf("%s(%v): expected an error, got %s", tool, args, resultText(res))
	}
	var e map[string]any
	if err := json.Unmarshal([]byte(resultText(res)), &e); err != nil {
		t.Fatalf("error is not JSON: %s", resultText(res))
	}
	return e
}

func resultText(res *mcp.CallToolResult) string {
	var parts []string
	for _, c := range res.Content {
		if tc, ok := c.(mcp.TextContent); ok {
			parts = append(parts, tc.Text)
		}
	}
	return strings.Join(parts, "\n")
}

func (f *fixture) read(t *testing.T, uri string, out any) {
	t.Helper()
	req := mcp.ReadResourceRequest{}
	req.Params.URI = uri
	res, err := f.c.ReadResource(context.Background(), req)
	if err != nil {
		t.Fatalf("read %s: %v", uri, err)
	}
	tc, ok := res.Contents[0].(mcp.TextResourceContents)
	if !ok || tc.MIMEType != "application/json" {
		t.Fatalf("read %s: %+v", uri, res.Contents)
	}
	if err := json.Unmarshal([]byte(tc.Text), out); err != nil {
		t.Fatalf("read %s: %v", uri, err)
	}
}

type distinctOut struct {
	Values []struct {
		Value any   `json:"value"`
		Count int64 `json:"count"`
	} `json:"values"`
	TotalDistinct int64 `json:"total_distinct"`
	NullCount     int64 `json:"null_count"`
	Truncated     bool  `json:"truncated"`
}

func TestDistinctValuesTool(t *testing.T) {
	f := open(t, app.Config{})
	var all distinctOut
	f.call(t, "distinct_values", map[string]any{"dataset": "sales/orders", "column": "region"}, &all)
	if all.TotalDistinct != 11 || len(all.Values) != 11 || all.Truncated || all.NullCount != 0 {
		t.Fatalf("regions: %+v", all)
	}
	var sum int64
	for i, v := range all.Values {
		sum += v.Count
		if i > 0 {
			p := all.Values[i-1]
			if p.Count < v.Count || (p.Count == v.Count && p.Value.(string) > v.Value.(string)) {
				t.Fatalf("not ordered by count desc, value: %+v then %+v", p, v)
			}
		}
	}
	if sum != 1500 {
		t.Fatalf("counts add up to %d, want 1500", sum)
	}

	var top distinctOut
	f.call(t, "distinct_values", map[string]any{"dataset": "sales/orders", "column": "region", "limit": 3}, &top)
	if len(top.Values) != 3 || !top.Truncated || top.TotalDistinct != 11 || top.Values[0] != all.Values[0] {
		t.Fatalf("limit 3: %+v", top)
	}
	var some distinctOut
	min := all.Values[2].Count
	f.call(t, "distinct_values", map[string]any{"dataset": "sales/orders", "column": "region", "min_count": min}, &some)
	for _, v := range some.Values {
		if v.Count < min {
			t.Fatalf("min_count %d: %+v", min, some)
		}
	}
	// Filters restrict the rows counted; nulls are counted apart.
	var nulls distinctOut
	f.call(t, "distinct_values", map[string]any{"dataset": "weather/daily", "column": "snow",
		"filters": []map[string]any{{"col": "station_id", "op": "eq", "value": "AM01"}}}, &nulls)
	var rows int64 = nulls.NullCount
	for _, v := range nulls.Values {
		rows += v.Count
	}
	if rows != 92 || nulls.TotalDistinct > 2 {
		t.Fatalf("snow at AM01: %+v", nulls)
	}
	var precip distinctOut
	f.call(t, "distinct_values", map[string]any{"dataset": "weather/daily", "column": "precip_mm", "limit": 1}, &precip)
	if precip.NullCount != 96 || !precip.Truncated {
		t.Fatalf("precip nulls: %+v", precip)
	}
	// The second identical call is served from the cache.
	f.call(t, "distinct_values", map[string]any{"dataset": "sales/orders", "column": "region"}, &all)
	cached := 0
	for _, l := range f.logLines("distinct_values") {
		if l["cached"] == true {
			cached++
		}
	}
	if cached != 2 { // the limit-3 call and this one

		t.Fatalf("cache hits: %d", cached)
	}

	if e := f.callErr(t, "distinct_values", map[string]any{"dataset": "sales/orders", "column": "regon"}); e["code"] != "invalid_column" {
		t.Fatalf("bad column: %v", e)
	}
	if e := f.callErr(t, "distinct_values", map[string]any{"dataset": "sales/orders", "column": "region", "limit": 5000}); e["code"] != "invalid_argument" {
		t.Fatalf("bad limit: %v", e)
	}
}

type queryOut struct {
	Method       string           `json:"method"`
	Data         []map[string]any `json:"data"`
	RowCount     int64            `json:"row_count"`
	TotalRows    int64            `json:"total_rows"`
	Truncated    bool             `json:"truncated"`
	ResourceURI  string           `json:"resource_uri"`
	Format       string           `json:"format"`
	ResultHandle string           `json:"result_handle"`
	PageInfo     *struct {
		PageToken string `json:"page_token"`
		HasMore   bool   `json:"has_more"`
	} `json:"page_info"`
	Status   string `json:"status"`
	Estimate *struct {
		RowEstimate  int64  `json:"row_estimate"`
		ByteEstimate int64  `json:"byte_estimate"`
		EstimateKind string `json:"estimate_kind"`
	} `json:"estimate"`
	Options []struct {
		Choice string         `json:"choice"`
		Args   map[string]any `json:"args"`
	} `json:"options"`
	Hint string `json:"hint"`
}

func TestAggregateTool(t *testing.T) {
	f := open(t, app.Config{})
	var agg queryOut
	f.call(t, "aggregate", map[string]any{"dataset": "sales/orders", "group_by": []string{"category"},
		"aggs": []map[string]any{{"col": "qty", "fn": "sum", "as": "units"}, {"col": "*", "fn": "count"}}, "top_n": 3}, &agg)
	if agg.Method != "direct" || agg.RowCount != 3 || len(agg.Data) != 3 || agg.Status != "" {
		t.Fatalf("aggregate: %+v", agg)
	}
	for i := 1; i < 3; i++ {
		if agg.Data[i-1]["units"].(float64) < agg.Data[i]["units"].(float64) {
			t.Fatalf("top_n without order_by must rank by the first aggregate: %+v", agg.Data)
		}
	}
	// Same answer as query_data with the same knobs.
	var q queryOut
	f.call(t, "query_data", map[string]any{"dataset": "sales/orders", "group_by": []string{"category"},
		"aggs":     []map[string]any{{"col": "qty", "fn": "sum", "as": "units"}, {"col": "*", "fn": "count"}},
		"order_by": []map[string]any{{"col": "units", "desc": true}}, "limit": 3}, &q)
	a, _ := json.Marshal(agg.Data)
	b, _ := json.Marshal(q.Data)
	if string(a) != string(b) {
		t.Fatalf("aggregate %s != query_data %s", a, b)
	}
	var totals queryOut
	f.call(t, "aggregate", map[string]any{"dataset": "sales/orders", "group_by": []string{},
		"aggs": []map[string]any{{"col": "*", "fn": "count"}}}, &totals)
	if totals.RowCount != 1 || totals.Data[0]["count_all"] != 1500.0 {
		t.Fatalf("totals: %+v", totals)
	}
	if e := f.callErr(t, "aggregate", map[string]any{"dataset": "sales/orders", "group_by": []string{"category"}, "aggs": []any{}}); e["code"] != "invalid_aggregate" {
		t.Fatalf("no aggs: %v", e)
	}
	if e := f.callErr(t, "aggregate", map[string]any{"dataset": "sales/orders", "group_by": []string{"categry"},
		"aggs": []map[string]any{{"col": "*", "fn": "count"}}}); e["code"] != "invalid_column" {
		t.Fatalf("bad group_by: %v", e)
	}
}

func TestGetServerInfo(t *testing.T) {
	f := open(t, app.Config{MaxRows: 7, PageRows: 5, ConfirmRows: 1234, QueryTimeout: 9 * time.Second})
	var info service.ServerInfo
	f.call(t, "get_server_info", map[string]any{}, &info)
	if info.Name != "quarry" || info.Version != "dev" || len(info.ProtocolVersions) == 0 || info.ProtocolVersions[0] != mcp.LATEST_PROTOCOL_VERSION {
		t.Fatalf("identity: %+v", info)
	}
	l := info.Limits
	if l.MaxRows != 7 || l.PageRows != 5 || l.ConfirmRows != 1234 || l.ConfirmBytes != 256<<20 || l.QueryTimeoutMS != 9000 ||
		l.MaxBytes != 64<<10 || l.MaxCells != 10000 || l.HandleTTLSeconds != 900 || l.ArtifactTTLSeconds != 3600 || l.DistinctLimit != 1000 {
		t.Fatalf("limits: %+v", l)
	}
	if info.DatasetCount != len(f.app.Catalog.Datasets()) || info.DatasetCount == 0 {
		t.Fatalf("dataset_count %d", info.DatasetCount)
	}
	if strings.Contains(info.DataRoot, f.app.Root) || (!strings.HasPrefix(info.DataRoot, "~") && !strings.HasPrefix(info.DataRoot, ".../")) {
		t.Fatalf("data_root leaks or is not shortened: %q (root %s)", info.DataRoot, f.app.Root)
	}
	for _, c := range []string{"tools", "resources", "prompts", "completions", "logging"} {
		if !info.Capabilities[c] {
			t.Fatalf("capability %s missing: %v", c, info.Capabilities)
		}
	}
	if !slices.Contains(info.Features, "confirmation") {
		t.Fatalf("features: %v", info.Features)
	}
}

func TestResources(t *testing.T) {
	f := open(t, app.Config{})
	ctx := context.Background()
	list, err := f.c.ListResources(ctx, mcp.ListResourcesRequest{})
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	uris := map[string]bool{}
	for _, r := range list.Resources {
		if names[r.Name] {
			t.Fatalf("resource name %q listed twice", r.Name)
		}
		names[r.Name], uris[r.URI] = true, true
	}
	for _, d := range f.app.Catalog.Datasets() {
		if !uris[service.SchemaURI(d.ID)] || !names["schema: "+d.ID] {
			t.Fatalf("no listed schema resource for %s: %v", d.ID, names)
		}
	}
	if !uris["quarry://catalog"] {
		t.Fatal("catalog resource not listed")
	}
	tmpl, err := f.c.ListResourceTemplates(ctx, mcp.ListResourceTemplatesRequest{})
	if err != nil {
		t.Fatal(err)
	}
	var tnames []string
	for _, tp := range tmpl.ResourceTemplates {
		tnames = append(tnames, tp.URITemplate.Raw())
	}
	for _, want := range []string{"quarry://datasets/{dataset}/schema", "quarry://datasets/{dataset}/catalog", "quarry://datasets/{dataset}/summary"} {
		if !slices.Contains(tnames, want) {
			t.Fatalf("template %s missing: %v", want, tnames)
		}
	}

	var card service.SchemaResponse
	f.read(t, service.DatasetURI("weather/daily", "schema"), &card)
	if card.Dataset != "weather/daily" || len(card.Columns) != 6 || card.Shape[0] != 3680 {
		t.Fatalf("schema card: %+v", card)
	}
	var ex []any
	if err := json.Unmarshal(card.Columns[0].Examples, &ex); err != nil || len(ex) == 0 {
		t.Fatalf("no examples for %s: %s", card.Columns[0].Name, card.Columns[0].Examples)
	}
	var entry service.CatalogEntry
	f.read(t, "quarry://datasets/budget%2F2024%2Fexpenses/catalog", &entry)
	if entry.ID != "budget/2024/expenses" || entry.Path != "budget/2024/expenses.csv" || entry.RowCount != 600 || entry.FileSizeBytes == 0 {
		t.Fatalf("catalog entry: %+v", entry)
	}
	var sum service.SummaryResponse
	f.read(t, service.DatasetURI("weather/daily", "summary"), &sum)
	if sum.RowCount != 3680 || sum.ProfiledRows != 3680 || sum.Sampled || len(sum.Columns) != 6 {
		t.Fatalf("summary: %+v", sum)
	}
	byName := map[string]service.ColumnProfile{}
	for _, c := range sum.Columns {
		byName[c.Name] = c
	}
	if p := byName["precip_mm"]; p.NullCount != 96 || p.Min == nil || p.Max == nil {
		t.Fatalf("precip_mm: %+v", p)
	}
	if p := byName["station_id"]; p.DistinctEstimate != 40 || len(p.TopValues) != 3 || p.TopValues[0].Count != 92 {
		t.Fatalf("station_id: %+v", p)
	}
	if p := byName["date"]; string(p.Min) != `"2024-01-01"` {
		t.Fatalf("date min %s", p.Min)
	}
	// The summary is cached: a second read does not profile again.
	f.read(t, service.DatasetURI("weather/daily", "summary"), &sum)
	if n := len(f.logLines("summary")); n != 1 {
		t.Fatalf("summary computed %d times", n)
	}

	req := mcp.ReadResourceRequest{}
	req.Params.URI = "quarry://datasets/weather%2Fdayly/schema"
	_, err = f.c.ReadResource(ctx, req)
	if err == nil || !strings.Contains(err.Error(), "dataset_not_found") || !strings.Contains(err.Error(), "weather/daily") {
		t.Fatalf("unknown dataset: %v", err)
	}
}

func TestCompletions(t *testing.T) {
	f := open(t, app.Config{})
	complete := func(ref any, name, value string, ctxArgs map[string]string) []string {
		t.Helper()
		req := mcp.CompleteRequest{}
		req.Params.Ref = ref
		req.Params.Argument.Name, req.Params.Argument.Value = name, value
		req.Params.Context.Arguments = ctxArgs
		res, err := f.c.Complete(context.Background(), req)
		if err != nil {
			t.Fatalf("complete %s=%q: %v", name, value, err)
		}
		return res.Completion.Values
	}
	for _, tpl := range []string{"quarry://datasets/{dataset}/schema", "quarry://datasets/{dataset}/catalog", "quarry://datasets/{dataset}/summary"} {
		got := complete(mcp.ResourceReference{Type: "ref/resource", URI: tpl}, "dataset", "wea", nil)
		if !slices.Equal(got, []string{"weather/daily", "weather/stations"}) {
			t.Fatalf("%s: %v", tpl, got)
		}
	}
	if got := complete(mcp.PromptReference{Type: "ref/prompt", Name: "query_examples"}, "dataset", "2024", nil); !slices.Equal(got, []string{"budget/2024/expenses"}) {
		t.Fatalf("substring match: %v", got)
	}
	if got := complete(mcp.PromptReference{Type: "ref/prompt", Name: "schema_cards_overview"}, "dataset", "", nil); len(got) != len(f.app.Catalog.Datasets()) {
		t.Fatalf("all datasets: %v", got)
	}
	// Prefix matches first, then substring matches.
	got := complete(mcp.PromptReference{Type: "ref/prompt", Name: "query_examples"}, "column", "re", map[string]string{"dataset": "sales/orders"})
	if !slices.Equal(got, []string{"region", "ordered_at"}) {
		t.Fatalf("columns: %v", got)
	}
	if got := complete(mcp.PromptReference{Type: "ref/prompt", Name: "query_examples"}, "column", "re", nil); len(got) != 0 {
		t.Fatalf("columns without a dataset: %v", got)
	}
}

func getPrompt(t *testing.T, f *fixture, name string, args map[string]string) string {
	t.Helper()
	req := mcp.GetPromptRequest{}
	req.Params.Name, req.Params.Arguments = name, args
	res, err := f.c.GetPrompt(context.Background(), req)
	if err != nil {
		t.Fatalf("prompt %s: %v", name, err)
	}
	if len(res.Messages) != 1 {
		t.Fatalf("prompt %s: %d messages", name, len(res.Messages))
	}
	return res.Messages[0].Content.(mcp.TextContent).Text
}

func TestPrompts(t *testing.T) {
	f := open(t, app.Config{MaxRows: 50})
	list, err := f.c.ListPrompts(context.Background(), mcp.ListPromptsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, p := range list.Prompts {
		names = append(names, p.Name)
	}
	slices.Sort(names)
	if !slices.Equal(names, []string{"pattern_disambiguation_guidelines", "query_examples", "schema_cards_overview", "size_management_guidelines", "sql_reference"}) {
		t.Fatalf("prompts: %v", names)
	}
	patterns := getPrompt(t, f, "pattern_disambiguation_guidelines", nil)
	for _, want := range []string{"pattern_filter", "needs_confirmation", "filter_token", "մասնագիտություն", "balanced", "1h0m0s"} {
		if !strings.Contains(patterns, want) {
			t.Fatalf("pattern guidelines lack %q:\n%s", want, patterns)
		}
	}

	overview := getPrompt(t, f, "schema_cards_overview", nil)
	for _, d := range f.app.Catalog.Datasets() {
		if !strings.Contains(overview, "\n"+d.ID+" — ") {
			t.Fatalf("overview lacks %s:\n%s", d.ID, overview)
		}
	}
	if len(overview) > 8000 {
		t.Fatalf("overview is %d bytes; keep it compact", len(overview))
	}
	one := getPrompt(t, f, "schema_cards_overview", map[string]string{"dataset": "weather/stations"})
	if !strings.Contains(one, "elevation_m int64") || strings.Contains(one, "sales/orders") {
		t.Fatalf("one dataset:\n%s", one)
	}
	req := mcp.GetPromptRequest{}
	req.Params.Name, req.Params.Arguments = "schema_cards_overview", map[string]string{"dataset": "nope"}
	if _, err := f.c.GetPrompt(context.Background(), req); err == nil || !strings.Contains(err.Error(), "dataset_not_found") {
		t.Fatalf("unknown dataset: %v", err)
	}

	size := getPrompt(t, f, "size_management_guidelines", nil)
	for _, want := range []string{"50 rows", "estimate_query", "query_next_page", "parquet", "1,000,000 rows"} {
		if !strings.Contains(size, want) {
			t.Fatalf("size guidelines lack %q:\n%s", want, size)
		}
	}

	// Every generated example runs successfully, for the default choice and
	// for every dataset and a chosen column.
	check := func(dataset, column string) {
		t.Helper()
		args := map[string]string{}
		if dataset != "" {
			args["dataset"] = dataset
		}
		if column != "" {
			args["column"] = column
		}
		text := getPrompt(t, f, "query_examples", args)
		exs, err := f.app.Service.QueryExamples(context.Background(), dataset, column)
		if err != nil {
			t.Fatal(err)
		}
		if text != mcpapi.RenderExamples(exs) {
			t.Fatalf("prompt text differs from the rendered examples")
		}
		tools := map[string]bool{}
		for _, ex := range exs {
			tools[ex.Tool] = true
			args := ex.Args
			if ex.Tool == "plot" { // the query part is what varies by dataset; drawing is tested in internal/chart and e2e
				args = maps.Clone(ex.Args)
				args["format"] = "vega-lite"
			}
			res := f.callRaw(t, ex.Tool, args, nil)
			if res.IsError {
				t.Fatalf("example %q (%s %v) failed: %s", ex.Title, ex.Tool, ex.Args, resultText(res))
			}
			var out queryOut
			b, _ := json.Marshal(res.StructuredContent)
			_ = json.Unmarshal(b, &out)
			if out.Status != "" {
				t.Fatalf("example %q needs confirmation: %s", ex.Title, b)
			}
			if out.Method == "handle" && out.PageInfo != nil && out.PageInfo.HasMore { // the page walk's next step
				var next queryOut
				f.call(t, "query_next_page", map[string]any{"result_handle": out.ResultHandle, "page_token": out.PageInfo.PageToken}, &next)
			}
		}
		for _, want := range []string{"distinct_values", "query_data", "aggregate", "estimate_query", "plot"} {
			if !tools[want] {
				t.Fatalf("examples lack %s: %+v", want, exs)
			}
		}
		if !strings.Contains(text, "\n## chart_examples\n") {
			t.Fatalf("examples lack the chart_examples section:\n%s", text)
		}
		if !strings.Contains(text, `"output_format":"parquet"`) || !strings.Contains(text, "query_next_page") {
			t.Fatalf("examples lack a Parquet export or a page walk:\n%s", text)
		}
		if dataset == "" && (!strings.Contains(text, `"having"`) || !strings.Contains(text, `"group_by":[{"as":"bucket","expr":`)) {
			t.Fatalf("examples lack a having or a group_by expression (histogram):\n%s", text)
		}
	}
	check("", "")
	for _, d := range f.app.Catalog.Datasets() {
		check(d.ID, "")
	}
	check("weather/daily", "station_id")
	check("sales/orders", "qty")
	// The vocabulary families (strings, dates, windows, having expressions,
	// joins) on the demo data, each run by check above.
	daily := getPrompt(t, f, "query_examples", map[string]string{"dataset": "weather/daily", "column": "station_id"})
	for _, want := range []string{`upper(left(trim(station_id), 1)) AS initial`, `date_trunc('month', date) AS month`, `"fn":"lag"`,
		`INTERVAL '7 days'`, `"having":[{"expr":"max_tmin_c - min_tmin_c `, `"join":[{"columns":["name"],"dataset":"weather/stations"`} {
		if !strings.Contains(daily, want) {
			t.Errorf("weather/daily examples lack %s:\n%s", want, daily)
		}
	}
}

// waitNotifications waits (up to 5 s) until done holds for the received
// notifications of method (in-process notifications arrive asynchronously).
func (f *fixture) waitNotifications(t *testing.T, method string, done func([]mcp.JSONRPCNotification) bool) []mcp.JSONRPCNotification {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		ns := f.notifications(method)
		if done(ns) || time.Now().After(deadline) {
			time.Sleep(20 * time.Millisecond) // let stragglers in, so tests see extra ones
			return f.notifications(method)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestSchemaCardsSurface(t *testing.T) {
	root := t.TempDir()
	write := func(rel, content string) {
		t.Helper()
		p := filepath.Join(root, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("sales.csv", "region,amount,year\nLori,10,2024\nShirak,5,2024\nLori,7,2024\n")
	write("sales.csv.schema.json", `{"description": "Sales by region", "tags": {"year": "2024", "source_type": "sales"},
		"columns": [{"name": "amount", "role": "measure", "unit": "AMD", "description": "Amount sold"}, {"name": "region", "role": "dimension"}]}`)
	write("old/sales.csv", "region,amount\nLori,1\n")
	write("old/_overall.json", `{"tags": {"year": 2023, "source_type": "sales"}}`)
	write("bad.csv", "a,b\n1\n")
	write("broken.schema.json", `{"columns": 3}`)
	f := open(t, app.Config{Data: root}, client.WithProtocolVersion(mcp.LATEST_LEGACY_PROTOCOL_VERSION))

	type entry struct {
		ID          string            `json:"id"`
		Description string            `json:"description"`
		Tags        map[string]string `json:"tags"`
	}
	var cat struct {
		Datasets    []entry `json:"datasets"`
		Diagnostics []struct {
			Path string `json:"path"`
		} `json:"diagnostics"`
	}
	//lint:ignore SA1019 the server supports logging for clients of every protocol revision
	if err := f.c.SetLevel(context.Background(), mcp.SetLevelRequest{Params: mcp.SetLevelParams{Level: mcp.LoggingLevelWarning}}); err != nil {
		t.Fatal(err)
	}
	f.call(t, "get_catalog", map[string]any{"tags": map[string]string{"year": "2024"}}, &cat)
	if len(cat.Datasets) != 1 || cat.Datasets[0].ID != "sales" || cat.Datasets[0].Description != "Sales by region" || cat.Datasets[0].Tags["source_type"] != "sales" {
		t.Fatalf("tags filter: %+v", cat.Datasets)
	}
	var paths []string
	for _, d := range cat.Diagnostics {
		paths = append(paths, d.Path)
	}
	if !slices.Contains(paths, "bad.csv") || !slices.Contains(paths, "broken.schema.json") {
		t.Fatalf("diagnostics: %v", paths)
	}
	msgs := f.waitNotifications(t, "notifications/message", func(ns []mcp.JSONRPCNotification) bool { return len(ns) >= 2 })
	var text []string
	for _, m := range msgs {
		b, _ := json.Marshal(m.Params)
		text = append(text, string(b))
	}
	if all := strings.Join(text, "\n"); !strings.Contains(all, "skipped bad.csv") || !strings.Contains(all, `"level":"warning"`) {
		t.Fatalf("scan warnings: %s", all)
	}
	f.call(t, "get_catalog", map[string]any{"tags": map[string]string{"source_type": " SALES "}}, &cat)
	if len(cat.Datasets) != 2 {
		t.Fatalf("case-insensitive tags: %+v", cat.Datasets)
	}
	f.call(t, "get_catalog", map[string]any{"tags": map[string]string{"year": "2023", "source_type": "sales"}}, &cat)
	if len(cat.Datasets) != 1 || cat.Datasets[0].ID != "old/sales" {
		t.Fatalf("folder tags: %+v", cat.Datasets)
	}

	var sch service.SchemaResponse
	f.call(t, "get_schema", map[string]any{"dataset": "sales"}, &sch)
	if c := sch.Columns[1]; c.Name != "amount" || c.Role != "measure" || c.Unit != "AMD" || c.Description != "Amount sold" || sch.Tags["year"] != "2024" {
		t.Fatalf("schema: %+v", sch)
	}
	var card service.SchemaResponse
	f.read(t, "quarry://datasets/sales/schema", &card)
	if card.Columns[0].Role != "dimension" || card.Description != "Sales by region" {
		t.Fatalf("card: %+v", card)
	}
	var sum service.SummaryResponse
	f.read(t, "quarry://datasets/sales/summary", &sum)
	if sum.Columns[1].Role != "measure" || sum.Columns[1].Unit != "AMD" {
		t.Fatalf("summary roles: %+v", sum.Columns)
	}
	overview := getPrompt(t, f, "schema_cards_overview", nil)
	for _, want := range []string{"sales — 3 rows, 3 columns. Sales by region (tags: source_type=sales, year=2024)", "amount int64 [measure, AMD]", "region string [dimension]"} {
		if !strings.Contains(overview, want) {
			t.Fatalf("overview lacks %q:\n%s", want, overview)
		}
	}
}
