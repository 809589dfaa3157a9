package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/parquet-go/parquet-go"
	gonumhdf5 "gonum.org/v1/hdf5"
)

const demoH5 = "../demodata/files/physics/experiment.h5"

// TestHDF5Flow browses the demo HDF5 file from its root group down to a
// dataset, reads slices, queries an HDF5 table, and checks a Parquet
// artifact of it value by value against a direct libhdf5 read.
func TestHDF5Flow(t *testing.T) {
	c := startStdio(t)
	ctx := context.Background()

	// Files are listed as resources.
	res, err := c.ListResources(ctx, mcp.ListResourcesRequest{})
	if err != nil {
		t.Fatal(err)
	}
	rootURI := ""
	for _, r := range res.Resources {
		if strings.HasPrefix(r.URI, "h5://physics/experiment.h5") {
			rootURI = r.URI
		}
	}
	if rootURI == "" {
		t.Fatalf("no h5:// resource for physics/experiment.h5 in %+v", res.Resources)
	}

	// Root group → /detector → /detector/image.
	root := browse(t, c, rootURI)
	if !hasMember(root, "runs") || !hasMember(root, "detector") || !hasMember(root, "events") {
		t.Fatalf("root members: %v", root["members"])
	}
	det := browse(t, c, "h5://physics/experiment.h5?path=/detector")
	if !hasMember(det, "image") || !hasMember(det, "latest") {
		t.Fatalf("/detector members: %v", det["members"])
	}
	img := browse(t, c, "h5://physics/experiment.h5?path=%2Fdetector%2Fimage")
	js, _ := json.Marshal(img)
	for _, want := range []string{`"kind":"dataset"`, `"chunks"`, `"deflate"`, `"shape"`} {
		if !strings.Contains(string(js), want) {
			t.Fatalf("/detector/image lacks %s: %s", want, js)
		}
	}
	link := browse(t, c, "h5://physics/experiment.h5?path=/detector/latest")
	if lj, _ := json.Marshal(link); !strings.Contains(string(lj), "soft_link") {
		t.Fatalf("/detector/latest: %s", lj)
	}

	// A 2x3 slice of the image, compared with a direct read.
	direct := readF64(t, demoH5, "/detector/image")
	var sl struct {
		Shape  []int64     `json:"shape"`
		DType  string      `json:"dtype"`
		Method string      `json:"method"`
		Data   [][]float64 `json:"data"`
	}
	call(t, c, "read_dataset_slice", map[string]any{"uri": "h5://physics/experiment.h5?path=/detector/image", "slice_str": "1:3, 2:5"}, &sl)
	if sl.Method != "direct" || sl.DType != "float64" || len(sl.Shape) != 2 || sl.Shape[0] != 2 || sl.Shape[1] != 3 {
		t.Fatalf("slice: %+v", sl)
	}
	cols := direct.dims[1]
	for i := 0; i < 2; i++ {
		for j := 0; j < 3; j++ {
			if got, want := sl.Data[i][j], direct.f64[(1+i)*cols+(2+j)]; got != want {
				t.Fatalf("image[%d,%d] = %v, want %v", 1+i, 2+j, got, want)
			}
		}
	}

	// A big slice is never cut: it is flattened into a handle.
	var big queryResult
	call(t, c, "read_dataset_slice", map[string]any{"uri": "h5://physics/experiment.h5?path=/detector/cube", "slice_str": "..."}, &big)
	if big.Method != "handle" || big.TotalRows != 16*32*32 || !big.Truncated {
		t.Fatalf("big slice: method %s total %d truncated %v", big.Method, big.TotalRows, big.Truncated)
	}

	// Slice errors have their own codes.
	for _, tc := range []struct{ uri, slice, code string }{
		{"h5://physics/experiment.h5?path=/detector/image", "0:2, 0:3, 1", "invalid_slice"},
		{"h5://physics/experiment.h5?path=/detector/image", "999999", "invalid_slice"},
		{"h5://physics/experiment.h5?path=/detector/image", "::-1", "invalid_slice"},
		{"h5://physics/experiment.h5?path=/detector", "0", "not_a_dataset"},
		{"h5://../outside.h5?path=/x", "0", "path_outside_root"},
		{"h5://physics/experiment.h5?path=/nope", "0", "resource_not_found"},
	} {
		e := callErr(t, c, "read_dataset_slice", map[string]any{"uri": tc.uri, "slice_str": tc.slice})
		if e.Code != tc.code {
			t.Errorf("%s [%s]: code %q, want %q (%s)", tc.uri, tc.slice, e.Code, tc.code, e.Error)
		}
	}

	// The /runs group is a table: query it with a filter and a group-by.
	var agg queryResult
	call(t, c, "query_data", map[string]any{
		"dataset":  "physics/experiment/runs",
		"filters":  []map[string]any{{"col": "beam_on", "op": "eq", "value": true}},
		"group_by": []string{"operator"},
		"aggs":     []map[string]any{{"col": "*", "fn": "count"}, {"col": "duration_s", "fn": "avg"}},
		"order_by": []map[string]any{{"col": "operator"}},
	}, &agg)
	if agg.Method != "direct" || agg.RowCount == 0 {
		t.Fatalf("aggregate over HDF5: %+v", agg)
	}

	// The whole table as Parquet, checked against libhdf5.
	var file queryResult
	call(t, c, "query_data", map[string]any{"dataset": "physics/experiment/runs", "columns": []string{"run_id", "duration_s", "temperature_k"},
		"output_format": "parquet", "max_rows": 1}, &file)
	if file.Method != "file" {
		t.Fatalf("expected a file: %+v", file)
	}
	blob := readBlob(t, c, file.ResourceURI, "application/vnd.apache.parquet")
	runID := readI32(t, demoH5, "/runs/run_id")
	dur := readF64(t, demoH5, "/runs/duration_s").f64
	temp := readF32(t, demoH5, "/runs/temperature_k")
	pf, err := parquet.OpenFile(bytes.NewReader(blob), int64(len(blob)))
	if err != nil {
		t.Fatal(err)
	}
	rows := make([]parquet.Row, len(runID)+1)
	r := parquet.NewReader(pf)
	n, _ := r.ReadRows(rows)
	r.Close()
	if n != len(runID) || int64(n) != file.RowCount {
		t.Fatalf("parquet rows %d, hdf5 rows %d, result %d", n, len(runID), file.RowCount)
	}
	for i, row := range rows[:n] {
		if row[0].Int32() != runID[i] || row[1].Double() != dur[i] || row[2].Float() != temp[i] {
			t.Fatalf("row %d: parquet (%v, %v, %v), hdf5 (%v, %v, %v)", i, row[0], row[1], row[2], runID[i], dur[i], temp[i])
		}
	}
}

