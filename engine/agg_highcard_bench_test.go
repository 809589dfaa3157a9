package engine

import (
	"context"
	"fmt"
	"github.com/quarrydb/quarry/internal/testutil/cpuclock"
	"math/rand/v2"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// High-cardinality group-by: 100k, 1M and 10M groups over keys of 1, 2, 4
// and 6 columns, H2O-shaped (dictionary strings, plain strings and int64s
// mixed), sum(v) and count(*) per group. Rows pick a group at random; the
// key columns are the digits of the group number in base 100 (the last
// column takes the rest), so every tuple is one group.
//
//	go test ./engine -run '^$' -bench AggHighCard -benchtime 3x
//
// The 10M-group cases build 10M rows (about 1 GB with the data) and run
// only with -bench 'AggHighCard/g=10M'.

func highCardRows(groups int) int {
	if groups >= 10_000_000 {
		return 10_000_000
	}
	return 2_000_000
}

type highCardKey struct {
	groups, keys int
}

var highCardSrc = map[highCardKey]*memSource{}

// highCardSource builds the data once per shape (benchmarks share it).
func highCardSource(b *testing.B, groups, keys int) *memSource {
	b.Helper()
	if s, ok := highCardSrc[highCardKey{groups, keys}]; ok {
		return s
	}
	nrows := highCardRows(groups)
	r := rand.New(rand.NewPCG(7, uint64(groups*10+keys)))
	mem := memory.DefaultAllocator
	var fields []arrow.Field
	for c := range keys {
		fields = append(fields, arrow.Field{Name: fmt.Sprintf("k%d", c), Type: highCardType(c, keys), Nullable: true})
	}
	fields = append(fields, arrow.Field{Name: "v", Type: tInt64, Nullable: true})
	schema := arrow.NewSchema(fields, nil)
	digits := names("id", 100)
	var batches []arrow.RecordBatch
	g := make([]int, q3Batch)
	for lo := 0; lo < nrows; lo += q3Batch {
		n := min(q3Batch, nrows-lo)
		g = g[:n]
		for i := range g {
			g[i] = r.IntN(groups)
		}
		arrs := make([]arrow.Array, 0, keys+1)
		div := 1
		for c := range keys {
			part := make([]int, n)
			for i, x := range g {
				x /= div
				if c < keys-1 {
					x %= 100
				}
				part[i] = x
			}
			div *= 100
			switch highCardType(c, keys) {
			case tDict:
				arrs = append(arrs, benchDictCol(mem, digits, part))
			case tStr:
				sb := array.NewStringBuilder(mem)
				for _, x := range part {
					sb.Append(fmt.Sprintf("id%010d", x))
				}
				arrs = append(arrs, sb.NewArray())
				sb.Release()
			default:
				ib := array.NewInt64Builder(mem)
				for _, x := range part {
					ib.Append(int64(x))
				}
				arrs = append(arrs, ib.NewArray())
				ib.Release()
			}
		}
		vb := array.NewInt64Builder(mem)
		for range n {
			vb.Append(int64(1 + r.IntN(5)))
		}
		arrs = append(arrs, vb.NewArray())
		vb.Release()
		batches = append(batches, array.NewRecordBatch(schema, arrs, int64(n)))
		for _, a := range arrs {
			a.Release()
		}
	}
	s := &memSource{schema: schema, batches: batches, noCopy: true}
	highCardSrc[highCardKey{groups, keys}] = s
	return s
}

// highCardType is column c's type of a k-column key: the first is a
// dictionary string, the second (of four or more) a plain string, the rest
// int64; a single key is int64.
func highCardType(c, k int) arrow.DataType {
	switch {
	case k == 1:
		return tInt64
	case c == 0:
		return tDict
	case c == 1 && k >= 4:
		return tStr
	}
	return tInt64
}

func BenchmarkAggHighCard(b *testing.B) {
	for _, groups := range []int{100_000, 1_000_000, 10_000_000} {
		for _, keys := range []int{1, 2, 4, 6} {
			name := fmt.Sprintf("g=%s/keys=%d", map[int]string{100_000: "100k", 1_000_000: "1M", 10_000_000: "10M"}[groups], keys)
			b.Run(name, func(b *testing.B) {
				src := highCardSource(b, groups, keys)
				var ks []string
				for c := range keys {
					ks = append(ks, fmt.Sprintf("k%d", c))
				}
				plan := aggOf(scanOf(src.schema), ks, "sum:v", "count:*")
				nrows := highCardRows(groups)
				b.ReportAllocs()
				b.ResetTimer()
				cpu0 := cpuclock.Process()
				var got int
				for b.Loop() {
					rr, err := Execute(context.Background(), plan, src, Options{MemoryLimit: 1 << 30})
					if err != nil {
						b.Fatal(err)
					}
					got = 0
					for rr.Next() {
						got += int(rr.RecordBatch().NumRows())
					}
					if err := rr.Err(); err != nil {
						b.Fatal(err)
					}
					rr.Release()
				}
				if got == 0 || got > groups {
					b.Fatalf("%d groups, want at most %d", got, groups)
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(nrows), "ns/row")
				// CPU time (every thread, GC included) per row: steadier than
				// wall time on a shared machine.
				b.ReportMetric(float64(cpuclock.Process()-cpu0)/float64(b.N)/float64(nrows), "cpu-ns/row")
			})
		}
	}
}
