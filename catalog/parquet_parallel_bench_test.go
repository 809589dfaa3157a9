package catalog_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/quarrydb/quarry/catalog"
	"github.com/quarrydb/quarry/catalog/internal/cattest"
)

// BenchmarkParquetScanWorkers: cold scans (catalog open + read) of the
// 5M-row DuckDB-written file (QUARRY_PARQUET_BENCH, as
// BenchmarkParquetReaders) decoding one row group at a time against
// several at once.
//
//	go test ./catalog -run '^$' -bench ParquetScanWorkers -benchtime 3x -count 3
func BenchmarkParquetScanWorkers(b *testing.B) {
	src := os.Getenv("QUARRY_PARQUET_BENCH")
	if src == "" {
		src = "/tmp/peerbench/data/pq5m/sales.parquet"
	}
	if _, err := os.Stat(src); err != nil {
		b.Skipf("no benchmark file (%v); set QUARRY_PARQUET_BENCH", err)
	}
	root := b.TempDir()
	if err := os.Link(src, filepath.Join(root, "sales.parquet")); err != nil {
		b.Skip(err)
	}
	for _, cols := range [][]string{{"region"}, {"product"}, {"category", "qty", "price"}, {"discount"}} {
		for _, w := range []int{1, 2} {
			b.Run(fmt.Sprintf("%v/workers=%d", cols, w), func(b *testing.B) {
				defer catalog.SetParquetWorkers(w)()
				for b.Loop() {
					ds := cattest.Lookup(b, cattest.NewCatalog(b, root, catalog.NewParquetFormat(catalog.Limits{})), "sales")
					rr, err := ds.Source.Scan(context.Background(), catalog.ScanOptions{Columns: cols})
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
}
