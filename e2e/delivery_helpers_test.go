package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/parquet-go/parquet-go"
)

// page is a query_data / query_next_page result as the delivery tests read
// it: rows decoded into typed records (fast: 1M rows go through it).
type page struct {
	Method       string          `json:"method"`
	Data         []bigRow        `json:"data"`
	RowCount     int64           `json:"row_count"`
	TotalRows    int64           `json:"total_rows"`
	Truncated    bool            `json:"truncated"`
	ResourceURI  string          `json:"resource_uri"`
	FilePath     string          `json:"file_path"`
	Format       string          `json:"format"`
	SizeBytes    int64           `json:"size_bytes"`
	MIMEType     string          `json:"mime_type"`
	Preview      json.RawMessage `json:"preview"`
	ResultHandle string          `json:"result_handle"`
	PageInfo     *struct {
		PageToken string `json:"page_token"`
		Offset    int64  `json:"offset"`
		Size      int64  `json:"size"`
		HasMore   bool   `json:"has_more"`
	} `json:"page_info"`
	Warnings []string `json:"warnings"`
	// Raw is the whole JSON text of the result.
	Raw []byte `json:"-"`
}

// bigRow is one row of the generated CSV (id,region,price,note).
type bigRow struct {
	ID     int64   `json:"id"`
	Region string  `json:"region"`
	Price  float64 `json:"price"`
	Note   string  `json:"note"`
}

// regions cycles through the region column of writeBigCSV.
var regions = [...]string{"north", "south", "east", "west", "central"}

// writeBigCSV writes rows rows of id,region,price,note to path: id 0..rows-1,
// region regions[id%5], price (id%1000)/4 + base, note "n<id>". Files of
// a million rows and more are generated once per (rows, base) and copied:
// generating them in the race-instrumented test takes seconds, a copy
// almost nothing (smaller files are written row by row, as tests that
// rewrite a file under a reader expect).
func writeBigCSV(t testing.TB, path string, rows int, base float64) {
	t.Helper()
	if rows < 1_000_000 {
		generateBigCSV(t, path, rows, base)
		return
	}
	key := fmt.Sprintf("big-%d-%g.csv", rows, base)
	src, ok := bigCSVs.Load(key)
	if !ok {
		src = filepath.Join(filepath.Dir(binary), key)
		generateBigCSV(t, src.(string), rows, base)
		bigCSVs.Store(key, src)
	}
	in, err := os.Open(src.(string))
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	out, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(out, in); err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
}

// bigCSVs maps writeBigCSV's generated big files by name to their path
// (next to the test's quarry binary, removed with it).
var bigCSVs sync.Map

