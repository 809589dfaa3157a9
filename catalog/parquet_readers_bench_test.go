package catalog

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/parquet-go/parquet-go"
)

// The reader choice of issue #12, measured: arrow-go's pqarrow (what the
// catalog reads with) against parquet-go, both decoding the same file into
// Arrow arrays on one goroutine (pqarrow: its record reader, 64Ki-row
// batches, string columns with dictionary pages read as dictionaries, as
// the catalog reads them; parquet-go: its pages' typed values and
// definition levels copied into Arrow builders, dictionary pages kept as
// Arrow dictionaries). The file is the peer harness's 5M-row sales data
// written by DuckDB (bench/parquet_peers.sh writes it);
// QUARRY_PARQUET_BENCH names another, and the benchmark is skipped when
// there is none:
//
//	go test ./catalog -run '^$' -bench ParquetReaders -benchtime 3x
//
// Results and the decision: docs/BENCHMARKS.md ("Parquet readers").

// parquetBenchFile is the file BenchmarkParquetReaders reads.
func parquetBenchFile(b *testing.B) string {
	p := os.Getenv("QUARRY_PARQUET_BENCH")
	if p == "" {
		p = "/tmp/peerbench/data/pq5m/sales.parquet"
	}
	if _, err := os.Stat(p); err != nil {
		b.Skipf("no benchmark file (%v); set QUARRY_PARQUET_BENCH", err)
	}
	return p
}

func BenchmarkParquetReaders(b *testing.B) {
	path := parquetBenchFile(b)
	for _, c := range []struct {
		name string
		cols []string // nil: all
	}{{"all", nil}, {"region+price", []string{"region", "price"}}} {
		b.Run("pqarrow/"+c.name, func(b *testing.B) { benchPqarrow(b, path, c.cols) })
		b.Run("parquet-go/"+c.name, func(b *testing.B) { benchParquetGo(b, path, c.cols) })
		b.Run("source-pqarrow/"+c.name, func(b *testing.B) { benchParquetSource(b, path, c.cols, false) })
		b.Run("source-parquet-go/"+c.name, func(b *testing.B) { benchParquetSource(b, path, c.cols, true) })
	}
}

// benchParquetSource opens the file as the catalog does (footer) and scans
// it through the Parquet source, with the parquet-go read path
// (parquet_go.go) on or off: the reader as queries use it.
func benchParquetSource(b *testing.B, path string, names []string, parquetGo bool) {
	old := parquetGoEnabled
	parquetGoEnabled = parquetGo
	defer func() { parquetGoEnabled = old }()
	info := FileInfo{AbsPath: path, RelPath: filepath.Base(path), BaseID: "bench", Root: filepath.Dir(path)}
	b.ReportAllocs()
	var rows int64
	for b.Loop() {
		dss, err := NewParquetFormat(Limits{}).Open(context.Background(), info)
		if err != nil {
			b.Fatal(err)
		}
		rr, err := dss[0].Source.Scan(context.Background(), ScanOptions{Columns: names})
		if err != nil {
			b.Fatal(err)
		}
		rows += drainRows(b, rr)
	}
	reportPerRow(b, rows)
}

// drainRows reads rr to its end, releases it and returns its rows.
func drainRows(b *testing.B, rr array.RecordReader) int64 {
	var rows int64
	for rr.Next() {
		rows += rr.RecordBatch().NumRows()
	}
	if err := rr.Err(); err != nil {
		b.Fatal(err)
	}
	rr.Release()
	return rows
}

func reportPerRow(b *testing.B, rows int64) {
	if rows > 0 {
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(rows), "ns/row")
	}
}

func benchPqarrow(b *testing.B, path string, names []string) {
	// The dictionary leaves, from a first open (as Open finds them).
	r0, err := file.OpenParquetFile(path, false)
	if err != nil {
		b.Fatal(err)
	}
	fr0, sc, err := parquetArrow(r0, memory.DefaultAllocator, 0, nil)
	if err != nil {
		b.Fatal(err)
	}
	dict := dictLeaves(r0.MetaData(), fr0, sc)
	var fields []int
	for i, f := range sc.Fields() {
		if names == nil || slices.Contains(names, f.Name) {
			fields = append(fields, i)
		}
	}
	r0.Close()
	b.ReportAllocs()
	var rows int64
	for b.Loop() {
		r, err := file.OpenParquetFile(path, false)
		if err != nil {
			b.Fatal(err)
		}
		props := pqarrow.ArrowReadProperties{BatchSize: DefaultBatchSize}
		for _, leaf := range dict {
			if leaf >= 0 {
				props.SetReadDict(leaf, true)
			}
		}
		fr, err := pqarrow.NewFileReader(r, props, memory.DefaultAllocator)
		if err != nil {
			b.Fatal(err)
		}
		leaves, err := fr.Manifest.GetFieldIndices(fields)
		if err != nil {
			b.Fatal(err)
		}
		rr, err := fr.GetRecordReader(context.Background(), leaves, nil)
		if err != nil {
			b.Fatal(err)
		}
		rows += drainRows(b, rr)
		r.Close()
	}
	reportPerRow(b, rows)
}

