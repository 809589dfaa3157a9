package engine

import (
	"sync/atomic"

	"github.com/quarrydb/quarry/planner"
)

// An offset directly over a scan without filters is passed to the source
// (catalog.ScanOptions.SkipRows): a source that can leave whole leading
// parts of the file unread (Parquet row groups, by the footer's row
// counts) does so and says how many rows it left out; the limit then
// drops only the rest. Every other source returns every row and the limit
// drops them as before.

// scanSkip is the offset passed to one scan and the rows its source skipped.
type scanSkip struct {
	rows    int64
	skipped atomic.Int64
}

// offsetScan returns the scan limit n's offset can be passed to (directly
// below it or below projections), or nil.
func offsetScan(n *planner.Limit) *planner.Scan {
	if n.Offset <= 0 {
		return nil
	}
	in := n.Input
	for {
		p, ok := in.(*planner.Project) // keeps every row
		if !ok {
			break
		}
		in = p.Input
	}
	s, ok := in.(*planner.Scan)
	if !ok || len(s.Filters) > 0 || len(s.ZoneFilters) > 0 {
		return nil
	}
	return s
}

// skipFor registers the offset of limit n for its scan (see offsetScan)
// and returns the counter of the rows the source skips (nil: none).
func (ex *exec) skipFor(n *planner.Limit) *atomic.Int64 {
	s := offsetScan(n)
	if s == nil {
		return nil
	}
	if ex.skips == nil {
		ex.skips = map[*planner.Scan]*scanSkip{}
	}
	sk := &scanSkip{rows: n.Offset}
	ex.skips[s] = sk
	return &sk.skipped
}

// skipOf is the SkipRows and Skipped of the scan n (0, nil: none).
func (ex *exec) skipOf(n *planner.Scan) (int64, *atomic.Int64) {
	if sk := ex.skips[n]; sk != nil {
		return sk.rows, &sk.skipped
	}
	return 0, nil
}
