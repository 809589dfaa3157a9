package planner_test

import (
	"testing"

	"github.com/quarrydb/quarry/planner"
)

// TestRuleJoinCrossOrder: a cross join that the next inner join connects
// is joined after it; otherwise the plan is left alone.
func TestRuleJoinCrossOrder(t *testing.T) {
	// orders × regions AS a, then regions AS b on keys of both sides.
	got := applyRuleOn(t, joinInput(2), `{"join":[{"dataset":"ref/regions","as":"a","type":"cross"},
		{"dataset":"ref/regions","as":"b","on":[{"left":"qty","right":"rid"},{"left":"a.name","right":"name"}]}],
		"columns":["order_id","a.manager","b.manager"]}`, planner.JoinCrossOrder, planner.OptimizeOptions{})
	wantPlan(t, got,
		"Project: order_id, a.manager, b.manager",
		"  Project: order_id, ordered_at, day, region, qty, price, paid, blob, a.name, a.manager, a.rid, a.big, b.name, b.manager, b.rid, b.big",
		"    Join: inner ref/regions AS a ON b.name = a.name",
		"      Join: inner ref/regions AS b ON qty = b.rid",
		"        Scan: sales/orders",
		"        Scan: ref/regions",
		"      Scan: ref/regions")
	for name, js := range map[string]string{
		"keys on the cross join's right side only": `{"join":[{"dataset":"ref/regions","as":"a","type":"cross"},
			{"dataset":"ref/regions","as":"b","on":[{"left":"a.name","right":"name"}]}],"columns":["order_id"]}`,
		"keys on the left side only": `{"join":[{"dataset":"ref/regions","as":"a","type":"cross"},
			{"dataset":"ref/regions","as":"b","on":[{"left":"qty","right":"rid"}]}],"columns":["order_id"]}`,
		"an outer join": `{"join":[{"dataset":"ref/regions","as":"a","type":"cross"},
			{"dataset":"ref/regions","as":"b","type":"left","on":[{"left":"qty","right":"rid"},{"left":"a.name","right":"name"}]}],"columns":["order_id"]}`,
	} {
		before := applyRuleOn(t, joinInput(2), js, func(n planner.Node, _ planner.OptimizeOptions) (planner.Node, error) { return n, nil }, planner.OptimizeOptions{})
		if got := applyRuleOn(t, joinInput(2), js, planner.JoinCrossOrder, planner.OptimizeOptions{}); got != before {
			t.Errorf("%s: rewritten:\n%s", name, got)
		}
	}
}
