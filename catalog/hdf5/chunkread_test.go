//go:build cgo && !nohdf5

package hdf5

import (
	"bytes"
	"context"
	"math"
	"os"
	"path/filepath"
	"testing"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/quarrydb/quarry/catalog"
	"github.com/quarrydb/quarry/internal/h5"
	"github.com/quarrydb/quarry/internal/h5/h5write"
)

// writeTwins writes every dataset twice, compressed ("/z/<name>", read by
// decoding chunks directly where eligible) and contiguous ("/c/<name>",
// read by H5Dread), with the same values, fill value and written blocks.
func writeTwins(t *testing.T, path string) {
	t.Helper()
	fid, err := h5write.CreateFile(path)
	if err != nil {
		t.Fatal(err)
	}
	defer h5.Close(fid)
	for _, g := range []string{"/z", "/c", "/tz", "/tc"} {
		gid, err := h5write.CreateGroup(fid, g)
		if err != nil {
			t.Fatal(err)
		}
		h5.Close(gid)
	}
	type twin struct {
		name      string
		typ       func() h5.ID
		dims      []int64
		chunk     []int64
		opts      h5write.DatasetOptions
		fill      []byte
		blocks    [][2][]int64 // start, count; nil = all
		bigEndian bool
	}
	f64 := func() h5.ID { return h5.NewFloat(8) }
	i32 := func() h5.ID { return h5.NewInt(4, true) }
	twins := []twin{
		{name: "grid", typ: f64, dims: []int64{300, 200}, chunk: []int64{64, 48}, opts: h5write.DatasetOptions{Gzip: 4}},
		{name: "holes", typ: f64, dims: []int64{90, 80}, chunk: []int64{16, 16}, opts: h5write.DatasetOptions{Gzip: 1, Shuffle: true},
			fill: f64bytes(-7.5), blocks: [][2][]int64{{{0, 0}, {20, 30}}, {{50, 60}, {40, 20}}}},
		{name: "cube", typ: i32, dims: []int64{12, 30, 17}, chunk: []int64{5, 8, 8}, opts: h5write.DatasetOptions{Gzip: 6, Shuffle: true, Fletcher32: true}},
		{name: "be", typ: f64, dims: []int64{40, 40}, chunk: []int64{16, 16}, opts: h5write.DatasetOptions{Gzip: 2}, bigEndian: true},
	}
	for _, tw := range twins {
		mem := tw.typ()
		ft := tw.typ()
		if tw.bigEndian {
			if err := h5.SetBigEndian(ft, true); err != nil {
				t.Fatal(err)
			}
		}
		n := int64(1)
		for _, d := range tw.dims {
			n *= d
		}
		size := 8
		if tw.name == "cube" {
			size = 4
		}
		full := make([]byte, n*int64(size))
		for i := range n {
			v := math.Sin(float64(i)/13) * 100
			if i%89 == 0 {
				v = math.NaN()
			}
			if size == 4 {
				*(*int32)(unsafe.Pointer(&full[i*4])) = int32(v * 1000)
			} else {
				*(*float64)(unsafe.Pointer(&full[i*8])) = v
			}
		}
		for _, compressed := range []bool{true, false} {
			o := h5write.DatasetOptions{Fill: tw.fill}
			where := "/c/"
			if compressed {
				o = tw.opts
				o.Chunk, o.Fill = tw.chunk, tw.fill
				where = "/z/"
			}
			d, err := h5write.CreateDataset(fid, where+tw.name, ft, tw.dims, &o)
			if err != nil {
				t.Fatal(err)
			}
			if tw.blocks == nil {
				err = h5write.Write(d, mem, unsafe.Pointer(&full[0]))
			}
			for _, b := range tw.blocks {
				part := make([]byte, 0)
				for r := b[0][0]; r < b[0][0]+b[1][0]; r++ {
					off := (r*tw.dims[1] + b[0][1]) * int64(size)
					part = append(part, full[off:off+b[1][1]*int64(size)]...)
				}
				if err = h5write.WriteSlab(d, mem, b[0], b[1], unsafe.Pointer(&part[0])); err != nil {
					break
				}
			}
			if err != nil {
				t.Fatal(err)
			}
			h5.Close(d)
		}
		h5.Close(mem)
		h5.Close(ft)
	}
	// Group tables of 1-D columns for the scan: compressed and plain.
	const rows = 5000
	vals := make([]float64, rows)
	ints := make([]int32, rows)
	for i := range vals {
		vals[i] = float64(i%311) * 0.5
		ints[i] = int32(i * 7)
	}
	for _, g := range []string{"/tz", "/tc"} {
		var o h5write.DatasetOptions
		if g == "/tz" {
			o = h5write.DatasetOptions{Chunk: []int64{700}, Gzip: 3, Shuffle: true}
		}
		mt := h5.NewFloat(8)
		d, err := h5write.CreateDataset(fid, g+"/x", mt, []int64{rows}, &o)
		if err != nil {
			t.Fatal(err)
		}
		if err := h5write.WriteValues(d, mt, vals); err != nil {
			t.Fatal(err)
		}
		h5.Close(d)
		h5.Close(mt)
		mt = h5.NewInt(4, true)
		d, err = h5write.CreateDataset(fid, g+"/n", mt, []int64{rows}, &o)
		if err != nil {
			t.Fatal(err)
		}
		if err := h5write.WriteValues(d, mt, ints); err != nil {
			t.Fatal(err)
		}
		h5.Close(d)
		h5.Close(mt)
	}
}

