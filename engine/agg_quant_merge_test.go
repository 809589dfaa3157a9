package engine

import (
	"math/rand/v2"
	"testing"
)

// Without group keys, median and quantile run on the parallel path (their
// partial collectors merge) and give the serial result.
func TestParallelKeylessQuantileMatchesSerial(t *testing.T) {
	ran := withParallel(t, 2)
	specs := []string{"median:x", "quantile:y:0.3", "quantile:x:0.9", "median:k", "quantile:k:0", "quantile:y:1", "sum:x", "count:*", "min:y"}
	for iter := range uint64(40) {
		r := rand.New(rand.NewPCG(31, iter))
		nrows := 1 + r.IntN(4000)
		data := moreAggData(r, nrows)
		var aggs []string
		for _, i := range r.Perm(len(specs))[:1+r.IntN(4)] {
			aggs = append(aggs, specs[i])
		}
		aggs = append(aggs, "median:x")
		aggs[0], aggs[len(aggs)-1] = aggs[len(aggs)-1], aggs[0] // a median first: not only its followers on the collector
		plan := aggOf(scanOf(schemaOf(data)), nil, dedupe(aggs)...)
		want, got, label := serialThenSplit(t, r, plan, data, iter, 1+r.IntN(300), ran.Load, nil)
		if !rowsEq(got, want) {
			t.Fatalf("%s\ngot\n%swant\n%s", label, fmtRows(got), fmtRows(want))
		}
	}
	if ran.Load() < 30 {
		t.Fatalf("the parallel path ran %d times in 40 iterations; the test does not exercise it", ran.Load())
	}
}

func dedupe(ss []string) []string {
	var out []string
	seen := map[string]bool{}
	for _, s := range ss {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}
