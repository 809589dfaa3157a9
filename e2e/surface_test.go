package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/quarrydb/quarry/internal/testutil/syncbuf"
)

// session is a stdio client of the quarry binary that records the
// notifications it receives and the server's stderr.
type session struct {
	c      *client.Client
	mu     sync.Mutex
	notifs []mcp.JSONRPCNotification
	stderr *syncbuf.Buffer
}

// startSession launches `quarry serve` over stdio with args (log level
// info, JSON logs on stderr) and connects a client built with opts.
func startSession(t *testing.T, opts []client.ClientOption, args ...string) *session {
	t.Helper()
	s := &session{stderr: &syncbuf.Buffer{}}
	tr := transport.NewStdioWithOptions(binary, env(), append([]string{"serve", "--log-format", "json"}, args...),
		transport.WithCommandStderrWriter(s.stderr))
	s.c = client.NewClient(tr, opts...)
	if err := s.c.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = s.c.Close()
		if t.Failed() {
			t.Logf("server stderr:\n%s", s.stderr.String())
		}
	})
	s.c.OnNotification(func(n mcp.JSONRPCNotification) {
		s.mu.Lock()
		s.notifs = append(s.notifs, n)
		s.mu.Unlock()
	})
	initialize(t, s.c)
	return s
}

func (s *session) notifications(method string) []mcp.JSONRPCNotification {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []mcp.JSONRPCNotification
	for _, n := range s.notifs {
		if n.Method == method {
			out = append(out, n)
		}
	}
	return out
}

// waitFor polls cond for up to 10 s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// logRecords returns the server's JSON log records with the given msg.
func (s *session) logRecords(msg string) []map[string]any {
	var out []map[string]any
	for _, line := range strings.Split(s.stderr.String(), "\n") {
		var m map[string]any
		if json.Unmarshal([]byte(line), &m) == nil && m["msg"] == msg {
			out = append(out, m)
		}
	}
	return out
}

