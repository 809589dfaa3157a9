package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
)

// TestDeliveryMillionRows pages through a 1M-row result spilled to disk
// (--spill-rows 100000), collecting every row exactly once and in order,
// switching the page format mid-way to csv, parquet and arrow (read back
// through resources/read) and back to json. Every response is checked
// against the never-silently-truncated contract. The walk selects the id
// column only (to keep 200 calls of JSON cheap for the race-instrumented
// client); whole rows of the spilled result are checked on a second query.
func TestDeliveryMillionRows(t *testing.T) {
	const rows = 1_000_000
	dir, arts := t.TempDir(), t.TempDir()
	writeBigCSV(t, filepath.Join(dir, "big.csv"), rows, 0.5)
	c := startStdio(t, "--data", dir, "--artifact-dir", arts, "--max-rows", "5000", "--page-rows", "5000",
		"--max-bytes", "1048576", "--max-cells", "20000", "--spill-rows", "100000", "--enable-arrow-ipc")

	start := time.Now()
	p := callPage(t, c, "query_data", map[string]any{"dataset": "big", "columns": []string{"id"}})
	t.Logf("query_data: %v", time.Since(start).Round(time.Millisecond))
	if p.Method != "handle" || p.RowCount != 5000 || p.ResultHandle == "" {
		t.Fatalf("first page: method %s, %d rows, warnings %q", p.Method, p.RowCount, p.Warnings)
	}
	if len(spillFiles(t, arts)) != 1 {
		t.Fatalf("the result was not spilled: %v", spillFiles(t, arts))
	}
	checkNeverSilent(t, p, rows)
	if !strings.Contains(strings.Join(p.Warnings, "\n"), "query_next_page") {
		t.Fatalf("no warning saying how to get the rest: %q", p.Warnings)
	}

	next := int64(0)
	take := func(rs []bigRow) {
		t.Helper()
		for _, r := range rs {
			if r != (bigRow{ID: next}) {
				t.Fatalf("row %d: got %+v", next, r)
			}
			next++
		}
	}
	take(p.Data)
	// Page formats by page number; the rest are json.
	switches := map[int]string{40: "csv", 41: "parquet", 42: "arrow", 43: "json", 120: "parquet", 121: "json"}
	mimes := map[string]string{"csv": "text/csv", "parquet": "application/vnd.apache.parquet", "arrow": "application/vnd.apache.arrow.file"}
	calls := 1
	for n := 1; p.PageInfo.HasMore; n++ {
		args := map[string]any{"result_handle": p.ResultHandle, "page_token": p.PageInfo.PageToken}
		format := switches[n]
		if format != "" {
			args["format"] = format
		}
		p = callPage(t, c, "query_next_page", args)
		calls++
		checkNeverSilent(t, p, rows)
		if p.PageInfo == nil || p.PageInfo.Offset != next {
			t.Fatalf("page %d: page_info %+v, want offset %d", n, p.PageInfo, next)
		}
		switch format {
		case "csv", "parquet", "arrow":
			if p.Method != "file" || p.Format != format || p.MIMEType != mimes[format] || len(p.Preview) == 0 {
				t.Fatalf("page %d as %s: %s %s %s", n, format, p.Method, p.Format, p.MIMEType)
			}
			got := fileRows(t, readArtifact(t, c, p.ResourceURI, mimes[format]), format)
			var preview []bigRow
			if err := json.Unmarshal(p.Preview, &preview); err != nil || len(preview) == 0 {
				t.Fatalf("page %d: preview %s: %v", n, p.Preview, err)
			}
			if int64(len(got)) != p.RowCount || preview[0] != got[0] {
				t.Fatalf("page %d: file has %d rows, row_count %d", n, len(got), p.RowCount)
			}
			take(got)
		default:
			if p.Method != "handle" || p.Format != "json" {
				t.Fatalf("page %d: method %s format %s", n, p.Method, p.Format)
			}
			take(p.Data)
		}
	}
	if next != rows {
		t.Fatalf("collected %d rows, want %d", next, rows)
	}
	t.Logf("%d calls, %v", calls, time.Since(start).Round(time.Millisecond))

	// Whole rows of a spilled result: the first page, a page as a resource,
	// and a page in the middle through a file.
	full := callPage(t, c, "query_data", map[string]any{"dataset": "big"})
	checkNeverSilent(t, full, rows)
	if len(spillFiles(t, arts)) < 2 {
		t.Fatalf("the second result was not spilled: %v", spillFiles(t, arts))
	}
	for i, r := range full.Data {
		if r != wantRow(int64(i), 0.5) {
			t.Fatalf("row %d: got %+v, want %+v", i, r, wantRow(int64(i), 0.5))
		}
	}
	p = full
	ct, err := readResource(t, c, "quarry://results/"+p.ResultHandle+"/pages/150")
	if err != nil {
		t.Fatal(err)
	}
	tc, ok := ct.(mcp.TextResourceContents)
	if !ok || tc.MIMEType != "application/json" {
		t.Fatalf("result page resource: %#v", ct)
	}
	var rp page
	if err := json.Unmarshal([]byte(tc.Text), &rp); err != nil {
		t.Fatal(err)
	}
	if rp.PageInfo.Offset != 150*5000 || len(rp.Data) != 5000 {
		t.Fatalf("result page 150: %+v", rp.PageInfo)
	}
	for i, r := range rp.Data {
		if id := int64(150*5000 + i); r != wantRow(id, 0.5) {
			t.Fatalf("row %d: got %+v, want %+v", id, r, wantRow(id, 0.5))
		}
	}
	// Continue from the resource page's token, as parquet.
	f := callPage(t, c, "query_next_page", map[string]any{"result_handle": p.ResultHandle, "page_token": rp.PageInfo.PageToken, "format": "parquet"})
	checkNeverSilent(t, f, rows)
	got := fileRows(t, readArtifact(t, c, f.ResourceURI, "application/vnd.apache.parquet"), "parquet")
	if f.PageInfo.Offset != 151*5000 || len(got) != 5000 {
		t.Fatalf("parquet page after the resource page: %+v, %d rows", f.PageInfo, len(got))
	}
	for i, r := range got {
		if id := int64(151*5000 + i); r != wantRow(id, 0.5) {
			t.Fatalf("row %d: got %+v, want %+v", id, r, wantRow(id, 0.5))
		}
	}
}

