package sqlfront

import (
	pg "github.com/pganalyze/pg_query_go/v6"

	"github.com/quarrydb/quarry/internal/qerr"
	"github.com/quarrydb/quarry/planner"
)

// postJoins are the one-row scalar subqueries read over the groups of a
// grouped block (HAVING sum(x) > (SELECT ...), a SELECT item dividing by
// one): they are cross joined above the aggregate, so such a block builds
// in two stages (see block.build).
type postJoins struct {
	joins []planner.JoinSpec
	ins   []planner.Input
}

// postScalar lowers a scalar subquery over the groups: an uncorrelated
// one to a cross join above the aggregate (it returns the joined column),
// a correlated one (through GROUP BY columns) to its aggregate grouped by
// the correlation keys, left joined above the aggregate (corrScalar).
func (b *block) postScalar(sl *pg.SubLink) (string, error) {
	if sl.SubLinkType != pg.SubLinkType_EXPR_SUBLINK {
		return "", b.c.errAt(sl.Location, qerr.CodeUnsupportedSQL, "this subquery is not supported over the groups of an aggregate query").
			WithHint("use EXISTS, IN or a scalar aggregate subquery")
	}
	if err := b.oneRow(sl); err != nil {
		return "", err
	}
	sel := sl.Subselect.GetSelectStmt()
	if k, err := b.split(sel); err != nil || k.correlated() {
		if err != nil {
			return "", err
		}
		return b.corrScalar(b.groups(), sl, sel, k)
	}
	return b.oneRowJoin(sel, "h", &b.over.joins, &b.over.ins)
}

// oneRowJoin lowers the one-row subquery sel and appends it as a cross
// join (alias kind+N) to joins and ins; it returns its first column, quoted.
func (b *block) oneRowJoin(sel *pg.SelectStmt, kind string, joins *[]planner.JoinSpec, ins *[]planner.Input) (string, error) {
	node, err := inSubquery(b.c, b.f.scope, func() (planner.Node, error) {
		node, _, err := b.c.selectPlan(sel, b.env)
		return node, err
	})
	if err != nil {
		return "", err
	}
	alias := hiddenName(kind, len(*joins))
	*joins = append(*joins, planner.JoinSpec{Dataset: alias, As: alias, Type: planner.JoinCross})
	*ins = append(*ins, planner.Input{Dataset: alias, Schema: node.Schema(), Node: node, RowCount: 1, RowCountExact: true})
	return quote(planner.JoinedName(alias, node.Schema().Field(0).Name)), nil
}

// build plans the block's spec over in. With scalar subqueries over the
// groups it builds in two stages: joins, filters and the aggregate first;
// then, over the groups, the cross joins with the subqueries' rows,
// HAVING (as filters), the SELECT list, DISTINCT, ORDER BY and LIMIT.
func (b *block) build(in planner.Input) (planner.Node, error) {
	if len(b.over.joins) == 0 {
		return planner.Build(b.spec, in)
	}
	if len(b.spec.Windows) > 0 {
		return nil, b.c.errAt(firstLoc(b.sel), qerr.CodeUnsupportedSQL, "window functions with a scalar subquery over the groups are not supported").
			WithHint("compute the aggregate in a subquery first, then the window and the comparison outside")
	}
	groups, err := planner.Build(planner.Spec{Join: b.spec.Join, Filters: b.spec.Filters, GroupBy: b.spec.GroupBy, Aggs: b.spec.Aggs}, in)
	if err != nil {
		return nil, err
	}
	cols := b.spec.Columns
	if cols == nil {
		cols = b.defaultColumns()
	}
	over := planner.Spec{Join: b.over.joins, Filters: b.spec.Having, Columns: cols, Distinct: b.spec.Distinct,
		OrderBy: b.spec.OrderBy, Limit: b.spec.Limit, Offset: b.spec.Offset}
	return planner.Build(over, planner.Input{Dataset: "groups", Schema: groups.Schema(), Node: groups, Joins: b.over.ins})
}
