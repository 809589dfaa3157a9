//go:build soak

package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
)

// TestSoakBigQueries (make soak; build tag soak): QUARRY_SOAK_BIG_QUERIES
// (default 8) clients each run a group-by with QUARRY_SOAK_GROUPS (default
// 10,000,000) groups at once against `bin/quarry serve --server-memory
// 512MiB --cache-memory 256MiB --handle-memory 64MiB`. Every query answers
// correctly or fails with resource_exhausted and a hint (the server-wide
// budget), at least one answers; the server is never OOM-killed, and its
// peak RSS (VmHWM, sampled every 100 ms) stays within the bound:
// (server memory + cache memory) + 10%. The answers are three rows
// delivered inline, so no result is kept behind a handle (the test checks
// that none is live) and the bound has no handle allowance: the handle
// budget is only used, and only then allowed for by the Go memory limit,
// by results that are kept. QUARRY_SOAK_ENV=NAME=value passes one variable
// to the server (GOMEMLIMIT, say).
func TestSoakBigQueries(t *testing.T) {
	groups, queries := 10_000_000, 8
	if v := os.Getenv("QUARRY_SOAK_GROUPS"); v != "" {
		groups, _ = strconv.Atoi(v)
	}
	if v := os.Getenv("QUARRY_SOAK_BIG_QUERIES"); v != "" {
		queries, _ = strconv.Atoi(v)
	}
	const serverMiB, cacheMiB, handleMiB = 512, 256, 64
	data := t.TempDir()
	writeGroupsCSV(t, filepath.Join(data, "groups.csv"), groups)
	p := launchHTTP(t, envList(os.Getenv("QUARRY_SOAK_ENV")), "--log-level", "info", "--data", data, "--artifact-dir", t.TempDir(), "--server-memory", fmt.Sprint(serverMiB<<20),
		"--cache-memory", fmt.Sprint(cacheMiB<<20), "--handle-memory", fmt.Sprint(handleMiB<<20),
		"--query-timeout", "10m", "--confirm-rows", "-1", "--confirm-bytes", "-1")
	pid := p.cmd.Process.Pid
	prevTimeout := httpCallTimeout
	httpCallTimeout = 15 * time.Minute // queued queries answer after minutes
	t.Cleanup(func() { httpCallTimeout = prevTimeout })

	// Warm the column cache with one small query, so that the runs measure
	// the queries, not the first parse.
	c0 := connectHTTP(t, p.base, nil, false)
	var warm queryResult
	call(t, c0, "query_data", map[string]any{"dataset": "groups", "aggs": []map[string]any{{"col": "v", "fn": "sum"}}}, &warm)
	base := procMiB(pid, "VmRSS")

	peak := sampleHWM(pid)
	type outcome struct {
		code    string
		hint    string
		elapsed time.Duration
		err     error
	}
	outs := make([]outcome, queries)
	var wg sync.WaitGroup
	began := time.Now()
	for i := range queries {
		c := connectHTTP(t, p.base, nil, false)
		wg.Go(func() {
			req := mcp.CallToolRequest{}
			req.Params.Name = "query_data"
			req.Params.Arguments = map[string]any{"dataset": "groups", "group_by": []string{"k"},
				"aggs":     []map[string]any{{"col": "v", "fn": "sum", "as": "s"}},
				"order_by": []map[string]any{{"col": "s", "desc": true}, {"col": "k"}}, "limit": 3}
			ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
			defer cancel()
			start := time.Now()
			res, err := c.CallTool(ctx, req)
			o := outcome{elapsed: time.Since(start), err: err}
			if err == nil && res.IsError {
				var e toolErr
				if json.Unmarshal([]byte(text(res)), &e) != nil {
					o.err = fmt.Errorf("unstructured error %s", text(res))
				}
				o.code, o.hint = e.Code, e.Hint
			} else if err == nil {
				var r queryResult
				b, _ := json.Marshal(res.StructuredContent)
				if json.Unmarshal(b, &r) != nil || len(r.Data) != 3 || fmt.Sprint(r.Data[0]["s"]) != "999" {
					o.err = fmt.Errorf("wrong answer %s", b)
				}
			}
			outs[i] = o
		})
	}
	wg.Wait()
	hwm := peak()
	select {
	case <-p.exited:
		t.Fatalf("the server died: %v\n%s", p.err, p.stderr.String())
	default:
	}
	ok, exhausted := 0, 0
	for i, o := range outs {
		switch {
		case o.err != nil:
			t.Errorf("query %d: %v", i, o.err)
		case o.code == "":
			ok++
		case o.code == "resource_exhausted" && o.hint != "":
			exhausted++
		default:
			t.Errorf("query %d: code %s (hint %q); want an answer or resource_exhausted with a hint", i, o.code, o.hint)
		}
		t.Logf("query %d: code %q after %v", i, o.code, o.elapsed.Round(time.Millisecond))
	}
	logs := p.stderr.String()
	t.Logf("server: %d runs gave their memory back and were queued again; %s", strings.Count(logs, "gave its memory back"), goLimitLine(logs))
	if _, m := scrape(t, p.base, nil); m["quarry_handles_live"] != 0 {
		t.Errorf("%v results kept behind handles: the bound allows for none", m["quarry_handles_live"])
	}
	bound := (serverMiB + cacheMiB) * 11 / 10
	t.Logf("%d queries of %d groups in %v: %d answered, %d resource_exhausted; RSS after warm-up %d MiB, peak %d MiB (bound %d MiB)",
		queries, groups, time.Since(began).Round(time.Second), ok, exhausted, base, hwm, bound)
	if ok == 0 {
		t.Error("no query answered: the budget admits none of them")
	}
	if hwm > bound {
		t.Errorf("peak RSS %d MiB > %d MiB", hwm, bound)
	}
	// The server still answers.
	call(t, c0, "query_data", map[string]any{"dataset": "groups", "aggs": []map[string]any{{"col": "v", "fn": "sum"}}}, &warm)
}

// goLimitLine is the server's log line about the Go memory limit.
func goLimitLine(logs string) string {
	for l := range strings.Lines(logs) {
		if strings.Contains(l, "Go memory limit") {
			return strings.TrimSpace(l)
		}
	}
	return "no Go memory limit logged"
}

// writeGroupsCSV writes rows rows of k (a permutation of 0..rows-1, so
// every row is its own group) and v (k % 1000).
func writeGroupsCSV(t *testing.T, path string, rows int) {
	t.Helper()
	var line []byte
	writeCSV(t, path, "k,v", rows, func(w *bufio.Writer, i int) {
		k := int64(i) * 7919 % int64(rows)
		line = strconv.AppendInt(line[:0], k, 10)
		line = append(line, ',')
		line = strconv.AppendInt(line, k%1000, 10)
		w.Write(append(line, '\n'))
	})
}
