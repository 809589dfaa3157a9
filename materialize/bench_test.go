package materialize

import (
	"context"
	"fmt"
	"github.com/quarrydb/quarry/internal/testutil/cpuclock"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/quarrydb/quarry/handles"
	"github.com/quarrydb/quarry/internal/artifacts"
)

// q6Schema is the peer benchmark's Q6 projection: id, region, price.
var q6Schema = arrow.NewSchema([]arrow.Field{
	{Name: "id", Type: arrow.PrimitiveTypes.Int64},
	{Name: "region", Type: arrow.BinaryTypes.String},
	{Name: "price", Type: arrow.PrimitiveTypes.Float64},
}, nil)

var q6Regions = []string{"north", "northeast", "northwest", "south", "southeast", "southwest", "east", "west"}

// q6Batches generates rows rows of (id, region, price) in batches of 64Ki
// rows, like a scan would deliver them.
func q6Batches(tb testing.TB, rows int) []arrow.RecordBatch {
	tb.Helper()
	mem := memory.NewGoAllocator()
	b := array.NewRecordBuilder(mem, q6Schema)
	defer b.Release()
	var out []arrow.RecordBatch
	for lo := 0; lo < rows; lo += 64 << 10 {
		hi := min(rows, lo+64<<10)
		ids := b.Field(0).(*array.Int64Builder)
		reg := b.Field(1).(*array.StringBuilder)
		price := b.Field(2).(*array.Float64Builder)
		ids.Reserve(hi - lo)
		price.Reserve(hi - lo)
		for i := lo; i < hi; i++ {
			ids.UnsafeAppend(int64(i))
			reg.Append(q6Regions[(i*7)%len(q6Regions)])
			price.UnsafeAppend(float64((i*7919)%100_000) / 100)
		}
		out = append(out, b.NewRecordBatch())
	}
	return out
}

