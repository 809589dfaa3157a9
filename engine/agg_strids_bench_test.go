package engine

import (
	"fmt"
	"github.com/quarrydb/quarry/internal/testutil/cpuclock"
	"math/rand/v2"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// BenchmarkStrIDs numbers H2O id3-style strings ("id0000012345", 12
// bytes): 1M rows in 64K-row batches over 1k, 100k or 1M distinct values,
// the plain-string group key of H2O G3/G7.
func BenchmarkStrIDs(b *testing.B) {
	for _, distinct := range []int{1000, 100_000, 1_000_000} {
		b.Run(fmt.Sprintf("distinct=%d", distinct), func(b *testing.B) {
			r := rand.New(rand.NewPCG(1, 2))
			mem := memory.NewGoAllocator()
			var batches []arrow.Array
			for range 16 {
				bld := array.NewStringBuilder(mem)
				for range 1 << 16 {
					bld.Append(fmt.Sprintf("id%010d", 1+r.IntN(distinct)))
				}
				batches = append(batches, bld.NewArray())
				bld.Release()
			}
			b.ResetTimer()
			cpu0 := cpuclock.Process()
			for range b.N {
				a := acct{b: &budget{}}
				v := newValueIDs(arrow.BinaryTypes.String, true, &a)
				for _, arr := range batches {
					v.assign(arr)
				}
			}
			b.ReportMetric(float64(cpuclock.Process()-cpu0)/float64(b.N*16<<16), "cpu-ns/row")
		})
	}
}
