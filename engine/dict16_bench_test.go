package engine

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// Dictionary kernels by index width: the same data (benchRows rows in
// 64Ki-row batches, each batch with dictionaries of its own, as the column
// cache serves them) with int16 indices (the CSV cache's) and int32
// indices. Filters compare codes (andCodes), group keys and count_distinct
// map codes to ids (assignCodes), sorts read values through the codes and
// gather rows of several dictionaries.

// dictWidthSource builds region (8 values), category (30) and product
// (2,000) dictionary columns of index type it, and an int64 qty.
func dictWidthSource(b *testing.B, it arrow.DataType) *memSource {
	b.Helper()
	r := rand.New(rand.NewPCG(42, 16))
	dt := dictType(it)
	const batch = 1 << 16
	src := &memSource{noCopy: true}
	for lo := 0; lo < benchRows; lo += batch {
		region, category, product, qty := make([]any, batch), make([]any, batch), make([]any, batch), make([]any, batch)
		for i := range batch {
			region[i] = fmt.Sprintf("region-%d", r.IntN(8))
			c := r.IntN(30)
			category[i] = fmt.Sprintf("category-%02d", c)
			product[i] = fmt.Sprintf("product-%04d", (c*67+r.IntN(67))%2000)
			qty[i] = int64(1 + r.IntN(20))
		}
		bt := makeBatch(memory.DefaultAllocator, []tcol{{"region", dt, region}, {"category", dt, category}, {"product", dt, product}, {"qty", tInt64, qty}})
		src.schema = bt.Schema()
		src.batches = append(src.batches, bt)
	}
	return src
}

func BenchmarkDictWidth(b *testing.B) {
	for _, it := range []arrow.DataType{arrow.PrimitiveTypes.Int16, arrow.PrimitiveTypes.Int32} {
		src := dictWidthSource(b, it)
		s := src.schema
		scan := scanOf(s)
		for _, bc := range []struct {
			name string
			run  func(b *testing.B)
		}{
			{"CountEq", func(b *testing.B) {
				benchRun(b, src, aggOf(filterOf(scan, pred(s, "region", "eq", "region-3")), nil, "count:*"))
			}},
			{"CountIn", func(b *testing.B) {
				benchRun(b, src, aggOf(filterOf(scan, pred(s, "category", "in", "category-01", "category-07", "category-22")), nil, "count:*"))
			}},
			{"GroupBy", func(b *testing.B) {
				benchRun(b, src, aggOf(scan, []string{"category"}, "sum:qty", "count:*"))
			}},
			{"GroupBy2CountDistinct", func(b *testing.B) {
				benchRun(b, src, aggOf(scan, []string{"region", "category"}, "count_distinct:product"))
			}},
			{"TopK", func(b *testing.B) {
				benchRun(b, src, limitOf(sortOf(projectOf(scan, "product", "qty"), "-product", "qty"), 0, 20))
			}},
			{"SortAll", func(b *testing.B) {
				benchRun(b, src, sortOf(projectOf(scan, "region", "product"), "product"))
			}},
		} {
			b.Run(fmt.Sprintf("%s/%s", bc.name, it), bc.run)
		}
		src.release()
	}
}
