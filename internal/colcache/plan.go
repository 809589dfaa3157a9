package colcache

import (
	"github.com/apache/arrow-go/v18/arrow"

	"github.com/quarrydb/quarry/catalog"
	"github.com/quarrydb/quarry/planner"
)

// PlanSchema is the schema to plan a query over src against: for a cache
// Source, its PlanSchema; otherwise the dataset's schema.
func PlanSchema(src catalog.Source, ds *catalog.Dataset) *arrow.Schema {
	if s, ok := src.(*Source); ok {
		return s.PlanSchema()
	}
	return ds.Schema
}

// CachedFor reports whether every column the query spec reads from ds is
// cached (and the file unchanged), i.e. whether running it costs no file
// read. A spec that does not plan is not cached.
func (c *Cache) CachedFor(ds *catalog.Dataset, spec planner.Spec) bool {
	src, ok := c.Wrap(ds).(*Source)
	if !ok {
		return false
	}
	plan, err := planner.Build(spec, planner.Input{Dataset: ds.ID, Schema: ds.Schema, RowCount: ds.RowCount, RowCountExact: ds.RowCountExact})
	if err != nil {
		return false
	}
	if plan, err = planner.Optimize(plan, planner.OptimizeOptions{}); err != nil {
		return false
	}
	for n := plan; n != nil; {
		if s, ok := n.(*planner.Scan); ok {
			return src.Cached(s.Columns)
		}
		ch := n.Children()
		if len(ch) != 1 {
			return false
		}
		n = ch[0]
	}
	return false
}
