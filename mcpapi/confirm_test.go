package mcpapi_test

import (
	"context"
	"encoding/json"
	"maps"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/quarrydb/quarry/internal/app"
	"github.com/quarrydb/quarry/internal/testutil/elicit"
)

// bigQuery is above a 1,000-row confirmation threshold (100,000 rows).
var bigQuery = map[string]any{"dataset": "sensors/readings", "columns": []string{"id", "sensor", "value"}}

func TestConfirmationWithoutElicitation(t *testing.T) {
	f := open(t, app.Config{ConfirmRows: 1000})
	var q queryOut
	f.call(t, "query_data", bigQuery, &q)
	if q.Status != "needs_confirmation" || q.Method != "" || q.Estimate == nil || q.Estimate.RowEstimate != 100_000 ||
		q.Estimate.EstimateKind != "exact" || len(q.Options) != 3 || q.Hint == "" {
		t.Fatalf("needs_confirmation: %+v", q)
	}
	choices := map[string]map[string]any{}
	for _, o := range q.Options {
		choices[o.Choice] = o.Args
	}
	merged := func(extra map[string]any) map[string]any {
		m := maps.Clone(bigQuery)
		maps.Copy(m, extra)
		return m
	}
	var file queryOut
	f.call(t, "query_data", merged(choices["parquet"]), &file)
	if file.Method != "file" || file.Format != "parquet" || file.TotalRows != 100_000 {
		t.Fatalf("parquet option: %+v", file)
	}
	var first queryOut
	f.call(t, "query_data", merged(choices["first_page"]), &first)
	if first.Method != "direct" || first.TotalRows != 200 || first.Status != "" {
		t.Fatalf("first_page option: %+v", first)
	}
	if _, ok := choices["cancel"]; !ok {
		t.Fatalf("no cancel option: %+v", q.Options)
	}
	// Small queries are not asked about; aggregates are.
	var small queryOut
	f.call(t, "query_data", map[string]any{"dataset": "sensors/readings", "columns": []string{"id"}, "limit": 10}, &small)
	if small.Status != "" || small.Method != "direct" {
		t.Fatalf("small: %+v", small)
	}
	var agg queryOut
	f.call(t, "aggregate", map[string]any{"dataset": "sensors/readings", "group_by": []string{"id"},
		"aggs": []map[string]any{{"col": "*", "fn": "count"}}}, &agg)
	if agg.Status != "needs_confirmation" {
		t.Fatalf("aggregate: %+v", agg)
	}
	// estimate_query warns about the threshold.
	var est struct {
		Warnings []string `json:"warnings"`
	}
	f.call(t, "estimate_query", bigQuery, &est)
	if !strings.Contains(strings.Join(est.Warnings, " "), "confirmation threshold") {
		t.Fatalf("estimate warnings: %v", est.Warnings)
	}
	if got := f.logLines("query needs confirmation"); len(got) != 2 || got[0]["row_estimate"] != 100000.0 {
		t.Fatalf("log: %v", got)
	}
}

func TestConfirmationByElicitation(t *testing.T) {
	for _, version := range []string{mcp.LATEST_PROTOCOL_VERSION, mcp.LATEST_LEGACY_PROTOCOL_VERSION} {
		t.Run(version, func(t *testing.T) {
			el := &elicit.Answerer{}
			f := open(t, app.Config{ConfirmRows: 1000}, client.WithElicitationHandler(el), client.WithProtocolVersion(version))

			el.Next(mcp.ElicitationResponseActionAccept, "parquet")
			var file queryOut
			f.call(t, "query_data", bigQuery, &file)
			if file.Method != "file" || file.Format != "parquet" || file.TotalRows != 100_000 || len(el.Asked()) != 1 {
				t.Fatalf("parquet: %+v (asked %d)", file, len(el.Asked()))
			}
			p := el.Asked()[0].Params
			schema, _ := json.Marshal(p.RequestedSchema)
			if !strings.Contains(p.Message, "100,000 rows") || !strings.Contains(string(schema), `"first_page"`) {
				t.Fatalf("elicitation: %s %s", p.Message, schema)
			}

			el.Next(mcp.ElicitationResponseActionAccept, "first_page")
			var first queryOut
			f.call(t, "query_data", bigQuery, &first)
			if first.Method != "direct" || first.RowCount != 200 {
				t.Fatalf("first_page: %+v", first)
			}

			el.Next(mcp.ElicitationResponseActionAccept, "first_page")
			var agg queryOut
			f.call(t, "aggregate", map[string]any{"dataset": "sensors/readings", "group_by": []string{"id"},
				"aggs": []map[string]any{{"col": "*", "fn": "count"}}}, &agg)
			if agg.Method != "handle" || agg.TotalRows != 100_000 || !agg.Truncated {
				t.Fatalf("aggregate first_page: %+v", agg)
			}

			for _, action := range []mcp.ElicitationResponseAction{mcp.ElicitationResponseActionDecline, mcp.ElicitationResponseActionCancel} {
				el.Next(action, "")
				if e := f.callErr(t, "query_data", bigQuery); e["code"] != "cancelled" {
					t.Fatalf("%s: %v", action, e)
				}
			}
			el.Next(mcp.ElicitationResponseActionAccept, "cancel")
			if e := f.callErr(t, "query_data", bigQuery); e["code"] != "cancelled" {
				t.Fatalf("cancel choice: %v", e)
			}
			// A small query never asks.
			el.Next(mcp.ElicitationResponseActionAccept, "parquet")
			var small queryOut
			f.call(t, "query_data", map[string]any{"dataset": "sensors/readings", "limit": 5}, &small)
			if len(el.Asked()) != 0 || small.Method != "direct" {
				t.Fatalf("small query asked: %d", len(el.Asked()))
			}
		})
	}
}