// TestDeliverySnapshot: a handle pins its result. Rewriting the source CSV
// between pages changes nothing in the pages that follow (in memory and
// spilled alike), while a new query sees the new file.
func TestDeliverySnapshot(t *testing.T) {
	for _, spill := range []string{"-1", "1000"} {
		t.Run("spill-rows="+spill, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "snap.csv")
			writeBigCSV(t, path, 3000, 0.5)
			c := startStdio(t, "--data", dir, "--artifact-dir", t.TempDir(), "--max-rows", "100", "--page-rows", "100", "--spill-rows", spill)
			p := callPage(t, c, "query_data", map[string]any{"dataset": "snap"})
			checkNeverSilent(t, p, 3000)
			p = callPage(t, c, "query_next_page", map[string]any{"result_handle": p.ResultHandle, "page_token": p.PageInfo.PageToken})
			tok := p.PageInfo.PageToken
			before := callPage(t, c, "query_next_page", map[string]any{"result_handle": p.ResultHandle, "page_token": tok})

			// Rewrite the file: different values and row count, newer mtime.
			time.Sleep(10 * time.Millisecond)
			writeBigCSV(t, path, 2500, 1000)
			later := time.Now().Add(2 * time.Second)
			os.Chtimes(path, later, later)

			fresh := callPage(t, c, "query_data", map[string]any{"dataset": "snap"})
			if fresh.TotalRows != 2500 || fresh.Data[0] != wantRow(0, 1000) {
				t.Fatalf("a new query does not see the rewritten file: %d rows, %+v", fresh.TotalRows, fresh.Data[0])
			}
			again := callPage(t, c, "query_next_page", map[string]any{"result_handle": p.ResultHandle, "page_token": tok})
			if string(again.Raw) != string(before.Raw) {
				t.Fatalf("the same token gave a different page after the rewrite")
			}
			next := again.PageInfo.Offset
			for q := again; ; {
				checkNeverSilent(t, q, 3000)
				for _, r := range q.Data {
					if r != wantRow(next, 0.5) {
						t.Fatalf("row %d after rewrite: %+v", next, r)
					}
					next++
				}
				if !q.PageInfo.HasMore {
					break
				}
				q = callPage(t, c, "query_next_page", map[string]any{"result_handle": q.ResultHandle, "page_token": q.PageInfo.PageToken})
			}
			if next != 3000 {
				t.Fatalf("walk ended at %d", next)
			}
		})
	}
}

