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

// j1Batches generates a J1-shaped join result (x.* joined with small: id1,
// id2 int64 in 1..100, id3 int64 in 1..100k, id4, id5 dictionaries of 100
// strings, id6 a dictionary of 100k strings, v1 float64, small_id4 a
// dictionary of 100 strings, v2 float64) in batches of 64Ki rows; as the
// column cache delivers them, each string column's dictionary is shared by
// every batch and the codes are int32.
func j1Batches(tb testing.TB, rows int) (*arrow.Schema, []arrow.RecordBatch) {
	tb.Helper()
	mem := memory.NewGoAllocator()
	dt := &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int32, ValueType: arrow.BinaryTypes.String}
	var fields []arrow.Field
	for _, n := range []string{"id1", "id2", "id3"} {
		fields = append(fields, arrow.Field{Name: n, Type: arrow.PrimitiveTypes.Int64, Nullable: true})
	}
	for _, n := range []string{"id4", "id5", "id6"} {
		fields = append(fields, arrow.Field{Name: n, Type: dt, Nullable: true})
	}
	fields = append(fields, arrow.Field{Name: "v1", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
		arrow.Field{Name: "small_id4", Type: dt, Nullable: true},
		arrow.Field{Name: "v2", Type: arrow.PrimitiveTypes.Float64, Nullable: true})
	schema := arrow.NewSchema(fields, nil)
	dict := func(n int) arrow.Array {
		b := array.NewStringBuilder(mem)
		defer b.Release()
		for i := 1; i <= n; i++ {
			b.Append(fmt.Sprintf("id%d", i))
		}
		return b.NewArray()
	}
	d100, d100k := dict(100), dict(100_000)
	defer d100.Release()
	defer d100k.Release()
	rng := rand.New(rand.NewPCG(13, 1))
	var out []arrow.RecordBatch
	for lo := 0; lo < rows; lo += 64 << 10 {
		n := min(rows-lo, 64<<10)
		ints := func(k int) arrow.Array {
			v := make([]int64, n)
			for i := range v {
				v[i] = 1 + rng.Int64N(int64(k))
			}
			return array.NewInt64Data(array.NewData(arrow.PrimitiveTypes.Int64, n, []*memory.Buffer{nil, memory.NewBufferBytes(arrow.Int64Traits.CastToBytes(v))}, nil, 0, 0))
		}
		codes := func(d arrow.Array) arrow.Array {
			v := make([]int32, n)
			for i := range v {
				v[i] = rng.Int32N(int32(d.Len()))
			}
			ix := array.NewInt32Data(array.NewData(arrow.PrimitiveTypes.Int32, n, []*memory.Buffer{nil, memory.NewBufferBytes(arrow.Int32Traits.CastToBytes(v))}, nil, 0, 0))
			defer ix.Release()
			return array.NewDictionaryArray(dt, ix, d)
		}
		floats := func() arrow.Array {
			v := make([]float64, n)
			for i := range v {
				v[i] = float64(rng.IntN(10_000_000)) / 100_000 // 6 significant digits, as in x.v1
			}
			return array.NewFloat64Data(array.NewData(arrow.PrimitiveTypes.Float64, n, []*memory.Buffer{nil, memory.NewBufferBytes(arrow.Float64Traits.CastToBytes(v))}, nil, 0, 0))
		}
		cols := []arrow.Array{ints(100), ints(100), ints(100_000), codes(d100), codes(d100), codes(d100k), floats(), codes(d100), floats()}
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