// q6DictSchema is Q6's projection as the engine delivers it from the
// column cache: region is dictionary-encoded.
var q6DictSchema = arrow.NewSchema([]arrow.Field{
	{Name: "id", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
	{Name: "region", Type: &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int16, ValueType: arrow.BinaryTypes.String}, Nullable: true},
	{Name: "price", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
}, nil)

// q6DictBatches is q6Batches with region as a dictionary<int16, utf8>
// column, one dictionary per batch (the regions in order of appearance).
func q6DictBatches(tb testing.TB, rows int) []arrow.RecordBatch {
	tb.Helper()
	mem := memory.NewGoAllocator()
	var out []arrow.RecordBatch
	for _, plain := range q6Batches(tb, rows) {
		bld := array.NewDictionaryBuilder(mem, q6DictSchema.Field(1).Type.(*arrow.DictionaryType)).(*array.BinaryDictionaryBuilder)
		if err := bld.AppendArray(plain.Column(1)); err != nil {
			tb.Fatal(err)
		}
		region := bld.NewArray()
		bld.Release()
		out = append(out, array.NewRecordBatch(q6DictSchema, []arrow.Array{plain.Column(0), region, plain.Column(2)}, plain.NumRows()))
		region.Release()
		plain.Release()
	}
	return out
}

// BenchmarkParquetWrite5M writes the peer benchmark's Q6 result (5M rows of
// id int64, region, price float64, already in memory) to a Parquet file on
// disk with WriteParquetWith (statistics, 128Ki-row row groups), region as
// a plain string column and as the engine's dictionary column, with each
// codec.
func BenchmarkParquetWrite5M(b *testing.B) {
	const rows = 5_000_000
	for _, region := range []struct {
		name    string
		schema  *arrow.Schema
		batches func(testing.TB, int) []arrow.RecordBatch
	}{{"string", q6Schema, q6Batches}, {"dict", q6DictSchema, q6DictBatches}} {
		batches := region.batches(b, rows)
		for _, codec := range ParquetCodecs {
			b.Run(fmt.Sprintf("region=%s/codec=%s", region.name, codec), func(b *testing.B) {
				path := filepath.Join(b.TempDir(), "q6.parquet")
				var size int64
				cpu0 := cpuclock.Process()
				for b.Loop() {
					f, err := os.Create(path)
					if err != nil {
						b.Fatal(err)
					}
					if err := WriteParquetWith(context.Background(), f, region.schema, batches, ParquetOptions{Codec: codec}); err != nil {
						b.Fatal(err)
					}
					if err := f.Close(); err != nil {
						b.Fatal(err)
					}
					fi, _ := os.Stat(path)
					size = fi.Size()
				}
				b.ReportMetric(float64(rows)*float64(b.N)/b.Elapsed().Seconds()/1e6, "Mrows/s")
				b.ReportMetric(float64(size)/1e6, "file-MB")
				b.ReportMetric(float64(cpuclock.Process()-cpu0)/1e6/float64(b.N), "cpu-ms/op")
			})
		}
		for _, r := range batches {
			r.Release()
		}
	}
}

var spilled10M struct {
	once  sync.Once
	m     *Materializer
	t     *Table
	store *artifacts.Store
	err   error
}

// spilledTable collects a 10M-row (id, region, price) result through a
// Materializer that spills above 1M rows (the default), once per process.
func spilledTable(b *testing.B) (*Materializer, *Table) {
	s := &spilled10M
	s.once.Do(func() {
		dir, err := os.MkdirTemp("", "quarry-bench-spill-")
		if err != nil {
			s.err = err
			return
		}
		if s.store, s.err = artifacts.Open(artifacts.Options{Dir: dir, Quota: 8 << 30}); s.err != nil {
			return
		}
		reg := handles.New[*Table](handles.Options{})
		s.m = New(Config{Hard: Caps{PageRows: 5000, MaxBytes: 1 << 20, MaxCells: 1 << 20}, Artifacts: s.store, Handles: reg})
		batches := q6Batches(b, 10_000_000)
		rr, err := array.NewRecordReader(q6Schema, batches)
		if err != nil {
			s.err = err
			return
		}
		for _, r := range batches {
			r.Release()
		}
		s.t, s.err = s.m.Collect(context.Background(), rr, "")
		rr.Release()
		// The table reads through its open file: the directory can go now
		// (nothing is left behind in /tmp after the benchmark).
		_ = s.store.Close()
		_ = os.RemoveAll(dir)
	})
	if s.err != nil {
		b.Fatal(s.err)
	}
	if !s.t.Spilled() {
		b.Fatal("not spilled")
	}
	return s.m, s.t
}

// BenchmarkSpilledPage serves page k (5,000 rows, as JSON) of a spilled
// 10M-row result for several k: reading the rows back from the spill file
// (row group lookup + page-index seek) and encoding them. The time must not
// grow with k.
func BenchmarkSpilledPage(b *testing.B) {
	m, t := spilledTable(b)
	for _, k := range []int64{0, 1, 100, 1000, 1999} {
		b.Run(fmt.Sprintf("k=%d", k), func(b *testing.B) {
			for b.Loop() {
				pg, err := m.page(context.Background(), t, k*5000, 5000, 1<<20, 1<<20, DefaultMaxCellChars)
				if err != nil {
					b.Fatal(err)
				}
				if pg.rows != 5000 {
					b.Fatalf("page %d: %d rows", k, pg.rows)
				}
			}
		})
	}
	b.Run("read-only/k=1999", func(b *testing.B) {
		for b.Loop() {
			v, err := t.Slice(context.Background(), 1999*5000, 5000)
			if err != nil {
				b.Fatal(err)
			}
			v.Release()
		}
	})
}

// j1Rows is the row count of the H2O join benchmark's J1 results (Q1 at
// N=10M keeps 9.09M rows).
const j1Rows = 9_000_000

// j1Batches generates a J1-shaped join result as the engine delivers it
// from the CSV column cache (x joined with small; see bench/h2o/join): id1
// in 1..10, id2 in 1..10k, id3 in 1..10M (int64); id4 = "id"+id1 and id5 =
// "id"+id2 dictionary<int16, utf8> with one dictionary per batch (the
// cache's per-chunk dictionaries, values in first-seen order); id6 =
// "id"+id3 a plain utf8 column (too many distinct values for a
// dictionary); v1 float64 with 6 decimals; small_id4 a dictionary<int32,
// utf8> of 10 values shared by every batch; v2 one of 10 float64 values.
// Batches of 64Ki rows.
func j1Batches(tb testing.TB, rows int) (*arrow.Schema, []arrow.RecordBatch) {
	tb.Helper()
	mem := memory.NewGoAllocator()
	d16 := &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int16, ValueType: arrow.BinaryTypes.String}
	d32 := &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int32, ValueType: arrow.BinaryTypes.String}
	i64, f64 := arrow.PrimitiveTypes.Int64, arrow.PrimitiveTypes.Float64
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "id1", Type: i64, Nullable: true}, {Name: "id2", Type: i64, Nullable: true}, {Name: "id3", Type: i64, Nullable: true},
		{Name: "id4", Type: d16, Nullable: true}, {Name: "id5", Type: d16, Nullable: true}, {Name: "id6", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "v1", Type: f64, Nullable: true}, {Name: "small_id4", Type: d32, Nullable: true}, {Name: "v2", Type: f64, Nullable: true},
	}, nil)
	small := array.NewStringBuilder(mem)
	for i := 1; i <= 10; i++ {
		small.Append(fmt.Sprintf("id%d", i))
	}
	smallDict := small.NewArray()
	small.Release()
	defer smallDict.Release()
	rng := rand.New(rand.NewPCG(13, 1))
	var out []arrow.RecordBatch
	for lo := 0; lo < rows; lo += 64 << 10 {
		n := min(rows-lo, 64<<10)
		ids := [3][]int64{make([]int64, n), make([]int64, n), make([]int64, n)}
		for i := range n {
			ids[0][i], ids[1][i], ids[2][i] = 1+rng.Int64N(10), 1+rng.Int64N(10_000), 1+rng.Int64N(10_000_000)
		}
		cols := make([]arrow.Array, 0, 9)
		for _, v := range ids {
			cols = append(cols, array.NewInt64Data(array.NewData(i64, n, []*memory.Buffer{nil, memory.NewBufferBytes(arrow.Int64Traits.CastToBytes(v))}, nil, 0, 0)))
		}
		for _, v := range ids[:2] {
			bld := array.NewDictionaryBuilder(mem, d16).(*array.BinaryDictionaryBuilder)
			for _, x := range v {
				if err := bld.AppendString(fmt.Sprintf("id%d", x)); err != nil {
					tb.Fatal(err)
				}
			}
			cols = append(cols, bld.NewArray())
			bld.Release()
		}
		sb := array.NewStringBuilder(mem)
		for _, x := range ids[2] {
			sb.Append(fmt.Sprintf("id%d", x))
		}
		cols = append(cols, sb.NewArray())
		sb.Release()
		floats := func(f func() float64) arrow.Array {
			v := make([]float64, n)
			for i := range v {
				v[i] = f()
			}
			return array.NewFloat64Data(array.NewData(f64, n, []*memory.Buffer{nil, memory.NewBufferBytes(arrow.Float64Traits.CastToBytes(v))}, nil, 0, 0))
		}
		cols = append(cols, floats(func() float64 { return float64(rng.IntN(100_000_000)) / 1_000_000 }))
		codes := make([]int32, n)
		for i, x := range ids[0] {
			codes[i] = int32(x - 1)
		}
		ix := array.NewInt32Data(array.NewData(arrow.PrimitiveTypes.Int32, n, []*memory.Buffer{nil, memory.NewBufferBytes(arrow.Int32Traits.CastToBytes(codes))}, nil, 0, 0))
		cols = append(cols, array.NewDictionaryArray(d32, ix, smallDict))
		ix.Release()
		k := 0
		cols = append(cols, floats(func() float64 { k++; return float64(ids[0][k-1]) * 7.123457 }))
		out = append(out, array.NewRecordBatch(schema, cols, int64(n)))
		for _, c := range cols {
			c.Release()
		}
	}
	return schema, out
}