func benchParquetGo(b *testing.B, path string, names []string) {
	mem := memory.DefaultAllocator
	b.ReportAllocs()
	var rows int64
	for b.Loop() {
		f, err := os.Open(path)
		if err != nil {
			b.Fatal(err)
		}
		st, err := f.Stat()
		if err != nil {
			b.Fatal(err)
		}
		pf, err := parquet.OpenFile(f, st.Size(), parquet.SkipPageIndex(true), parquet.SkipBloomFilters(true))
		if err != nil {
			b.Fatal(err)
		}
		var cols []int
		for _, leaf := range pf.Schema().Columns() {
			if lc, ok := pf.Schema().Lookup(leaf...); ok && (names == nil || slices.Contains(names, leaf[0])) {
				cols = append(cols, lc.ColumnIndex)
			}
		}
		for _, rg := range pf.RowGroups() {
			chunks := rg.ColumnChunks()
			for _, c := range cols {
				n, err := readChunkToArrow(mem, chunks[c])
				if err != nil {
					b.Fatal(err)
				}
				if n != rg.NumRows() {
					b.Fatalf("column %d: %d values, the row group has %d rows", c, n, rg.NumRows())
				}
			}
			rows += rg.NumRows()
		}
		f.Close()
	}
	reportPerRow(b, rows)
}

// readChunkToArrow decodes every page of cc into an Arrow array (released
// at once): what a parquet-go based reader would hand the engine. It
// returns how many values it decoded.
func readChunkToArrow(mem memory.Allocator, cc parquet.ColumnChunk) (n int64, err error) {
	pages := cc.Pages()
	defer pages.Close()
	var dict parquet.Dictionary
	var dictArr arrow.Array
	defer func() {
		if dictArr != nil {
			dictArr.Release()
		}
	}()
	for {
		p, err := pages.ReadPage()
		if errors.Is(err, io.EOF) {
			return n, nil
		}
		if err != nil {
			return n, err
		}
		if d := p.Dictionary(); d != nil && d != dict && p.Type().Kind() == parquet.ByteArray {
			if dictArr != nil {
				dictArr.Release()
			}
			dict = d
			dv := d.Page().Data()
			v, off := dv.ByteArray()
			dictArr = byteArrayToArrow(mem, v, off, nil)
		}
		a := pageToArrow(mem, p, dictArr)
		n += int64(a.Len())
		a.Release()
		parquet.Release(p)
	}
}

// pageToArrow builds the Arrow array of a flat page (max definition
// level 0 or 1); dictArr is the chunk's dictionary for indexed pages.
func pageToArrow(mem memory.Allocator, p parquet.Page, dictArr arrow.Array) arrow.Array {
	def, data := p.DefinitionLevels(), p.Data()
	if d := p.Dictionary(); d != nil && p.Type().Kind() != parquet.ByteArray {
		dv := d.Page().Data()
		idx := data.Int32()
		switch d.Type().Kind() { // decoded, as pqarrow reads them
		case parquet.Int32:
			return fixedToArrow(array.NewInt32Builder(mem), gather(dv.Int32(), idx), def)
		case parquet.Int64:
			return fixedToArrow(array.NewInt64Builder(mem), gather(dv.Int64(), idx), def)
		case parquet.Float:
			return fixedToArrow(array.NewFloat32Builder(mem), gather(dv.Float(), idx), def)
		case parquet.Double:
			return fixedToArrow(array.NewFloat64Builder(mem), gather(dv.Double(), idx), def)
		}
		panic("unsupported dictionary kind " + d.Type().Kind().String())
	}
	if p.Dictionary() != nil {
		idx := fixedToArrow(array.NewInt32Builder(mem), data.Int32(), def)
		defer idx.Release()
		return array.NewDictionaryArray(&arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int32, ValueType: arrow.BinaryTypes.String}, idx, dictArr)
	}
	switch p.Type().Kind() {
	case parquet.Int32:
		return fixedToArrow(array.NewInt32Builder(mem), data.Int32(), def)
	case parquet.Int64:
		return fixedToArrow(array.NewInt64Builder(mem), data.Int64(), def)
	case parquet.Float:
		return fixedToArrow(array.NewFloat32Builder(mem), data.Float(), def)
	case parquet.Double:
		return fixedToArrow(array.NewFloat64Builder(mem), data.Double(), def)
	case parquet.ByteArray:
		v, off := data.ByteArray()
		return byteArrayToArrow(mem, v, off, def)
	}
	panic("unsupported page kind " + p.Type().Kind().String())
}

// gather is vals[idx[i]] for every i.
func gather[T any](vals []T, idx []int32) []T {
	out := make([]T, len(idx))
	for i, k := range idx {
		out[i] = vals[k]
	}
	return out
}

type fixedBuilder[T any] interface {
	array.Builder
	AppendValues([]T, []bool)
	UnsafeAppend(T)
}

// fixedToArrow copies vals (the non-null values) placed by def (nil or
// all 1: no nulls) into an array.
func fixedToArrow[T any, B fixedBuilder[T]](b B, vals []T, def []byte) arrow.Array {
	defer b.Release()
	if len(def) == 0 || len(def) == len(vals) {
		b.AppendValues(vals, nil)
		return b.NewArray()
	}
	b.Reserve(len(def))
	k := 0
	for _, d := range def {
		if d == 0 {
			b.UnsafeAppendBoolToBitmap(false)
			continue
		}
		b.UnsafeAppend(vals[k])
		k++
	}
	return b.NewArray()
}

// byteArrayToArrow builds a string array from parquet-go's byte array
// values (off has one more entry than there are values).
func byteArrayToArrow(mem memory.Allocator, v []byte, off []uint32, def []byte) arrow.Array {
	b := array.NewStringBuilder(mem)
	defer b.Release()
	n := len(off) - 1
	rows := n
	if len(def) > 0 {
		rows = len(def)
	}
	b.Reserve(rows)
	b.ReserveData(len(v))
	k := 0
	for i := range rows {
		if len(def) > 0 && def[i] == 0 {
			b.AppendNull()
			continue
		}
		b.BinaryBuilder.Append(v[off[k]:off[k+1]])
		k++
	}
	return b.NewArray()
}