// TestDeliveryCapsAndFiles: per-call caps lower (never raise) the server's,
// per-call max_bytes holds for later pages, file results carry a preview,
// the schema, a resource_link, and file_path only with --expose-file-paths;
// arrow needs --enable-arrow-ipc; long cells are shortened inline only;
// evicted handles give handle_expired.
func TestDeliveryCapsAndFiles(t *testing.T) {
	dir := t.TempDir()
	writeBigCSV(t, filepath.Join(dir, "mid.csv"), 2000, 0.5)
	wide := "id,text\n1," + strings.Repeat("x", 12000) + "\n2,short\n"
	if err := os.WriteFile(filepath.Join(dir, "wide.csv"), []byte(wide), 0o644); err != nil {
		t.Fatal(err)
	}
	c := startStdio(t, "--data", dir, "--artifact-dir", t.TempDir(), "--max-handles", "2", "--expose-file-paths")

	// max_rows above the cap is clamped with a warning; below lowers it.
	p := callPage(t, c, "query_data", map[string]any{"dataset": "mid", "max_rows": 100000})
	if p.RowCount > 200 || !strings.Contains(strings.Join(p.Warnings, "\n"), "above the server cap") {
		t.Fatalf("max_rows not clamped: %d rows, %q", p.RowCount, p.Warnings)
	}
	checkNeverSilent(t, p, 2000)
	p = callPage(t, c, "query_data", map[string]any{"dataset": "mid", "max_rows": 30})
	if p.RowCount != 30 {
		t.Fatalf("max_rows 30: %d rows", p.RowCount)
	}

	// Per-call max_bytes bounds every page.
	p = callPage(t, c, "query_data", map[string]any{"dataset": "mid", "max_bytes": 1000})
	for i := 0; ; i++ {
		checkNeverSilent(t, p, 2000)
		if n := len(p.Raw); n == 0 || p.Method != "handle" {
			t.Fatalf("page %d: %s", i, p.Method)
		}
		if b, _ := json.Marshal(p.Data); len(b) > 1100 { // re-marshalled floats may differ a little
			t.Fatalf("page %d: %d bytes of data over max_bytes 1000", i, len(b))
		}
		if !p.PageInfo.HasMore || i == 5 {
			break
		}
		p = callPage(t, c, "query_next_page", map[string]any{"result_handle": p.ResultHandle, "page_token": p.PageInfo.PageToken})
	}

	// A file result: all rows, preview, columns, link, file_path.
	f := callPage(t, c, "query_data", map[string]any{"dataset": "mid", "output_format": "parquet"})
	checkNeverSilent(t, f, 2000)
	var preview []bigRow
	if err := json.Unmarshal(f.Preview, &preview); err != nil {
		t.Fatal(err)
	}
	if f.Method != "file" || f.RowCount != 2000 || f.Truncated || len(preview) != 10 || preview[9] != wantRow(9, 0.5) || f.FilePath == "" {
		t.Fatalf("file result: %s %d rows, preview %d, file_path %q", f.Method, f.RowCount, len(preview), f.FilePath)
	}
	if !strings.Contains(string(f.Raw), `"columns":[{"name":"id","type":"int64"}`) {
		t.Fatalf("file result lacks columns: %.300s", f.Raw)
	}
	onDisk, err := os.ReadFile(f.FilePath)
	if err != nil {
		t.Fatal(err)
	}
	if got := readArtifact(t, c, f.ResourceURI, "application/vnd.apache.parquet"); string(got) != string(onDisk) {
		t.Fatal("file_path and resource differ")
	}

	// arrow is off unless enabled.
	e := callErr(t, c, "query_data", map[string]any{"dataset": "mid", "output_format": "arrow"})
	if e.Code != "unsupported_format" || !strings.Contains(e.Hint, "--enable-arrow-ipc") {
		t.Fatalf("arrow without the flag: %+v", e)
	}

	// Long cells: shortened inline with a marker and a warning, whole in files.
	w := callRaw(t, c, "query_data", map[string]any{"dataset": "wide"})
	var wr struct {
		Data     []map[string]any `json:"data"`
		Warnings []string         `json:"warnings"`
	}
	if err := json.Unmarshal([]byte(text(w)), &wr); err != nil {
		t.Fatal(err)
	}
	s, _ := wr.Data[0]["text"].(string)
	if !strings.HasSuffix(s, "…[truncated 10000 chars]") || !strings.HasPrefix(s, strings.Repeat("x", 2000)+"…") {
		t.Fatalf("long cell not shortened: %.60q ... (%d chars)", s, len(s))
	}
	if !strings.Contains(strings.Join(wr.Warnings, "\n"), "1 cell value was longer than 2000 characters") {
		t.Fatalf("no shortening warning: %q", wr.Warnings)
	}
	wf := callPage(t, c, "query_data", map[string]any{"dataset": "wide", "output_format": "csv", "max_rows": 1})
	body := string(readArtifact(t, c, wf.ResourceURI, "text/csv"))
	if !strings.Contains(body, strings.Repeat("x", 12000)) {
		t.Fatal("the csv file lost the long value")
	}

	// --max-handles 2: a third handle evicts the first.
	h1 := callPage(t, c, "query_data", map[string]any{"dataset": "mid"})
	callPage(t, c, "query_data", map[string]any{"dataset": "mid"})
	callPage(t, c, "query_data", map[string]any{"dataset": "mid"})
	e = callErr(t, c, "query_next_page", map[string]any{"result_handle": h1.ResultHandle, "page_token": h1.PageInfo.PageToken})
	if e.Code != "handle_expired" || !strings.Contains(e.Hint, "re-run") {
		t.Fatalf("evicted handle: %+v", e)
	}
	if _, err := readResource(t, c, "quarry://results/"+h1.ResultHandle+"/pages/0"); err == nil || !strings.Contains(err.Error(), "handle_expired") {
		t.Fatalf("result page of an evicted handle: %v", err)
	}
}

