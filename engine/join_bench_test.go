package engine

import (
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/quarrydb/quarry/catalog"
	"github.com/quarrydb/quarry/planner"
)

// Join benchmarks: `go test -run '^$' -bench Join -benchtime 3x ./engine`
// (docs/BENCHMARKS.md). The probe side is a table of n rows (key k, value
// v), the build side a table of m rows (key b, payload p); every probe row
// matches exactly one build row, so the result has n rows of 4 columns.

// int64Source is a one-batch in-memory source of int64 columns
// (keys(i) gives column c's value at row i), served zero-copy.
func int64Source(n int, names []string, vals func(c, i int) int64) *memSource {
	fields := make([]arrow.Field, len(names))
	cols := make([]arrow.Array, len(names))
	for c, name := range names {
		fields[c] = arrow.Field{Name: name, Type: arrow.PrimitiveTypes.Int64, Nullable: true}
		vs := make([]int64, n)
		for i := range vs {
			vs[i] = vals(c, i)
		}
		b := array.NewInt64Builder(memory.DefaultAllocator)
		b.AppendValues(vs, nil)
		cols[c] = b.NewArray()
		b.Release()
	}
	schema := arrow.NewSchema(fields, nil)
	rec := array.NewRecordBatch(schema, cols, int64(n))
	for _, c := range cols {
		c.Release()
	}
	return &memSource{schema: schema, batches: []arrow.RecordBatch{rec}, noCopy: true}
}

func benchJoin(b *testing.B, n, m int, limit int64) {
	probe := int64Source(n, []string{"k", "v"}, func(c, i int) int64 {
		if c == 0 {
			return int64((i * 7919) % m)
		}
		return int64(i)
	})
	build := int64Source(m, []string{"b", "p"}, func(c, i int) int64 { return int64(m - 1 - i) })
	runJoinBench(b, probe, build, Options{MemoryLimit: limit, SpillDir: b.TempDir()}, func(rows int) {
		if rows != n {
			b.Fatalf("%d rows, want %d", rows, n)
		}
	})
}

func BenchmarkJoin10Mx10(b *testing.B)  { benchJoin(b, 10_000_000, 10, 0) }
func BenchmarkJoin10Mx10k(b *testing.B) { benchJoin(b, 10_000_000, 10_000, 0) }
func BenchmarkJoin1Mx1M(b *testing.B)   { benchJoin(b, 1_000_000, 1_000_000, 0) }

// BenchmarkJoin1Mx1MSpill is 1M x 1M with a 16 MiB budget: the build side
// (about 60 MB with its table) spills to 32 partition pairs.
func BenchmarkJoin1Mx1MSpill(b *testing.B) { benchJoin(b, 1_000_000, 1_000_000, 16<<20) }

// benchJoinSelective probes n rows against m build keys spread over
// m*spread values (a filtered dimension: one probe row in spread matches):
// the bitmap of join_probe.go rejects the rest before hashing.
func benchJoinSelective(b *testing.B, n, m, spread int) {
	probe := int64Source(n, []string{"k", "v"}, func(c, i int) int64 {
		if c == 0 {
			return int64((i * 7919) % (m * spread))
		}
		return int64(i)
	})
	build := int64Source(m, []string{"b", "p"}, func(c, i int) int64 { return int64(i * spread) })
	runJoinBench(b, probe, build, Options{}, func(rows int) {
		if rows == 0 || rows > 2*(n/spread)+2 {
			b.Fatalf("%d rows of %d", rows, n)
		}
	})
}

// runJoinBench plans probe JOIN build ON k = b and runs it with opts (the
// build side as source "build"), reporting ns per probe row; it releases
// both sources.
func runJoinBench(b *testing.B, probe, build *memSource, opts Options, check func(rows int)) {
	b.Helper()
	defer probe.release()
	defer build.release()
	n, m := probe.batches[0].NumRows(), build.batches[0].NumRows()
	in := planner.Input{Dataset: "probe", Schema: probe.schema, RowCount: n,
		Joins: []planner.Input{{Dataset: "build", Schema: build.schema, RowCount: m}}}
	plan, err := planner.Build(planner.Spec{Join: []planner.JoinSpec{{Dataset: "build", On: []planner.JoinOn{{Left: "k", Right: "b"}}}}}, in)
	if err != nil {
		b.Fatal(err)
	}
	if plan, err = planner.Optimize(plan, planner.OptimizeOptions{}); err != nil {
		b.Fatal(err)
	}
	opts.Sources = map[string]catalog.Source{"build": build}
	benchExec(b, probe, plan, opts, check)
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/probe-row")
}

// BenchmarkJoin6Mx189Selective is TPC-H Q17's probe at SF 1: 6M lines
// against the 189 selected parts of 200,000.
func BenchmarkJoin6Mx189Selective(b *testing.B) { benchJoinSelective(b, 6_000_000, 189, 1058) }

// BenchmarkJoin4Mx57kSelective is Q4's: 3.8M lines against 57,000 orders
// of the 6M order key range.
func BenchmarkJoin4Mx57kSelective(b *testing.B) { benchJoinSelective(b, 3_800_000, 57_000, 105) }

// BenchmarkJoin10Mx10kOneWorker is BenchmarkJoin10Mx10k probing on one
// worker (join_parallel.go: the workers' speed-up and overhead).
func BenchmarkJoin10Mx10kOneWorker(b *testing.B) {
	defer setJoinWorkers(1)()
	benchJoin(b, 10_000_000, 10_000, 0)
}
