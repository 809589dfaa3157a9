package mcpapi_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/quarrydb/quarry/internal/app"
	"github.com/quarrydb/quarry/internal/h5"
	"github.com/quarrydb/quarry/internal/h5/h5write"
	"github.com/quarrydb/quarry/internal/qerr"
	"github.com/quarrydb/quarry/service"
)

// reachRoot is a data root for the reach tools: an HDF5 file of arrays
// only, a PyTables-like file (a table group, its /_i_ index group and a
// NetCDF dimension placeholder) and a 450-row CSV.
func reachRoot(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	write := func(path string, build func(f h5.ID, f64 h5.ID) error) {
		f, err := h5write.CreateFile(path)
		if err != nil {
			t.Fatal(err)
		}
		f64 := h5.NewFloat(8)
		err = build(f, f64)
		_ = h5.Close(f64)
		_ = h5.Close(f)
		if err != nil {
			t.Fatal(err)
		}
	}
	dset := func(loc h5.ID, name string, f64 h5.ID, shape []int64, vals []float64) error {
		d, err := h5write.CreateDataset(loc, name, f64, shape, nil)
		if err != nil {
			return err
		}
		defer h5.Close(d)
		return h5write.WriteValues(d, f64, vals)
	}
	write(filepath.Join(root, "cube.h5"), func(f, f64 h5.ID) error {
		vals := make([]float64, 2*3*4)
		for i := range vals {
			vals[i] = float64(i)
		}
		return dset(f, "/cube", f64, []int64{2, 3, 4}, vals)
	})
	write(filepath.Join(root, "tables.h5"), func(f, f64 h5.ID) error {
		for _, name := range []string{"/t/a", "/t/b", "/_i_t/sorted", "/_i_t/indices"} {
			if err := dset(f, name, f64, []int64{3}, []float64{1, 2, 3}); err != nil {
				return err
			}
		}
		d, err := h5write.CreateDataset(f, "/x", f64, []int64{4}, nil)
		if err != nil {
			return err
		}
		defer h5.Close(d)
		return h5write.SetAttr(d, "NAME", "This is a netCDF dimension but not a netCDF variable.         4")
	})
	var sb strings.Builder
	sb.WriteString("id,name\n")
	for i := range 450 {
		fmt.Fprintf(&sb, "%d,name %d\n", i, i)
	}
	if err := os.WriteFile(filepath.Join(root, "rows.csv"), []byte(sb.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return root
}

type browseOut struct {
	Files []struct {
		Path   string `json:"path"`
		Tables int    `json:"tables"`
	} `json:"files"`
	URI    string `json:"uri"`
	Object struct {
		Kind    string  `json:"kind"`
		Shape   []int64 `json:"shape"`
		DType   string  `json:"dtype"`
		Members []struct {
			Name     string `json:"name"`
			Internal bool   `json:"internal"`
		} `json:"members"`
	} `json:"object"`
	HiddenInternal int `json:"hidden_internal"`
}

func memberNames(b browseOut) []string {
	var out []string
	for _, m := range b.Object.Members {
		out = append(out, m.Name)
	}
	return out
}

// TestBrowseHDF5Tool: files of arrays only are listed (tool and
// resources/list), internals are hidden unless asked, and a dataset found
// by browsing is sliced through the uri browse_hdf5 gave.
func TestBrowseHDF5Tool(t *testing.T) {
	f := open(t, app.Config{Data: reachRoot(t)})
	var files browseOut
	f.call(t, "browse_hdf5", map[string]any{}, &files)
	got := map[string]int{}
	for _, x := range files.Files {
		got[x.Path] = x.Tables
	}
	if tables, ok := got["cube.h5"]; !ok || tables != 0 || got["tables.h5"] != 1 || len(got) != 2 {
		t.Fatalf("files %+v", files.Files)
	}
	res, err := f.c.ListResources(context.Background(), mcp.ListResourcesRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(res.Resources, func(r mcp.Resource) bool { return r.URI == "h5://cube.h5?path=/" }) {
		t.Errorf("the arrays-only file is not in resources/list: %+v", res.Resources)
	}

	var root browseOut
	f.call(t, "browse_hdf5", map[string]any{"file": "tables.h5"}, &root)
	if names := memberNames(root); !slices.Equal(names, []string{"t"}) || root.HiddenInternal != 2 {
		t.Fatalf("root members %v, hidden %d", names, root.HiddenInternal)
	}
	var all browseOut
	f.call(t, "browse_hdf5", map[string]any{"file": "tables.h5", "include_internal": true}, &all)
	if names := memberNames(all); !slices.Equal(names, []string{"_i_t", "t", "x"}) || all.HiddenInternal != 0 {
		t.Fatalf("members with internals %v", names)
	}
	var cat struct {
		Datasets []struct {
			ID string `json:"id"`
		} `json:"datasets"`
	}
	f.call(t, "get_catalog", map[string]any{}, &cat)
	for _, d := range cat.Datasets {
		if strings.Contains(d.ID, "_i_") {
			t.Errorf("the catalog lists the PyTables index %s", d.ID)
		}
	}

	var cube browseOut
	f.call(t, "browse_hdf5", map[string]any{"file": "cube.h5", "path": "/cube"}, &cube)
	if cube.Object.Kind != "dataset" || !slices.Equal(cube.Object.Shape, []int64{2, 3, 4}) || cube.Object.DType != "float64" {
		t.Fatalf("cube %+v", cube)
	}
	var sl struct {
		Shape []int64   `json:"shape"`
		Data  []float64 `json:"data"`
	}
	f.call(t, "read_dataset_slice", map[string]any{"uri": cube.URI, "slice_str": "1, 0:2, 3"}, &sl)
	if !slices.Equal(sl.Shape, []int64{2}) || !slices.Equal(sl.Data, []float64{15, 19}) {
		t.Fatalf("slice %+v", sl)
	}
	var slFile pageOut
	f.call(t, "read_dataset_slice", map[string]any{"uri": cube.URI, "slice_str": "1, 0:2, 3", "output_format": "parquet"}, &slFile)
	if slFile.Method != "file" || slFile.TotalRows != 2 {
		t.Fatalf("a 2-element slice asked for as parquet: %+v", slFile)
	}
	for _, c := range []struct {
		args map[string]any
		code string
	}{
		{map[string]any{"path": "/cube"}, "invalid_argument"},
		{map[string]any{"file": "rows.csv"}, "invalid_argument"},
		{map[string]any{"file": "../x.h5"}, "path_outside_root"},
		{map[string]any{"file": "cube.h5", "path": "/nope"}, "resource_not_found"},
	} {
		if e := f.callErr(t, "browse_hdf5", c.args); e["code"] != c.code {
			t.Errorf("%v: %v", c.args, e)
		}
	}
}

type pageOut struct {
	Method      string           `json:"method"`
	ResourceURI string           `json:"resource_uri"`
	Handle      string           `json:"result_handle"`
	RowCount    int64            `json:"row_count"`
	TotalRows   int64            `json:"total_rows"`
	Data        []map[string]any `json:"data"`
	PageInfo    *struct {
		PageToken string `json:"page_token"`
		HasMore   bool   `json:"has_more"`
		Offset    int64  `json:"offset"`
	} `json:"page_info"`
}

// readAll pages through read_result from the first page, following
// page tokens, and returns the ids read.
func readAll(t *testing.T, f *fixture, args map[string]any) []int64 {
	t.Helper()
	var ids []int64
	for range 100 {
		var p pageOut
		f.call(t, "read_result", args, &p)
		if p.PageInfo == nil || p.RowCount != int64(len(p.Data)) || p.PageInfo.Offset != int64(len(ids)) {
			t.Fatalf("page %+v", p)
		}
		for _, r := range p.Data {
			ids = append(ids, int64(r["id"].(float64)))
		}
		if !p.PageInfo.HasMore {
			return ids
		}
		delete(args, "page")
		args["page_token"] = p.PageInfo.PageToken
	}
	t.Fatal("no last page")
	return nil
}

// TestReadResultTool: file results of every format are read back as rows
// page by page (a 5-row parquet request is a file too), and handles by
// page number; misuse gets structured errors.
func TestReadResultTool(t *testing.T) {
	f := open(t, app.Config{Data: reachRoot(t), EnableArrowIPC: true})
	var small pageOut
	f.call(t, "query_data", map[string]any{"dataset": "rows", "limit": 5, "output_format": "parquet"}, &small)
	if small.Method != "file" || small.ResourceURI == "" || small.TotalRows != 5 {
		t.Fatalf("5 rows as parquet: %+v", small)
	}
	if ids := readAll(t, f, map[string]any{"resource_uri": small.ResourceURI}); !slices.Equal(ids, []int64{0, 1, 2, 3, 4}) {
		t.Fatalf("read back %v", ids)
	}
	want := make([]int64, 450)
	for i := range want {
		want[i] = int64(i)
	}
	for _, format := range []string{"parquet", "csv", "arrow"} {
		var file pageOut
		f.call(t, "query_data", map[string]any{"dataset": "rows", "output_format": format}, &file)
		if ids := readAll(t, f, map[string]any{"resource_uri": file.ResourceURI}); !slices.Equal(ids, want) {
			t.Fatalf("%s: read back %d rows", format, len(ids))
		}
		var p2 pageOut
		f.call(t, "read_result", map[string]any{"resource_uri": file.ResourceURI, "page": 2}, &p2)
		if p2.PageInfo.Offset != 400 || p2.RowCount != 50 || p2.PageInfo.HasMore {
			t.Fatalf("%s page 2: %+v", format, p2.PageInfo)
		}
	}
	var h pageOut
	f.call(t, "query_data", map[string]any{"dataset": "rows"}, &h)
	if h.Method != "handle" {
		t.Fatalf("%+v", h)
	}
	var p1 pageOut
	f.call(t, "read_result", map[string]any{"result_handle": h.Handle, "page": 1}, &p1)
	if p1.PageInfo.Offset != 200 || p1.RowCount != 200 || p1.Data[0]["id"].(float64) != 200 {
		t.Fatalf("handle page 1: %+v", p1.PageInfo)
	}
	if ids := readAll(t, f, map[string]any{"result_handle": h.Handle}); !slices.Equal(ids, want) {
		t.Fatalf("handle read back %d rows", len(ids))
	}
	for _, c := range []struct {
		args map[string]any
		code string
	}{
		{map[string]any{}, "invalid_argument"},
		{map[string]any{"resource_uri": small.ResourceURI, "result_handle": h.Handle}, "invalid_argument"},
		{map[string]any{"resource_uri": small.ResourceURI, "page": 1}, "resource_not_found"},
		{map[string]any{"resource_uri": small.ResourceURI, "page_token": "x.y"}, "invalid_page_token"},
		{map[string]any{"resource_uri": "quarry://artifacts/a_aaaaaaaaaaaaaaaaaaaaaaaaaa.parquet"}, "resource_not_found"},
		{map[string]any{"resource_uri": small.ResourceURI, "format": "csv"}, "invalid_argument"},
	} {
		if e := f.callErr(t, "read_result", c.args); e["code"] != c.code {
			t.Errorf("%v: %v", c.args, e)
		}
	}
}

// TestExportTool: export is not listed without an export directory (and
// the service refuses it); with one it writes files from a handle, a file
// result or a query, never over an existing file without overwrite, never
// outside the directory, and the directory may not overlap the data root.
func TestExportTool(t *testing.T) {
	data := reachRoot(t)
	off := open(t, app.Config{Data: data})
	if off.app.MCP.GetTool("export") != nil {
		t.Fatal("export is listed without --export-dir")
	}
	if _, err := off.app.Service.Export(context.Background(), service.ExportRequest{Path: "x.parquet"}); qerr.Code(err) != "export_disabled" {
		t.Fatalf("without --export-dir: %v", err)
	}
	dir := t.TempDir()
	f := open(t, app.Config{Data: data, ExportDir: dir})
	type exportOut struct {
		Path        string `json:"path"`
		FilePath    string `json:"file_path"`
		Format      string `json:"format"`
		Rows        int64  `json:"rows"`
		SizeBytes   int64  `json:"size_bytes"`
		Overwritten bool   `json:"overwritten"`
	}
	var h pageOut
	f.call(t, "query_data", map[string]any{"dataset": "rows"}, &h)
	var e1 exportOut
	f.call(t, "export", map[string]any{"result_handle": h.Handle, "path": "out/all.csv"}, &e1)
	b, err := os.ReadFile(filepath.Join(dir, "out", "all.csv"))
	if err != nil || e1.Rows != 450 || e1.Format != "csv" || int64(len(b)) != e1.SizeBytes || strings.Count(string(b), "\n") != 451 {
		t.Fatalf("export of a handle: %+v, %d bytes, %v", e1, len(b), err)
	}
	if e1.FilePath != filepath.Join(dir, "out", "all.csv") {
		t.Errorf("file_path %s", e1.FilePath)
	}
	if e := f.callErr(t, "export", map[string]any{"result_handle": h.Handle, "path": "out/all.csv"}); e["code"] != "file_exists" {
		t.Fatalf("second export: %v", e)
	}
	var e2 exportOut
	f.call(t, "export", map[string]any{"query": map[string]any{"dataset": "rows", "limit": 3}, "path": "out/all.csv", "overwrite": true}, &e2)
	if b, _ := os.ReadFile(filepath.Join(dir, "out", "all.csv")); !e2.Overwritten || e2.Rows != 3 || strings.Count(string(b), "\n") != 4 {
		t.Fatalf("overwrite: %+v %q", e2, b)
	}
	var file pageOut
	f.call(t, "query_data", map[string]any{"dataset": "rows", "output_format": "parquet"}, &file)
	var e3 exportOut
	f.call(t, "export", map[string]any{"resource_uri": file.ResourceURI, "path": "rows.parquet"}, &e3)
	var e4 exportOut
	f.call(t, "export", map[string]any{"resource_uri": file.ResourceURI, "path": "rows.csv", "format": "csv"}, &e4)
	if e3.Rows != 450 || e4.Rows != 450 || e4.Format != "csv" {
		t.Fatalf("exports of a file: %+v %+v", e3, e4)
	}
	if err := os.Symlink(t.TempDir(), filepath.Join(dir, "escape")); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args map[string]any
		code string
	}{
		{map[string]any{"result_handle": h.Handle, "path": "../x.csv"}, "path_outside_root"},
		{map[string]any{"result_handle": h.Handle, "path": "escape/x.csv"}, "path_outside_root"},
		{map[string]any{"result_handle": h.Handle, "path": "/tmp/x.csv"}, "invalid_argument"},
		{map[string]any{"result_handle": h.Handle, "path": "x.txt"}, "invalid_argument"},
		{map[string]any{"result_handle": h.Handle, "path": "x.csv", "format": "parquet"}, "invalid_argument"},
		{map[string]any{"path": "x.csv"}, "invalid_argument"},
		{map[string]any{"result_handle": h.Handle, "resource_uri": file.ResourceURI, "path": "x.csv"}, "invalid_argument"},
		{map[string]any{"query": map[string]any{"dataset": "rows", "bogus": 1}, "path": "x.csv"}, "invalid_argument"},
	} {
		if e := f.callErr(t, "export", c.args); e["code"] != c.code {
			t.Errorf("%v: %v", c.args, e)
		}
	}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".") {
			t.Errorf("left a temporary file %s", e.Name())
		}
	}
	for _, bad := range []string{filepath.Join(data, "exports"), filepath.Dir(data)} {
		if _, err := app.Open(context.Background(), app.Config{Data: data, ExportDir: bad, ArtifactDir: t.TempDir()}); err == nil ||
			!strings.Contains(err.Error(), "--export-dir") {
			t.Errorf("export dir %s overlapping the data root: %v", bad, err)
		}
	}
	if _, err := os.Stat(filepath.Join(data, "exports")); err == nil {
		t.Error("a refused export directory was created inside the data root")
	}
}

