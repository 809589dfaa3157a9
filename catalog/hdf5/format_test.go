//go:build cgo && !nohdf5

package hdf5

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/bits"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	gonum "gonum.org/v1/hdf5"

	"github.com/quarrydb/quarry/catalog"
	"github.com/quarrydb/quarry/internal/h5"
	"github.com/quarrydb/quarry/internal/h5/h5write"
	"github.com/quarrydb/quarry/internal/qerr"
)

func TestMatch(t *testing.T) {
	f := NewFormat()
	defer f.Close()
	tests := []struct {
		name string
		want bool
	}{
		{"a.h5", true}, {"A.H5", true}, {"dir/b.hdf5", true}, {"c.he5", true}, {"d.nc", true}, {"e.NC", true},
		{"f.csv", false}, {"g.h5.bak", false}, {"h5", false}, {"data.bin", false}, {"x.hdf", false},
	}
	for _, tc := range tests {
		if got := f.Match(tc.name); got != tc.want {
			t.Errorf("Match(%q) = %v, want %v", tc.name, got, tc.want)
		}
	}
	if f.Kind() != catalog.KindHDF5 {
		t.Errorf("Kind() = %q", f.Kind())
	}
}

// openFixtures opens all.h5 and indexes its datasets by ID.
func openFixtures(t *testing.T, f *Format) map[string]*catalog.Dataset {
	t.Helper()
	fx := sharedFixtures(t)
	dss, err := f.Open(context.Background(), fileInfo(t, fx.dir, fx.main))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]*catalog.Dataset{}
	for _, d := range dss {
		if _, dup := out[d.ID]; dup {
			t.Fatalf("duplicate dataset ID %s", d.ID)
		}
		out[d.ID] = d
	}
	return out
}

func fieldSig(s *arrow.Schema) []string {
	var out []string
	for _, f := range s.Fields() {
		out = append(out, f.Name+":"+f.Type.String())
	}
	return out
}

