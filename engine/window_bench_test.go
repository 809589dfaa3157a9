//go:build unix

package engine

import (
	"github.com/quarrydb/quarry/internal/testutil/cpuclock"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/quarrydb/quarry/planner"
)

// Window benchmarks over 5M rows: g (int64, 10,000 groups of 500 rows,
// interleaved), t (int64, increasing: time order) and v (float64 with ties).
// ns/row is reported per input row. Run with
//
//	go test ./engine -run '^$' -bench 'Window|TopNPerGroup' -benchtime 5x
const windowBenchRows = 5_000_000

func windowBenchSource(b *testing.B) *memSource {
	b.Helper()
	mem := memory.DefaultAllocator
	gb, tb, vb := array.NewInt64Builder(mem), array.NewInt64Builder(mem), array.NewFloat64Builder(mem)
	defer gb.Release()
	defer tb.Release()
	defer vb.Release()
	for i := range windowBenchRows {
		gb.Append(int64((i * 7919) % 10000))
		tb.Append(int64(i))
		vb.Append(float64((i*31)%1000) / 4)
	}
	g, t, v := gb.NewArray(), tb.NewArray(), vb.NewArray()
	defer g.Release()
	defer t.Release()
	defer v.Release()
	schema := arrow.NewSchema([]arrow.Field{{Name: "g", Type: tInt64, Nullable: true}, {Name: "t", Type: tInt64, Nullable: true}, {Name: "v", Type: tF64, Nullable: true}}, nil)
	src := &memSource{schema: schema, batches: []arrow.RecordBatch{array.NewRecordBatch(schema, []arrow.Array{g, t, v}, windowBenchRows)}, noCopy: true}
	b.Cleanup(src.release)
	return src
}

func benchWindowSpec(b *testing.B, spec planner.Spec) {
	src := windowBenchSource(b)
	plan, err := planner.Build(spec, planner.Input{Dataset: "t", Schema: src.schema})
	if err != nil {
		b.Fatal(err)
	}
	if plan, err = planner.Optimize(plan, planner.OptimizeOptions{}); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	cpu0 := cpuclock.Process()
	b.ResetTimer()
	for b.Loop() {
		r, err := Execute(b.Context(), plan, src, Options{})
		if err != nil {
			b.Fatal(err)
		}
		for r.Next() {
		}
		if err := r.Err(); err != nil {
			b.Fatal(err)
		}
		r.Release()
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/windowBenchRows, "ns/row")
	// CPU time (user + system, all threads): steadier than wall time on a shared machine.
	b.ReportMetric(float64(cpuclock.Process()-cpu0)/1e6/float64(b.N), "cpu-ms/op")
}

// sum(v) OVER (PARTITION BY g ORDER BY t ROWS UNBOUNDED PRECEDING)
func BenchmarkWindowRunningSum5M(b *testing.B) {
	benchWindowSpec(b, planner.Spec{Windows: []planner.WindowSpec{{Fn: "sum", Col: "v", PartitionBy: []string{"g"},
		OrderBy: []planner.OrderSpec{{Col: "t"}}, Frame: &planner.FrameSpec{Start: "unbounded preceding"}, As: "running"}}})
}

// rank() OVER (PARTITION BY g ORDER BY v DESC)
func BenchmarkWindowRank5M(b *testing.B) {
	benchWindowSpec(b, planner.Spec{Windows: []planner.WindowSpec{{Fn: "rank", PartitionBy: []string{"g"},
		OrderBy: []planner.OrderSpec{{Col: "v", Desc: true}}, As: "r"}}})
}

// avg(v) OVER (PARTITION BY g ORDER BY t ROWS 6 PRECEDING): a moving average.
func BenchmarkWindowMovingAvg5M(b *testing.B) {
	benchWindowSpec(b, planner.Spec{Windows: []planner.WindowSpec{{Fn: "avg", Col: "v", PartitionBy: []string{"g"},
		OrderBy: []planner.OrderSpec{{Col: "t"}}, Frame: &planner.FrameSpec{Start: "6 preceding"}, As: "avg7"}}})
}

// The two largest v per g.
func BenchmarkTopNPerGroup5M(b *testing.B) {
	benchWindowSpec(b, planner.Spec{Columns: []string{"g", "v"}, TopNPerGroup: &planner.TopNPerGroupSpec{N: 2, PartitionBy: []string{"g"},
		By: []planner.OrderSpec{{Col: "v", Desc: true}}}})
}
