//go:build cgo && !nohdf5

package main

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/quarrydb/quarry/catalog"
	"github.com/quarrydb/quarry/catalog/hdf5"
)

func TestGenerateIsDeterministicAndReadable(t *testing.T) {
	a, b := t.TempDir(), t.TempDir()
	if err := generate(a, io.Discard); err != nil {
		t.Fatal(err)
	}
	if err := generate(b, io.Discard); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"experiment.h5", "calibration.h5"} {
		x, err := os.ReadFile(filepath.Join(a, "physics", name))
		if err != nil {
			t.Fatal(err)
		}
		y, _ := os.ReadFile(filepath.Join(b, "physics", name))
		if !bytes.Equal(x, y) {
			t.Errorf("%s differs between two runs", name)
		}
		if len(x) >= 300<<10 {
			t.Errorf("%s is %d bytes, over the 300 KB budget", name, len(x))
		}
	}

	f := hdf5.NewFormat(hdf5.WithRoot(a))
	defer f.Close()
	var ids []string
	var runs *catalog.Dataset
	for _, rel := range []string{"physics/experiment.h5", "physics/calibration.h5"} {
		abs := filepath.Join(a, filepath.FromSlash(rel))
		st, _ := os.Stat(abs)
		dss, err := f.Open(context.Background(), catalog.FileInfo{AbsPath: abs, RelPath: rel, BaseID: strings.TrimSuffix(rel, ".h5"), Size: st.Size(), ModTime: st.ModTime()})
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range dss {
			ids = append(ids, d.ID)
			if d.ID == "physics/experiment/runs" {
				runs = d
			}
		}
	}
	sort.Strings(ids)
	want := []string{"physics/calibration", "physics/experiment/detector/image", "physics/experiment/events", "physics/experiment/runs"}
	if strings.Join(ids, ",") != strings.Join(want, ",") {
		t.Fatalf("tables = %v, want %v", ids, want)
	}
	if runs.RowCount != runCount || runs.Description != "One row per detector run" {
		t.Errorf("runs = %d rows, %q", runs.RowCount, runs.Description)
	}
	rr, err := runs.Source.Scan(context.Background(), catalog.ScanOptions{Columns: []string{"operator"}})
	if err != nil {
		t.Fatal(err)
	}
	defer rr.Release()
	armenian := false
	for rr.Next() {
		b, _ := rr.RecordBatch().MarshalJSON()
		armenian = armenian || bytes.Contains(b, []byte("Պետրոսյան"))
	}
	if !armenian {
		t.Error("no Armenian operator names read back")
	}

	exp := filepath.Join(a, "physics", "experiment.h5")
	for path, kind := range map[string]string{"/detector/latest": hdf5.KindSoftLink, "/calibration": hdf5.KindExternalLink, "/detector/cube": hdf5.KindDataset, "/runs": hdf5.KindGroup} {
		o, err := f.Browse(context.Background(), exp, path)
		if err != nil || o.Kind != kind || (o.LinkInfo != nil && o.Dangling) {
			t.Errorf("Browse(%s) = %+v, %v", path, o, err)
		}
	}
	s, err := f.ReadSlice(context.Background(), exp, "/calibration", "0:2", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Release()
	if s.Values.Len() != 2 {
		t.Errorf("slice through the external link = %s", s.AppendNestedJSON(nil))
	}
	o, err := f.Browse(context.Background(), exp, "/detector/image")
	if err != nil || o.Attributes["units"] != "counts/s" || len(o.Chunks) != 2 || o.Filters[len(o.Filters)-1].Name != "deflate" {
		t.Errorf("image = %+v %v", o, err)
	}
}