func TestOpenDiscoversTables(t *testing.T) {
	fx := sharedFixtures(t)
	f := NewFormat(WithRoot(fx.dir))
	defer f.Close()
	dss := openFixtures(t, f)
	tests := []struct {
		id     string
		fields []string
		rows   int64
		desc   string
	}{
		{"all/table", []string{"code:utf8", "color:utf8", "f32be:float32", "flag:bool", "i16be:int16", "name:utf8", "u64:uint64", "u8:uint8", "x:float64", "y:int32"}, tableRows, "Run table"},
		{"all/events", []string{"id:int64", "pos.x:float64", "pos.y:float64", "vec:fixed_size_list<item: float32, nullable>[3]", "ok:bool", "tag:utf8", "label:utf8", "blob:null"}, eventRows, "Detector events"},
		{"all/matrix", []string{"alpha:float64", "beta:float64", "gamma:float64", "delta:float64"}, 20, ""},
		{"all/bigendian", []string{"c0:int32", "c1:int32", "c2:int32"}, 10, ""},
		{"all/zero2d", []string{"c0:float64", "c1:float64", "c2:float64"}, 0, ""},
		{"all/nan", []string{"nan:float64"}, 4, ""},
		{"all/empty", []string{"empty:float64"}, 0, ""},
		{"all/bigint", []string{"bigint:int64"}, 3, ""},
		{"all/refs", []string{"refs:null"}, 1, ""},
		{"all/extstore", []string{"extstore:float64"}, 7, ""},
		{"all/misc", []string{"a:int8", "b:int8"}, 5, ""},
		{"all/misc/c", []string{"c:int8"}, 3, ""},
		{"all/nc", []string{"temp:float64", "time:float64"}, 3, ""},
		{"all/filters/lzo", []string{"lzo:float64"}, 10, ""},
		{"all/filters/blosc", []string{"blosc:float64"}, 12, ""},
	}
	var ids []string
	for id := range dss {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	if len(ids) != len(tests) {
		t.Errorf("found tables %v, want %d tables", ids, len(tests))
	}
	for _, tc := range tests {
		t.Run(tc.id, func(t *testing.T) {
			d := dss[tc.id]
			if d == nil {
				t.Fatalf("table %s not found among %v", tc.id, ids)
			}
			if got := fieldSig(d.Schema); !reflect.DeepEqual(got, tc.fields) {
				t.Errorf("fields = %v, want %v", got, tc.fields)
			}
			if d.RowCount != tc.rows || !d.RowCountExact {
				t.Errorf("rows = %d (exact %v), want %d", d.RowCount, d.RowCountExact, tc.rows)
			}
			if d.Description != tc.desc {
				t.Errorf("description = %q, want %q", d.Description, tc.desc)
			}
			if d.Kind != catalog.KindHDF5 || d.Path != "all.h5" || d.AbsPath != fx.main || d.Source == nil || d.SizeBytes <= 0 {
				t.Errorf("dataset header = %+v", d)
			}
		})
	}
	// Metadata: unsupported columns and column-dataset units.
	ev := dss["all/events"].Schema
	blob, _ := ev.FieldsByName("blob")
	if v, ok := blob[0].Metadata.GetValue(UnsupportedMetaKey); !ok || !strings.Contains(v, "opaque") {
		t.Errorf("blob metadata = %v", blob[0].Metadata)
	}
	x, _ := dss["all/table"].Schema.FieldsByName("x")
	if v, _ := x[0].Metadata.GetValue("units"); v != "m" {
		t.Errorf("x units metadata = %v", x[0].Metadata)
	}
	if v, _ := x[0].Metadata.GetValue("description"); v != "position" {
		t.Errorf("x description metadata = %v", x[0].Metadata)
	}
	attrs := dss["all/table"].Attributes
	if attrs["version"] != int64(3) || attrs["scale"] != "NaN" {
		t.Errorf("table attributes = %v", attrs)
	}
	if got := dss["all/matrix"].Attributes["units"]; got != "V" {
		t.Errorf("matrix attributes = %v", dss["all/matrix"].Attributes)
	}
}

// scanAll reads a whole table, returning one []any per column.
func scanAll(t *testing.T, d *catalog.Dataset, cols []string, batch int, alloc memory.Allocator) ([][]any, int) {
	t.Helper()
	rr, err := d.Source.Scan(context.Background(), catalog.ScanOptions{Columns: cols, BatchSize: batch, Alloc: alloc})
	if err != nil {
		t.Fatalf("Scan(%s): %v", d.ID, err)
	}
	defer rr.Release()
	out := make([][]any, len(rr.Schema().Fields()))
	batches := 0
	for rr.Next() {
		rec := rr.RecordBatch()
		batches++
		for c := 0; c < int(rec.NumCols()); c++ {
			col := rec.Column(c)
			for i := 0; i < col.Len(); i++ {
				out[c] = append(out[c], goValue(col, i))
			}
		}
	}
	if err := rr.Err(); err != nil {
		t.Fatalf("Scan(%s) failed: %v", d.ID, err)
	}
	return out, batches
}

// goValue converts one Arrow element to a comparable Go value.
func goValue(a arrow.Array, i int) any {
	if a.IsNull(i) {
		return nil
	}
	switch c := a.(type) {
	case *array.Int8:
		return c.Value(i)
	case *array.Uint8:
		return c.Value(i)
	case *array.FixedSizeList:
		s, e := c.ValueOffsets(i)
		var out []any
		for k := s; k < e; k++ {
			out = append(out, goValue(c.ListValues(), int(k)))
		}
		return out
	case *array.Struct:
		m := map[string]any{}
		st := c.DataType().(*arrow.StructType)
		for k := 0; k < c.NumField(); k++ {
			m[st.Field(k).Name] = goValue(c.Field(k), i)
		}
		return m
	}
	return a.GetOneForMarshal(i)
}

type colCheck func(i int) any

func TestScanValues(t *testing.T) {
	fx := sharedFixtures(t)
	f := NewFormat(WithRoot(fx.dir))
	defer f.Close()
	dss := openFixtures(t, f)
	checks := map[string]map[string]colCheck{
		"all/table": {
			"x":     func(i int) any { return fxX(i) },
			"y":     func(i int) any { return fxY(i) },
			"flag":  func(i int) any { return fxFlag(i) },
			"name":  func(i int) any { return fxName(i) },
			"code":  func(i int) any { return fxCode(i) },
			"u8":    func(i int) any { return uint8(i) },
			"u64":   func(i int) any { return fxU64(i) },
			"i16be": func(i int) any { return fxI16(i) },
			"f32be": func(i int) any { return fxF32(i) },
			"color": func(i int) any { return fxColor(i) },
		},
		"all/events": {
			"id":    func(i int) any { return evID(i) },
			"pos.x": func(i int) any { return evX(i) },
			"pos.y": func(i int) any { return evY(i) },
			"vec":   func(i int) any { return []any{evVec(i, 0), evVec(i, 1), evVec(i, 2)} },
			"ok":    func(i int) any { return evFlag(i) },
			"tag":   func(i int) any { return evTag(i) },
			"label": func(i int) any { return evLabel(i) },
			"blob":  func(i int) any { return nil },
		},
		"all/matrix": {
			"alpha": func(i int) any { return matrixVal(i, 0) },
			"gamma": func(i int) any { return matrixVal(i, 2) },
			"delta": func(i int) any { return matrixVal(i, 3) },
		},
		"all/bigendian": {
			"c0": func(i int) any { return int32(i*3*7 - 100) },
			"c2": func(i int) any { return int32((i*3+2)*7 - 100) },
		},
		"all/misc":   {"b": func(i int) any { return int8(-(i + 1)) }},
		"all/misc/c": {"c": func(i int) any { return int8(7 + i) }},
		"all/bigint": {"bigint": func(i int) any { return []int64{1 << 60, -(1 << 60), 42}[i] }},
		"all/refs":   {"refs": func(i int) any { return nil }},
	}
	for _, batch := range []int{0, 1, 7, 16, 33, 1000} {
		for id, cols := range checks {
			t.Run(fmt.Sprintf("%s/batch%d", id, batch), func(t *testing.T) {
				mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
				defer mem.AssertSize(t, 0)
				d := dss[id]
				var names []string
				for n := range cols {
					names = append(names, n)
				}
				sort.Strings(names)
				got, batches := scanAll(t, d, names, batch, mem)
				for c, n := range names {
					if int64(len(got[c])) != d.RowCount {
						t.Fatalf("column %s: %d values, want %d", n, len(got[c]), d.RowCount)
					}
					for i, v := range got[c] {
						if want := cols[n](i); !reflect.DeepEqual(v, want) {
							t.Fatalf("column %s row %d = %#v, want %#v", n, i, v, want)
						}
					}
				}
				if batch > 0 && d.RowCount > 0 && batches < int((d.RowCount+int64(batch)*4-1)/(int64(batch)*4)) {
					t.Errorf("%d batches for %d rows at batch size %d", batches, d.RowCount, batch)
				}
			})
		}
	}
}

func TestScanNaNAndEmpty(t *testing.T) {
	fx := sharedFixtures(t)
	f := NewFormat(WithRoot(fx.dir))
	defer f.Close()
	dss := openFixtures(t, f)
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	rr, err := dss["all/nan"].Source.Scan(context.Background(), catalog.ScanOptions{Alloc: mem})
	if err != nil {
		t.Fatal(err)
	}
	if !rr.Next() {
		t.Fatal(rr.Err())
	}
	v := rr.RecordBatch().Column(0).(*array.Float64).Float64Values()
	if !math.IsNaN(v[0]) || !math.IsInf(v[1], 1) || !math.IsInf(v[2], -1) || v[3] != 1.5 {
		t.Fatalf("nan column = %v", v)
	}
	rr.Release()
	for _, id := range []string{"all/empty", "all/zero2d"} {
		rr, err := dss[id].Source.Scan(context.Background(), catalog.ScanOptions{Alloc: mem})
		if err != nil {
			t.Fatal(err)
		}
		if rr.Next() || rr.Err() != nil {
			t.Fatalf("%s: empty table produced a batch (err %v)", id, rr.Err())
		}
		if len(rr.Schema().Fields()) == 0 {
			t.Fatalf("%s: empty schema", id)
		}
		rr.Release()
	}
}

func TestScanProjectionAndErrors(t *testing.T) {
	fx := sharedFixtures(t)
	f := NewFormat(WithRoot(fx.dir))
	defer f.Close()
	dss := openFixtures(t, f)
	d := dss["all/table"]
	rr, err := d.Source.Scan(context.Background(), catalog.ScanOptions{Columns: []string{"y", "x"}})
	if err != nil {
		t.Fatal(err)
	}
	if got := fieldSig(rr.Schema()); !reflect.DeepEqual(got, []string{"y:int32", "x:float64"}) {
		t.Fatalf("projected schema = %v", got)
	}
	x, _ := rr.Schema().FieldsByName("x")
	if v, _ := x[0].Metadata.GetValue("units"); v != "m" {
		t.Errorf("projection lost field metadata")
	}
	rr.Release()

	tests := []struct {
		id   string
		cols []string
		code string
		cat  error
	}{
		{"all/table", []string{"nmae"}, qerr.CodeInvalidColumn, qerr.ErrNotFound},
		{"all/filters/lzo", nil, qerr.CodeUnsupportedFilter, qerr.ErrUnsupported},
		{"all/filters/blosc", nil, qerr.CodeUnsupportedFilter, qerr.ErrUnsupported},
		{"all/extstore", nil, qerr.CodeUnsupportedFormat, qerr.ErrUnsupported},
	}
	for _, tc := range tests {
		_, err := dss[tc.id].Source.Scan(context.Background(), catalog.ScanOptions{Columns: tc.cols})
		if qerr.Code(err) != tc.code || !errors.Is(err, tc.cat) {
			t.Errorf("Scan(%s, %v) = %v, want code %s", tc.id, tc.cols, err, tc.code)
		}
	}
	_, err = dss["all/table"].Source.Scan(context.Background(), catalog.ScanOptions{Columns: []string{"nmae"}})
	if qe := qerr.As(err); !strings.Contains(qe.Hint, `"name"`) {
		t.Errorf("no did-you-mean hint: %+v", qe)
	}
	_, err = dss["all/filters/blosc"].Source.Scan(context.Background(), catalog.ScanOptions{})
	if !strings.Contains(err.Error(), "blosc") || !strings.Contains(err.Error(), "32001") {
		t.Errorf("filter error does not name the filter: %v", err)
	}
}

func TestScanCancel(t *testing.T) {
	fx := sharedFixtures(t)
	f := NewFormat(WithRoot(fx.dir))
	defer f.Close()
	dss := openFixtures(t, f)
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	ctx, cancel := context.WithCancel(context.Background())
	rr, err := dss["all/table"].Source.Scan(ctx, catalog.ScanOptions{BatchSize: 10, Alloc: mem})
	if err != nil {
		t.Fatal(err)
	}
	defer rr.Release()
	if !rr.Next() {
		t.Fatal(rr.Err())
	}
	cancel()
	if rr.Next() {
		t.Fatal("Next succeeded after cancel")
	}
	if !errors.Is(rr.Err(), context.Canceled) {
		t.Fatalf("Err() = %v", rr.Err())
	}
	if _, err := dss["all/table"].Source.Scan(ctx, catalog.ScanOptions{}); !errors.Is(err, context.Canceled) {
		t.Fatalf("Scan on a cancelled context = %v", err)
	}
}

// TestScanMatchesGonum cross-checks Scan against direct reads through
// gonum.org/v1/hdf5, an independent binding.
func TestScanMatchesGonum(t *testing.T) {
	fx := sharedFixtures(t)
	// gonum opens with HDF5 file locking and the Format without; HDF5
	// refuses to hold one file open both ways in a process, so read
	// through gonum first and close it before the Format opens the file.
	gf, err := gonum.OpenFile(fx.main, gonum.F_ACC_RDONLY)
	if err != nil {
		t.Fatal(err)
	}
	read := func(p string, dst any) {
		ds, err := gf.OpenDataset(p)
		if err != nil {
			t.Fatal(err)
		}
		defer ds.Close()
		if err := ds.Read(dst); err != nil {
			t.Fatal(err)
		}
	}
	x := make([]float64, tableRows)
	read("/table/x", &x)
	y := make([]int32, tableRows)
	read("/table/y", &y)
	m := make([]float64, 80)
	read("/matrix", &m)
	be := make([]int32, 30)
	read("/bigendian", &be)
	if err := gf.Close(); err != nil {
		t.Fatal(err)
	}

	f := NewFormat(WithRoot(fx.dir))
	defer f.Close()
	dss := openFixtures(t, f)
	got, _ := scanAll(t, dss["all/table"], []string{"x", "y"}, 13, nil)
	for i := range x {
		if got[0][i] != x[i] || got[1][i] != y[i] {
			t.Fatalf("row %d: scan (%v, %v), gonum (%v, %v)", i, got[0][i], got[1][i], x[i], y[i])
		}
	}
	got, _ = scanAll(t, dss["all/matrix"], nil, 3, nil)
	for i := 0; i < 20; i++ {
		for j := 0; j < 4; j++ {
			if got[j][i] != m[i*4+j] {
				t.Fatalf("matrix[%d][%d]: scan %v, gonum %v", i, j, got[j][i], m[i*4+j])
			}
		}
	}
	// gonum reads with the dataset's own (big-endian) type, without
	// conversion: swap its bytes to compare.
	got, _ = scanAll(t, dss["all/bigendian"], []string{"c1"}, 4, nil)
	for i := range be {
		be[i] = int32(bits.ReverseBytes32(uint32(be[i])))
	}
	for i := 0; i < 10; i++ {
		if got[0][i] != be[i*3+1] {
			t.Fatalf("bigendian[%d][1]: scan %v, gonum %v", i, got[0][i], be[i*3+1])
		}
	}
}

func TestOpenInvalidFiles(t *testing.T) {
	dir := t.TempDir()
	fx := sharedFixtures(t)
	good, err := os.ReadFile(fx.main)
	if err != nil {
		t.Fatal(err)
	}
	files := map[string][]byte{
		"empty.h5":     {},
		"garbage.h5":   []byte("this is not an HDF5 file at all, just text\n"),
		"truncated.h5": good[:len(good)/2],
		"header.hdf5":  good[:600],
		"classic.nc":   append([]byte("CDF\x01"), make([]byte, 60)...),
	}
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Mkdir(filepath.Join(dir, "dir.h5"), 0o755); err != nil {
		t.Fatal(err)
	}
	f := NewFormat()
	defer f.Close()
	names := []string{"empty.h5", "garbage.h5", "truncated.h5", "header.hdf5", "classic.nc", "dir.h5"}
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			abs := filepath.Join(dir, name)
			st, _ := os.Stat(abs)
			fi := catalog.FileInfo{AbsPath: abs, RelPath: name, BaseID: strings.TrimSuffix(name, filepath.Ext(name)), Size: st.Size(), ModTime: st.ModTime()}
			dss, err := f.Open(context.Background(), fi)
			if err == nil {
				t.Fatalf("Open(%s) = %d datasets, want an error", name, len(dss))
			}
			if qerr.Code(err) == qerr.CodeInternal {
				t.Errorf("Open(%s) error has code internal: %v", name, err)
			}
			if name == "classic.nc" && !strings.Contains(qerr.As(err).Hint, "NetCDF-3") {
				t.Errorf("NetCDF-3 file error lacks the hint: %+v", qerr.As(err))
			}
		})
	}
	_, err = f.Open(context.Background(), catalog.FileInfo{AbsPath: filepath.Join(dir, "missing.h5"), RelPath: "missing.h5", BaseID: "missing"})
	if qerr.Code(err) != qerr.CodeResourceNotFound {
		t.Errorf("Open(missing) = %v", err)
	}
}

