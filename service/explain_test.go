package service

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/quarrydb/quarry/internal/colcache"
	"github.com/quarrydb/quarry/planner"
)

// explainRows is the size of the explain tests' CSV: several batches.
const explainRows = 150_000

// explainRoot writes t.csv: id 0..n-1, region north/south/east/west by
// id % 4, qty id % 100.
func explainRoot(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	var b strings.Builder
	b.WriteString("id,region,qty\n")
	regions := []string{"north", "south", "east", "west"}
	for i := range explainRows {
		fmt.Fprintf(&b, "%d,%s,%d\n", i, regions[i%4], i%100)
	}
	if err := os.WriteFile(filepath.Join(root, "t.csv"), []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return root
}

func filterSpec(col string, op planner.Op, v string) planner.FilterSpec {
	return planner.FilterSpec{Col: col, Op: op, Value: json.RawMessage(v)}
}

// TestExplainAnalyzeAddsUp runs queries with explain "analyze" over a real
// CSV file (cold, then from the column cache) with a checked allocator and
// checks the numbers: every operator's rows in are its inputs' rows out,
// the scan returns every row of the file, each operator returns the rows
// the data says it must (counted independently here), the root's rows are
// the delivered ones, peaks nest and nothing leaks. estimate_query's
// physical plan lists the same operators. (The engine's tests cover the
// dictionary kernel notes.)
func TestExplainAnalyzeAddsUp(t *testing.T) {
	var north50, qty50 int64     // rows with region north and qty >= 50; rows with qty >= 50
	byRegion := make([]int64, 4) // rows with qty >= 50 per region
	for i := range explainRows {
		if i%100 >= 50 {
			qty50++
			byRegion[i%4]++
			if i%4 == 0 {
				north50++
			}
		}
	}
	limit := int64(2)
	five := int64(5)
	cases := []struct {
		name string
		spec planner.Spec
		// want are the rows out per operator, root first.
		want []int64
		ops  []string
		data string
	}{{
		name: "filter+count",
		spec: planner.Spec{Filters: []planner.FilterSpec{filterSpec("region", planner.OpEq, `"north"`), filterSpec("qty", planner.OpGte, `50`)},
			Aggs: []planner.AggSpec{{Col: "*", Fn: planner.AggCount}}},
		ops:  []string{"filter+count", "scan"},
		want: []int64{1, explainRows},
		data: fmt.Sprintf(`[{"count_all":%d}]`, north50),
	}, {
		name: "grouped top",
		spec: planner.Spec{Filters: []planner.FilterSpec{filterSpec("qty", planner.OpGte, `50`)}, GroupBy: []string{"region"},
			Aggs: []planner.AggSpec{{Col: "*", Fn: planner.AggCount}}, OrderBy: []planner.OrderSpec{{Col: "region"}}, Limit: &limit},
		ops:  []string{"limit", "top-k sort", "hash aggregate", "filter", "scan"},
		want: []int64{2, 2, 4, qty50, explainRows},
		data: fmt.Sprintf(`[{"region":"east","count_all":%d},{"region":"north","count_all":%d}]`, byRegion[2], byRegion[0]),
	}, {
		name: "filtered top-k rows",
		spec: planner.Spec{Columns: []string{"id"}, Filters: []planner.FilterSpec{filterSpec("region", planner.OpEq, `"north"`)},
			OrderBy: []planner.OrderSpec{{Col: "qty", Desc: true}, {Col: "id"}}, Limit: &five},
		ops:  []string{"project", "limit", "filter+top-k sort", "scan"},
		want: []int64{5, 5, 5, explainRows},
		data: `[{"id":96},{"id":196},{"id":296},{"id":396},{"id":496}]`, // north ids are multiples of 4: qty tops at 96
	}}
	cache := colcache.New(colcache.Options{Budget: 64 << 20})
	defer cache.Purge()
	s, alloc := newTestService(t, explainRoot(t), 0, func(c *Config) { c.Cache = cache })
	ctx := context.Background()
	for _, pass := range []string{"cold", "cached"} {
		for _, tc := range cases {
			t.Run(pass+"/"+tc.name, func(t *testing.T) {
				req := confirmed("t", tc.spec)
				req.Explain = ExplainAnalyze
				res, err := s.Query(ctx, req)
				if err != nil {
					t.Fatal(err)
				}
				if got := string(res.Result.Data); got != tc.data {
					t.Fatalf("data %s, want %s", got, tc.data)
				}
				a := res.Analyze
				if a == nil || len(a.Operators) != len(tc.ops) {
					t.Fatalf("analysis %+v, want operators %v", a, tc.ops)
				}
				checkAnalysis(t, a, res.Result.RowCount)
				for i, o := range a.Operators {
					if o.Op != tc.ops[i] || o.RowsOut != tc.want[i] {
						t.Errorf("operator %d: %s with %d rows out, want %s with %d", i, o.Op, o.RowsOut, tc.ops[i], tc.want[i])
					}
				}
				est, err := s.Estimate(ctx, EstimateRequest{Dataset: "t", Spec: tc.spec})
				if err != nil {
					t.Fatal(err)
				}
				lines := strings.Split(strings.TrimSpace(est.PhysicalPlan), "\n")
				for i, op := range tc.ops {
					if i >= len(lines) || !strings.HasPrefix(strings.TrimSpace(lines[i]), op+" ") {
						t.Fatalf("physical plan line %d is not %s:\n%s", i, op, est.PhysicalPlan)
					}
				}
			})
		}
	}
	waitFreed(t, alloc)
}

// checkAnalysis checks what holds for every analysis: rows in are the
// inputs' rows out, the root returned the delivered rows, peaks nest (an
// operator's window holds its inputs'), the scan read the whole file.
func checkAnalysis(t *testing.T, a *Analysis, delivered int64) {
	t.Helper()
	ops := a.Operators
	if ops[0].RowsOut != delivered {
		t.Errorf("root returned %d rows, %d delivered", ops[0].RowsOut, delivered)
	}
	if a.PeakBytes <= 0 || ops[0].PeakBytes != a.PeakBytes {
		t.Errorf("peak %d, root peak %d", a.PeakBytes, ops[0].PeakBytes)
	}
	var total float64
	for i, o := range ops {
		total += o.TimeMs
		var in int64
		for j := i + 1; j < len(ops) && ops[j].Depth > o.Depth; j++ {
			if ops[j].Depth == o.Depth+1 {
				in += ops[j].RowsOut
				if ops[j].PeakBytes > o.PeakBytes {
					t.Errorf("input %s peak %d above %s's %d", ops[j].Op, ops[j].PeakBytes, o.Op, o.PeakBytes)
				}
			}
		}
		leaf := i+1 == len(ops) || ops[i+1].Depth <= o.Depth
		switch {
		case leaf && (o.RowsIn+o.RowsSkipped != explainRows || o.RowsIn < o.RowsOut):
			t.Errorf("%s: read %d rows, skipped %d, returned %d; want read + skipped = %d", o.Op, o.RowsIn, o.RowsSkipped, o.RowsOut, explainRows)
		case !leaf && o.RowsIn != in:
			t.Errorf("%s: %d rows in, its inputs returned %d", o.Op, o.RowsIn, in)
		}
		if o.RowsOut > 0 && o.Batches == 0 || o.TimeMs < 0 {
			t.Errorf("%s: %d rows in %d batches, %v ms", o.Op, o.RowsOut, o.Batches, o.TimeMs)
		}
		if o.Op == "scan" && (o.RowsOut+o.RowsSkipped != explainRows || o.RowsSkipped == 0 && o.Batches < 2) {
			t.Errorf("scan returned %d rows in %d batches and skipped %d, want %d rows in several", o.RowsOut, o.Batches, o.RowsSkipped, explainRows)
		}
	}
	if total <= 0 || math.Abs(a.TimeMs-total) > 0.001*float64(len(ops)) {
		t.Errorf("time %v ms, operators add up to %v", a.TimeMs, total)
	}
}

// TestExplainAnalyzeScanCounts checks what a scan reports it read: with
// the filter pushed into the CSV reader (no column cache) it read every
// row and returned the matching ones; served from the cache with zone
// maps, it skipped zones and read the rest, the two adding up to the file.
func TestExplainAnalyzeScanCounts(t *testing.T) {
	spec := planner.Spec{Filters: []planner.FilterSpec{filterSpec("id", planner.OpRange, `{"min":50000,"max":50999}`)},
		Aggs: []planner.AggSpec{{Col: "*", Fn: planner.AggCount}}}
	root := explainRoot(t)
	ctx := context.Background()
	analyze := func(t *testing.T, s *Service) OperatorStats {
		t.Helper()
		req := confirmed("t", spec)
		req.Explain = ExplainAnalyze
		res, err := s.Query(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		if got := string(res.Result.Data); got != `[{"count_all":1000}]` {
			t.Fatalf("data %s", got)
		}
		checkAnalysis(t, res.Analyze, res.Result.RowCount)
		return res.Analyze.Operators[len(res.Analyze.Operators)-1]
	}
	t.Run("pushed", func(t *testing.T) {
		s, alloc := newTestService(t, root, 0, nil)
		scan := analyze(t, s)
		if scan.Op != "filter+count" || scan.RowsIn != explainRows || scan.ZonesSkipped != 0 || !strings.Contains(scan.Node, "filters=[id BETWEEN") {
			t.Errorf("scan %+v, want a count of a scan with the filter pushed reading %d rows", scan, explainRows)
		}
		waitFreed(t, alloc)
	})
	t.Run("zones", func(t *testing.T) {
		cache := colcache.New(colcache.Options{Budget: 64 << 20})
		defer cache.Purge()
		s, alloc := newTestService(t, root, 0, func(c *Config) { c.Cache = cache })
		if _, err := s.Query(ctx, confirmed("t", planner.Spec{Aggs: spec.Aggs})); err != nil { // fills the cache
			t.Fatal(err)
		}
		scan := analyze(t, s)
		if scan.Op != "scan" || scan.ZonesSkipped == 0 || scan.RowsIn >= explainRows/2 || scan.RowsIn < 1000 {
			t.Errorf("scan %+v, want zones skipped and at least 1000 rows read", scan)
		}
		waitFreed(t, alloc)
	})
}
