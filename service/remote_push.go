package service

import (
	"github.com/quarrydb/quarry/catalog"
	"github.com/quarrydb/quarry/planner"
)

// pushRemote hands the largest parts of an optimized plan that a source
// runs itself (a Flight SQL remote's aggregates, top-N and joins of its
// own tables) to it (planner.PushSubtree); sources maps each dataset the
// plan scans to its source. Other sources leave the plan as it is.
func pushRemote(plan planner.Node, sources map[string]catalog.Source) (planner.Node, error) {
	return planner.PushSubtree(plan, func(dataset string) planner.SubtreePusher {
		p, _ := sources[dataset].(planner.SubtreePusher)
		return p
	})
}
