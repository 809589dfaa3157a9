package service

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/quarrydb/quarry/internal/qerr"
	"github.com/quarrydb/quarry/planner"
)

// TestRoundAndExactAverages: the average of 2-decimal temperatures read from
// CSV is the exact decimal (75.7895, not 75.78949999999999); round: n
// rounds computed float columns (aggregates, expressions) to n significant
// digits in query_data, aggregate and advanced_query and leaves the
// dataset's own float columns alone; round outside 1..17 is refused.
func TestRoundAndExactAverages(t *testing.T) {
	root := t.TempDir()
	csvText := "city,temp\na,75.78\na,75.799\nb,1.10\nb,2.20\n"
	if err := os.WriteFile(filepath.Join(root, "t.csv"), []byte(csvText), 0o644); err != nil {
		t.Fatal(err)
	}
	s, alloc := newTestService(t, root, 0, nil)
	ctx := context.Background()
	data := func(r *QueryResponse, err error) string {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return string(r.Result.Data)
	}
	aggs := []planner.AggSpec{{Fn: "avg", Col: "temp"}, {Fn: "sum", Col: "temp"}}
	byCity := planner.GroupKeys{"city"}
	spec := planner.Spec{GroupBy: byCity, Aggs: aggs, OrderBy: []planner.OrderSpec{{Col: "city"}}}
	for _, c := range []struct {
		name  string
		run   func(round int) (*QueryResponse, error)
		full  []string
		round []string
	}{
		{"query_data", func(n int) (*QueryResponse, error) {
			q := confirmed("t", spec)
			q.Round = n
			return s.Query(ctx, q)
		}, []string{`"avg_temp":75.7895`, `"sum_temp":151.579`, `"avg_temp":1.65`, `"sum_temp":3.3`},
			[]string{`"avg_temp":75.79`, `"sum_temp":151.6`}},
		{"aggregate", func(n int) (*QueryResponse, error) {
			return s.Aggregate(ctx, AggregateRequest{Dataset: "t", GroupBy: byCity, Aggs: aggs, OrderBy: spec.OrderBy,
				DeliveryOptions: DeliveryOptions{Confirm: true, Round: n}})
		}, []string{`"avg_temp":75.7895`}, []string{`"avg_temp":75.79`}},
		{"advanced_query", func(n int) (*QueryResponse, error) {
			return s.SQL(ctx, SQLRequest{SQL: `SELECT city, temp, temp / 3 AS third, avg(temp) OVER (PARTITION BY city) AS a FROM t ORDER BY temp`,
				DeliveryOptions: DeliveryOptions{Confirm: true, Round: n}})
		}, []string{`"temp":75.799`, `"third":0.3666666666666667`, `"a":75.7895`},
			[]string{`"temp":75.799`, `"third":0.3667`, `"a":75.79`}},
	} {
		full, rounded := data(c.run(0)), data(c.run(4))
		for _, w := range c.full {
			if !strings.Contains(full, w) {
				t.Errorf("%s: %s lacks %s", c.name, full, w)
			}
		}
		for _, w := range c.round {
			if !strings.Contains(rounded, w) {
				t.Errorf("%s round 4: %s lacks %s", c.name, rounded, w)
			}
		}
	}
	for _, n := range []int{-1, 18} {
		q := confirmed("t", spec)
		q.Round = n
		if _, err := s.Query(ctx, q); qerr.Code(err) != qerr.CodeInvalidArgument {
			t.Errorf("round %d: %v", n, err)
		}
	}
	waitFreed(t, alloc)
}