// generateBigCSV writes writeBigCSV's rows to path.
func generateBigCSV(t testing.TB, path string, rows int, base float64) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	w.WriteString("id,region,price,note\n")
	var line []byte
	for i := range rows {
		line = strconv.AppendInt(line[:0], int64(i), 10)
		line = append(line, ',')
		line = append(line, regions[i%5]...)
		line = append(line, ',')
		line = strconv.AppendFloat(line, float64(i%1000)/4+base, 'f', -1, 64)
		line = append(line, ",n"...)
		line = strconv.AppendInt(line, int64(i), 10)
		line = append(line, '\n')
		w.Write(line)
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

// wantRow is row id of writeBigCSV(…, base).
func wantRow(id int64, base float64) bigRow {
	return bigRow{ID: id, Region: regions[id%5], Price: float64(id%1000)/4 + base, Note: "n" + strconv.FormatInt(id, 10)}
}

// callPage calls a delivery tool and decodes its text content (the same
// JSON as structuredContent) into a page.
func callPage(t *testing.T, c *client.Client, tool string, args map[string]any) *page {
	t.Helper()
	res := callRaw(t, c, tool, args)
	if res.IsError {
		t.Fatalf("%s(%v) failed: %s", tool, args, text(res))
	}
	raw := []byte(text(res))
	var p page
	if err := json.Unmarshal(raw, &p); err != nil {
		t.Fatalf("decoding %s result: %v\n%.500s", tool, err, raw)
	}
	p.Raw = raw
	if p.ResourceURI != "" {
		var link *mcp.ResourceLink
		for _, ct := range res.Content {
			if l, ok := ct.(mcp.ResourceLink); ok {
				link = &l
			}
		}
		if link == nil || link.URI != p.ResourceURI || link.MIMEType != p.MIMEType || link.Size == nil || *link.Size != p.SizeBytes {
			t.Fatalf("file result without a matching resource_link: %+v", res.Content)
		}
	}
	return &p
}

// checkNeverSilent is the delivery contract for one response: fewer rows
// than the result means truncated and has_more, unless it is the last page
// of a handle (its earlier rows came with earlier calls).
func checkNeverSilent(t *testing.T, p *page, total int64) {
	t.Helper()
	if p.TotalRows != total {
		t.Fatalf("total_rows %d, want %d", p.TotalRows, total)
	}
	if p.Warnings == nil {
		t.Fatalf("warnings missing")
	}
	if p.Method != "file" && int64(len(p.Data)) != p.RowCount {
		t.Fatalf("row_count %d, %d rows of data", p.RowCount, len(p.Data))
	}
	if p.RowCount >= total {
		if p.Truncated || (p.PageInfo != nil && p.PageInfo.HasMore) {
			t.Fatalf("all %d rows but truncated/has_more: %+v", total, p.PageInfo)
		}
		return
	}
	if p.PageInfo == nil {
		if !p.Truncated {
			t.Fatalf("%d of %d rows, no page_info, not truncated", p.RowCount, total)
		}
		return
	}
	last := p.PageInfo.Offset+p.RowCount == total
	if last {
		if p.Truncated || p.PageInfo.HasMore || p.PageInfo.PageToken != "" {
			t.Fatalf("last page: truncated %v, page_info %+v", p.Truncated, p.PageInfo)
		}
		return
	}
	if !p.Truncated || !p.PageInfo.HasMore || p.PageInfo.PageToken == "" {
		t.Fatalf("%d of %d rows at offset %d without truncated/has_more/token: %+v", p.RowCount, total, p.PageInfo.Offset, p.PageInfo)
	}
}

// readResource reads one resource and returns its single content item.
func readResource(t *testing.T, c *client.Client, uri string) (mcp.ResourceContents, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	req := mcp.ReadResourceRequest{}
	req.Params.URI = uri
	res, err := c.ReadResource(ctx, req)
	if err != nil {
		return nil, err
	}
	if len(res.Contents) != 1 {
		t.Fatalf("read %s: %d contents", uri, len(res.Contents))
	}
	return res.Contents[0], nil
}

// readArtifact reads an artifact resource, checks its MIME type and
// returns its bytes.
func readArtifact(t *testing.T, c *client.Client, uri, mime string) []byte {
	t.Helper()
	ct, err := readResource(t, c, uri)
	if err != nil {
		t.Fatalf("read %s: %v", uri, err)
	}
	switch v := ct.(type) {
	case mcp.BlobResourceContents:
		if v.MIMEType != mime {
			t.Fatalf("%s: mimeType %q, want %q", uri, v.MIMEType, mime)
		}
		b, err := base64.StdEncoding.DecodeString(v.Blob)
		if err != nil {
			t.Fatal(err)
		}
		return b
	case mcp.TextResourceContents:
		if v.MIMEType != mime {
			t.Fatalf("%s: mimeType %q, want %q", uri, v.MIMEType, mime)
		}
		return []byte(v.Text)
	}
	t.Fatalf("%s: unexpected content %T", uri, ct)
	return nil
}

// fileRows decodes the rows of a csv, parquet or arrow artifact holding
// some of the columns id, region, price, note (in that order).
func fileRows(t *testing.T, b []byte, format string) []bigRow {
	t.Helper()
	var out []bigRow
	set := func(r *bigRow, col string, str string, i64 int64, f64 float64) {
		switch col {
		case "id":
			r.ID = i64
		case "region":
			r.Region = str
		case "price":
			r.Price = f64
		case "note":
			r.Note = str
		default:
			t.Fatalf("unexpected column %q", col)
		}
	}
	switch format {
	case "csv":
		recs, err := csv.NewReader(bytes.NewReader(b)).ReadAll()
		if err != nil {
			t.Fatal(err)
		}
		if len(recs) == 0 {
			t.Fatal("csv without header")
		}
		for _, rec := range recs[1:] {
			var r bigRow
			for j, col := range recs[0] {
				id, _ := strconv.ParseInt(rec[j], 10, 64)
				f, _ := strconv.ParseFloat(rec[j], 64)
				set(&r, col, rec[j], id, f)
			}
			out = append(out, r)
		}
	case "parquet":
		pf, err := parquet.OpenFile(bytes.NewReader(b), int64(len(b)))
		if err != nil {
			t.Fatal(err)
		}
		fields := pf.Schema().Fields()
		r := parquet.NewReader(pf)
		defer r.Close()
		rows := make([]parquet.Row, 512)
		for {
			n, err := r.ReadRows(rows)
			for _, row := range rows[:n] {
				var br bigRow
				for j, f := range fields {
					v := row[j]
					switch f.Name() {
					case "id":
						set(&br, "id", "", v.Int64(), 0)
					case "price":
						set(&br, "price", "", 0, v.Double())
					default:
						set(&br, f.Name(), string(v.ByteArray()), 0, 0)
					}
				}
				out = append(out, br)
			}
			if err != nil {
				break
			}
		}
	case "arrow":
		r, err := ipc.NewFileReader(bytes.NewReader(b))
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		for i := range r.NumRecords() {
			rec, err := r.RecordBatchAt(i)
			if err != nil {
				t.Fatal(err)
			}
			for j := range int(rec.NumRows()) {
				var br bigRow
				for c, f := range rec.Schema().Fields() {
					switch a := rec.Column(c).(type) {
					case *array.Int64:
						set(&br, f.Name, "", a.Value(j), 0)
					case *array.Float64:
						set(&br, f.Name, "", 0, a.Value(j))
					case *array.String:
						set(&br, f.Name, a.Value(j), 0, 0)
					default:
						t.Fatalf("arrow column %s is %T", f.Name, a)
					}
				}
				out = append(out, br)
			}
			rec.Release()
		}
	default:
		t.Fatalf("format %q", format)
	}
	return out
}

// spillFiles lists the parquet artifacts in dir.
func spillFiles(t *testing.T, dir string) []string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(dir, "a_*.parquet"))
	if err != nil {
		t.Fatal(err)
	}
	return m
}