// TestOtherExtension documents that matching is by name: a valid HDF5 file
// called data.bin is not a candidate (the catalog never asks Open), though
// Open itself would read it.
func TestOtherExtension(t *testing.T) {
	fx := sharedFixtures(t)
	dir := t.TempDir()
	data, _ := os.ReadFile(fx.other)
	p := filepath.Join(dir, "data.bin")
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	f := NewFormat()
	defer f.Close()
	if f.Match("data.bin") {
		t.Fatal("Match(data.bin) = true")
	}
	dss, err := f.Open(context.Background(), fileInfo(t, dir, p))
	if err != nil || len(dss) != 1 {
		t.Fatalf("Open(data.bin) = %d, %v", len(dss), err)
	}
}

func TestManySmallFiles(t *testing.T) {
	if testing.Short() {
		t.Skip("writes 1,000 files")
	}
	dir := t.TempDir()
	const n = 1000
	f64 := h5.NewFloat(8)
	defer h5.Close(f64)
	for i := 0; i < n; i++ {
		p := filepath.Join(dir, fmt.Sprintf("f%04d.h5", i))
		fid, err := h5write.CreateFile(p)
		if err != nil {
			t.Fatal(err)
		}
		d, err := h5write.CreateDataset(fid, "/v", f64, []int64{3}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := h5write.WriteValues(d, f64, []float64{float64(i), 1, 2}); err != nil {
			t.Fatal(err)
		}
		h5.Close(d)
		h5.Close(fid)
	}
	base := h5.OpenObjectCount()
	f := NewFormat(WithMaxOpenFiles(16))
	var wg sync.WaitGroup
	errs := make(chan error, n)
	sem := make(chan struct{}, 8)
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			p := filepath.Join(dir, fmt.Sprintf("f%04d.h5", i))
			st, _ := os.Stat(p)
			dss, err := f.Open(context.Background(), catalog.FileInfo{AbsPath: p, RelPath: filepath.Base(p), BaseID: strings.TrimSuffix(filepath.Base(p), ".h5"), Size: st.Size(), ModTime: st.ModTime()})
			if err != nil {
				errs <- err
				return
			}
			if len(dss) != 1 || dss[0].RowCount != 3 || dss[0].ID != fmt.Sprintf("f%04d", i) {
				errs <- fmt.Errorf("%s: %d datasets", p, len(dss))
				return
			}
			rr, err := dss[0].Source.Scan(context.Background(), catalog.ScanOptions{})
			if err != nil {
				errs <- err
				return
			}
			defer rr.Release()
			if !rr.Next() || rr.RecordBatch().Column(0).(*array.Float64).Value(0) != float64(i) {
				errs <- fmt.Errorf("%s: bad data", p)
			}
		}(i)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if got := f.cache.Len(); got > 16 {
		t.Errorf("cache holds %d files, limit 16", got)
	}
	f.Close()
	if got := h5.OpenObjectCount(); got != base {
		t.Errorf("%d HDF5 objects open after Close, want %d", got, base)
	}
}