// BenchmarkParquetWriteJ1 writes a J1-shaped join result (9M rows, 9
// columns, see j1Batches) to a Parquet file on disk, with the flat path
// (the default for these types) and parquet-go's row path, with each codec.
func BenchmarkParquetWriteJ1(b *testing.B) {
	schema, batches := j1Batches(b, j1Rows)
	defer releaseBatches(batches)
	for _, path := range []string{"flat", "row"} {
		for _, codec := range ParquetCodecs {
			b.Run(fmt.Sprintf("path=%s/codec=%s", path, codec), func(b *testing.B) {
				c, err := codec.codec()
				if err != nil {
					b.Fatal(err)
				}
				file := filepath.Join(b.TempDir(), "j1.parquet")
				var size int64
				cpu0 := cpuclock.Process()
				for b.Loop() {
					f, err := os.Create(file)
					if err != nil {
						b.Fatal(err)
					}
					pw, err := newParquetWriterPath(f, schema, c, path == "row")
					if err != nil {
						b.Fatal(err)
					}
					for _, r := range batches {
						if err := pw.write(context.Background(), r); err != nil {
							b.Fatal(err)
						}
					}
					if err := pw.close(); err != nil {
						b.Fatal(err)
					}
					if err := f.Close(); err != nil {
						b.Fatal(err)
					}
					fi, _ := os.Stat(file)
					size = fi.Size()
				}
				b.ReportMetric(float64(size)/1e6, "file-MB")
				b.ReportMetric(float64(cpuclock.Process()-cpu0)/1e6/float64(b.N), "cpu-ms/op")
			})
		}
	}
}
