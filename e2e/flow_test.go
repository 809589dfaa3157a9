package e2e

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/base64"
	"encoding/csv"
	"encoding/json"
	"io"
	"math"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/format"
)

type catalogResult struct {
	Datasets []struct {
		ID            string `json:"id"`
		Kind          string `json:"kind"`
		Path          string `json:"path"`
		RowCount      int64  `json:"row_count"`
		RowCountExact bool   `json:"row_count_exact"`
		ColumnCount   int    `json:"column_count"`
		FileSize      int64  `json:"file_size_bytes"`
		LastModified  string `json:"last_modified_iso"`
	} `json:"datasets"`
	Total int `json:"total"`
}

type schemaResult struct {
	Dataset string `json:"dataset"`
	Columns []struct {
		Name     string `json:"name"`
		Type     string `json:"type"`
		Nullable bool   `json:"nullable"`
	} `json:"columns"`
	Shape      []int64          `json:"shape"`
	SampleRows []map[string]any `json:"sample_rows"`
	SchemaURI  string           `json:"schema_uri"`
}

type estimateResult struct {
	RowEstimate   int64            `json:"row_estimate"`
	ByteEstimate  int64            `json:"byte_estimate"`
	EstimateKind  string           `json:"estimate_kind"`
	Preview       []map[string]any `json:"preview"`
	Warnings      []string         `json:"warnings"`
	SuggestedCaps struct {
		MaxRows  int64 `json:"max_rows"`
		MaxBytes int64 `json:"max_bytes"`
	} `json:"suggested_caps"`
	Plan string `json:"plan"`
}

type queryResult struct {
	Method       string           `json:"method"`
	Data         []map[string]any `json:"data"`
	RowCount     int64            `json:"row_count"`
	TotalRows    int64            `json:"total_rows"`
	Truncated    bool             `json:"truncated"`
	ResourceURI  string           `json:"resource_uri"`
	Format       string           `json:"format"`
	SizeBytes    int64            `json:"size_bytes"`
	MIMEType     string           `json:"mime_type"`
	Preview      []map[string]any `json:"preview"`
	ResultHandle string           `json:"result_handle"`
	PageInfo     *struct {
		PageToken string `json:"page_token"`
		Offset    int64  `json:"offset"`
		Size      int64  `json:"size"`
		HasMore   bool   `json:"has_more"`
	} `json:"page_info"`
	Warnings []string `json:"warnings"`
}

func TestFlowStdio(t *testing.T) {
	runFlow(t, startStdio(t))
}

func TestFlowHTTP(t *testing.T) {
	// The flow pages 500 times back to back; the per-principal rate limit
	// (tested on its own in http_security_test.go) would only slow it down.
	c, _ := startHTTP(t, "--rate-limit", "0")
	runFlow(t, c)
}

