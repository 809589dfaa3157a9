//go:build cgo && !nohdf5

package hdf5_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/quarrydb/quarry/catalog"
	"github.com/quarrydb/quarry/catalog/hdf5"
)

// BenchmarkHarnessRecordScan scans the harness's /events compound table
// (shuffle + gzip chunks) with several projections, from the file named by
// QUARRY_BENCH_H5 (the peer harness's sales.h5).
func BenchmarkHarnessRecordScan(b *testing.B) {
	path := os.Getenv("QUARRY_BENCH_H5")
	if path == "" {
		b.Skip("set QUARRY_BENCH_H5 to the peer harness's sales.h5")
	}
	st, err := os.Stat(path)
	if err != nil {
		b.Fatal(err)
	}
	f := hdf5.NewFormat()
	defer f.Close()
	dss, err := f.Open(context.Background(), catalog.FileInfo{AbsPath: path, RelPath: filepath.Base(path), BaseID: "sales", Size: st.Size(), ModTime: st.ModTime()})
	if err != nil {
		b.Fatal(err)
	}
	var events *catalog.Dataset
	for _, ds := range dss {
		if ds.ID == "sales/events" {
			events = ds
		}
	}
	if events == nil {
		b.Fatal("no sales/events table")
	}
	for _, p := range []struct {
		name string
		cols []string
	}{{"all", nil}, {"value", []string{"value"}}, {"kind+value", []string{"kind", "value"}}} {
		b.Run(p.name, func(b *testing.B) {
			for b.Loop() {
				rr, err := events.Source.Scan(context.Background(), catalog.ScanOptions{Columns: p.cols, Alloc: memory.DefaultAllocator})
				if err != nil {
					b.Fatal(err)
				}
				for rr.Next() {
				}
				if err := rr.Err(); err != nil {
					b.Fatal(err)
				}
				rr.Release()
			}
		})
	}
}

// BenchmarkHarnessRecordSlice reads the harness's H4, H7 and H8 slices.
func BenchmarkHarnessRecordSlice(b *testing.B) {
	path := os.Getenv("QUARRY_BENCH_H5")
	if path == "" {
		b.Skip("set QUARRY_BENCH_H5 to the peer harness's sales.h5")
	}
	f := hdf5.NewFormat()
	defer f.Close()
	for _, q := range []struct{ name, path, slice string }{
		{"H4", "/sales/product", "..."},
		{"H7", "/events", "..."},
		{"H8", "/events", "250000:260000"},
	} {
		b.Run(q.name, func(b *testing.B) {
			for b.Loop() {
				s, err := f.ReadSlice(context.Background(), path, q.path, q.slice, memory.DefaultAllocator)
				if err != nil {
					b.Fatal(err)
				}
				s.Release()
			}
		})
	}
}
