package engine

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/memory"
)

// salesSource is shaped like the peer harness's sales table as the column
// cache serves it: benchRows rows in 64Ki-row batches, each batch with its
// own region dictionary (first-seen order differs between batches), a
// float64 price, a float64 discount with ~5 % nulls and a plain utf8 note
// of a few words with ~1 % nulls.
func salesSource(b *testing.B) *memSource {
	b.Helper()
	r := rand.New(rand.NewPCG(42, 7))
	regions := []string{"north", "south", "west", "east", "central", "northeast", "northwest", "southeast"}
	words := []string{"late", "excellent", "thanks", "damaged", "shipping", "box", "good", "leave", "poor", "color", "at", "fine", "ok", "quick", "slow"}
	const batch = 1 << 16
	src := &memSource{noCopy: true}
	for lo := 0; lo < benchRows; lo += batch {
		id, region, price, discount, note := make([]any, batch), make([]any, batch), make([]any, batch), make([]any, batch), make([]any, batch)
		for i := range batch {
			id[i] = int64(3_000_000_000 + lo + i)
			region[i] = regions[r.IntN(len(regions))]
			price[i] = float64(100+r.IntN(9900)) / 100
			if r.IntN(20) > 0 {
				discount[i] = float64(r.IntN(30)) / 100
			}
			if r.IntN(100) > 0 {
				var sb strings.Builder
				for w := range 1 + r.IntN(4) {
					if w > 0 {
						sb.WriteByte(' ')
					}
					sb.WriteString(words[r.IntN(len(words))])
				}
				note[i] = sb.String()
			}
		}
		bt := makeBatch(memory.DefaultAllocator, []tcol{{"id", tInt64, id}, {"region", tDict, region}, {"price", tF64, price}, {"discount", tF64, discount}, {"note", tStr, note}})
		src.schema = bt.Schema()
		src.batches = append(src.batches, bt)
	}
	return src
}

// Q1: count(*) where a dictionary-encoded column equals a literal.
func BenchmarkFilterQ1CountDictEq(b *testing.B) {
	src := salesSource(b)
	benchRun(b, src, aggOf(filterOf(scanOf(src.schema), pred(src.schema, "region", "eq", "north")), nil, "count:*"))
}

// Q5: range and contains, top 100 by price desc, id (the planner's shape:
// Limit <- Sort <- Project <- Filter).
func BenchmarkFilterQ5RangeContainsTopK(b *testing.B) {
	src := salesSource(b)
	f := filterOf(scanOf(src.schema), pred(src.schema, "price", "range", 10.0, 20.0), pred(src.schema, "note", "contains", "a"))
	benchRun(b, src, limitOf(sortOf(projectOf(f, "id", "price"), "-price", "id"), 0, 100))
}

// Q8: count(*) where a float column is null.
func BenchmarkFilterQ8CountIsNull(b *testing.B) {
	src := salesSource(b)
	benchRun(b, src, aggOf(filterOf(scanOf(src.schema), pred(src.schema, "discount", "is_null")), nil, "count:*"))
}

// The Q5 filter alone, its passing rows copied out.
func BenchmarkFilterRangeContainsRows(b *testing.B) {
	src := salesSource(b)
	benchRun(b, src, filterOf(scanOf(src.schema), pred(src.schema, "price", "range", 10.0, 20.0), pred(src.schema, "note", "contains", "a")))
}

// Substring searches over every plain string, common and rare needles.
func BenchmarkFilterContainsPlain(b *testing.B) {
	src := salesSource(b)
	for _, needle := range []string{"a", "ex", "xyz", "box good"} {
		b.Run(fmt.Sprintf("needle=%q", needle), func(b *testing.B) {
			benchRun(b, src, aggOf(filterOf(scanOf(src.schema), pred(src.schema, "note", "contains", needle)), nil, "count:*"))
		})
	}
}

// count(col) under a numeric filter.
func BenchmarkFilterCountColumn(b *testing.B) {
	src := salesSource(b)
	benchRun(b, src, aggOf(filterOf(scanOf(src.schema), pred(src.schema, "price", "gt", 50.0)), nil, "count:discount", "count:*"))
}

// The Q5 filter under count(*): the predicates alone.
func BenchmarkFilterRangeContainsCount(b *testing.B) {
	src := salesSource(b)
	f := filterOf(scanOf(src.schema), pred(src.schema, "price", "range", 10.0, 20.0), pred(src.schema, "note", "contains", "a"))
	benchRun(b, src, aggOf(f, nil, "count:*"))
}
