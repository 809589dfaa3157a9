package service

import (
	"github.com/quarrydb/quarry/catalog"
	"github.com/quarrydb/quarry/planner"
)

// pushRemote hands the largest part of an optimized plan over dataset
// that src runs itself (a Flight SQL remote's aggregates) to it
// (planner.PushSubtree); other sources leave the plan as it is.
func pushRemote(plan planner.Node, dataset string, src catalog.Source) (planner.Node, error) {
	p, ok := src.(planner.SubtreePusher)
	if !ok {
		return plan, nil
	}
	return planner.PushSubtree(plan, dataset, p)
}
