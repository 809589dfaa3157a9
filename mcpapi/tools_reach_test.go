package mcpapi_test

import (
	"context"
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
