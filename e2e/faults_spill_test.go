package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
)

// artifactDirState lists an artifact directory: the crash-safety temp
// entries (".tmp-*" files of writers, ".tmp-join-spill-*" directories of
// spilling joins), the visible artifacts and their total size.
func artifactDirState(t *testing.T, dir string) (temps, files []string, bytes int64) {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		switch {
		case strings.HasPrefix(e.Name(), ".tmp-"):
			temps = append(temps, e.Name())
		case !e.IsDir() && !strings.HasPrefix(e.Name(), "."):
			files = append(files, e.Name())
			if fi, err := e.Info(); err == nil {
				bytes += fi.Size()
			}
		}
	}
	return temps, files, bytes
}

// dirBytes is the total size of the regular files under dir.
func dirBytes(dir string) int64 {
	var n int64
	_ = filepath.WalkDir(dir, func(_ string, d os.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			if fi, err := d.Info(); err == nil {
				n += fi.Size()
			}
		}
		return nil
	})
	return n
}

// TestKillDuringSpill: bin/quarry killed with SIGKILL while it spills, (1)
// a result behind a handle bigger than --spill-rows (streamed into a
// Parquet temp file) and (2) a join whose build side passes --query-memory
// (partition files in a ".tmp-join-spill-*" directory): no partial artifact
// is visible, the next server (after the orphan age) deletes the temp file
// or directory with everything in it, its artifact accounting
// (quarry_artifact_bytes, quarry_artifacts_live) matches the directory, and
// it spills and answers normally.
func TestKillDuringSpill(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		tool string
		call map[string]any
	}{
		{"handle", []string{"--spill-rows", "1000", "--max-rows", "100"}, "query_data",
			map[string]any{"dataset": "big", "order_by": []map[string]any{{"col": "id", "desc": true}}}},
		{"join", []string{"--query-memory", "16777216"}, "aggregate",
			map[string]any{"dataset": "big", "join": []any{map[string]any{"dataset": "other", "on": []any{map[string]any{"left": "id", "right": "id"}}}},
				"group_by": []string{"region"}, "aggs": []map[string]any{{"col": "*", "fn": "count"}}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			data := flagData(t, 1_000_000)
			writeBigCSV(t, filepath.Join(data, "other.csv"), 1_000_000, 0.5)
			arts := t.TempDir()
			args := append([]string{"--data", data, "--artifact-dir", arts, "--confirm-rows", "-1", "--confirm-bytes", "-1"}, tc.args...)

			killMidWrite(t, args, arts, tc.tool, tc.call, 3*time.Minute, "spill")

			time.Sleep(2500 * time.Millisecond) // the orphan age of a temp entry
			p2 := launchHTTP(t, nil, args...)
			checkArtifactAccounting(t, arts, p2.base, 0)

			// The restarted server spills again: a handle paged from disk.
			c2 := connectHTTP(t, p2.base, nil, false)
			pg := callPage(t, c2, "query_data", map[string]any{"dataset": "big", "limit": 5000, "max_rows": 100})
			if pg.ResultHandle == "" || pg.TotalRows != 5000 {
				t.Fatalf("after restart: %+v", pg.PageInfo)
			}
			if tc.name == "handle" {
				checkArtifactAccounting(t, arts, p2.base, 1) // the spill file of the live handle
			}
		})
	}
}

