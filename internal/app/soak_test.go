//go:build soak

package app_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/quarrydb/quarry/demodata"
	"github.com/quarrydb/quarry/internal/app"
	"github.com/quarrydb/quarry/mcpapi"
	"github.com/quarrydb/quarry/mcpapi/transport"
)

// TestSoak (make soak; build tag soak) runs a mixed workload for
// QUARRY_SOAK_DURATION (default 2m) with QUARRY_SOAK_CLIENTS (default 8)
// mcp-go clients over Streamable HTTP against a wired server in this
// process: catalog, schema, estimates, queries paged through handles,
// Parquet artifacts read back as resources, distinct values, aggregates,
// and queries of a file that is replaced every 200 ms. Every answer is
// checked; after the run the goroutines, open files and live heap must be
// back within bounds of the post-warm-up baseline.
func TestSoak(t *testing.T) {
	dur := 2 * time.Minute
	if v := os.Getenv("QUARRY_SOAK_DURATION"); v != "" {
		d, err := time.ParseDuration(v)
		must(t, err)
		dur = d
	}
	clients := 8
	if v := os.Getenv("QUARRY_SOAK_CLIENTS"); v != "" {
		n, err := strconv.Atoi(v)
		must(t, err)
		clients = n
	}
	root, err := demodata.Extract(t.TempDir())
	must(t, err)
	replaced := filepath.Join(root, "soak", "replace.csv")
	writeReplaced := func(gen int) {
		var b bytes.Buffer
		b.WriteString("id,gen,v\n")
		for i := range 2000 {
			fmt.Fprintf(&b, "%d,%d,%d\n", i, gen, (i*gen)%97)
		}
		must(t, os.MkdirAll(filepath.Dir(replaced), 0o755))
		must(t, os.WriteFile(replaced+".tmp", b.Bytes(), 0o644))
		must(t, os.Rename(replaced+".tmp", replaced))
	}
	writeReplaced(0)
	a, err := app.Open(context.Background(), app.Config{Data: root, ArtifactDir: t.TempDir(), MaxHandles: 32,
		HandleMemory: 64 << 20, ServerMemory: 512 << 20, CacheMemory: 64 << 20, Logger: slog.New(slog.DiscardHandler)})
	must(t, err)
	defer a.Close()
	h, err := transport.NewHTTPHandler(a.MCP, transport.HTTPOptions{RateLimit: -1, MaxConcurrent: -1, Logger: slog.New(slog.DiscardHandler)})
	must(t, err)
	ts := httptest.NewServer(h)
	defer ts.Close()
	defer h.Close(context.Background())

	type sample struct{ goroutines, fds, heapMiB int }
	measure := func() sample {
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		fds, _ := os.ReadDir("/proc/self/fd")
		return sample{runtime.NumGoroutine(), len(fds), int(m.HeapInuse >> 20)}
	}
	var (
		mu       sync.Mutex
		lat      = map[string][]time.Duration{}
		failures []string
		softErrs = map[string]int{}
	)
	fail := func(format string, args ...any) {
		mu.Lock()
		defer mu.Unlock()
		if len(failures) < 20 {
			failures = append(failures, fmt.Sprintf(format, args...))
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), dur)
	defer cancel()
	var wg sync.WaitGroup
	wg.Go(func() { // the replaced file
		for gen := 1; ctx.Err() == nil; gen++ {
			time.Sleep(200 * time.Millisecond)
			writeReplaced(gen)
		}
	})
	var baseline sample
	wg.Go(func() {
		select {
		case <-time.After(dur / 5):
			baseline = measure()
		case <-ctx.Done():
		}
	})
	for ci := range clients {
		wg.Go(func() {
			c, err := client.NewStreamableHttpClient(ts.URL+"/mcp", transport.WithHTTPTimeout(60*time.Second))
			if err != nil {
				fail("client: %v", err)
				return
			}
			defer c.Close()
			must(t, c.Start(context.Background()))
			ireq := mcp.InitializeRequest{}
			ireq.Params.ProtocolVersion = mcp.LATEST_PROTOCOL_VERSION
			ireq.Params.ClientInfo = mcp.Implementation{Name: "soak", Version: "1"}
			if _, err := c.Initialize(context.Background(), ireq); err != nil {
				fail("initialize: %v", err)
				return
			}
			rng := rand.New(rand.NewPCG(uint64(ci), 7))
			callTool := func(tool string, args map[string]any) (map[string]any, string) {
				req := mcp.CallToolRequest{}
				req.Params.Name, req.Params.Arguments = tool, args
				cctx, ccancel := context.WithTimeout(context.Background(), 60*time.Second)
				defer ccancel()
				start := time.Now()
				res, err := c.CallTool(cctx, req)
				el := time.Since(start)
				mu.Lock()
				lat[tool] = append(lat[tool], el)
				mu.Unlock()
				if err != nil {
					fail("%s: protocol error %v", tool, err)
					return nil, "protocol"
				}
				var text string
				for _, x := range res.Content {
					if tc, ok := x.(mcp.TextContent); ok {
						text += tc.Text
					}
				}
				if res.IsError {
					var e struct{ Code, Error string }
					if json.Unmarshal([]byte(text), &e) != nil || e.Code == "" || e.Code == "internal" {
						fail("%s(%v): unstructured or internal error: %s", tool, args, text)
						return nil, "bad"
					}
					return nil, e.Code
				}
				b, _ := json.Marshal(res.StructuredContent)
				var out map[string]any
				if json.Unmarshal(b, &out) != nil {
					fail("%s: structured content %s", tool, b)
				}
				return out, ""
			}
			expectOK := func(tool string, args map[string]any) map[string]any {
				out, code := callTool(tool, args)
				if code != "" && code != "bad" && code != "protocol" {
					fail("%s(%v): error %s", tool, args, code)
				}
				return out
			}
			for i := 0; ctx.Err() == nil; i++ {
				switch op := rng.IntN(8); op {
				case 0:
					if out := expectOK("get_catalog", map[string]any{}); out != nil {
						if ds, _ := out["datasets"].([]any); len(ds) < 5 {
							fail("get_catalog: %d datasets", len(ds))
						}
					}
				case 1:
					id := []string{"sales/orders", "weather/daily", "weather/stations", "survey/wide", "sensors/readings"}[rng.IntN(5)]
					if out := expectOK("get_schema", map[string]any{"dataset": id}); out != nil {
						if cols, _ := out["columns"].([]any); len(cols) == 0 {
							fail("get_schema %s: no columns", id)
						}
					}
				case 2:
					if out := expectOK("estimate_query", map[string]any{"dataset": "sales/orders", "group_by": []string{"region"},
						"aggs": []map[string]any{{"col": "*", "fn": "count"}}}); out != nil {
						if n, _ := out["row_estimate"].(float64); n <= 0 {
							fail("estimate_query: %v", out)
						}
					}
				case 3: // a handle, paged to the end
					out := expectOK("query_data", map[string]any{"dataset": "sales/orders", "columns": []string{"order_id", "region"}})
					if out == nil {
						continue
					}
					total, _ := out["total_rows"].(float64)
					seen, _ := out["row_count"].(float64)
					handle, _ := out["result_handle"].(string)
					for pi, _ := out["page_info"].(map[string]any); pi != nil && pi["has_more"] == true; {
						next := expectOK("query_next_page", map[string]any{"result_handle": handle, "page_token": pi["page_token"]})
						if next == nil {
							break
						}
						if off, _ := next["page_info"].(map[string]any)["offset"].(float64); off != seen {
							fail("page offset %v after %v rows", off, seen)
						}
						n, _ := next["row_count"].(float64)
						seen += n
						pi, _ = next["page_info"].(map[string]any)
					}
					if total == 0 || seen != total {
						fail("query_data paged %v of %v rows", seen, total)
					}
				case 4: // a Parquet artifact, read back
					out := expectOK("query_data", map[string]any{"dataset": "weather/daily", "output_format": "parquet"})
					if out == nil {
						continue
					}
					uri, _ := out["resource_uri"].(string)
					if uri == "" {
						if out["method"] != "direct" {
							fail("parquet query: no resource_uri: %v", out["method"])
						}
						continue
					}
					rreq := mcp.ReadResourceRequest{}
					rreq.Params.URI = uri
					res, err := c.ReadResource(context.Background(), rreq)
					if err != nil || len(res.Contents) != 1 {
						fail("read %s: %v", uri, err)
						continue
					}
					blob, ok := res.Contents[0].(mcp.BlobResourceContents)
					raw, derr := base64.StdEncoding.DecodeString(blob.Blob)
					if !ok || derr != nil || !bytes.HasPrefix(raw, []byte("PAR1")) || !bytes.HasSuffix(raw, []byte("PAR1")) {
						fail("artifact %s is not a Parquet file", uri)
					}
				case 5:
					if out := expectOK("distinct_values", map[string]any{"dataset": "sales/orders", "column": "region"}); out != nil {
						if v, _ := out["values"].([]any); len(v) == 0 {
							fail("distinct_values: %v", out)
						}
					}
				case 6:
					if out := expectOK("aggregate", map[string]any{"dataset": "sales/orders", "group_by": []string{"category"},
						"aggs": []map[string]any{{"col": "qty", "fn": "sum"}}}); out != nil {
						if n, _ := out["total_rows"].(float64); n <= 0 {
							fail("aggregate: %v", out)
						}
					}
				case 7: // the file being replaced: a whole generation, or a clear error
					out, code := callTool("query_data", map[string]any{"dataset": "soak/replace", "group_by": []string{"gen"},
						"aggs": []map[string]any{{"col": "*", "fn": "count"}}})
					switch {
					case code != "":
						mu.Lock()
						softErrs[code]++
						mu.Unlock()
					case out["total_rows"] != 1.0:
						fail("replaced file: %v groups of gen (a mix of generations?): %s", out["total_rows"], out["data"])
					case !strings.Contains(fmt.Sprint(out["data"]), "2000"):
						fail("replaced file: counts %v", out["data"])
					}
				}
			}
		})
	}
	wg.Wait()
	ts.CloseClientConnections()
	time.Sleep(2 * time.Second) // idle connections and sessions wind down
	end := measure()
	calls := 0
	for tool, ds := range lat {
		slices.Sort(ds)
		calls += len(ds)
		t.Logf("%-16s %6d calls  p50 %6.1f ms  p99 %7.1f ms", tool, len(ds),
			float64(ds[len(ds)/2].Microseconds())/1000, float64(ds[len(ds)*99/100].Microseconds())/1000)
	}
	t.Logf("%d calls in %v by %d clients; replaced-file errors %v", calls, dur, clients, softErrs)
	t.Logf("baseline after warm-up: %+v; after the run: %+v", baseline, end)
	for _, f := range failures {
		t.Error(f)
	}
	if baseline.goroutines == 0 {
		t.Fatal("no baseline (run longer)")
	}
	if end.goroutines > baseline.goroutines+5 {
		t.Errorf("goroutines grew from %d to %d", baseline.goroutines, end.goroutines)
	}
	if end.fds > baseline.fds+5 {
		t.Errorf("open files grew from %d to %d", baseline.fds, end.fds)
	}
	if end.heapMiB > baseline.heapMiB+baseline.heapMiB/10+16 {
		t.Errorf("live heap grew from %d MiB to %d MiB", baseline.heapMiB, end.heapMiB)
	}
}
