package catalog_test

import (
	"math/rand/v2"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/quarrydb/quarry/catalog"
	"github.com/quarrydb/quarry/catalog/internal/cattest"
)

// FuzzParquetGo feeds arbitrary files to the parquet-go read path
// (parquet_go.go: the page-header checks of a column chunk read into
// memory, parquet-go's page decoding and the copy into Arrow buffers):
// a cataloged file's scan, column by column and whole, either fails with
// an error or reads the cataloged row count, leaking nothing (pqarrow
// excepted, see scanText), and when
// pqarrow also reads it, both read the same values; a count the file
// answers itself (parquet_count.go) equals the engine's over a normal scan
// where both succeed. The corpus
// (testdata/fuzz/FuzzParquetGo) holds small files written by DuckDB
// (v1 and v2 pages) and from the parquet-testing corpus; pqarrow's files
// are added here.
func FuzzParquetGo(f *testing.F) {
	mem := memory.NewGoAllocator()
	rec := widthsRecord(f, mem, 40)
	f.Add(parquetWith(f, rec, 16))
	rec.Release()
	rec = randomParquetRecord(f, mem, rand.New(rand.NewPCG(3, 4)), 30)
	f.Add(parquetBytes(f, rec, 7))
	rec.Release()
	f.Fuzz(func(t *testing.T, data []byte) {
		root := t.TempDir()
		cattest.WriteRaw(t, root, "f.parquet", string(data))
		c := cattest.NewCatalog(t, root, catalog.NewParquetFormat(catalog.Limits{MaxMetadataBytes: 1 << 20}))
		if len(c.Datasets()) == 0 {
			return
		}
		ds := c.Datasets()[0]
		opts := []catalog.ScanOptions{{BatchSize: 5}}
		for _, name := range cattest.FieldNames(ds.Schema) {
			opts = append(opts, catalog.ScanOptions{Columns: []string{name}})
		}
		for _, o := range opts {
			got := scanText(t, ds, o, true, true)
			if got.err != nil {
				continue
			}
			for i, col := range got.cells {
				if int64(len(col)) != ds.RowCount {
					t.Fatalf("columns %v: column %d has %d rows, cataloged %d", o.Columns, i, len(col), ds.RowCount)
				}
			}
			if want := scanText(t, ds, o, false, true); want.err == nil {
				diffScans(t, "fuzzed file", got, want)
			}
		}
		fuzzCounts(t, ds, data)
	})
}
