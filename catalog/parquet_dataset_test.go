package catalog_test

import (
	"path"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/quarrydb/quarry/catalog"
	"github.com/quarrydb/quarry/catalog/internal/cattest"
)

// parquetDataset writes rec as the Parquet file rel (row groups of
// rowGroup rows: parquetBytes) under a new test root and opens the
// dataset it is (its id: rel without the extension); the root comes back
// too.
func parquetDataset(t testing.TB, rec arrow.RecordBatch, rowGroup int64, rel string) (*catalog.Dataset, string) {
	t.Helper()
	root := t.TempDir()
	cattest.WriteRaw(t, root, rel, string(parquetBytes(t, rec, rowGroup)))
	c := cattest.NewCatalog(t, root, catalog.NewParquetFormat(catalog.Limits{}))
	return cattest.Lookup(t, c, strings.TrimSuffix(rel, path.Ext(rel))), root
}

// sampleParquet is sampleRecord written as the Parquet file rel (row
// groups of rowGroup rows) and opened as a dataset, with the checked
// allocator the record was built on, left to the test's own scans: it
// must hold nothing when the test ends.
func sampleParquet(t *testing.T, rowGroup int64, rel string) (*catalog.Dataset, *memory.CheckedAllocator) {
	t.Helper()
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	t.Cleanup(func() { mem.AssertSize(t, 0) })
	rec := sampleRecord(t, mem)
	defer rec.Release()
	ds, _ := parquetDataset(t, rec, rowGroup, rel)
	return ds, mem
}