// runFlow is the whole query flow an LLM client goes through.
func runFlow(t *testing.T, c *client.Client) {
	// 0. Capabilities: every tool is listed with an input schema and
	// read-only annotations (output schemas are in docs/TOOLS.md and the
	// snapshots, not in tools/list: see TestToolsListBytes).
	tools, err := c.ListTools(context.Background(), mcp.ListToolsRequest{})
	if err != nil {
		t.Fatalf("tools/list: %v", err)
	}
	want := map[string]bool{"get_catalog": true, "get_schema": true, "estimate_query": true, "query_data": true, "query_next_page": true}
	for _, tl := range tools.Tools {
		if want[tl.Name] {
			delete(want, tl.Name)
			if tl.InputSchema.Type != "object" || tl.Annotations.ReadOnlyHint == nil || !*tl.Annotations.ReadOnlyHint {
				t.Fatalf("tool %s: input schema %q, annotations %+v", tl.Name, tl.InputSchema.Type, tl.Annotations)
			}
		}
	}
	if len(want) > 0 {
		t.Fatalf("tools missing from tools/list: %v", want)
	}

	// 1. Discover.
	var cat catalogResult
	call(t, c, "get_catalog", map[string]any{}, &cat)
	if cat.Total != len(cat.Datasets) || cat.Total < 6 {
		t.Fatalf("catalog: total %d, %d datasets", cat.Total, len(cat.Datasets))
	}
	found := false
	for _, d := range cat.Datasets {
		if d.ID == "sensors/readings" {
			found = true
			if d.RowCount != 100_000 || !d.RowCountExact || d.Kind != "csv" || d.Path != "sensors/readings.csv.gz" {
				t.Fatalf("sensors/readings entry: %+v", d)
			}
			if _, err := time.Parse(time.RFC3339, d.LastModified); err != nil {
				t.Fatalf("last_modified_iso %q: %v", d.LastModified, err)
			}
		}
	}
	if !found {
		t.Fatalf("sensors/readings not in catalog: %+v", cat.Datasets)
	}
	var filtered catalogResult
	call(t, c, "get_catalog", map[string]any{"query": "WEATHER"}, &filtered)
	if filtered.Total < 2 || filtered.Total >= cat.Total {
		t.Fatalf("query filter: %d of %d", filtered.Total, cat.Total)
	}

	// 2. Schema.
	var sch schemaResult
	call(t, c, "get_schema", map[string]any{"dataset": "sensors/readings"}, &sch)
	if len(sch.Columns) == 0 || sch.Shape[0] != 100_000 || int(sch.Shape[1]) != len(sch.Columns) || len(sch.SampleRows) != 5 {
		t.Fatalf("schema: %+v", sch)
	}
	if sch.Columns[0].Name != "id" || sch.Columns[0].Type != "int64" {
		t.Fatalf("first column: %+v", sch.Columns[0])
	}
	readText(t, c, sch.SchemaURI)

	// 3. Estimate an aggregate.
	var est estimateResult
	call(t, c, "estimate_query", map[string]any{
		"dataset": "sensors/readings", "group_by": []string{"sensor"},
		"aggs": []map[string]any{{"col": "*", "fn": "count"}, {"col": "value", "fn": "avg"}},
	}, &est)
	if est.EstimateKind != "exact" || est.RowEstimate <= 0 || est.Plan == "" || len(est.Preview) == 0 {
		t.Fatalf("estimate: %+v", est)
	}
	var big estimateResult
	call(t, c, "estimate_query", map[string]any{"dataset": "sensors/readings"}, &big)
	if big.RowEstimate != 100_000 || len(big.Warnings) == 0 || big.SuggestedCaps.MaxRows != 200 {
		t.Fatalf("estimate of all rows: %+v", big)
	}

	// 4. A small query comes back inline.
	var direct queryResult
	call(t, c, "query_data", map[string]any{
		"dataset": "sensors/readings", "columns": []string{"id", "value"},
		"filters":  []map[string]any{{"col": "id", "op": "lte", "value": 10}},
		"order_by": []map[string]any{{"col": "id", "desc": true}},
	}, &direct)
	if direct.Method != "direct" || direct.RowCount != 10 || direct.TotalRows != 10 || direct.Truncated || len(direct.Data) != 10 {
		t.Fatalf("direct: %+v", direct)
	}
	if id := direct.Data[0]["id"]; id != 10.0 {
		t.Fatalf("first id %v, want 10 (desc)", id)
	}

	// 5. All 100k rows as json: a handle; walk every page.
	var first queryResult
	call(t, c, "query_data", map[string]any{"dataset": "sensors/readings", "columns": []string{"id", "sensor"}}, &first)
	if first.Method != "handle" || first.TotalRows != 100_000 || !first.Truncated || first.PageInfo == nil || !first.PageInfo.HasMore {
		t.Fatalf("handle: %+v", first)
	}
	seen := make(map[int64]bool, 100_000)
	collect := func(r queryResult) {
		if int64(len(r.Data)) != r.RowCount || r.PageInfo == nil || r.PageInfo.Size != r.RowCount {
			t.Fatalf("page shape: rows %d, row_count %d, page_info %+v", len(r.Data), r.RowCount, r.PageInfo)
		}
		for _, row := range r.Data {
			id := int64(row["id"].(float64))
			if seen[id] {
				t.Fatalf("id %d delivered twice", id)
			}
			seen[id] = true
		}
	}
	collect(first)
	page := first
	pages := 1
	for page.PageInfo.HasMore {
		var next queryResult
		call(t, c, "query_next_page", map[string]any{"result_handle": first.ResultHandle, "page_token": page.PageInfo.PageToken}, &next)
		if next.PageInfo.Offset != page.PageInfo.Offset+page.PageInfo.Size {
			t.Fatalf("page %d starts at %d, want %d", pages, next.PageInfo.Offset, page.PageInfo.Offset+page.PageInfo.Size)
		}
		if next.RowCount < next.TotalRows && !next.Truncated && !next.PageInfo.HasMore && next.PageInfo.Offset+next.RowCount != next.TotalRows {
			t.Fatalf("silent truncation on page %d: %+v", pages, next.PageInfo)
		}
		collect(next)
		page = next
		pages++
	}
	if int64(len(seen)) != first.TotalRows {
		t.Fatalf("pages delivered %d distinct ids, want %d", len(seen), first.TotalRows)
	}
	for id := int64(1); id <= 100_000; id++ {
		if !seen[id] {
			t.Fatalf("id %d missing", id)
		}
	}
	if page.PageInfo.PageToken != "" {
		t.Fatalf("last page still has a token")
	}
	t.Logf("paged 100000 rows in %d pages", pages)

	// 6. The same rows as Parquet: a file resource, compared row by row with the source CSV.
	var file queryResult
	res := call(t, c, "query_data", map[string]any{"dataset": "sensors/readings", "output_format": "parquet"}, &file)
	if file.Method != "file" || file.Format != "parquet" || file.RowCount != 100_000 || file.ResourceURI == "" ||
		file.MIMEType != "application/vnd.apache.parquet" || len(file.Preview) != 10 {
		t.Fatalf("file: %+v", file)
	}
	linked := false
	for _, ct := range res.Content {
		if l, ok := ct.(mcp.ResourceLink); ok && l.URI == file.ResourceURI && l.MIMEType == file.MIMEType {
			linked = true
		}
	}
	if !linked {
		t.Fatalf("no resource_link content for %s", file.ResourceURI)
	}
	blob := readBlob(t, c, file.ResourceURI, "application/vnd.apache.parquet")
	if int64(len(blob)) != file.SizeBytes {
		t.Fatalf("artifact is %d bytes, result said %d", len(blob), file.SizeBytes)
	}
	compareParquetWithCSV(t, blob, "../demodata/files/sensors/readings.csv.gz")
}

