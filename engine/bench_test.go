package engine

import (
	"context"
	"fmt"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/quarrydb/quarry/planner"
)

const benchRows = 1 << 20

func benchSource(b *testing.B) *memSource {
	b.Helper()
	k, v, s := make([]any, benchRows), make([]any, benchRows), make([]any, benchRows)
	for i := range benchRows {
		k[i] = int64((i * 7919) % 1000)
		v[i] = int64(i % 97)
		s[i] = fmt.Sprintf("item-%07d", (i*7919)%benchRows)
	}
	city := make([]any, benchRows)
	for i := range benchRows {
		city[i] = fmt.Sprintf("city-%03d", (i*31)%200)
	}
	src := newSource(memory.DefaultAllocator, []tcol{{"k", tInt64, k}, {"v", tInt64, v}, {"s", tStr, s}, {"c", tDict, city}, {"cs", tStr, city}})
	src.noCopy = true
	return src
}

func benchRun(b *testing.B, src *memSource, plan planner.Node) {
	b.Helper()
	benchExec(b, src, plan, Options{}, func(rows int) {
		if rows == 0 {
			b.Fatal("no rows")
		}
	})
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/benchRows, "ns/row")
}

// benchExec runs plan over src once per benchmark iteration with opts,
// draining the result and handing its row count to check.
func benchExec(b *testing.B, src *memSource, plan planner.Node, opts Options, check func(rows int)) {
	b.Helper()
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		r, err := Execute(context.Background(), plan, src, opts)
		if err != nil {
			b.Fatal(err)
		}
		rows := 0
		for r.Next() {
			rows += int(r.RecordBatch().NumRows())
		}
		if err := r.Err(); err != nil {
			b.Fatal(err)
		}
		r.Release()
		check(rows)
	}
}

func BenchmarkFilterEqInt64(b *testing.B) {
	src := benchSource(b)
	benchRun(b, src, filterOf(scanOf(src.schema), pred(src.schema, "k", "eq", int64(7))))
}

func BenchmarkFilterContainsString(b *testing.B) {
	src := benchSource(b)
	benchRun(b, src, filterOf(scanOf(src.schema), pred(src.schema, "s", "contains", "99")))
}

func BenchmarkGroupBySumInt64Key(b *testing.B) {
	src := benchSource(b)
	benchRun(b, src, aggOf(scanOf(src.schema), []string{"k"}, "sum:v", "count:*"))
}

func BenchmarkGroupBySumTwoKeys(b *testing.B) {
	src := benchSource(b)
	benchRun(b, src, aggOf(scanOf(src.schema), []string{"k", "v"}, "sum:v"))
}

func BenchmarkTopK(b *testing.B) {
	src := benchSource(b)
	benchRun(b, src, limitOf(sortOf(scanOf(src.schema), "-s"), 0, 100))
}

func BenchmarkComputeArith(b *testing.B) {
	src := benchSource(b)
	benchRun(b, src, computeOf(scanOf(src.schema), "k * 3 + v - 1 AS a", "k / (v + 1) AS d"))
}

func BenchmarkFilterContainsCaseInsensitive(b *testing.B) {
	src := benchSource(b)
	p := pred(src.schema, "s", "contains", "ITEM-00")
	p.CaseInsensitive = true
	benchRun(b, src, filterOf(scanOf(src.schema), p))
}

func BenchmarkFilterRegex(b *testing.B) {
	src := benchSource(b)
	benchRun(b, src, filterOf(scanOf(src.schema), pred(src.schema, "s", "regex", "9{2}$")))
}

// Dictionary-encoded: the predicate runs once per dictionary entry.
func BenchmarkFilterRegexDict(b *testing.B) {
	src := benchSource(b)
	benchRun(b, src, filterOf(scanOf(src.schema), pred(src.schema, "c", "regex", "9$")))
}

func BenchmarkFilterRegexPlainSameData(b *testing.B) {
	src := benchSource(b)
	benchRun(b, src, filterOf(scanOf(src.schema), pred(src.schema, "cs", "regex", "9$")))
}

func BenchmarkGroupByDictKey(b *testing.B) {
	src := benchSource(b)
	benchRun(b, src, aggOf(scanOf(src.schema), []string{"c"}, "sum:v", "count:*"))
}

func BenchmarkGroupByStringKeySameData(b *testing.B) {
	src := benchSource(b)
	benchRun(b, src, aggOf(scanOf(src.schema), []string{"cs"}, "sum:v", "count:*"))
}

func BenchmarkMedianQuantileByKey(b *testing.B) {
	src := benchSource(b)
	benchRun(b, src, aggOf(scanOf(src.schema), []string{"k"}, "median:v", "quantile:v:0.9"))
}

func BenchmarkCountDistinctByKey(b *testing.B) {
	src := benchSource(b)
	benchRun(b, src, aggOf(scanOf(src.schema), []string{"k"}, "count_distinct:v", "stddev:v"))
}
