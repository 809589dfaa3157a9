package service

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/quarrydb/quarry/internal/qerr"
	"github.com/quarrydb/quarry/planner"
)

// joinRoot writes facts.csv (n rows, key k = i % m) and dims.csv (m rows).
func joinRoot(t *testing.T, n, m int) string {
	t.Helper()
	root := t.TempDir()
	var f, d strings.Builder
	f.WriteString("id,k\n")
	for i := range n {
		fmt.Fprintf(&f, "%d,%d\n", i, i%m)
	}
	d.WriteString("k,label\n")
	for i := range m {
		fmt.Fprintf(&d, "%d,label-%06d\n", i, i)
	}
	for name, body := range map[string]string{"facts.csv": f.String(), "dims.csv": d.String()} {
		if err := os.WriteFile(filepath.Join(root, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

func TestJoinCrossNeedsConfirmation(t *testing.T) {
	s, alloc := newTestService(t, joinRoot(t, 1000, 500), 0, func(c *Config) { c.ConfirmRows = 100_000 })
	spec := planner.Spec{Join: []planner.JoinSpec{{Dataset: "dims", Type: planner.JoinCross}}}
	est, err := s.Estimate(context.Background(), EstimateRequest{Dataset: "facts", Spec: spec})
	if err != nil {
		t.Fatal(err)
	}
	if est.EstimateKind != estimateFormula || est.RowEstimate != 500_000 || !strings.Contains(est.Plan, "Join: cross dims AS dims") || strings.Contains(est.Plan, "Limit") {
		t.Fatalf("estimate: kind %s, rows %d, plan %s", est.EstimateKind, est.RowEstimate, est.Plan)
	}
	res, err := s.Query(context.Background(), QueryRequest{EstimateRequest: EstimateRequest{Dataset: "facts", Spec: spec}})
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != StatusNeedsConfirmation || res.Estimate.RowEstimate != 500_000 {
		t.Fatalf("cross join of 500,000 rows: %+v", res)
	}
	waitFreed(t, alloc)
}

// TestJoinSpillsUnderQueryMemory: a join whose build side exceeds the
// query memory spills (into the artifact directory, cleaned up) and
// answers like the unbounded one.
func TestJoinSpillsUnderQueryMemory(t *testing.T) {
	root := joinRoot(t, 30_000, 20_000)
	spec := planner.Spec{
		Join: []planner.JoinSpec{{Dataset: "dims", Type: planner.JoinLeft, On: []planner.JoinOn{{Left: "k", Right: "k"}}}},
		Aggs: []planner.AggSpec{{Col: "*", Fn: planner.AggCount}, {Col: "dims.label", Fn: planner.AggMax}, {Col: "id", Fn: planner.AggSum}},
	}
	var answers []string
	for _, mem := range []int64{0, 1 << 20} {
		s, alloc := newTestService(t, root, 0, func(c *Config) { c.QueryMemory = mem })
		res, err := s.Query(context.Background(), confirmed("facts", spec))
		if err != nil {
			t.Fatalf("memory %d: %v", mem, err)
		}
		answers = append(answers, string(res.Result.Data))
		ents, _ := os.ReadDir(s.cfg.Artifacts.Dir())
		for _, e := range ents {
			if e.IsDir() {
				t.Errorf("spill directory left behind: %s", e.Name())
			}
		}
		waitFreed(t, alloc)
	}
	want := `[{"count_all":30000,"max_dims.label":"label-019999","sum_id":449985000}]`
	if answers[0] != want || answers[1] != want { // 1 MiB: the 20,000-row build side spills
		t.Fatalf("answers %v, want %s", answers, want)
	}
	// An unknown joined dataset suggests the catalog's ids.
	s, _ := newTestService(t, root, 0, nil)
	_, err := s.Query(context.Background(), confirmed("facts", planner.Spec{Join: []planner.JoinSpec{{Dataset: "dim", On: []planner.JoinOn{{Left: "k", Right: "k"}}}}}))
	if qerr.Code(err) != qerr.CodeDatasetNotFound || !strings.Contains(fmt.Sprint(err.(*qerr.Error).Diagnostics), "dims") {
		t.Fatalf("unknown joined dataset: %v", err)
	}
}
