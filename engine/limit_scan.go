package engine

import (
	"math"

	"github.com/quarrydb/quarry/planner"
)

// A limit directly over a scan (through projections only, so nothing
// drops rows in between) tells the source how many rows will be read
// (catalog.ScanOptions.Limit): a remote engine then computes and sends
// only those; every other source ignores it and the limit stops reading
// early as before.

// limitFor registers the rows limit n reads from the scan below it, if any.
func (ex *exec) limitFor(n *planner.Limit) {
	if n.Count < 0 {
		return
	}
	in := n.Input
	for {
		p, ok := in.(*planner.Project)
		if !ok {
			break
		}
		in = p.Input
	}
	s, ok := in.(*planner.Scan)
	if !ok {
		return
	}
	rows := n.Count
	if off := max(n.Offset, 0); off <= math.MaxInt64-rows {
		rows += off
	} else {
		return
	}
	if rows == 0 {
		rows = 1 // 0 means no limit: read one row, which the limit drops
	}
	if ex.limits == nil {
		ex.limits = map[*planner.Scan]int64{}
	}
	ex.limits[s] = rows
}
