//go:build cgo && !nohdf5

package hdf5

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/quarrydb/quarry/catalog"
	"github.com/quarrydb/quarry/internal/h5"
	"github.com/quarrydb/quarry/internal/h5/h5write"
)

const (
	benchRows = 5_000_000
	benchSide = 4096
)

var (
	benchOnce sync.Once
	benchDir  string
	benchErr  error
)

// benchFixtures writes, once per test binary, a 5M-row float64 column
// (chunks of 64Ki rows) and a 4096x4096 float64 image (256x256 chunks,
// gzip level 1).
func benchFixtures(b *testing.B) (column, image string) {
	if testing.Short() {
		b.Skip("benchmark fixtures are large; skipped with -short")
	}
	benchOnce.Do(func() {
		benchDir, benchErr = os.MkdirTemp("", "quarry-hdf5-bench-")
		if benchErr == nil {
			benchErr = writeBenchFiles(benchDir)
		}
	})
	if benchErr != nil {
		b.Fatal(benchErr)
	}
	return filepath.Join(benchDir, "column.h5"), filepath.Join(benchDir, "image.h5")
}

func writeBenchFiles(dir string) error {
	f64 := h5.NewFloat(8)
	defer h5.Close(f64)
	f, err := h5write.CreateFile(filepath.Join(dir, "column.h5"))
	if err != nil {
		return err
	}
	d, err := h5write.CreateDataset(f, "/v", f64, []int64{benchRows}, &h5write.DatasetOptions{Chunk: []int64{1 << 16}})
	if err != nil {
		return err
	}
	block := make([]float64, 1<<20)
	for start := 0; start < benchRows; start += len(block) {
		n := min(len(block), benchRows-start)
		for i := 0; i < n; i++ {
			block[i] = float64(start+i) * 0.001
		}
		if err := h5write.WriteSlab(d, f64, []int64{int64(start)}, []int64{int64(n)}, ptr(block)); err != nil {
			return err
		}
	}
	h5.Close(d)
	h5.Close(f)

	f, err = h5write.CreateFile(filepath.Join(dir, "image.h5"))
	if err != nil {
		return err
	}
	d, err = h5write.CreateDataset(f, "/img", f64, []int64{benchSide, benchSide}, &h5write.DatasetOptions{Chunk: []int64{256, 256}, Gzip: 1})
	if err != nil {
		return err
	}
	rows := make([]float64, 256*benchSide)
	for r0 := 0; r0 < benchSide; r0 += 256 {
		for i := 0; i < 256; i++ {
			for j := 0; j < benchSide; j++ {
				rows[i*benchSide+j] = math.Round(1000*(math.Sin(float64(r0+i)/50)+math.Cos(float64(j)/70))) / 1000
			}
		}
		if err := h5write.WriteSlab(d, f64, []int64{int64(r0), 0}, []int64{256, benchSide}, ptr(rows)); err != nil {
			return err
		}
	}
	h5.Close(d)
	return h5.Close(f)
}

// BenchmarkReadSliceColumnRange reads rows 1,000,000-1,010,000 of a
// 5M-row float64 column.
func BenchmarkReadSliceColumnRange(b *testing.B) {
	col, _ := benchFixtures(b)
	f := NewFormat()
	defer f.Close()
	alloc := memory.NewGoAllocator()
	b.SetBytes(10_000 * 8)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		s, err := f.ReadSlice(context.Background(), col, "/v", "1000000:1010000", alloc)
		if err != nil {
			b.Fatal(err)
		}
		if s.Values.Len() != 10_000 {
			b.Fatal("short read")
		}
		s.Release()
	}
}

// BenchmarkReadSliceImageBlock reads a 512x512 block of a chunked, gzip
// compressed 4096x4096 float64 array.
func BenchmarkReadSliceImageBlock(b *testing.B) {
	_, img := benchFixtures(b)
	f := NewFormat()
	defer f.Close()
	alloc := memory.NewGoAllocator()
	b.SetBytes(512 * 512 * 8)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		s, err := f.ReadSlice(context.Background(), img, "/img", "1024:1536, 2048:2560", alloc)
		if err != nil {
			b.Fatal(err)
		}
		if s.Values.Len() != 512*512 {
			b.Fatal("short read")
		}
		s.Release()
	}
}

// BenchmarkScanColumn scans the whole 5M-row column in default batches.
func BenchmarkScanColumn(b *testing.B) {
	col, _ := benchFixtures(b)
	f := NewFormat()
	defer f.Close()
	st, _ := os.Stat(col)
	dss, err := f.Open(context.Background(), catalog.FileInfo{AbsPath: col, RelPath: "column.h5", BaseID: "column", Size: st.Size(), ModTime: st.ModTime()})
	if err != nil || len(dss) != 1 {
		b.Fatal(err)
	}
	b.SetBytes(benchRows * 8)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		rr, err := dss[0].Source.Scan(context.Background(), catalog.ScanOptions{})
		if err != nil {
			b.Fatal(err)
		}
		n := int64(0)
		for rr.Next() {
			n += rr.RecordBatch().NumRows()
		}
		rr.Release()
		if n != benchRows {
			b.Fatalf("scanned %d rows", n)
		}
	}
}
