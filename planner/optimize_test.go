package planner_test

import (
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/quarrydb/quarry/planner"
)

// applyRule builds spec, applies exactly one rule to a clone (then
// re-resolves indices) and returns the printed plan.
func applyRule(t *testing.T, js string, rule func(planner.Node, planner.OptimizeOptions) (planner.Node, error), opts planner.OptimizeOptions) string {
	t.Helper()
	return applyRuleOn(t, testInput(), js, rule, opts)
}

// applyRuleOn is applyRule over input in.
func applyRuleOn(t *testing.T, in planner.Input, js string, rule func(planner.Node, planner.OptimizeOptions) (planner.Node, error), opts planner.OptimizeOptions) string {
	t.Helper()
	n, err := planner.Build(spec(t, js), in)
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

// zonesNonString uses every predicate whose columns are not strings.
type zonesNonString struct{}

func (zonesNonString) UsesZoneFilter(p planner.Predicate, in *arrow.Schema) bool {
	if p.Op == planner.OpAny {
		for _, m := range p.Any {
			if !(zonesNonString{}).UsesZoneFilter(m, in) {
				return false
			}
		}
		return true
	}
	return in.Field(p.Index).Type.ID() != arrow.STRING
}

func TestRuleZoneFilters(t *testing.T) {
	js := `{"columns":["region"],"filters":[{"col":"qty","op":"gt","value":1},{"col":"region","op":"contains","value":"n"},{"any":[{"col":"paid","op":"eq","value":true},{"col":"price","op":"lt","value":5}]}]}`
	got := applyRule(t, js, planner.ZoneFilters, planner.OptimizeOptions{Zones: zonesNonString{}})
	// The Filter keeps every predicate; the Scan gets copies of the usable ones.
	wantPlan(t, got,
		"Project: region",
		"  Filter: qty > 1 AND region CONTAINS 'n' AND (paid = true OR price < 5)",
		"    Scan: sales/orders zone-filter=[qty > 1 AND (paid = true OR price < 5)]")
	got = applyRule(t, js, planner.ZoneFilters, planner.OptimizeOptions{})
	if strings.Contains(got, "zone-filter") {
		t.Fatalf("zone filters without a ZoneFilterer:\n%s", got)
	}
	// In the pipeline: after projection pushdown, indices into the
	// narrowed scan.
	n, err := planner.Build(spec(t, js), testInput())
	if err != nil {
		t.Fatal(err)
	}
	o, err := planner.Optimize(n, planner.OptimizeOptions{Zones: zonesNonString{}})
	if err != nil {
		t.Fatal(err)
	}
	checkIndices(t, o)
	wantPlan(t, strings.TrimSpace(planner.String(o)),
		"Project: region",
		"  Filter: qty > 1 AND region CONTAINS 'n' AND (paid = true OR price < 5)",
		"    Scan: sales/orders columns=[region, qty, price, paid] zone-filter=[qty > 1 AND (paid = true OR price < 5)]")
	s := planner.ScanOf(o)
	for _, p := range append(s.ZoneFilters[:1:1], s.ZoneFilters[1].Any...) {
		if s.Out.Field(p.Index).Name != p.Col {
			t.Fatalf("zone filter on %s resolved to column %d of %v", p.Col, p.Index, s.Out)
		}
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
	// An expression filter's inner Project (restoring the input's columns)
	// is narrowed to what the plan above reads, so the scan reads only that
	// and the filter's own inputs.
	got = applyRule(t, `{"columns":["order_id"],"filters":[{"expr":"qty > 2 AND lower(region) = 'north'"}]}`,
		planner.PushProjection, planner.OptimizeOptions{})
	wantPlan(t, got,
		"Project: order_id",
		"  Project: order_id",
		"    Filter: __filter_0 = true",
		"      Compute: qty > 2 AND lower(region) = 'north' AS __filter_0",
		"        Scan: sales/orders columns=[order_id, region, qty]")
	// count(*) over an expression filter: the inner Project keeps its first
	// column for row counts; the scan reads it and the filter's input only.
	got = applyRule(t, `{"aggs":[{"col":"*","fn":"count"}],"filters":[{"expr":"qty > 2"}]}`,
		planner.PushProjection, planner.OptimizeOptions{})
	if !strings.Contains(got, "columns=[order_id, qty]") {
		t.Fatalf("count(*) over an expr filter reads more than order_id and qty:\n%s", got)
	}
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
	if got := strings.Join(names, ","); got != "fold_constants,join_cross_order,push_join_residual,expr_filter_preds,derive_join_ors,or_column_preds,push_join_filters,semi_join_reduce,join_reduce_right,join_filtering_first,push_filters,push_limit,push_limit_union,push_projection_union,push_projection,zone_filters" {
		t.Fatalf("rules: %s", got)
	}
}
