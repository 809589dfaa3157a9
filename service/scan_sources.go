package service

import (
	"github.com/quarrydb/quarry/catalog"
	"github.com/quarrydb/quarry/planner"
)

// scanSources are the pushdown and zone filterer of each source a plan
// reads (planner.OptimizeOptions.Sources), so the scans of every joined or
// subquery dataset get the filters and zone filters their own source
// takes, as a one-dataset query's scan does.
func scanSources(sources map[string]catalog.Source) map[string]planner.SourceOptions {
	out := make(map[string]planner.SourceOptions, len(sources)+1)
	for id, src := range sources {
		var o planner.SourceOptions
		o.Pushdown, _ = src.(planner.FilterPushdowner)
		o.Zones, _ = src.(planner.ZoneFilterer)
		out[id] = o
	}
	return out
}
