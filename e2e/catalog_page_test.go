package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// catalogPage is one get_catalog answer.
type catalogPage struct {
	Datasets []struct {
		ID string `json:"id"`
	} `json:"datasets"`
	Total       int    `json:"total"`
	Matching    int    `json:"matching"`
	NextCursor  string `json:"next_cursor"`
	Diagnostics []struct {
		Path string `json:"path"`
	} `json:"diagnostics"`
	DiagnosticsTotal int  `json:"diagnostics_total"`
	Scanning         bool `json:"scanning"`
}

// TestCatalogPages: on a folder of 1,000 small CSV files (and 30 broken
// Parquet files), the default get_catalog page is under 16 KB of JSON,
// following next_cursor visits every dataset exactly once, and query
// filters datasets and diagnostics by words.
func TestCatalogPages(t *testing.T) {
	dir := t.TempDir()
	for i := range 1000 {
		sub := filepath.Join(dir, fmt.Sprintf("region_%02d", i%20))
		if err := os.MkdirAll(sub, 0o755); err != nil {
			t.Fatal(err)
		}
		body := fmt.Sprintf("id,store,amount\n1,s%d,%d.25\n2,s%d,3.5\n", i, i, i)
		if err := os.WriteFile(filepath.Join(sub, fmt.Sprintf("sales_%04d.csv", i)), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 30 {
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("broken_%02d.parquet", i)), []byte("not parquet at all"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	c := startStdio(t, "--data", dir)
	for start := time.Now(); ; time.Sleep(100 * time.Millisecond) { // the start-up scan
		var p catalogPage
		if call(t, c, "get_catalog", map[string]any{"limit": 1}, &p); !p.Scanning {
			break
		}
		if time.Since(start) > time.Minute {
			t.Fatal("the catalog scan does not end")
		}
	}

	seen := map[string]int{}
	cursor, pages := "", 0
	for {
		args := map[string]any{}
		if cursor != "" {
			args["cursor"] = cursor
		}
		res := callRaw(t, c, "get_catalog", args)
		if res.IsError {
			t.Fatalf("get_catalog %v: %s", args, text(res))
		}
		raw := text(res)
		if pages == 0 {
			t.Logf("default page: %d bytes", len(raw))
			if len(raw) >= 16<<10 {
				t.Fatalf("default get_catalog page is %d bytes, want < 16 KB", len(raw))
			}
		}
		var p catalogPage
		if err := json.Unmarshal([]byte(raw), &p); err != nil {
			t.Fatal(err)
		}
		if p.Matching != 1000 || p.Total != len(p.Datasets) {
			t.Fatalf("page %d: matching %d, total %d for %d datasets", pages, p.Matching, p.Total, len(p.Datasets))
		}
		if pages == 0 && (len(p.Diagnostics) != 10 || p.DiagnosticsTotal != 30) {
			t.Fatalf("first page: %d diagnostics of %d, want 10 of 30", len(p.Diagnostics), p.DiagnosticsTotal)
		}
		for _, d := range p.Datasets {
			seen[d.ID]++
		}
		pages++
		if p.NextCursor == "" {
			break
		}
		if pages > 100 {
			t.Fatal("paging does not end")
		}
		cursor = p.NextCursor
	}
	if len(seen) != 1000 {
		t.Fatalf("paging visited %d datasets, want 1000", len(seen))
	}
	for id, n := range seen {
		if n != 1 {
			t.Fatalf("%s visited %d times", id, n)
		}
	}
	t.Logf("%d pages", pages)

	// Words: all must occur (id, path or tags); diagnostics filtered too.
	var p catalogPage
	call(t, c, "get_catalog", map[string]any{"query": "REGION_03 sales_00", "limit": 500}, &p)
	for _, d := range p.Datasets {
		if !strings.HasPrefix(d.ID, "region_03/sales_00") {
			t.Fatalf("query matched %s", d.ID)
		}
	}
	if p.Matching != 5 || len(p.Diagnostics) != 0 { // 3, 23, 43, 63, 83
		t.Fatalf("query region_03 sales_00: %d datasets, %d diagnostics", p.Matching, len(p.Diagnostics))
	}
	call(t, c, "get_catalog", map[string]any{"query": "broken_1 PARQUET"}, &p)
	if p.Matching != 0 || len(p.Diagnostics) != 10 || p.DiagnosticsTotal != 0 {
		t.Fatalf("query broken_1: %d datasets, %d diagnostics (total %d)", p.Matching, len(p.Diagnostics), p.DiagnosticsTotal)
	}
	for _, bad := range []map[string]any{{"cursor": "nope"}, {"limit": 501}, {"limit": -1}} {
		if res := callRaw(t, c, "get_catalog", bad); !res.IsError || !strings.Contains(text(res), "invalid_argument") {
			t.Fatalf("get_catalog %v: %s", bad, text(res))
		}
	}
}
