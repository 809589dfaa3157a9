package service

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/quarrydb/quarry/internal/colcache"
	"github.com/quarrydb/quarry/planner"
)

// TestZoneFiltersThroughService: once a dataset is cached (here by a first
// query, 1,000-row batches), a range filter on its sorted column is handed
// to the scan (the plan shows it), the cache skips the batches that cannot
// match, with and without a progress reporter, and the answer is the
// filtered one.
func TestZoneFiltersThroughService(t *testing.T) {
	cache := colcache.New(colcache.Options{Budget: 64 << 20})
	defer cache.Purge()
	s, alloc := newTestService(t, slowRoot(t, 20_000), 0, func(c *Config) { c.Cache = cache })
	ctx := context.Background()
	fill := planner.Spec{Aggs: []planner.AggSpec{{Col: "x", Fn: planner.AggSum}, {Col: "g", Fn: planner.AggCountDistinct}}}
	if _, err := s.Query(ctx, confirmed("20000", fill)); err != nil {
		t.Fatal(err)
	}
	spec := planner.Spec{
		Filters: []planner.FilterSpec{{Col: "x", Op: planner.OpRange, Value: json.RawMessage(`{"min":5000,"max":5999}`)}},
		Aggs:    []planner.AggSpec{{Col: "x", Fn: planner.AggSum}, {Col: "*", Fn: planner.AggCount}},
	}
	est, err := s.Estimate(ctx, EstimateRequest{Dataset: "20000", Spec: spec})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(est.Plan, "zone-filter=[x BETWEEN 5000 AND 5999]") || !strings.Contains(est.Plan, "Filter: x BETWEEN 5000 AND 5999") {
		t.Fatalf("plan:\n%s", est.Plan)
	}
	for _, ctx := range []context.Context{ctx, WithProgress(ctx, func(int64, int64) {})} {
		before := cache.Stats()
		res, err := s.Query(ctx, confirmed("20000", spec))
		if err != nil {
			t.Fatal(err)
		}
		if got := string(res.Result.Data); got != `[{"sum_x":5499500,"count_all":1000}]` {
			t.Fatalf("result %s", got)
		}
		after := cache.Stats()
		if checked, skipped := after.ZoneChecked-before.ZoneChecked, after.ZoneSkipped-before.ZoneSkipped; checked != 20 || skipped != 19 {
			t.Fatalf("checked %d batches, skipped %d; want 20, 19", checked, skipped)
		}
	}
	waitFreed(t, alloc)
}
