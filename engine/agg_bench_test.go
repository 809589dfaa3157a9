package engine

import (
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// Benchmarks shaped like the peer harness's Q3 (group by region, category:
// count_distinct(product), median(price)): 5M rows in 64K-row batches, each
// batch with dictionaries of its own (as the column cache serves them):
// 8 regions x 30 categories, 2,000 products, float64 prices with two
// decimals.

const (
	q3Rows  = 5_000_000
	q3Batch = 1 << 16
)

var (
	q3Once sync.Once
	q3Src  *memSource
)

// q3Source builds the data once per process (benchmarks share it).
func q3Source(b *testing.B) *memSource {
	b.Helper()
	q3Once.Do(func() {
		r := rand.New(rand.NewPCG(42, 3))
		mem := memory.DefaultAllocator
		regions := names("region", 8)
		categories := names("category", 30)
		products := names("product", 2000)
		schema := arrow.NewSchema([]arrow.Field{
			{Name: "region", Type: tDict, Nullable: true},
			{Name: "category", Type: tDict, Nullable: true},
			{Name: "product", Type: tDict, Nullable: true},
			{Name: "price", Type: tF64, Nullable: true},
		}, nil)
		var batches []arrow.RecordBatch
		for lo := 0; lo < q3Rows; lo += q3Batch {
			n := min(q3Batch, q3Rows-lo)
			reg, cat, prod := make([]int, n), make([]int, n), make([]int, n)
			price := array.NewFloat64Builder(mem)
			for i := range n {
				reg[i], cat[i] = r.IntN(len(regions)), r.IntN(len(categories))
				prod[i] = (cat[i]*67 + r.IntN(67)) % len(products)
				price.Append(float64(r.IntN(20000)) / 100)
			}
			arrs := []arrow.Array{
				benchDictCol(mem, regions, reg), benchDictCol(mem, categories, cat),
				benchDictCol(mem, products, prod), price.NewArray(),
			}
			price.Release()
			batches = append(batches, array.NewRecordBatch(schema, arrs, int64(n)))
			for _, a := range arrs {
				a.Release()
			}
		}
		q3Src = &memSource{schema: schema, batches: batches, noCopy: true}
	})
	return q3Src
}

func names(prefix string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("%s-%04d", prefix, i)
	}
	return out
}

// benchDictCol dictionary-encodes the values picked by idx with a
// first-seen-order dictionary of this batch only.
func benchDictCol(mem memory.Allocator, values []string, idx []int) arrow.Array {
	code := make(map[int]int32, len(values))
	var dict []string
	ib := array.NewInt32Builder(mem)
	defer ib.Release()
	ib.Reserve(len(idx))
	for _, x := range idx {
		c, ok := code[x]
		if !ok {
			c = int32(len(dict))
			code[x] = c
			dict = append(dict, values[x])
		}
		ib.UnsafeAppend(c)
	}
	sb := array.NewStringBuilder(mem)
	defer sb.Release()
	sb.AppendValues(dict, nil)
	ia, da := ib.NewArray(), sb.NewArray()
	defer ia.Release()
	defer da.Release()
	return array.NewDictionaryArray(tDict, ia, da)
}

func q3Run(b *testing.B, aggs ...string) {
	src := q3Source(b)
	benchRun(b, src, aggOf(scanOf(src.schema), []string{"region", "category"}, aggs...))
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/q3Rows, "ns/q3row")
}

func BenchmarkAggQ3(b *testing.B) { q3Run(b, "count_distinct:product", "median:price") }

func BenchmarkAggQ3CountDistinct(b *testing.B) { q3Run(b, "count_distinct:product") }

func BenchmarkAggQ3Median(b *testing.B) { q3Run(b, "median:price") }

func BenchmarkAggQ3Count(b *testing.B) { q3Run(b, "count:*") }

func BenchmarkAggQ3Quantiles(b *testing.B) {
	q3Run(b, "quantile:price:0.1", "median:price", "quantile:price:0.9")
}