// TestColdScanFileChanged: a source file rewritten in place, truncated or
// deleted while a query scans it from disk (--cache-memory 0: every scan is
// cold; the CSV reader memory-maps files of 1 MiB and more): the query
// answers as of the old file or of the new one (or of a prefix of either:
// an in-place rewrite or truncation passes through those), or fails with a structured
// error that is not internal; the server never crashes (a truncated mapping
// faults with SIGBUS, which must become an error) and keeps answering; and
// once the file is whole again it is queried again (a file that failed to
// open half-written is re-opened when it changes).
func TestColdScanFileChanged(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "src.csv")
	const rows = 400_000
	writeBigCSV(t, path, rows, 0)
	p := launchHTTP(t, nil, "--data", dir, "--artifact-dir", t.TempDir(), "--cache-memory", "0")
	c := connectHTTP(t, p.base, nil, false)
	var at string // the step, for failure messages
	query := map[string]any{"dataset": "src", "aggs": []map[string]any{{"col": "*", "fn": "count", "as": "n"}, {"col": "price", "fn": "sum", "as": "s"}}}
	answer := func(res *mcp.CallToolResult) string {
		if res.IsError {
			var e toolErr
			if err := json.Unmarshal([]byte(text(res)), &e); err != nil || e.Code == "" || e.Code == "internal" {
				t.Fatalf("%s: unstructured or internal error: %s", at, text(res))
			}
			return "error " + e.Code
		}
		var r queryResult
		b, _ := json.Marshal(res.StructuredContent)
		if err := json.Unmarshal(b, &r); err != nil || len(r.Data) != 1 {
			t.Fatalf("answer: %s", b)
		}
		b, _ = json.Marshal(r.Data[0])
		return string(b)
	}
	for _, mode := range []string{"rewrite", "truncate", "delete"} {
		for _, delay := range []time.Duration{0, 20 * time.Millisecond, 80 * time.Millisecond, 250 * time.Millisecond} {
			at = fmt.Sprintf("%s after %v", mode, delay)
			writeBigCSV(t, path, rows, 0)
			if mode == "delete" { // a file added back: listed again by a rescan
				callRaw(t, c, "get_catalog", map[string]any{})
			}
			before := answer(callRaw(t, c, "query_data", query))
			if strings.HasPrefix(before, "error ") {
				t.Fatalf("%s after %v: before the change: %s", mode, delay, before)
			}
			done := make(chan *mcp.CallToolResult, 1)
			go func() {
				req := mcp.CallToolRequest{}
				req.Params.Name, req.Params.Arguments = "query_data", query
				ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
				defer cancel()
				res, err := c.CallTool(ctx, req)
				if err != nil {
					res = &mcp.CallToolResult{IsError: true, Content: []mcp.Content{mcp.NewTextContent("protocol error: " + err.Error())}}
				}
				done <- res
			}()
			time.Sleep(delay)
			switch mode {
			case "rewrite": // the same inode, other rows
				writeBigCSV(t, path, rows/2, 0.5)
			case "truncate":
				if err := os.Truncate(path, 1<<20); err != nil {
					t.Fatal(err)
				}
			case "delete":
				if err := os.Remove(path); err != nil {
					t.Fatal(err)
				}
			}
			during := answer(<-done)
			after := answer(callRaw(t, c, "query_data", query))
			if during != before && during != after && !strings.HasPrefix(during, "error ") && !prefixAnswer(during, 0) && !prefixAnswer(during, 0.5) {
				t.Errorf("%s after %v: the query during the change answered %s; before %s, after %s", mode, delay, during, before, after)
			}
			if mode == "rewrite" && (!prefixAnswer(after, 0.5) || !strings.Contains(after, fmt.Sprintf(`"n":%d,`, rows/2))) {
				t.Errorf("%s after %v: the rewritten file answers %s", mode, delay, after)
			}
			t.Logf("%s after %v: before %s, during %s, after %s", mode, delay, before, during, after)
		}
	}
	// Still serving.
	writeBigCSV(t, path, 10, 0)
	callRaw(t, c, "get_catalog", map[string]any{}) // deleted last: listed again by a rescan
	if got := answer(callRaw(t, c, "query_data", query)); !strings.Contains(got, `"n":10`) {
		t.Fatalf("after the changes: %s", got)
	}
}

// prefixAnswer reports whether ans ({"n":N,"s":S}) is the count and price
// sum of the first N rows written by writeBigCSV with base.
func prefixAnswer(ans string, base float64) bool {
	var r struct {
		N int64
		S *float64
	}
	if json.Unmarshal([]byte(ans), &r) != nil {
		return false
	}
	want := 0.0
	for i := range r.N {
		want += float64(i%1000)/4 + base
	}
	if r.S == nil {
		return r.N == 0
	}
	return math.Abs(*r.S-want) <= 1e-9*max(1, want)
}
