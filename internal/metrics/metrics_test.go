package metrics

import (
	"io"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/quarrydb/quarry/internal/colcache"
	"github.com/quarrydb/quarry/mcpapi"
)

// TestExposition: recorded calls, rejections and gauges appear in the text
// exposition with the values given.
func TestExposition(t *testing.T) {
	m := New()
	m.ToolCall(mcpapi.ToolCall{Tool: "query_data", Outcome: "ok", Duration: 3 * time.Millisecond, Method: "direct", Rows: 5, Bytes: 120})
	m.ToolCall(mcpapi.ToolCall{Tool: "query_data", Outcome: "ok", Duration: time.Millisecond, Method: "file", Rows: 1000, Bytes: 9000})
	m.ToolCall(mcpapi.ToolCall{Tool: "get_schema", Outcome: "dataset_not_found", Duration: time.Millisecond})
	for _, code := range []string{"unauthorized", "forbidden_host", "too_many_streams", "body_too_large", "something_else"} {
		m.Rejected(code)
	}
	m.AddGauges(Sources{
		Cache:     func() colcache.Stats { return colcache.Stats{Used: 100, Budget: 1000, Hits: 3, Misses: 1} },
		Handles:   func() int { return 2 },
		Artifacts: func() (int, int64) { return 4, 4096 },
		Memory:    func() (int64, int64) { return 10, 1 << 20 },
		Spill:     func() (int64, int64) { return 7, 9 },
	})
	rr := httptest.NewRecorder()
	m.Handler().ServeHTTP(rr, httptest.NewRequest("GET", "/metrics", nil))
	body, _ := io.ReadAll(rr.Body)
	for _, want := range []string{
		`quarry_tool_calls_total{outcome="ok",tool="query_data"} 2`,
		`quarry_tool_calls_total{outcome="dataset_not_found",tool="get_schema"} 1`,
		`quarry_tool_call_duration_seconds_count{tool="query_data"} 2`,
		`quarry_delivered_rows_total{method="file"} 1000`,
		`quarry_delivered_bytes_total{method="direct"} 120`,
		`quarry_http_rejected_total{code="unauthorized",reason="auth"} 1`,
		`quarry_http_rejected_total{code="forbidden_host",reason="origin"} 1`,
		`quarry_http_rejected_total{code="too_many_streams",reason="rate"} 1`,
		`quarry_http_rejected_total{code="body_too_large",reason="size"} 1`,
		`quarry_http_rejected_total{code="something_else",reason="other"} 1`,
		"quarry_cache_hit_ratio 0.75", "quarry_cache_bytes 100", "quarry_handles_live 2",
		"quarry_artifacts_live 4", "quarry_artifact_bytes 4096", "quarry_memory_used_bytes 10", "quarry_memory_limit_bytes 1.048576e+06",
		`quarry_spill_bytes_total{kind="join"} 7`, `quarry_spill_bytes_total{kind="result"} 9`,
	} {
		if !strings.Contains(string(body), want+"\n") {
			t.Errorf("exposition lacks %q", want)
		}
	}
	if strings.Contains(string(body), `quarry_delivered_rows_total{method=""}`) {
		t.Error("a call without delivery counted rows")
	}
}