// TestReadSliceDirectChunksMatchH5Dread reads the same slices of compressed
// datasets (decoded chunk by chunk, in parallel) and of their contiguous
// twins (H5Dread) and requires identical JSON.
func TestReadSliceDirectChunksMatchH5Dread(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "twins.h5")
	writeTwins(t, path)
	assertDirect(t, path, map[string]bool{"grid": true, "holes": true, "cube": true, "be": false})
	f := NewFormat(WithRoot(dir))
	defer f.Close()
	tests := []struct{ name, slice string }{
		{"grid", ""},
		{"grid", "10:290, 7:199"},
		{"grid", "::7, 3::5"},
		{"grid", "-1"},
		{"grid", "100:101, 47:49"},
		{"holes", ""},
		{"holes", "15:70:3, ::4"},
		{"holes", "60"},
		{"cube", ""},
		{"cube", "1:11:2, 5:, ::3"},
		{"cube", "..., 16"},
		{"be", "3:33, 1:39:2"},
	}
	for _, tc := range tests {
		t.Run(tc.name+"["+tc.slice+"]", func(t *testing.T) {
			alloc := memory.NewCheckedAllocator(memory.NewGoAllocator())
			defer alloc.AssertSize(t, 0)
			var out [2][]byte
			for i, where := range []string{"/z/", "/c/"} {
				s, err := f.ReadSlice(context.Background(), path, where+tc.name, tc.slice, alloc)
				if err != nil {
					t.Fatal(err)
				}
				out[i] = s.AppendNestedJSON(nil)
				s.Release()
			}
			if !bytes.Equal(out[0], out[1]) {
				t.Fatalf("compressed read differs from H5Dread:\n%.300s\n%.300s", out[0], out[1])
			}
		})
	}
}

// assertDirect checks which compressed twins qualify for direct chunk
// decoding (so the comparison covers both paths).
func assertDirect(t *testing.T, path string, want map[string]bool) {
	t.Helper()
	fid, err := h5.OpenFile(path)
	if err != nil {
		t.Fatal(err)
	}
	defer h5.Close(fid)
	for name, direct := range want {
		d, err := h5.OpenDataset(fid, "/z/"+name, 0)
		if err != nil {
			t.Fatal(err)
		}
		typ, err := h5.DatasetType(d)
		if err != nil {
			t.Fatal(err)
		}
		mt, _, err := h5.MemType(typ)
		if err != nil {
			t.Fatal(err)
		}
		cr, reason, err := h5.NewChunkReader(d, mt)
		h5.Close(mt)
		h5.Close(d)
		if err != nil || (cr != nil) != direct {
			t.Fatalf("%s: direct = %v (%s, %v), want %v", name, cr != nil, reason, err, direct)
		}
	}
}

// TestScanDirectChunksMatchH5Dread scans a group table of compressed
// columns and its uncompressed twin, with batches that do and do not line
// up with the chunks.
func TestScanDirectChunksMatchH5Dread(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "twins.h5")
	writeTwins(t, path)
	f := NewFormat()
	defer f.Close()
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	dss, err := f.Open(context.Background(), catalog.FileInfo{AbsPath: path, RelPath: "twins.h5", BaseID: "twins", Size: st.Size(), ModTime: st.ModTime()})
	if err != nil {
		t.Fatal(err)
	}
	byID := map[string]*catalog.Dataset{}
	for _, ds := range dss {
		byID[ds.ID] = ds
	}
	for _, batch := range []int{0, 333, 1400} {
		alloc := memory.NewCheckedAllocator(memory.NewGoAllocator())
		var vals [2]map[string][]float64
		for i, id := range []string{"twins/tz", "twins/tc"} {
			ds, ok := byID[id]
			if !ok {
				t.Fatalf("no table %s among %d", id, len(dss))
			}
			rr, err := ds.Source.Scan(context.Background(), catalog.ScanOptions{BatchSize: batch, Alloc: alloc})
			if err != nil {
				t.Fatal(err)
			}
			vals[i] = map[string][]float64{}
			for rr.Next() {
				rec := rr.RecordBatch()
				for c := range int(rec.NumCols()) {
					name := rec.ColumnName(c)
					switch a := rec.Column(c).(type) {
					case *array.Float64:
						vals[i][name] = append(vals[i][name], a.Float64Values()...)
					case *array.Int32:
						for _, v := range a.Int32Values() {
							vals[i][name] = append(vals[i][name], float64(v))
						}
					}
				}
			}
			if err := rr.Err(); err != nil {
				t.Fatal(err)
			}
			rr.Release()
		}
		alloc.AssertSize(t, 0)
		for _, col := range []string{"x", "n"} {
			got, want := vals[0][col], vals[1][col]
			if len(got) != 5000 || len(want) != 5000 {
				t.Fatalf("batch %d, column %s: %d vs %d values", batch, col, len(got), len(want))
			}
			for k := range got {
				if got[k] != want[k] {
					t.Fatalf("batch %d, column %s: value %d is %v, want %v", batch, col, k, got[k], want[k])
				}
			}
		}
	}
}