func browse(t *testing.T, c *client.Client, uri string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(readText(t, c, uri)), &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func hasMember(obj map[string]any, name string) bool {
	js, _ := json.Marshal(obj)
	return strings.Contains(string(js), `"name":"`+name+`"`)
}

type f64Data struct {
	dims []int
	f64  []float64
}

func openDS(t *testing.T, file, path string) (*gonumhdf5.File, *gonumhdf5.Dataset, int, []int) {
	t.Helper()
	f, err := gonumhdf5.OpenFile(file, gonumhdf5.F_ACC_RDONLY)
	if err != nil {
		t.Fatal(err)
	}
	ds, err := f.OpenDataset(path)
	if err != nil {
		t.Fatal(err)
	}
	dims, _, err := ds.Space().SimpleExtentDims()
	if err != nil {
		t.Fatal(err)
	}
	n, out := 1, make([]int, len(dims))
	for i, d := range dims {
		n *= int(d)
		out[i] = int(d)
	}
	return f, ds, n, out
}

func readF64(t *testing.T, file, path string) f64Data {
	f, ds, n, dims := openDS(t, file, path)
	defer f.Close()
	defer ds.Close()
	buf := make([]float64, n)
	if err := ds.Read(&buf); err != nil {
		t.Fatal(err)
	}
	return f64Data{dims: dims, f64: buf}
}

func readF32(t *testing.T, file, path string) []float32 {
	f, ds, n, _ := openDS(t, file, path)
	defer f.Close()
	defer ds.Close()
	buf := make([]float32, n)
	if err := ds.Read(&buf); err != nil {
		t.Fatal(err)
	}
	for _, v := range buf {
		if math.IsNaN(float64(v)) {
			t.Fatal("unexpected NaN")
		}
	}
	return buf
}

func readI32(t *testing.T, file, path string) []int32 {
	f, ds, n, _ := openDS(t, file, path)
	defer f.Close()
	defer ds.Close()
	buf := make([]int32, n)
	if err := ds.Read(&buf); err != nil {
		t.Fatal(err)
	}
	return buf
}
