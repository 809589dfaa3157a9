//go:build unix

package engine

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/quarrydb/quarry/internal/testutil/cpuclock"
	"github.com/quarrydb/quarry/planner"
)

// H2O groupby-shaped benchmarks (bench/h2o, the questions as
// cmd/quarry-bench/h2o.go states them) over 10M generated rows in
// 80K-row batches, as the column cache serves the CSV: id2 a dictionary
// string (one dictionary shared by every batch), id4, id5 (1..100), id6
// (1..N/100), v1 (1..5), v2 (1..15) int64, v3 float64 with 6 decimals in
// [0, 100). Run with
//
//	go test ./engine -run '^$' -bench 'AggH2O' -benchtime 5x
//
// cpu-ms/op is the process's CPU time (every thread) per query.
const (
	h2oBenchRows  = 10_000_000
	h2oBenchBatch = 80_000
)

var (
	h2oBenchOnce sync.Once
	h2oBenchSrc  *memSource
)

func h2oBenchSource(b *testing.B) *memSource {
	b.Helper()
	h2oBenchOnce.Do(func() {
		mem := memory.DefaultAllocator
		r := rand.New(rand.NewPCG(42, 13))
		const k = 100
		nk := h2oBenchRows / k
		sb := array.NewStringBuilder(mem)
		for i := 1; i <= k; i++ {
			sb.Append(fmt.Sprintf("id%03d", i))
		}
		dict := sb.NewArray()
		sb.Release()
		defer dict.Release()
		schema := arrow.NewSchema([]arrow.Field{
			{Name: "id2", Type: tDict, Nullable: true},
			{Name: "id4", Type: tInt64, Nullable: true}, {Name: "id5", Type: tInt64, Nullable: true},
			{Name: "id6", Type: tInt64, Nullable: true}, {Name: "v1", Type: tInt64, Nullable: true},
			{Name: "v2", Type: tInt64, Nullable: true}, {Name: "v3", Type: tF64, Nullable: true},
		}, nil)
		var batches []arrow.RecordBatch
		for lo := 0; lo < h2oBenchRows; lo += h2oBenchBatch {
			n := min(h2oBenchBatch, h2oBenchRows-lo)
			codes := array.NewInt32Builder(mem)
			ints := make([]*array.Int64Builder, 5)
			for c := range ints {
				ints[c] = array.NewInt64Builder(mem)
				ints[c].Reserve(n)
			}
			fb := array.NewFloat64Builder(mem)
			codes.Reserve(n)
			fb.Reserve(n)
			for range n {
				codes.UnsafeAppend(int32(r.IntN(k)))
				ints[0].UnsafeAppend(1 + r.Int64N(k))
				ints[1].UnsafeAppend(1 + r.Int64N(k))
				ints[2].UnsafeAppend(1 + r.Int64N(int64(nk)))
				ints[3].UnsafeAppend(1 + r.Int64N(5))
				ints[4].UnsafeAppend(1 + r.Int64N(15))
				fb.UnsafeAppend(math.Round(r.Float64()*100*1e6) / 1e6)
			}
			ca := codes.NewArray()
			arrs := []arrow.Array{array.NewDictionaryArray(tDict, ca, dict)}
			ca.Release()
			codes.Release()
			for _, ib := range ints {
				arrs = append(arrs, ib.NewArray())
				ib.Release()
			}
			arrs = append(arrs, fb.NewArray())
			fb.Release()
			batches = append(batches, array.NewRecordBatch(schema, arrs, int64(n)))
			for _, a := range arrs {
				a.Release()
			}
		}
		h2oBenchSrc = &memSource{schema: schema, batches: batches, noCopy: true}
	})
	return h2oBenchSrc
}

var h2oBenchV2 = "v2"

// h2oBenchSpecs are the questions benchmarked (cmd/quarry-bench/h2o.go).
var h2oBenchSpecs = map[string]planner.Spec{
	"G4": {GroupBy: []string{"id4"}, Aggs: []planner.AggSpec{{Col: "v1", Fn: planner.AggAvg, As: "a1"}, {Col: "v2", Fn: planner.AggAvg, As: "a2"}, {Col: "v3", Fn: planner.AggAvg, As: "a3"}}},
	"G5": {GroupBy: []string{"id6"}, Aggs: []planner.AggSpec{{Col: "v1", Fn: planner.AggSum, As: "s1"}, {Col: "v2", Fn: planner.AggSum, As: "s2"}, {Col: "v3", Fn: planner.AggSum, As: "s3"}}},
	"G6": {GroupBy: []string{"id4", "id5"}, Aggs: []planner.AggSpec{{Col: "v3", Fn: planner.AggMedian, As: "m"}, {Col: "v3", Fn: planner.AggStddev, As: "sd"}}},
	"G8": {Filters: []planner.FilterSpec{{Col: "v3", Op: planner.OpIsNotNull}}, Columns: []string{"id6", "v3 AS largest2_v3"},
		TopNPerGroup: &planner.TopNPerGroupSpec{N: 2, By: []planner.OrderSpec{{Col: "v3", Desc: true}}, PartitionBy: []string{"id6"}}},
	"G9": {GroupBy: []string{"id2", "id4"}, Aggs: []planner.AggSpec{{Col: "v1", Fn: "corr", Arg: &h2oBenchV2, As: "r"}}, Columns: []string{"id2", "id4", "power(r, 2) AS r2"}},
}

func BenchmarkAggH2O(b *testing.B) {
	for _, q := range []string{"G4", "G5", "G6", "G8", "G9"} {
		b.Run(q, func(b *testing.B) {
			src := h2oBenchSource(b)
			plan, err := planner.Build(h2oBenchSpecs[q], planner.Input{Dataset: "t", Schema: src.schema})
			if err != nil {
				b.Fatal(err)
			}
			if plan, err = planner.Optimize(plan, planner.OptimizeOptions{}); err != nil {
				b.Fatal(err)
			}
			cpu0 := cpuclock.Process()
			benchExec(b, src, plan, Options{}, func(rows int) {
				if rows == 0 {
					b.Fatal("no rows")
				}
			})
			b.ReportMetric(float64(cpuclock.Process()-cpu0)/1e6/float64(b.N), "cpu-ms/op")
		})
	}
}
