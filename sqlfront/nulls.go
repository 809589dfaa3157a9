package sqlfront

import (
	pg "github.com/pganalyze/pg_query_go/v6"

	"github.com/quarrydb/quarry/planner"
)

// orderSpec lowers the direction and null order of one ORDER BY key of a
// query (its column is set by the caller): ASC/DESC, and NULLS FIRST or
// NULLS LAST (the default in both directions, as in DuckDB; PostgreSQL
// puts nulls first for DESC). USING is refused.
func (c *compiler) orderSpec(sb *pg.SortBy) (planner.OrderSpec, error) {
	o := planner.OrderSpec{Desc: sb.SortbyDir == pg.SortByDir_SORTBY_DESC, NullsFirst: sb.SortbyNulls == pg.SortByNulls_SORTBY_NULLS_FIRST}
	return o, c.checkNulls(sb, true)
}