func TestFileChangeIsNoticed(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "c.h5")
	write := func(vals []float64, extra bool) {
		tmp := p + ".tmp"
		fid, err := h5write.CreateFile(tmp)
		if err != nil {
			t.Fatal(err)
		}
		f64 := h5.NewFloat(8)
		defer h5.Close(f64)
		d, _ := h5write.CreateDataset(fid, "/v", f64, []int64{int64(len(vals))}, nil)
		_ = h5write.WriteValues(d, f64, vals)
		h5.Close(d)
		if extra {
			g, _ := h5write.CreateGroup(fid, "/g")
			h5.Close(g)
		}
		h5.Close(fid)
		if err := os.Rename(tmp, p); err != nil {
			t.Fatal(err)
		}
	}
	write([]float64{1, 2, 3}, false)
	f := NewFormat()
	defer f.Close()
	dss, err := f.Open(context.Background(), fileInfo(t, dir, p))
	if err != nil {
		t.Fatal(err)
	}
	src := dss[0].Source
	write([]float64{5, 6, 7, 8}, true)
	rr, err := src.Scan(context.Background(), catalog.ScanOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !rr.Next() || rr.RecordBatch().NumRows() != 4 || rr.RecordBatch().Column(0).(*array.Float64).Value(0) != 5 {
		t.Fatalf("scan after rewrite did not see the new file: %v", rr.Err())
	}
	rr.Release()
	// Rewritten with a different type: the scan refuses with a rescan hint.
	tmp := p + ".tmp"
	fid, _ := h5write.CreateFile(tmp)
	vs := h5.NewString(-1, true, h5.StrNullTerm)
	d, _ := h5write.CreateDataset(fid, "/v", vs, []int64{1}, nil)
	_ = h5write.WriteStrings(d, []string{"x"}, true)
	h5.Close(d)
	h5.Close(vs)
	h5.Close(fid)
	_ = os.Rename(tmp, p)
	if _, err := src.Scan(context.Background(), catalog.ScanOptions{}); qerr.Code(err) != qerr.CodeDatasetNotFound {
		t.Fatalf("scan of a changed schema = %v", err)
	}
}

