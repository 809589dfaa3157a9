//go:build cgo && !nohdf5

package hdf5_test

import (
	"context"
	"os"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/quarrydb/quarry/catalog/hdf5"
)

// harnessSlices are the peer harness's slice reads (../shared/bench, H1 and
// H2), run on its sales.h5 so Quarry and h5py read the same bytes.
var harnessSlices = []struct{ name, path, slice string }{
	{"H1", "/sales/price", "1000000:1010000"},
	{"H2", "/grid", "1000:1512, 2000:2512"},
}

// BenchmarkHarnessSlice reads H1 and H2 from the file named by
// QUARRY_BENCH_H5 (the harness's sales.h5; make bench sets it). Open is
// outside the loop, as h5py's warm mode keeps the file open.
func BenchmarkHarnessSlice(b *testing.B) {
	path := os.Getenv("QUARRY_BENCH_H5")
	if path == "" {
		b.Skip("set QUARRY_BENCH_H5 to the peer harness's sales.h5")
	}
	f := hdf5.NewFormat()
	defer f.Close()
	for _, q := range harnessSlices {
		b.Run(q.name, func(b *testing.B) {
			for b.Loop() {
				s, err := f.ReadSlice(context.Background(), path, q.path, q.slice, memory.DefaultAllocator)
				if err != nil {
					b.Fatal(err)
				}
				b.SetBytes(int64(s.Values.Len()) * 8)
				s.Release()
			}
		})
	}
}
