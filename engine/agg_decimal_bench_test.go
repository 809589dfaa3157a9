package engine

import (
	"fmt"
	"strconv"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// BenchmarkGroupBySumAvgFloat: sum and avg of a float64 column over 1,000
// groups, H2O-style: 2-decimal values (exact path), binary fractions that
// are not short decimals (i/3: the float fallback after the first value),
// and 6-decimal values (H2O's v3).
func BenchmarkGroupBySumAvgFloat(b *testing.B) {
	for _, kind := range []string{"dec2", "dec6", "binary"} {
		b.Run(kind, func(b *testing.B) {
			k, x := make([]any, benchRows), make([]any, benchRows)
			for i := range benchRows {
				k[i] = int64((i * 7919) % 1000)
				switch kind {
				case "dec2":
					x[i] = float64(i%10_000) / 100
				case "dec6":
					x[i], _ = strconv.ParseFloat(fmt.Sprintf("%.6f", float64((i*7919)%100_000_000)/1e6), 64)
				default:
					x[i] = float64(i) / 3
				}
			}
			src := newSource(memory.DefaultAllocator, []tcol{{"k", tInt64, k}, {"x", arrow.PrimitiveTypes.Float64, x}})
			src.noCopy = true
			benchRun(b, src, aggOf(scanOf(src.schema), []string{"k"}, "sum:x", "avg:x"))
		})
	}
}

// BenchmarkSumUpdate: one sum state's update over 1M 2-decimal values in
// 1,000 groups: the exact state (decSum) beside the plain float64 sum it
// replaced (sumFloat), to compare in one run.
func BenchmarkSumUpdate(b *testing.B) {
	b.StopTimer()
	const n = 1 << 20
	bld := array.NewFloat64Builder(memory.DefaultAllocator)
	gids := make([]int32, n)
	for i := range n {
		bld.Append(float64(i%10_000) / 100)
		gids[i] = int32((i * 7919) % 1000)
	}
	col := bld.NewArray()
	defer col.Release()
	for _, c := range []struct {
		name string
		new  func() aggState
	}{
		{"float", func() aggState { return &sumFloat[float64]{} }},
		{"exact", func() aggState { return &decSum{} }},
	} {
		b.Run(c.name, func(b *testing.B) {
			s := c.new()
			s.grow(1000)
			for b.Loop() {
				if err := s.update(col, gids); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/n, "ns/value")
		})
	}
}
