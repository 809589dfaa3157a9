//go:build soak

package app_test

import (
	"bufio"
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
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/quarrydb/quarry/demodata"
	"github.com/quarrydb/quarry/internal/app"
	qtransport "github.com/quarrydb/quarry/mcpapi/transport"
)

// TestSoak (make soak; build tag soak) runs a mixed workload with
// QUARRY_SOAK_CLIENTS (default 8) mcp-go clients over Streamable HTTP
// against a wired server in this process, for QUARRY_SOAK_CALLS calls per
// client if set, else for QUARRY_SOAK_DURATION (default 2m): catalog,
// schema, estimates, queries paged through handles, Parquet and CSV
// artifacts read back as resources, distinct values, aggregates, HDF5
// slices, queries of a 3M-row file (QUARRY_SOAK_BIG_ROWS), and queries of a
// file that is replaced every 200 ms. Every answer is checked; after the
// run the goroutines, open files, live heap and RSS must be back within
// bounds of the post-warm-up baseline.
func TestSoak(t *testing.T) {
	dur := 2 * time.Minute
	if v := os.Getenv("QUARRY_SOAK_DURATION"); v != "" {
		d, err := time.ParseDuration(v)
		must(t, err)
		dur = d
	}
	clients := envInt(t, "QUARRY_SOAK_CLIENTS", 8)
	perClient := envInt(t, "QUARRY_SOAK_CALLS", 0) // 0: run for dur
	if perClient > 0 {
		dur = 24 * time.Hour // bounded by the call count
	}
	bigRows := envInt(t, "QUARRY_SOAK_BIG_ROWS", 3_000_000)
	root, err := demodata.Extract(t.TempDir())
	must(t, err)
	writeSoakBig(t, filepath.Join(root, "soak", "big.csv"), bigRows)
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
	h, err := qtransport.NewHTTPHandler(a.MCP, qtransport.HTTPOptions{RateLimit: -1, MaxConcurrent: -1, Logger: slog.New(slog.DiscardHandler)})
	must(t, err)
	ts := httptest.NewServer(h)
	defer ts.Close()
	defer h.Close(context.Background())

	type sample struct{ goroutines, fds, heapMiB, rssMiB int }
	measure := func() sample {
		runtime.GC()
		debug.FreeOSMemory()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		fds, _ := os.ReadDir("/proc/self/fd")
		return sample{runtime.NumGoroutine(), len(fds), int(m.HeapInuse >> 20), procStatusMiB("VmRSS")}
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
	began := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), dur)
	defer cancel()
	var wg sync.WaitGroup
	wg.Go(func() { // the replaced file
		for gen := 1; ctx.Err() == nil; gen++ {
			time.Sleep(200 * time.Millisecond)
			writeReplaced(gen)
		}
	})
	var (
		baseline  sample
		warmCalls atomic.Int64 // calls left before the baseline is taken (QUARRY_SOAK_CALLS)
		warm      = make(chan struct{})
	)
	warmCalls.Store(int64(clients * perClient / 5))
	wg.Go(func() {
		warmup := time.After(dur / 5)
		if perClient > 0 {
			warmup = nil
		}
		select {
		case <-warmup:
		case <-warm:
		case <-ctx.Done():
			return
		}
		baseline = measure()
	})
	var clientsDone sync.WaitGroup
	clientsDone.Add(clients)
	go func() { // the replaced-file writer stops with the last client
		clientsDone.Wait()
		cancel()
	}()
	for ci := range clients {
		wg.Go(func() {
			defer clientsDone.Done()
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
			mine := 0 // calls made (tool calls and resource reads)
			callTool := func(tool string, args map[string]any) (map[string]any, string) {
				mine++
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
				if warmCalls.Add(-1) == 0 {
					close(warm)
				}
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
			// readArtifact reads a result file back (resources/read), nil on failure.
			readArtifact := func(uri string) []byte {
				mine++
				rreq := mcp.ReadResourceRequest{}
				rreq.Params.URI = uri
				start := time.Now()
				res, err := c.ReadResource(context.Background(), rreq)
				mu.Lock()
				lat["resources/read"] = append(lat["resources/read"], time.Since(start))
				mu.Unlock()
				if warmCalls.Add(-1) == 0 {
					close(warm)
				}
				if err != nil || len(res.Contents) != 1 {
					fail("read %s: %v", uri, err)
					return nil
				}
				switch x := res.Contents[0].(type) {
				case mcp.BlobResourceContents:
					raw, err := base64.StdEncoding.DecodeString(x.Blob)
					if err != nil {
						fail("read %s: %v", uri, err)
						return nil
					}
					return raw
				case mcp.TextResourceContents:
					return []byte(x.Text)
				}
				fail("read %s: %T", uri, res.Contents[0])
				return nil
			}
			expectOK := func(tool string, args map[string]any) map[string]any {
				out, code := callTool(tool, args)
				if code != "" && code != "bad" && code != "protocol" {
					fail("%s(%v): error %s", tool, args, code)
				}
				return out
			}
			for ctx.Err() == nil && (perClient == 0 || mine < perClient) {
				switch op := rng.IntN(12); op {
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
					if raw := readArtifact(uri); raw != nil && (!bytes.HasPrefix(raw, []byte("PAR1")) || !bytes.HasSuffix(raw, []byte("PAR1"))) {
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
				case 8: // a CSV artifact, read back
					out := expectOK("query_data", map[string]any{"dataset": "sales/orders", "columns": []string{"order_id", "region"}, "output_format": "csv"})
					if uri, _ := out["resource_uri"].(string); uri != "" {
						if raw := readArtifact(uri); raw != nil && !bytes.HasPrefix(raw, []byte("order_id,region\r\n")) {
							fail("artifact %s is not the CSV: %.40q", uri, raw)
						}
					} else if out != nil && out["method"] != "direct" {
						fail("csv query: no resource_uri: %v", out["method"])
					}
				case 9: // an HDF5 slice
					if out := expectOK("read_dataset_slice", map[string]any{"uri": "h5://physics/experiment.h5?path=/detector/image", "slice_str": "1:3, 2:5"}); out != nil {
						if b, _ := json.Marshal(out); !bytes.Contains(b, []byte(`"shape":[2,3]`)) {
							fail("read_dataset_slice: %s", b)
						}
					}
				case 10: // the 3M-row file, all of it
					if out := expectOK("query_data", map[string]any{"dataset": "soak/big", "group_by": []string{"g"},
						"aggs": []map[string]any{{"col": "*", "fn": "count"}}}); out != nil {
						rows, _ := out["data"].([]any)
						n := 0.0
						for _, r := range rows {
							for k, v := range r.(map[string]any) {
								if k != "g" {
									f, _ := v.(float64)
									n += f
								}
							}
						}
						if len(rows) != 100 || n != float64(bigRows) {
							fail("big group-by: %d groups, %v rows", len(rows), n)
						}
					}
				case 11: // the 3M-row file, a filter
					if out := expectOK("query_data", map[string]any{"dataset": "soak/big", "filters": []map[string]any{{"col": "id", "op": "lt", "value": 50}}}); out != nil {
						if n, _ := out["row_count"].(float64); n != 50 {
							fail("big filter: %v rows", out["row_count"])
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
	peak := procStatusMiB("VmHWM")
	calls := 0
	for tool, ds := range lat {
		slices.Sort(ds)
		calls += len(ds)
		t.Logf("%-16s %6d calls  p50 %6.1f ms  p99 %7.1f ms", tool, len(ds),
			float64(ds[len(ds)/2].Microseconds())/1000, float64(ds[len(ds)*99/100].Microseconds())/1000)
	}
	t.Logf("%d calls in %v by %d clients; replaced-file errors %v", calls, time.Since(began).Round(time.Second), clients, softErrs)
	t.Logf("baseline after warm-up: %+v; after the run: %+v; peak RSS %d MiB", baseline, end, peak)
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
	if end.rssMiB > baseline.rssMiB+baseline.rssMiB/10 {
		t.Errorf("RSS did not return within 10%% of the baseline: %d MiB, then %d MiB", baseline.rssMiB, end.rssMiB)
	}
}

// envInt is the integer environment variable name, or def.
func envInt(t *testing.T, name string, def int) int {
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	must(t, err)
	return n
}

// procStatusMiB is a memory figure of /proc/self/status (VmRSS, VmHWM) in MiB.
func procStatusMiB(field string) int {
	b, _ := os.ReadFile("/proc/self/status")
	for _, l := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(l, field+":"); ok {
			kb, _ := strconv.Atoi(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")))
			return kb >> 10
		}
	}
	return 0
}

// writeSoakBig writes a CSV of rows rows: id (0..rows-1), g (id % 100), v.
func writeSoakBig(t *testing.T, path string, rows int) {
	must(t, os.MkdirAll(filepath.Dir(path), 0o755))
	f, err := os.Create(path)
	must(t, err)
	w := bufio.NewWriterSize(f, 1<<20)
	w.WriteString("id,g,v\n")
	var line []byte
	for i := range rows {
		line = strconv.AppendInt(line[:0], int64(i), 10)
		line = append(line, ',')
		line = strconv.AppendInt(line, int64(i%100), 10)
		line = append(line, ',')
		line = strconv.AppendInt(line, int64(i*7%1000), 10)
		line = append(line, '\n')
		w.Write(line)
	}
	must(t, w.Flush())
	must(t, f.Close())
}
