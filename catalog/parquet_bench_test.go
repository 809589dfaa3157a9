package catalog_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/quarrydb/quarry/catalog"
	"github.com/quarrydb/quarry/catalog/internal/cattest"
)

// benchParquetRows is the size of the benchmark file: 4 columns (int64
// id, float64 value, a 100-value string key, a date), snappy, row groups
// of 128Ki rows, written by pqarrow.
const benchParquetRows = 2_000_000

func writeBenchParquet(b *testing.B, path string) {
	b.Helper()
	mem := memory.NewGoAllocator()
	sc := arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		{Name: "value", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
		{Name: "key", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "day", Type: arrow.FixedWidthTypes.Date32, Nullable: true},
	}, nil)
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	w, err := pqarrow.NewFileWriter(sc, f, parquet.NewWriterProperties(parquet.WithMaxRowGroupLength(128<<10),
		parquet.WithCompression(compress.Codecs.Snappy), parquet.WithDictionaryDefault(true), parquet.WithDictionaryFor("id", false)), pqarrow.DefaultWriterProps())
	if err != nil {
		b.Fatal(err)
	}
	keys := make([]string, 100)
	for i := range keys {
		keys[i] = fmt.Sprintf("key_%03d", i)
	}
	const chunk = 64 << 10
	for off := 0; off < benchParquetRows; off += chunk {
		rb := array.NewRecordBuilder(mem, sc)
		for i := off; i < min(off+chunk, benchParquetRows); i++ {
			rb.Field(0).(*array.Int64Builder).Append(int64(i))
			rb.Field(1).(*array.Float64Builder).Append(float64(i%1000) * 0.25)
			rb.Field(2).(*array.StringBuilder).Append(keys[(i*7)%100])
			rb.Field(3).(*array.Date32Builder).Append(arrow.Date32(18000 + i%3650))
		}
		rec := rb.NewRecordBatch()
		if err := w.WriteBuffered(rec); err != nil {
			b.Fatal(err)
		}
		rec.Release()
		rb.Release()
	}
	if err := w.Close(); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkParquet measures the Parquet format on a 2M-row file: opening
// it (footer only) and scanning all columns or one, batch by batch.
// Run: go test -run '^$' -bench Parquet -benchtime 5x ./catalog
func BenchmarkParquet(b *testing.B) {
	dir := b.TempDir()
	writeBenchParquet(b, filepath.Join(dir, "bench.parquet"))
	st, _ := os.Stat(filepath.Join(dir, "bench.parquet"))
	c, err := catalog.New(context.Background(), catalog.Options{Root: dir, Logger: cattest.Quiet,
		Formats: []catalog.Format{catalog.NewParquetFormat(catalog.Limits{})}})
	if err != nil {
		b.Fatal(err)
	}
	ds, err := c.Lookup("bench")
	if err != nil {
		b.Fatal(err)
	}
	b.Run("open", func(b *testing.B) {
		f := catalog.NewParquetFormat(catalog.Limits{})
		info := catalog.FileInfo{AbsPath: filepath.Join(dir, "bench.parquet"), RelPath: "bench.parquet", BaseID: "bench", Root: dir}
		for b.Loop() {
			if _, err := f.Open(context.Background(), info); err != nil {
				b.Fatal(err)
			}
		}
	})
	for _, tc := range []struct {
		name string
		cols []string
	}{{"scan_all", nil}, {"scan_value", []string{"value"}}, {"scan_key", []string{"key"}}, {"scan_day", []string{"day"}}, {"scan_id", []string{"id"}}} {
		b.Run(tc.name, func(b *testing.B) {
			b.SetBytes(st.Size())
			for b.Loop() {
				rr, err := ds.Source.Scan(context.Background(), catalog.ScanOptions{Columns: tc.cols})
				if err != nil {
					b.Fatal(err)
				}
				var n int64
				for rr.Next() {
					n += rr.RecordBatch().NumRows()
				}
				if rr.Err() != nil || n != benchParquetRows {
					b.Fatalf("%d rows, %v", n, rr.Err())
				}
				rr.Release()
			}
			b.ReportMetric(float64(benchParquetRows)*float64(b.N)/b.Elapsed().Seconds()/1e6, "Mrows/s")
		})
	}
}
