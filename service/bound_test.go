package service

import (
	"context"
	"sync/atomic"
	"testing"
)

// TestBoundSkipsPreflight: a query whose plan proves its result under the
// confirmation thresholds (planner.ResultBound) scans its dataset once,
// without the sampled preflight; one the plan cannot bound still gets the
// preflight, and needs_confirmation when its estimate is over a threshold.
// Scans are counted by the progress hook's start report (done == 0).
func TestBoundSkipsPreflight(t *testing.T) {
	s, alloc := newTestService(t, slowRoot(t, 50_000), 0, func(c *Config) {
		c.ConfirmRows, c.SampleRows = 1000, 2000
	})
	cases := []struct {
		name    string
		sql     string
		scans   int64
		rows    int64
		confirm bool
	}{
		{name: "global aggregate", sql: `SELECT count(*) AS n, sum(x) AS s FROM "50000"`, scans: 1, rows: 1},
		{name: "limit", sql: `SELECT x, g FROM "50000" LIMIT 150`, scans: 1, rows: 150},
		{name: "limit over an aggregate", sql: `SELECT g, count(*) FROM "50000" GROUP BY g ORDER BY g LIMIT 3`, scans: 1, rows: 3},
		// 50,000 possible groups: the plan proves nothing under 1000, so
		// the preflight sizes it (7 groups) and the query runs again.
		{name: "group by an unbounded key", sql: `SELECT g, count(*) FROM "50000" GROUP BY g`, scans: 2, rows: 7},
		// Over the threshold: the preflight's sample only, not run.
		{name: "every row", sql: `SELECT x, g FROM "50000"`, scans: 1, confirm: true},
		{name: "limit over the threshold", sql: `SELECT x FROM "50000" LIMIT 5000`, scans: 1, confirm: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var scans atomic.Int64
			ctx := WithProgress(context.Background(), func(done, _ int64) {
				if done == 0 {
					scans.Add(1)
				}
			})
			res, err := s.SQL(ctx, SQLRequest{SQL: tc.sql})
			if err != nil {
				t.Fatal(err)
			}
			if got := res.Status == StatusNeedsConfirmation; got != tc.confirm {
				t.Fatalf("needs confirmation %v, want %v: %+v", got, tc.confirm, res)
			}
			if !tc.confirm && res.TotalRows != tc.rows {
				t.Errorf("rows %d, want %d", res.TotalRows, tc.rows)
			}
			if n := scans.Load(); n != tc.scans {
				t.Errorf("scanned %d times, want %d", n, tc.scans)
			}
		})
	}
	waitFreed(t, alloc)
}

// TestEstimateRowBound: estimate_query shows the proven row bound (which
// TestResultBound in the planner shows left out when nothing is proven).
func TestEstimateRowBound(t *testing.T) {
	s, _ := newTestService(t, slowRoot(t, 5_000), 0, nil)
	cases := []struct {
		sql  string
		want int64 // -1: absent
	}{
		{`SELECT g, count(*) FROM "5000" GROUP BY g`, 5000},
		{`SELECT x FROM "5000" LIMIT 20`, 20},
		{`SELECT a.x FROM "5000" a CROSS JOIN "5000" b CROSS JOIN "5000" c CROSS JOIN "5000" d CROSS JOIN "5000" e LIMIT 3`, 3},
	}
	for _, tc := range cases {
		res, err := s.EstimateQuery(context.Background(), EstimateQueryRequest{SQL: tc.sql})
		if err != nil {
			t.Fatalf("%s: %v", tc.sql, err)
		}
		got := int64(-1)
		if res.RowBound != nil {
			got = *res.RowBound
		}
		if got != tc.want {
			t.Errorf("%s: row_bound %d, want %d", tc.sql, got, tc.want)
		}
	}
}
