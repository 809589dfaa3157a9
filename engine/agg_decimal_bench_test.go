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
// replaced (sumFloat), to compare in one run; a float64 column without
// nulls, one with 10% nulls, and a float32 column (no nulls).
func BenchmarkSumUpdate(b *testing.B) {
	b.StopTimer()
	const n = 1 << 20
	f64, f64n, f32 := array.NewFloat64Builder(memory.DefaultAllocator), array.NewFloat64Builder(memory.DefaultAllocator), array.NewFloat32Builder(memory.DefaultAllocator)
	gids := make([]int32, n)
	for i := range n {
		x := float64(i%10_000) / 100
		f64.Append(x)
		if i%10 == 3 {
			f64n.AppendNull()
		} else {
			f64n.Append(x)
		}
		f32.Append(float32(x))
		gids[i] = int32((i * 7919) % 1000)
	}
	cols := map[string]arrow.Array{"f64": f64.NewArray(), "f64nulls": f64n.NewArray(), "f32": f32.NewArray()}
	for _, name := range []string{"f64", "f64nulls", "f32"} {
		col := cols[name]
		defer col.Release()
		b.Run(name, func(b *testing.B) {
			for _, c := range []struct {
				name string
				new  func() aggState
			}{
				{"float", func() aggState {
					if name == "f32" {
						return &sumFloat[float32]{}
					}
					return &sumFloat[float64]{}
				}},
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
		})
	}
}
