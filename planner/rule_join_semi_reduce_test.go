package planner_test

import (
	"testing"

	"github.com/quarrydb/quarry/planner"
)

// rulesNamed applies the named rules of planner.Rules in pipeline order.
func rulesNamed(names ...string) func(planner.Node, planner.OptimizeOptions) (planner.Node, error) {
	return func(n planner.Node, opts planner.OptimizeOptions) (planner.Node, error) {
		for _, r := range planner.Rules {
			for _, name := range names {
				if r.Name != name {
					continue
				}
				var err error
				if n, err = r.Apply(n, opts); err != nil {
					return nil, err
				}
			}
		}
		return n, nil
	}
}

// TestRuleSemiJoinReduce: an aggregate joined on its group keys reads only
// the rows whose key the other side's filtered part has (a semi join with
// a copy of it); otherwise the plan is left alone.
func TestRuleSemiJoinReduce(t *testing.T) {
	agg, err := planner.Build(spec(t, `{"group_by":["region"],"aggs":[{"col":"qty","fn":"avg","as":"avg_qty"}]}`), testInput())
	if err != nil {
		t.Fatal(err)
	}
	in := joinInput(1)
	in.Joins = append(in.Joins, planner.Input{Dataset: "per_region", Schema: agg.Schema(), Node: agg})
	reduce := rulesNamed("push_join_filters", "semi_join_reduce")
	// orders ⋈ regions (manager = 'kim'), then the average per region left joined on the region's name.
	got := applyRuleOn(t, in, `{"join":[{"dataset":"ref/regions","as":"a","on":[{"left":"region","right":"name"}]},
		{"dataset":"per_region","as":"s","type":"left","on":[{"left":"a.name","right":"region"}]}],
		"filters":[{"col":"a.manager","op":"eq","value":"kim"}],"columns":["order_id","s.avg_qty"]}`, reduce, planner.OptimizeOptions{})
	wantPlan(t, got,
		"Project: order_id, s.avg_qty",
		"  Join: left per_region AS s ON a.name = s.region",
		"    Join: inner ref/regions AS a ON region = a.name",
		"      Scan: sales/orders",
		"      Filter: manager = 'kim'",
		"        Scan: ref/regions",
		"    Aggregate: avg(qty) AS avg_qty BY region",
		"      Join: semi ref/regions AS __sj ON region = __sj.name",
		"        Scan: sales/orders",
		"        Project: name",
		"          Filter: manager = 'kim'",
		"            Scan: ref/regions")
	for name, js := range map[string]string{
		// nothing restricts the names the left side has
		"unfiltered": `{"join":[{"dataset":"ref/regions","as":"a","on":[{"left":"region","right":"name"}]},
			{"dataset":"per_region","as":"s","type":"left","on":[{"left":"a.name","right":"region"}]}],"columns":["order_id","s.avg_qty"]}`,
		// a right join outputs the groups no left row matches
		"right join": `{"join":[{"dataset":"ref/regions","as":"a","on":[{"left":"region","right":"name"}]},
			{"dataset":"per_region","as":"s","type":"right","on":[{"left":"a.name","right":"region"}]}],
			"filters":[{"col":"a.manager","op":"eq","value":"kim"}],"columns":["order_id","s.avg_qty"]}`,
		// the join key is not a group key
		"not on the group key": `{"join":[{"dataset":"ref/regions","as":"a","on":[{"left":"region","right":"name"}]},
			{"dataset":"per_region","as":"s","type":"left","on":[{"left":"price","right":"avg_qty"}]}],
			"filters":[{"col":"a.manager","op":"eq","value":"kim"}],"columns":["order_id","s.avg_qty"]}`,
	} {
		before := applyRuleOn(t, in, js, rulesNamed("push_join_filters"), planner.OptimizeOptions{})
		if got := applyRuleOn(t, in, js, reduce, planner.OptimizeOptions{}); got != before {
			t.Errorf("%s: rewritten:\n%s", name, got)
		}
	}
}
