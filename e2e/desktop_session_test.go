package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// desktopPage is a paged answer of query_data / read_result.
type desktopPage struct {
	Method      string            `json:"method"`
	ResourceURI string            `json:"resource_uri"`
	Handle      string            `json:"result_handle"`
	TotalRows   int64             `json:"total_rows"`
	Data        []json.RawMessage `json:"data"`
	PageInfo    *struct {
		PageToken string `json:"page_token"`
		HasMore   bool   `json:"has_more"`
	} `json:"page_info"`
}

// TestDesktopSession is a Claude-Desktop-like session: the client only
// calls tools, never resources/read. It browses an HDF5 file down to a
// dataset and slices it, gets a big result's rows page by page (as a
// handle and as a Parquet file, the same rows), and exports a Parquet file
// into the export directory, which DuckDB reads back.
func TestDesktopSession(t *testing.T) {
	exportDir := t.TempDir()
	c := startStdio(t, "--artifact-dir", t.TempDir(), "--export-dir", exportDir)

	// HDF5: list the files, browse to a dataset, slice it.
	var files struct {
		Files []struct {
			Path string `json:"path"`
		} `json:"files"`
	}
	call(t, c, "browse_hdf5", map[string]any{}, &files)
	if !slices.ContainsFunc(files.Files, func(f struct {
		Path string `json:"path"`
	}) bool {
		return f.Path == "physics/experiment.h5"
	}) {
		t.Fatalf("files %+v", files.Files)
	}
	type object struct {
		URI    string `json:"uri"`
		Object struct {
			Kind    string  `json:"kind"`
			Shape   []int64 `json:"shape"`
			Members []struct {
				Name  string  `json:"name"`
				Kind  string  `json:"kind"`
				Shape []int64 `json:"shape"`
			} `json:"members"`
		} `json:"object"`
	}
	var root, group, dset object
	call(t, c, "browse_hdf5", map[string]any{"file": "physics/experiment.h5"}, &root)
	if root.Object.Kind != "group" || !slices.ContainsFunc(root.Object.Members, func(m struct {
		Name  string  `json:"name"`
		Kind  string  `json:"kind"`
		Shape []int64 `json:"shape"`
	}) bool {
		return m.Name == "detector" && m.Kind == "group"
	}) {
		t.Fatalf("root %+v", root.Object)
	}
	call(t, c, "browse_hdf5", map[string]any{"file": "physics/experiment.h5", "path": "/detector"}, &group)
	var name string
	for _, m := range group.Object.Members {
		if m.Kind == "dataset" && len(m.Shape) == 2 {
			name = m.Name
		}
	}
	if name == "" {
		t.Fatalf("no 2-d dataset in /detector: %+v", group.Object.Members)
	}
	call(t, c, "browse_hdf5", map[string]any{"file": "physics/experiment.h5", "path": "/detector/" + name}, &dset)
	if dset.Object.Kind != "dataset" || len(dset.Object.Shape) != 2 {
		t.Fatalf("dataset %+v", dset)
	}
	var slice struct {
		Shape []int64     `json:"shape"`
		Data  [][]float64 `json:"data"`
	}
	call(t, c, "read_dataset_slice", map[string]any{"uri": dset.URI, "slice_str": "0:2, 0:3"}, &slice)
	if !slices.Equal(slice.Shape, []int64{2, 3}) || len(slice.Data) != 2 || len(slice.Data[0]) != 3 {
		t.Fatalf("slice %+v", slice)
	}

	// A big result, page by page: as a handle and as a Parquet file.
	readAll := func(args map[string]any) []json.RawMessage {
		var rows []json.RawMessage
		for range 100 {
			var p desktopPage
			call(t, c, "read_result", args, &p)
			rows = append(rows, p.Data...)
			if p.PageInfo == nil || !p.PageInfo.HasMore {
				return rows
			}
			args["page_token"] = p.PageInfo.PageToken
		}
		t.Fatal("no last page")
		return nil
	}
	var h, file desktopPage
	call(t, c, "query_data", map[string]any{"dataset": "sales/orders"}, &h)
	call(t, c, "query_data", map[string]any{"dataset": "sales/orders", "output_format": "parquet"}, &file)
	if h.Method != "handle" || file.Method != "file" || h.TotalRows != 1500 || file.TotalRows != 1500 {
		t.Fatalf("handle %s %d, file %s %d", h.Method, h.TotalRows, file.Method, file.TotalRows)
	}
	byHandle := readAll(map[string]any{"result_handle": h.Handle})
	byFile := readAll(map[string]any{"resource_uri": file.ResourceURI})
	if len(byHandle) != 1500 || len(byFile) != 1500 {
		t.Fatalf("read %d rows by handle, %d from the file", len(byHandle), len(byFile))
	}
	for i := range byHandle {
		if string(byHandle[i]) != string(byFile[i]) {
			t.Fatalf("row %d: handle %s, file %s", i, byHandle[i], byFile[i])
		}
	}

	// Export a Parquet file; DuckDB reads it back.
	var exp struct {
		FilePath string `json:"file_path"`
		Rows     int64  `json:"rows"`
	}
	call(t, c, "export", map[string]any{"query": map[string]any{"dataset": "sales/orders", "limit": 100}, "path": "orders/top.parquet"}, &exp)
	if exp.Rows != 100 || exp.FilePath != filepath.Join(exportDir, "orders", "top.parquet") {
		t.Fatalf("export %+v", exp)
	}
	if _, err := os.Stat(exp.FilePath); err != nil {
		t.Fatal(err)
	}
	got := duckdbCheck(t, exp.FilePath)
	var schema struct {
		Columns []struct {
			Name string `json:"name"`
		} `json:"columns"`
	}
	call(t, c, "get_schema", map[string]any{"dataset": "sales/orders"}, &schema)
	if len(got.Rows) != 100 || len(got.Columns) != len(schema.Columns) {
		t.Fatalf("DuckDB read %d rows, %d columns", len(got.Rows), len(got.Columns))
	}
	var first map[string]any
	_ = json.Unmarshal(byHandle[0], &first)
	for i, col := range schema.Columns {
		if got.Columns[i].Name != col.Name {
			t.Errorf("column %d: DuckDB %s, schema %s", i, got.Columns[i].Name, col.Name)
		}
		if s, ok := first[col.Name].(string); ok && got.Columns[i].Type == "VARCHAR" && (got.Rows[0][i] == nil || *got.Rows[0][i] != s) {
			t.Errorf("row 0 %s: DuckDB %v, query %q", col.Name, got.Rows[0][i], s)
		}
	}
	if e := callErr(t, c, "export", map[string]any{"result_handle": h.Handle, "path": "orders/top.parquet"}); e.Code != "file_exists" {
		t.Fatalf("second export: %+v", e)
	}
}