func TestLoggingNotifications(t *testing.T) {
	f := open(t, app.Config{MaxRows: 5}, client.WithProtocolVersion(mcp.LATEST_LEGACY_PROTOCOL_VERSION))
	// Default level (error): nothing is sent.
	var q queryOut
	f.call(t, "query_data", map[string]any{"dataset": "sales/orders"}, &q)
	if n := f.notifications("notifications/message"); len(n) != 0 {
		t.Fatalf("notifications at the default level: %+v", n)
	}
	//lint:ignore SA1019 the server supports logging for clients of every protocol revision
	if err := f.c.SetLevel(context.Background(), mcp.SetLevelRequest{Params: mcp.SetLevelParams{Level: mcp.LoggingLevelNotice}}); err != nil {
		t.Fatal(err)
	}
	f.call(t, "query_data", map[string]any{"dataset": "sales/orders"}, &q)
	msgs := f.waitNotifications(t, "notifications/message", func(ns []mcp.JSONRPCNotification) bool { return len(ns) >= 1 })
	if len(msgs) != 1 {
		t.Fatalf("want one truncation notice (info-level warnings filtered out), got %+v", msgs)
	}
	b, _ := json.Marshal(msgs[0].Params)
	if !strings.Contains(string(b), "result truncated: ") || !strings.Contains(string(b), "of 1500 rows") || !strings.Contains(string(b), `"level":"notice"`) {
		t.Fatalf("notice: %s", b)
	}
}

func TestProgressNotifications(t *testing.T) {
	f := open(t, app.Config{})
	res := f.callRaw(t, "query_data", map[string]any{"dataset": "sensors/readings", "group_by": []string{"sensor"},
		"aggs": []map[string]any{{"col": "value", "fn": "avg"}}}, &mcp.Meta{ProgressToken: "tok-1"})
	if res.IsError {
		t.Fatal(resultText(res))
	}
	ps := f.waitNotifications(t, "notifications/progress", func(ns []mcp.JSONRPCNotification) bool {
		if len(ns) == 0 {
			return false
		}
		b, _ := json.Marshal(ns[len(ns)-1].Params)
		return strings.Contains(string(b), `"progress":100000`)
	})
	if len(ps) < 2 {
		t.Fatalf("progress notifications: %+v", ps)
	}
	last := -1.0
	for _, p := range ps {
		b, _ := json.Marshal(p.Params)
		var m struct {
			Token    string  `json:"progressToken"`
			Progress float64 `json:"progress"`
			Total    float64 `json:"total"`
		}
		_ = json.Unmarshal(b, &m)
		if m.Token != "tok-1" || m.Progress <= last || m.Total < m.Progress {
			t.Fatalf("progress not increasing or bad token: %s (last %v)", b, last)
		}
		last = m.Progress
	}
	if last < 100_000 {
		t.Fatalf("final progress %v", last)
	}
	// Without a token nothing is sent.
	before := len(ps)
	f.callRaw(t, "query_data", map[string]any{"dataset": "sensors/readings", "limit": 3}, nil)
	if len(f.notifications("notifications/progress")) != before {
		t.Fatal("progress without a token")
	}
}

func TestToolCallLog(t *testing.T) {
	f := open(t, app.Config{})
	var q queryOut
	f.call(t, "query_data", map[string]any{"dataset": "sales/orders", "limit": 3}, &q)
	f.callErr(t, "query_data", map[string]any{"dataset": "sales/ordrs"})
	lines := f.logLines("tool call")
	if len(lines) != 2 {
		t.Fatalf("tool call lines: %v", lines)
	}
	ok, bad := lines[0], lines[1]
	if ok["outcome"] != "ok" || ok["dataset"] != "sales/orders" || ok["method"] != "direct" || ok["rows"] != 3.0 || ok["request_id"] == "" {
		t.Fatalf("ok line: %v", ok)
	}
	if bad["outcome"] != "dataset_not_found" || bad["is_error"] != true {
		t.Fatalf("error line: %v", bad)
	}
	// The service's query line carries the plan with the same request id.
	var planned bool
	for _, l := range f.logLines("query") {
		if l["request_id"] == ok["request_id"] && strings.Contains(l["plan"].(string), "Scan") {
			planned = true
		}
	}
	if !planned {
		t.Fatalf("no query line with the plan for %v: %v", ok["request_id"], f.logLines("query"))
	}
}