func readText(t *testing.T, c *client.Client, uri string) string {
	t.Helper()
	req := mcp.ReadResourceRequest{}
	req.Params.URI = uri
	res, err := c.ReadResource(context.Background(), req)
	if err != nil {
		t.Fatalf("read %s: %v", uri, err)
	}
	tc, ok := res.Contents[0].(mcp.TextResourceContents)
	if !ok || !json.Valid([]byte(tc.Text)) {
		t.Fatalf("read %s: not JSON text: %#v", uri, res.Contents[0])
	}
	return tc.Text
}

func readBlob(t *testing.T, c *client.Client, uri, mime string) []byte {
	t.Helper()
	req := mcp.ReadResourceRequest{}
	req.Params.URI = uri
	res, err := c.ReadResource(context.Background(), req)
	if err != nil {
		t.Fatalf("read %s: %v", uri, err)
	}
	bc, ok := res.Contents[0].(mcp.BlobResourceContents)
	if !ok || bc.MIMEType != mime {
		t.Fatalf("read %s: %#v", uri, res.Contents[0])
	}
	b, err := base64.StdEncoding.DecodeString(bc.Blob)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// compareParquetWithCSV decodes the Parquet file with parquet-go and checks
// every value of every row against the source CSV, by column type.
func compareParquetWithCSV(t *testing.T, blob []byte, csvPath string) {
	t.Helper()
	f, err := parquet.OpenFile(bytes.NewReader(blob), int64(len(blob)))
	if err != nil {
		t.Fatalf("parquet: %v", err)
	}
	src, err := os.Open(csvPath)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	gz, err := gzip.NewReader(src)
	if err != nil {
		t.Fatal(err)
	}
	cr := csv.NewReader(gz)
	header, err := cr.Read()
	if err != nil {
		t.Fatal(err)
	}
	leaves := f.Schema().Columns()
	if len(leaves) != len(header) {
		t.Fatalf("parquet has %d columns, csv %d", len(leaves), len(header))
	}
	nodes := f.Schema().Fields()
	for i, h := range header {
		if nodes[i].Name() != h {
			t.Fatalf("column %d: parquet %q, csv %q", i, nodes[i].Name(), h)
		}
	}
	r := parquet.NewReader(f)
	defer r.Close()
	rows := make([]parquet.Row, 1024)
	var n int64
	for {
		k, err := r.ReadRows(rows)
		for _, row := range rows[:k] {
			rec, cerr := cr.Read()
			if cerr != nil {
				t.Fatalf("csv ended at row %d: %v", n, cerr)
			}
			for _, v := range row {
				col := v.Column()
				want := rec[col]
				if v.IsNull() {
					if want != "" {
						t.Fatalf("row %d col %s: null, csv %q", n, header[col], want)
					}
					continue
				}
				if !sameValue(nodes[col], v, want) {
					t.Fatalf("row %d col %s: parquet %v, csv %q", n, header[col], v, want)
				}
			}
			n++
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("reading parquet: %v", err)
		}
	}
	if _, err := cr.Read(); err != io.EOF {
		t.Fatalf("csv has more rows than the parquet file (%d)", n)
	}
	if n != 100_000 {
		t.Fatalf("parquet rows %d", n)
	}
}

func sameValue(node parquet.Node, v parquet.Value, want string) bool {
	var lv format.LogicalTypeValue
	if lt := node.Type().LogicalType(); lt != nil {
		lv = lt.Value
	}
	switch v.Kind() {
	case parquet.Int64, parquet.Int32:
		got := v.Int64()
		if v.Kind() == parquet.Int32 {
			got = int64(v.Int32())
		}
		if ts, ok := lv.(*format.TimestampType); ok {
			want, err := parseTS(want)
			if err != nil {
				return false
			}
			return got == want.UnixNano()/int64(ts.Unit.Value.Duration())
		}
		if _, ok := lv.(*format.DateType); ok {
			d, err := time.Parse("2006-01-02", want)
			return err == nil && got == d.Unix()/86400
		}
		w, err := strconv.ParseInt(want, 10, 64)
		return err == nil && got == w
	case parquet.Double, parquet.Float:
		w, err := strconv.ParseFloat(want, 64)
		got := v.Double()
		if v.Kind() == parquet.Float {
			got = float64(v.Float())
			return err == nil && float32(w) == float32(got)
		}
		return err == nil && (got == w || math.IsNaN(got) && math.IsNaN(w))
	case parquet.Boolean:
		w, err := strconv.ParseBool(want)
		return err == nil && v.Boolean() == w
	case parquet.ByteArray, parquet.FixedLenByteArray:
		return string(v.ByteArray()) == want
	}
	return false
}

func parseTS(s string) (time.Time, error) {
	for _, l := range []string{time.RFC3339Nano, "2006-01-02T15:04:05.999999999", "2006-01-02 15:04:05.999999999"} {
		if t, err := time.Parse(l, s); err == nil {
			return t, nil
		}
	}
	return time.Parse(time.RFC3339, s)
}
