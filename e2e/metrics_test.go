package e2e

import (
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
)

// scrape GETs /metrics with headers and returns the status and the samples
// (`name{labels}` -> value).
func scrape(t *testing.T, base string, headers map[string]string) (int, map[string]float64) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, base+"/metrics", nil)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	samples := map[string]float64{}
	if resp.StatusCode != http.StatusOK {
		return resp.StatusCode, samples
	}
	for _, line := range strings.Split(string(body), "\n") {
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		v, err := strconv.ParseFloat(line[i+1:], 64)
		if err != nil {
			t.Fatalf("bad sample line %q", line)
		}
		samples[line[:i]] = v
	}
	return resp.StatusCode, samples
}

// TestMetricsAfterSession: after a scripted session over HTTP (tool calls
// that succeed and fail, requests refused for auth and origin), /metrics
// shows the expected counters and gauges, and only to a token holder.
func TestMetricsAfterSession(t *testing.T) {
	const token = "metrics-test-token-0123456789"
	// --spill-rows 5: the 7-row query below is collected to a spill file.
	p := launchHTTP(t, nil, "--auth-token", token, "--spill-rows", "5")
	auth := map[string]string{"Authorization": "Bearer " + token}
	c := connectHTTP(t, p.base, auth, false)
	call(t, c, "get_catalog", map[string]any{}, nil)
	var q struct {
		RowCount int64  `json:"row_count"`
		Method   string `json:"method"`
	}
	call(t, c, "query_data", map[string]any{"dataset": "weather/stations", "limit": 7}, &q)
	if q.RowCount != 7 || q.Method != "direct" {
		t.Fatalf("query: %+v", q)
	}
	callErr(t, c, "query_data", map[string]any{"dataset": "no/such"})

	if code, _ := scrape(t, p.base, nil); code != http.StatusUnauthorized {
		t.Fatalf("/metrics without a token: %d", code)
	}
	if code, _ := scrape(t, p.base, map[string]string{"Origin": "https://evil.example", "Authorization": "Bearer " + token}); code != http.StatusForbidden {
		t.Fatalf("/metrics from a foreign origin: %d", code)
	}
	code, m := scrape(t, p.base, auth)
	if code != http.StatusOK {
		t.Fatalf("/metrics: %d", code)
	}
	want := map[string]float64{
		`quarry_tool_calls_total{outcome="ok",tool="get_catalog"}`:               1,
		`quarry_tool_calls_total{outcome="ok",tool="query_data"}`:                1,
		`quarry_tool_calls_total{outcome="dataset_not_found",tool="query_data"}`: 1,
		`quarry_tool_call_duration_seconds_count{tool="query_data"}`:             2,
		`quarry_delivered_rows_total{method="direct"}`:                           7,
		`quarry_http_rejected_total{code="unauthorized",reason="auth"}`:          1,
		`quarry_http_rejected_total{code="forbidden_origin",reason="origin"}`:    1,
		`quarry_handles_live`:                   0,
		`quarry_spill_bytes_total{kind="join"}`: 0,
	}
	for k, v := range want {
		if got, ok := m[k]; !ok || got != v {
			t.Errorf("%s = %v (present %v), want %v", k, got, ok, v)
		}
	}
	for _, k := range []string{"quarry_delivered_bytes_total{method=\"direct\"}", "quarry_cache_bytes", "quarry_cache_hit_ratio",
		"quarry_artifacts_live", "quarry_memory_limit_bytes", "quarry_memory_used_bytes", "go_goroutines"} {
		if _, ok := m[k]; !ok {
			t.Errorf("%s missing", k)
		}
	}
	if m[`quarry_spill_bytes_total{kind="result"}`] <= 0 {
		t.Errorf(`quarry_spill_bytes_total{kind="result"} = %v after a result over --spill-rows`, m[`quarry_spill_bytes_total{kind="result"}`])
	}
	if m[`quarry_delivered_bytes_total{method="direct"}`] <= 0 || m["quarry_memory_limit_bytes"] <= 0 {
		t.Errorf("bytes %v, memory limit %v", m[`quarry_delivered_bytes_total{method="direct"}`], m["quarry_memory_limit_bytes"])
	}
}
