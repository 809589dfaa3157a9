package engine

import (
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/quarrydb/quarry/planner"
)

// moreAggOf is aggOf for any registered aggregate: "fn:col" or
// "fn:col:arg", output types from the registry (q 0.5).
func moreAggOf(in planner.Node, keys []string, specs ...string) *planner.Aggregate {
	a := aggOf(in, keys)
	fs := a.Out.Fields()
	s := in.Schema()
	for _, sp := range specs {
		parts := strings.Split(sp, ":")
		e := planner.AggExpr{Fn: planner.AggFn(parts[0]), Col: parts[1], Index: s.FieldIndices(parts[1])[0], ArgIndex: -1, Q: 0.5, Name: sp}
		d, _ := e.Fn.Lookup()
		if len(parts) > 2 {
			e.Arg = parts[2]
			if d.Arg.Input != nil {
				e.ArgIndex = s.FieldIndices(parts[2])[0]
			}
		}
		e.Type = d.Result(s.Field(e.Index).Type)
		a.Aggs = append(a.Aggs, e)
		fs = append(fs, arrow.Field{Name: e.Name, Type: e.Type, Nullable: true})
	}
	a.Out = arrow.NewSchema(fs, nil)
	return a
}

// Benchmarks of the aggregates of aggs_more.go on the Q3 data (5M rows,
// 240 groups of region x category): "fn:col" or "fn:col:arg".
func q3MoreRun(b *testing.B, specs ...string) {
	src := q3Source(b)
	benchRun(b, src, moreAggOf(scanOf(src.schema), []string{"region", "category"}, specs...))
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/q3Rows, "ns/q3row")
}

func BenchmarkAggMoreStddev(b *testing.B) { q3MoreRun(b, "stddev:price") }
func BenchmarkAggMoreVarPop(b *testing.B) { q3MoreRun(b, "var_pop:price") }
func BenchmarkAggMoreCorr(b *testing.B)   { q3MoreRun(b, "corr:price:price") }
func BenchmarkAggMoreMode(b *testing.B)   { q3MoreRun(b, "mode:product") }
func BenchmarkAggMoreArgMax(b *testing.B) { q3MoreRun(b, "arg_max:product:price") }
func BenchmarkAggMoreHLL(b *testing.B)    { q3MoreRun(b, "approx_count_distinct:product") }
func BenchmarkAggMoreDigest(b *testing.B) { q3MoreRun(b, "approx_quantile:price") }