// TestSchemaCardThroughTools: get_schema's include_examples and
// include_summary give what the schema card and summary resources give.
func TestSchemaCardThroughTools(t *testing.T) {
	f := open(t, app.Config{Data: reachRoot(t)})
	var plain, full, card map[string]any
	f.call(t, "get_schema", map[string]any{"dataset": "rows"}, &plain)
	f.call(t, "get_schema", map[string]any{"dataset": "rows", "include_examples": true, "include_summary": true}, &full)
	f.read(t, "quarry://datasets/rows/schema", &card)
	var summary map[string]any
	f.read(t, "quarry://datasets/rows/summary", &summary)
	if plain["summary"] != nil || full["summary"] == nil {
		t.Fatalf("summary: plain %v, full %v", plain["summary"], full["summary"])
	}
	if fmt.Sprint(full["summary"]) != fmt.Sprint(summary) {
		t.Errorf("summary differs from the resource:\n%v\n%v", full["summary"], summary)
	}
	if fmt.Sprint(full["columns"]) != fmt.Sprint(card["columns"]) || fmt.Sprint(plain["columns"]) == fmt.Sprint(card["columns"]) {
		t.Errorf("columns with examples differ from the schema card:\n%v\n%v", full["columns"], card["columns"])
	}
}

// TestArtifactRanges: an artifact bigger than one message is refused whole
// with a hint naming ranges, and read in ranges it is the file, byte for byte.
func TestArtifactRanges(t *testing.T) {
	f := open(t, app.Config{Data: reachRoot(t), MaxMessageBytes: 70 << 10})
	limit := f.app.Service.Config().ResourceReadLimit
	var file pageOut
	f.call(t, "query_data", map[string]any{"dataset": "rows", "output_format": "csv"}, &file)
	a, err := f.app.Artifacts.Get(file.ResourceURI, "")
	if err != nil || a.Size <= limit {
		t.Fatalf("artifact %+v (limit %d): %v", a, limit, err)
	}
	want, _ := os.ReadFile(a.Path)
	req := mcp.ReadResourceRequest{}
	req.Params.URI = file.ResourceURI
	if _, err := f.c.ReadResource(context.Background(), req); err == nil || !strings.Contains(err.Error(), "oversize_result") || !strings.Contains(err.Error(), "offset=0") {
		t.Fatalf("whole read: %v", err)
	}
	var got []byte
	for off := int64(0); off < a.Size; off += limit {
		req.Params.URI = fmt.Sprintf("%s?offset=%d&length=%d", file.ResourceURI, off, limit)
		res, err := f.c.ReadResource(context.Background(), req)
		if err != nil {
			t.Fatal(err)
		}
		blob, ok := res.Contents[0].(mcp.BlobResourceContents)
		if !ok {
			t.Fatalf("range is not a blob: %+v", res.Contents[0])
		}
		b, err := base64.StdEncoding.DecodeString(blob.Blob)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, b...)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("ranges give %d bytes, the file has %d", len(got), len(want))
	}
	req.Params.URI = fmt.Sprintf("%s?offset=0&length=%d", file.ResourceURI, limit+1)
	if _, err := f.c.ReadResource(context.Background(), req); err == nil || !strings.Contains(err.Error(), "invalid_argument") {
		t.Fatalf("a range over the limit: %v", err)
	}
}