func TestSurfaceStdio(t *testing.T) {
	s := startSession(t, nil)
	c := s.c
	ctx := context.Background()

	tools, err := c.ListTools(ctx, mcp.ListToolsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range tools.Tools {
		names = append(names, tl.Name)
	}
	for _, want := range []string{"distinct_values", "aggregate", "get_server_info"} {
		if !slices.Contains(names, want) {
			t.Fatalf("%s not listed: %v", want, names)
		}
	}

	var dv struct {
		Values []struct {
			Value any   `json:"value"`
			Count int64 `json:"count"`
		} `json:"values"`
		TotalDistinct int64 `json:"total_distinct"`
		Truncated     bool  `json:"truncated"`
	}
	call(t, c, "distinct_values", map[string]any{"dataset": "sensors/readings", "column": "sensor", "limit": 5}, &dv)
	if len(dv.Values) != 5 || !dv.Truncated || dv.TotalDistinct < 5 {
		t.Fatalf("distinct_values: %+v", dv)
	}
	// A value from distinct_values is a valid filter value.
	var q queryResult
	call(t, c, "query_data", map[string]any{"dataset": "sensors/readings", "columns": []string{"id"},
		"filters": []map[string]any{{"col": "sensor", "op": "eq", "value": dv.Values[0].Value}}, "limit": 1}, &q)
	if q.RowCount != 1 {
		t.Fatalf("filter with a distinct value: %+v", q)
	}

	var agg queryResult
	call(t, c, "aggregate", map[string]any{"dataset": "weather/daily", "group_by": []string{"station_id"},
		"aggs": []map[string]any{{"col": "tmax_c", "fn": "max", "as": "hottest"}}, "top_n": 5}, &agg)
	if agg.Method != "direct" || agg.RowCount != 5 {
		t.Fatalf("aggregate: %+v", agg)
	}

	var info struct {
		Name         string           `json:"name"`
		Limits       map[string]int64 `json:"limits"`
		DataRoot     string           `json:"data_root"`
		DatasetCount int              `json:"dataset_count"`
	}
	call(t, c, "get_server_info", map[string]any{}, &info)
	if info.Name != "quarry" || info.Limits["max_rows"] != 200 || info.Limits["confirm_rows"] != 1_000_000 ||
		info.DataRoot != "bundled demo data" || info.DatasetCount < 6 {
		t.Fatalf("server info: %+v", info)
	}

	// Resources: one schema resource per dataset, the per-dataset templates.
	res, err := c.ListResources(ctx, mcp.ListResourcesRequest{})
	if err != nil {
		t.Fatal(err)
	}
	var schemaRes int
	for _, r := range res.Resources {
		if strings.HasPrefix(r.Name, "schema: ") {
			schemaRes++
		}
	}
	if schemaRes != info.DatasetCount {
		t.Fatalf("%d schema resources for %d datasets", schemaRes, info.DatasetCount)
	}
	var sum struct {
		Columns []struct {
			Name      string `json:"name"`
			NullCount int64  `json:"null_count"`
			TopValues []any  `json:"top_values"`
		} `json:"columns"`
		ProfiledRows int64 `json:"profiled_rows"`
	}
	if err := json.Unmarshal([]byte(readText(t, c, "quarry://datasets/sales%2Forders/summary")), &sum); err != nil {
		t.Fatal(err)
	}
	if sum.ProfiledRows != 1500 || len(sum.Columns) != 10 {
		t.Fatalf("summary: %+v", sum)
	}
	var entry map[string]any
	if err := json.Unmarshal([]byte(readText(t, c, "quarry://datasets/sales%2Forders/catalog")), &entry); err != nil || entry["row_count"] != 1500.0 {
		t.Fatalf("catalog entry: %v %v", entry, err)
	}

	// Completions.
	creq := mcp.CompleteRequest{}
	creq.Params.Ref = mcp.ResourceReference{Type: "ref/resource", URI: "quarry://datasets/{dataset}/summary"}
	creq.Params.Argument.Name, creq.Params.Argument.Value = "dataset", "sen"
	comp, err := c.Complete(ctx, creq)
	if err != nil || !slices.Equal(comp.Completion.Values, []string{"sensors/readings"}) {
		t.Fatalf("complete dataset: %+v %v", comp, err)
	}
	creq.Params.Ref = mcp.PromptReference{Type: "ref/prompt", Name: "query_examples"}
	creq.Params.Argument.Name, creq.Params.Argument.Value = "column", "t"
	creq.Params.Context.Arguments = map[string]string{"dataset": "weather/daily"}
	if comp, err = c.Complete(ctx, creq); err != nil || !slices.Equal(comp.Completion.Values, []string{"tmax_c", "tmin_c", "date", "station_id"}) {
		t.Fatalf("complete column: %+v %v", comp, err)
	}

	// Prompts: every query example runs.
	prompts, err := c.ListPrompts(ctx, mcp.ListPromptsRequest{})
	if err != nil || len(prompts.Prompts) != 5 { // sql_reference too
		t.Fatalf("prompts: %+v %v", prompts, err)
	}
	preq := mcp.GetPromptRequest{}
	preq.Params.Name = "query_examples"
	pr, err := c.GetPrompt(ctx, preq)
	if err != nil {
		t.Fatal(err)
	}
	text := pr.Messages[0].Content.(mcp.TextContent).Text
	ran := 0
	sc := bufio.NewScanner(strings.NewReader(text))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		tool, args, ok := strings.Cut(line, " {")
		if !ok || strings.Contains(tool, " ") {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal([]byte("{"+args), &m); err != nil {
			t.Fatalf("example %q: %v", line, err)
		}
		call(t, c, tool, m, nil)
		ran++
	}
	if ran < 6 {
		t.Fatalf("ran %d examples from:\n%s", ran, text)
	}
	for _, name := range []string{"schema_cards_overview", "size_management_guidelines"} {
		preq.Params.Name = name
		if pr, err := c.GetPrompt(ctx, preq); err != nil || len(pr.Messages) != 1 {
			t.Fatalf("%s: %+v %v", name, pr, err)
		}
	}

	// Every tool call is logged with its outcome.
	callErr(t, c, "distinct_values", map[string]any{"dataset": "sales/orders", "column": "nope"})
	waitFor(t, "tool call logs", func() bool { return len(s.logRecords("tool call")) >= ran+5 })
	var sawErr bool
	for _, r := range s.logRecords("tool call") {
		if r["tool"] == "distinct_values" && r["outcome"] == "invalid_column" && r["dataset"] == "sales/orders" && r["request_id"] != "" {
			sawErr = true
		}
	}
	if !sawErr {
		t.Fatalf("no tool call log with outcome invalid_column:\n%s", s.stderr.String())
	}
}

func TestLoggingAndProgressStdio(t *testing.T) {
	s := startSession(t, nil, "--max-rows", "5", "--log-level", "warn")
	c := s.c
	ctx := context.Background()
	//lint:ignore SA1019 the server supports logging for clients of every protocol revision
	if err := c.SetLevel(ctx, mcp.SetLevelRequest{Params: mcp.SetLevelParams{Level: mcp.LoggingLevelNotice}}); err != nil {
		t.Fatal(err)
	}
	req := mcp.CallToolRequest{}
	req.Params.Name = "query_data"
	req.Params.Arguments = map[string]any{"dataset": "sensors/readings", "columns": []string{"id", "value"}}
	req.Params.Meta = &mcp.Meta{ProgressToken: "p-1"}
	res, err := c.CallTool(ctx, req)
	if err != nil || res.IsError {
		t.Fatalf("query: %v %+v", err, res)
	}
	waitFor(t, "progress to 100,000 rows", func() bool {
		ps := s.notifications("notifications/progress")
		if len(ps) == 0 {
			return false
		}
		b, _ := json.Marshal(ps[len(ps)-1].Params)
		return strings.Contains(string(b), `"progress":100000`)
	})
	last := -1.0
	for _, p := range s.notifications("notifications/progress") {
		if p.Params.AdditionalFields["progressToken"] != "p-1" {
			t.Fatalf("token: %+v", p.Params)
		}
		v := p.Params.AdditionalFields["progress"].(float64)
		if v <= last {
			t.Fatalf("progress not increasing: %v after %v", v, last)
		}
		last = v
	}
	waitFor(t, "a truncation notice", func() bool { return len(s.notifications("notifications/message")) > 0 })
	for _, m := range s.notifications("notifications/message") {
		b, _ := json.Marshal(m.Params)
		if !strings.Contains(string(b), `"level":"notice"`) || !strings.Contains(string(b), "result truncated") {
			t.Fatalf("message: %s (info-level ones must be filtered out)", b)
		}
	}
}

// bigCSV writes a CSV of n rows (id, grp, txt) into a fresh data root.
func bigCSV(t *testing.T, n int) string {
	t.Helper()
	dir := t.TempDir()
	f, err := os.Create(filepath.Join(dir, "big.csv"))
	if err != nil {
		t.Fatal(err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	fmt.Fprintln(w, "id,grp,txt")
	for i := range n {
		fmt.Fprintf(w, "%d,g%d,row %d of the big table %x\n", i, i%97, i, i*7919)
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	return dir
}

// slowQuery scans the whole big table with a regex filter and groups.
var slowQuery = map[string]any{"dataset": "big", "group_by": []string{"grp"}, "aggs": []map[string]any{{"col": "*", "fn": "count"}},
	"filters": []map[string]any{{"col": "txt", "op": "regex", "value": "(7|9)+[a-f]+$"}}, "confirm": true}

func TestCancelTimeoutAndConcurrencyStdio(t *testing.T) {
	if testing.Short() {
		t.Skip("writes and scans a 60 MB file")
	}
	data := bigCSV(t, 1_500_000)
	s := startSession(t, nil, "--data", data)
	c := s.c

	// Cancel mid-scan: the client sends notifications/cancelled when the
	// context ends; the server stops the query.
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		req := mcp.CallToolRequest{}
		req.Params.Name, req.Params.Arguments = "query_data", slowQuery
		req.Params.Meta = &mcp.Meta{ProgressToken: "slow"}
		_, err := c.CallTool(ctx, req)
		done <- err
	}()
	waitFor(t, "the scan to start", func() bool {
		for _, p := range s.notifications("notifications/progress") {
			if v, _ := p.Params.AdditionalFields["progress"].(float64); v > 0 {
				return true
			}
		}
		return false
	})
	// Meanwhile other requests are served.
	start := time.Now()
	var cat catalogResult
	call(t, c, "get_catalog", map[string]any{}, &cat)
	if d := time.Since(start); d > 10*time.Second || cat.Total != 1 { // generous: only a blocked server takes this long
		t.Fatalf("get_catalog during a scan took %v: %+v", d, cat)
	}
	cancel()
	if err := <-done; err == nil {
		t.Fatal("cancelled call returned no error")
	}
	waitFor(t, "the cancelled call to be logged", func() bool {
		for _, r := range s.logRecords("tool call") {
			if r["tool"] == "query_data" && r["outcome"] == "cancelled" {
				return true
			}
		}
		return false
	})
	// The server is fine afterwards.
	var q queryResult
	call(t, c, "query_data", map[string]any{"dataset": "big", "columns": []string{"id"}, "limit": 3}, &q)
	if q.RowCount != 3 {
		t.Fatalf("after cancel: %+v", q)
	}

	// A tiny per-query timeout fails with code timeout.
	ts := startSession(t, nil, "--data", data, "--query-timeout", "5ms")
	if e := callErr(t, ts.c, "query_data", slowQuery); e.Code != "timeout" || !strings.Contains(e.Hint, "--query-timeout") {
		t.Fatalf("timeout: %+v", e)
	}
}