func TestConcurrentReads(t *testing.T) {
	fx := sharedFixtures(t)
	f := NewFormat(WithRoot(fx.dir), WithMaxOpenFiles(2))
	defer f.Close()
	dss := openFixtures(t, f)
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for g := 0; g < 16; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for it := 0; it < 15; it++ {
				switch (g + it) % 4 {
				case 0:
					rr, err := dss["all/events"].Source.Scan(context.Background(), catalog.ScanOptions{BatchSize: 7, Alloc: mem, Columns: []string{"label", "pos.x"}})
					if err != nil {
						errs <- err
						return
					}
					row := 0
					for rr.Next() {
						lab := rr.RecordBatch().Column(0).(*array.String)
						for i := 0; i < lab.Len(); i++ {
							if lab.Value(i) != evLabel(row) {
								errs <- fmt.Errorf("events row %d label %q", row, lab.Value(i))
							}
							row++
						}
					}
					if rr.Err() != nil || row != eventRows {
						errs <- fmt.Errorf("events: %d rows, %v", row, rr.Err())
					}
					rr.Release()
				case 1:
					s, err := f.ReadSlice(context.Background(), fx.main, "/matrix", fmt.Sprintf("%d, 1:3", g%20), mem)
					if err != nil {
						errs <- err
						return
					}
					v := s.Values.(*array.Float64)
					if v.Len() != 2 || v.Value(0) != matrixVal(g%20, 1) || v.Value(1) != matrixVal(g%20, 2) {
						errs <- fmt.Errorf("slice row %d = %v", g%20, v)
					}
					s.Release()
				case 2:
					if _, err := f.Browse(context.Background(), fx.main, "/table"); err != nil {
						errs <- err
					}
					s, err := f.ReadSlice(context.Background(), fx.main, "/links/ext", ":", mem)
					if err != nil {
						errs <- err
						return
					}
					s.Release()
				case 3:
					rr, err := dss["all/table"].Source.Scan(context.Background(), catalog.ScanOptions{BatchSize: 16, Alloc: mem, Columns: []string{"name", "flag"}})
					if err != nil {
						errs <- err
						return
					}
					n := 0
					for rr.Next() {
						n += int(rr.RecordBatch().NumRows())
					}
					if n != tableRows || rr.Err() != nil {
						errs <- fmt.Errorf("table: %d rows, %v", n, rr.Err())
					}
					rr.Release()
				}
			}
		}(g)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// TestNoLeakedIdentifiers runs every operation and checks that no HDF5
