package engine

import (
	"github.com/apache/arrow-go/v18/arrow"

	"github.com/quarrydb/quarry/planner"
)

// temporal evaluates date/timestamp arithmetic (a Binary the planner bound
// to a registered operator, planner.Binary.Fn) as the call of that
// operator; the call is built once per node so its kernel is prepared once.
func (ev *evaluator) temporal(x *planner.Binary, cols []arrow.Array, n int) (vec, error) {
	c, ok := ev.lowered[x]
	if !ok {
		if ev.lowered == nil {
			ev.lowered = map[*planner.Binary]*planner.Call{}
		}
		c = x.Call()
		ev.lowered[x] = c
	}
	return ev.call(c, cols, n)
}
