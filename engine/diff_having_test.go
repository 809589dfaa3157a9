package engine

import (
	"math/rand/v2"
	"slices"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/quarrydb/quarry/planner"
)

// The differential suite's aggregate-shape extensions (group_by
// expressions, having, post-aggregation columns) draw from their own
// generator x (diffOne seeds it from the same seed pair), so adding them
// left every earlier case, and every kept seed, drawing the same plan.

// randExprKey makes, half the time, a computed column of a's input (a
// Compute: what planner.Build puts below an Aggregate for a group_by
// expression) the first group key of a, as group_by ["expr AS x0", ...].
func randExprKey(x *rand.Rand, a *planner.Aggregate) *planner.Aggregate {
	c, ok := a.Input.(*planner.Compute)
	if !ok || x.IntN(2) == 0 {
		return a
	}
	name := c.Exprs[x.IntN(len(c.Exprs))].Name
	if slices.Contains(a.GroupBy, name) {
		return a
	}
	s := c.Schema()
	i := colIndex(s, name)
	f := s.Field(i)
	f.Type = planner.Decoded(f.Type)
	b := *a
	b.GroupBy = append([]string{name}, a.GroupBy...)
	b.GroupIdx = append([]int{i}, a.GroupIdx...)
	b.Out = arrow.NewSchema(append([]arrow.Field{f}, a.Out.Fields()...), nil)
	return &b
}

// randHaving stacks over the aggregate a (whose reference result is rows)
// what planner.Build puts there: sometimes a having Filter on its keys and
// outputs (OR groups included), then sometimes post-aggregation computed
// columns over the filtered groups.
func randHaving(x *rand.Rand, a *planner.Aggregate, rows [][]any, st *refState) (planner.Node, [][]any) {
	var node planner.Node = a
	if x.IntN(2) == 0 {
		var preds []planner.Predicate
		for range 1 + x.IntN(2) {
			preds = append(preds, randPred(x, a.Out))
		}
		node = filterOf(node, preds...)
		rows = refFilter(rows, preds)
	}
	if x.IntN(3) == 0 {
		node, rows = randCompute(x, node, rows, st)
	}
	return node, rows
}
