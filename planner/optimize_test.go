package planner_test

import (
	"strings"
	"testing"

	"github.com/quarrydb/quarry/planner"
)

// applyRule builds spec, applies exactly one rule to a clone (then
// re-resolves indices) and returns the printed plan.
func applyRule(t *testing.T, js string, rule func(planner.Node, planner.OptimizeOptions) (planner.Node, error), opts planner.OptimizeOptions) string {
	t.Helper()
	n, err := planner.Build(spec(t, js), testInput())
	if err != nil {
		t.Fatal(err)
	}
	before := planner.String(n)
	o, err := rule(planner.Clone(n), opts)
	if err != nil {
		t.Fatal(err)
	}
	if err := planner.Resolve(o); err != nil {
		t.Fatal(err)
	}
	if planner.String(n) != before {
		t.Fatal("the rule mutated the built plan")
	}
	checkIndices(t, o)
	return strings.TrimSpace(planner.String(o))
}

func wantPlan(t *testing.T, got string, want ...string) {
	t.Helper()
	if w := strings.Join(want, "\n"); got != w {
		t.Fatalf("got:\n%s\nwant:\n%s", got, w)
	}
}

func TestRuleFoldConstants(t *testing.T) {
	got := applyRule(t, `{"columns":["qty * (2 + 3) AS a", "price / (1 - 1) AS b", "qty"]}`, planner.FoldConstants, planner.OptimizeOptions{})
	wantPlan(t, got,
		"Project: a, b, qty",
		"  Compute: qty * 5 AS a, price / 0 AS b",
		"    Scan: sales/orders")
}

func TestRulePushFilters(t *testing.T) {
	js := `{"columns":["region"],"filters":[{"col":"qty","op":"gt","value":1},{"col":"region","op":"contains","value":"n"},{"any":[{"col":"paid","op":"eq","value":true},{"col":"price","op":"lt","value":5}]}]}`
	got := applyRule(t, js, planner.PushFilters, planner.OptimizeOptions{Pushdown: pushAll{}})
	wantPlan(t, got,
		"Project: region",
		"  Filter: region CONTAINS 'n'",
		"    Scan: sales/orders filters=[qty > 1 AND (paid = true OR price < 5)]")
	// Without a pushdowner nothing moves.
	got = applyRule(t, js, planner.PushFilters, planner.OptimizeOptions{})
	if strings.Contains(got, "filters=") {
		t.Fatalf("pushed without a pushdowner:\n%s", got)
	}
}

func TestRulePushLimit(t *testing.T) {
	// Through Project and Compute onto the scan pipeline.
	got := applyRule(t, `{"columns":["qty * 2 AS q2"],"limit":3}`, planner.PushLimit, planner.OptimizeOptions{})
	wantPlan(t, got,
		"Project: q2",
		"  Compute: qty * 2 AS q2",
		"    Limit: offset=0 count=3",
		"      Scan: sales/orders")
	// Onto a Sort below the projection (top-k); a Compute the sort needs stays below it.
	got = applyRule(t, `{"columns":["region"],"order_by":[{"col":"qty * 2"}],"limit":3,"offset":1}`, planner.PushLimit, planner.OptimizeOptions{})
	wantPlan(t, got,
		"Project: region",
		"  Limit: offset=1 count=3",
		"    Sort: qty * 2 asc (nulls last)",
		"      Compute: qty * 2 AS \"qty * 2\"",
		"        Scan: sales/orders")
	// Never below a Deduplicate or Distinct (they drop rows).
	got = applyRule(t, `{"columns":["region"],"deduplicate":true,"limit":3}`, planner.PushLimit, planner.OptimizeOptions{})
	wantPlan(t, got,
		"Limit: offset=0 count=3",
		"  Deduplicate: keep first",
		"    Project: region",
		"      Scan: sales/orders")
}

func TestRulePushProjection(t *testing.T) {
	// Expression inputs are read; computed names are not.
	got := applyRule(t, `{"columns":["order_id","qty * price AS rev"],"filters":[{"any":[{"col":"paid","op":"eq","value":true},{"col":"day","op":"is_null"}]}]}`,
		planner.PushProjection, planner.OptimizeOptions{})
	wantPlan(t, got,
		"Project: order_id, rev",
		"  Compute: qty * price AS rev",
		"    Filter: (paid = true OR day IS NULL)",
		"      Scan: sales/orders columns=[order_id, day, qty, price, paid]")
	// Deduplicate keys and hidden sort keys are read.
	got = applyRule(t, `{"columns":["region"],"deduplicate":true,"order_by":[{"col":"ordered_at"}]}`, planner.PushProjection, planner.OptimizeOptions{})
	wantPlan(t, got,
		"Project: region",
		"  Sort: ordered_at asc (nulls last)",
		"    Deduplicate: keep first BY region",
		"      Scan: sales/orders columns=[ordered_at, region]")
	// Aggregate inputs through a Compute, plus the null_policy filter.
	got = applyRule(t, `{"group_by":["paid"],"aggs":[{"col":"qty * 2","fn":"median"}],"null_policy":"drop"}`, planner.PushProjection, planner.OptimizeOptions{})
	wantPlan(t, got,
		"Aggregate: median(\"qty * 2\") AS median_qty * 2 BY paid",
		"  Filter: qty * 2 IS NOT NULL",
		"    Compute: qty * 2 AS \"qty * 2\"",
		"      Filter: paid IS NOT NULL",
		"        Scan: sales/orders columns=[qty, paid]")
}

func TestOptimizePipelineOrder(t *testing.T) {
	var names []string
	for _, r := range planner.Rules {
		names = append(names, r.Name)
	}
	if got := strings.Join(names, ","); got != "fold_constants,push_filters,push_limit,push_projection" {
		t.Fatalf("rules: %s", got)
	}
}
