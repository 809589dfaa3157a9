package flightsql_test

import (
	"context"
	"fmt"
	"github.com/quarrydb/quarry/internal/testutil/cpuclock"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
)

// benchRows is the size of the streaming benchmark's table.
const benchRows = 5_000_000

var (
	benchOnce sync.Once
	benchDir  string
	benchErr  error
)

// benchParquet writes (once per process) a data root holding big.parquet:
// benchRows rows of id int64, value float64, category string (16 values).
func benchParquet(b *testing.B) string {
	benchOnce.Do(func() {
		benchDir, benchErr = os.MkdirTemp("", "quarry-flightsql-bench-")
		if benchErr != nil {
			return
		}
		benchErr = writeBenchParquet(filepath.Join(benchDir, "big.parquet"))
	})
	if benchErr != nil {
		b.Fatal(benchErr)
	}
	return benchDir
}

func writeBenchParquet(path string) error {
	sc := arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: arrow.PrimitiveTypes.Int64},
		{Name: "value", Type: arrow.PrimitiveTypes.Float64},
		{Name: "category", Type: arrow.BinaryTypes.String},
	}, nil)
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	defer f.Close()
	w, err := pqarrow.NewFileWriter(sc, f, parquet.NewWriterProperties(parquet.WithMaxRowGroupLength(1<<20)), pqarrow.DefaultWriterProps())
	if err != nil {
		return err
	}
	bld := array.NewRecordBuilder(memory.DefaultAllocator, sc)
	defer bld.Release()
	const batch = 1 << 16
	for start := 0; start < benchRows; start += batch {
		n := min(batch, benchRows-start)
		for i := start; i < start+n; i++ {
			bld.Field(0).(*array.Int64Builder).Append(int64(i))
			bld.Field(1).(*array.Float64Builder).Append(float64(i%1000) / 7)
			bld.Field(2).(*array.StringBuilder).Append(fmt.Sprintf("category-%02d", i%16))
		}
		rec := bld.NewRecordBatch()
		err := w.Write(rec)
		rec.Release()
		if err != nil {
			return err
		}
	}
	return w.Close()
}

// readParquetLocal reads every row of path with arrow-go's Parquet reader.
func readParquetLocal(path string) (int64, error) {
	rdr, err := file.OpenParquetFile(path, true)
	if err != nil {
		return 0, err
	}
	defer rdr.Close()
	fr, err := pqarrow.NewFileReader(rdr, pqarrow.ArrowReadProperties{Parallel: false, BatchSize: 1 << 16}, memory.DefaultAllocator)
	if err != nil {
		return 0, err
	}
	rr, err := fr.GetRecordReader(context.Background(), nil, nil)
	if err != nil {
		return 0, err
	}
	defer rr.Release()
	var n int64
	for rr.Next() {
		n += rr.RecordBatch().NumRows()
	}
	return n, rr.Err()
}

// BenchmarkStream5M: the 5M-row table streamed to arrow-go's Flight SQL
// client (SELECT * through the facade over loopback) against arrow-go
// reading the same Parquet file locally. Run both in one invocation and
// compare rows/s (docs/BENCHMARKS.md).
func BenchmarkStream5M(b *testing.B) {
	root := benchParquet(b)
	b.Run("local_parquet", func(b *testing.B) {
		cpu := cpuclock.Process()
		for b.Loop() {
			n, err := readParquetLocal(filepath.Join(root, "big.parquet"))
			if err != nil || n != benchRows {
				b.Fatalf("%d rows, %v", n, err)
			}
		}
		reportRate(b, cpu)
	})
	b.Run("flightsql", func(b *testing.B) {
		f := startFacade(b, root, nil)
		c := f.client(b, "")
		ctx := context.Background()
		cpu := cpuclock.Process()
		for b.Loop() {
			info := mustExecute(b, c, `SELECT * FROM big`)
			rdr, err := c.DoGet(ctx, info.Endpoint[0].Ticket)
			if err != nil {
				b.Fatal(err)
			}
			var n int64
			for rdr.Next() {
				n += rdr.RecordBatch().NumRows()
			}
			if err := rdr.Err(); err != nil || n != benchRows {
				b.Fatalf("%d rows, %v", n, err)
			}
			rdr.Release()
		}
		reportRate(b, cpu)
	})
}

// reportRate reports rows/s (wall clock) and the process CPU seconds per
// op since cpu0 (server and client together: on a loaded machine the
// CPU cost is the steadier figure).
func reportRate(b *testing.B, cpu0 time.Duration) {
	b.ReportMetric(float64(benchRows)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
	b.ReportMetric((cpuclock.Process()-cpu0).Seconds()/float64(b.N), "cpu-s/op")
}

// BenchmarkQueryOverhead: one small query (Execute, then DoGet of one
// row) over loopback; ns/op is the per-query overhead (target < 2 ms).
func BenchmarkQueryOverhead(b *testing.B) {
	f := startFacade(b, demoRoot(b, "weather/stations"), nil)
	c := f.client(b, "")
	ctx := context.Background()
	cpu := cpuclock.Process()
	for b.Loop() {
		info := mustExecute(b, c, `SELECT name FROM "weather/stations" WHERE station_id = 'AM01'`)
		rdr, err := c.DoGet(ctx, info.Endpoint[0].Ticket)
		if err != nil {
			b.Fatal(err)
		}
		for rdr.Next() {
		}
		if err := rdr.Err(); err != nil {
			b.Fatal(err)
		}
		rdr.Release()
	}
	b.ReportMetric(float64((cpuclock.Process()-cpu).Microseconds())/1000/float64(b.N), "cpu-ms/op")
}

func TestMain(m *testing.M) {
	code := m.Run()
	if benchDir != "" {
		os.RemoveAll(benchDir)
	}
	os.Exit(code)
}
