package catalog_test

import (
	"testing"

	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/quarrydb/quarry/catalog"
)

// FuzzParquet checks that no file makes the Parquet format panic or read
// without bounds: opening either catalogs the file or diagnoses it, and a
// scan of a cataloged file either reads the cataloged row count in the
// cataloged schema or fails with an error, leaking nothing. The corpus
// (testdata/fuzz/FuzzParquet) holds files written by pqarrow.
func FuzzParquet(f *testing.F) {
	mem := memory.NewGoAllocator()
	rec := sampleRecord(f, mem)
	f.Add(parquetBytes(f, rec, 4))
	small := rec.NewSlice(0, 2)
	f.Add(parquetBytes(f, small, 1))
	small.Release()
	rec.Release()
	f.Fuzz(func(t *testing.T, data []byte) {
		fuzzOpenAndScan(t, "f.parquet", data, true, catalog.NewParquetFormat(catalog.Limits{MaxMetadataBytes: 1 << 20}))
	})
}