// object stays open once the Format is closed.
func TestNoLeakedIdentifiers(t *testing.T) {
	fx := sharedFixtures(t)
	base := h5.OpenObjectCount()
	f := NewFormat(WithRoot(fx.dir))
	dss := openFixtures(t, f)
	for _, d := range dss {
		rr, err := d.Source.Scan(context.Background(), catalog.ScanOptions{BatchSize: 5})
		if err != nil {
			continue
		}
		rr.Next() // abandon mid-way
		rr.Release()
	}
	for _, p := range []string{"/", "/table", "/events", "/links/ext", "/links/dangling", "/links/extgroup/data", "/types/color_t"} {
		_, _ = f.Browse(context.Background(), fx.main, p)
	}
	for _, p := range []string{"/matrix", "/links/ext", "/filters/blosc", "/refs", "/links/loop1", "/nope"} {
		if s, err := f.ReadSlice(context.Background(), fx.main, p, "", nil); err == nil {
			s.Release()
		}
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	if got := h5.OpenObjectCount(); got != base {
		t.Fatalf("%d HDF5 objects open after Close, want %d", got, base)
	}
}

func TestScanBatchesAreChunkAligned(t *testing.T) {
	fx := sharedFixtures(t)
	f := NewFormat(WithRoot(fx.dir))
	defer f.Close()
	dss := openFixtures(t, f)
	tests := []struct {
		id    string
		batch int
		want  []int64
	}{
		{"all/events", 30, []int64{32, 18}},             // chunks of 16: rounded to 32
		{"all/events", 20, []int64{16, 16, 16, 2}},      // nearest multiple of 16
		{"all/events", 10, []int64{10, 10, 10, 10, 10}}, // below one chunk: as asked
		{"all/matrix", 12, []int64{16, 4}},              // 2-D, chunks of 8 rows
		{"all/misc", 2, []int64{2, 2, 1}},               // contiguous: as asked
	}
	for _, tc := range tests {
		rr, err := dss[tc.id].Source.Scan(context.Background(), catalog.ScanOptions{BatchSize: tc.batch})
		if err != nil {
			t.Fatal(err)
		}
		var got []int64
		for rr.Next() {
			got = append(got, rr.RecordBatch().NumRows())
		}
		rr.Release()
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s at batch %d: batches %v, want %v", tc.id, tc.batch, got, tc.want)
		}
	}
}

