package colcache

import (
	"github.com/apache/arrow-go/v18/arrow"

	"github.com/quarrydb/quarry/catalog"
)

// PlanSchema is the schema to plan a query over src against: for a cache
// Source, its PlanSchema; for a source that implements
// catalog.PlanSchemaer, its; otherwise the dataset's schema.
func PlanSchema(src catalog.Source, ds *catalog.Dataset) *arrow.Schema {
	if s, ok := src.(*Source); ok {
		return s.PlanSchema()
	}
	if p, ok := src.(catalog.PlanSchemaer); ok {
		return p.PlanSchema()
	}
	return ds.Schema
}