// TestDeliveryHandleExpiry: a spilled result's handle expires after its
// idle TTL; then pages and result-page resources answer handle_expired
// (with a hint to re-run), and the spill file is deleted.
func TestDeliveryHandleExpiry(t *testing.T) {
	dir, arts := t.TempDir(), t.TempDir()
	writeBigCSV(t, filepath.Join(dir, "exp.csv"), 5000, 0.5)
	c := startStdio(t, "--data", dir, "--artifact-dir", arts, "--handle-ttl", "1s", "--spill-rows", "1000")
	p := callPage(t, c, "query_data", map[string]any{"dataset": "exp"})
	if p.Method != "handle" || len(spillFiles(t, arts)) != 1 {
		t.Fatalf("want a spilled handle: %s, spill files %v", p.Method, spillFiles(t, arts))
	}
	time.Sleep(2200 * time.Millisecond)
	e := callErr(t, c, "query_next_page", map[string]any{"result_handle": p.ResultHandle, "page_token": p.PageInfo.PageToken})
	if e.Code != "handle_expired" || !strings.Contains(e.Hint, "re-run") {
		t.Fatalf("expired handle: %+v", e)
	}
	if _, err := readResource(t, c, "quarry://results/"+p.ResultHandle+"/pages/1"); err == nil || !strings.Contains(err.Error(), "handle_expired") {
		t.Fatalf("result page of an expired handle: %v", err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for len(spillFiles(t, arts)) > 0 {
		if time.Now().After(deadline) {
			t.Fatalf("spill file not deleted after expiry: %v", spillFiles(t, arts))
		}
		time.Sleep(50 * time.Millisecond)
	}
}