// peakAllocator tracks the peak of bytes allocated and not yet freed.
type peakAllocator struct {
	memory.Allocator
	mu        sync.Mutex
	cur, peak int
}

func (p *peakAllocator) Allocate(n int) []byte {
	p.mu.Lock()
	p.cur += n
	p.peak = max(p.peak, p.cur)
	p.mu.Unlock()
	return p.Allocator.Allocate(n)
}

func (p *peakAllocator) Reallocate(n int, b []byte) []byte {
	p.mu.Lock()
	p.cur += n - len(b)
	p.peak = max(p.peak, p.cur)
	p.mu.Unlock()
	return p.Allocator.Reallocate(n, b)
}

func (p *peakAllocator) Free(b []byte) {
	p.mu.Lock()
	p.cur -= len(b)
	p.mu.Unlock()
	p.Allocator.Free(b)
}

// TestScanMemoryIsBoundedByBatch scans a 16 MB table in 64 KB batches and
// checks the peak of live Arrow memory stays near one batch.
func TestScanMemoryIsBoundedByBatch(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "big.h5")
	fid, err := h5write.CreateFile(p)
	if err != nil {
		t.Fatal(err)
	}
	f64 := h5.NewFloat(8)
	defer h5.Close(f64)
	const rows = 1 << 20
	vals := make([]float64, rows)
	for i := range vals {
		vals[i] = float64(i)
	}
	for _, name := range []string{"/t/a", "/t/b"} {
		d, err := h5write.CreateDataset(fid, name, f64, []int64{rows}, &h5write.DatasetOptions{Chunk: []int64{8192}, Gzip: 1})
		if err != nil {
			t.Fatal(err)
		}
		if err := h5write.WriteValues(d, f64, vals); err != nil {
			t.Fatal(err)
		}
		h5.Close(d)
	}
	h5.Close(fid)
	f := NewFormat()
	defer f.Close()
	dss, err := f.Open(context.Background(), fileInfo(t, dir, p))
	if err != nil || len(dss) != 1 {
		t.Fatalf("%d tables, %v", len(dss), err)
	}
	mem := &peakAllocator{Allocator: memory.NewCheckedAllocator(memory.NewGoAllocator())}
	rr, err := dss[0].Source.Scan(context.Background(), catalog.ScanOptions{BatchSize: 8192, Alloc: mem})
	if err != nil {
		t.Fatal(err)
	}
	var n int64
	var sum float64
	for rr.Next() {
		rec := rr.RecordBatch()
		n += rec.NumRows()
		for _, v := range rec.Column(1).(*array.Float64).Float64Values() {
			sum += v
		}
	}
	rr.Release()
	if err := rr.Err(); err != nil || n != rows || sum != float64(rows)*float64(rows-1)/2 {
		t.Fatalf("scanned %d rows, sum %v, err %v", n, sum, err)
	}
	// One batch is 2 columns x 8192 x 8 bytes = 128 KiB; the table is 16 MiB.
	if mem.peak > 2*2*8192*8+4096 {
		t.Fatalf("peak Arrow memory %d bytes for 128 KiB batches", mem.peak)
	}
	if mem.cur != 0 {
		t.Fatalf("%d bytes still allocated", mem.cur)
	}
}
