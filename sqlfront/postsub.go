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

// postScalar lowers an uncorrelated scalar subquery over the groups to a
// cross join above the aggregate and returns the joined column. A
// subquery reading the block's columns is refused as correlated.
func (b *block) postScalar(sl *pg.SubLink) (string, error) {
	if text, ok := b.scalars[sl]; ok {
		return text, nil
	}
	if sl.SubLinkType != pg.SubLinkType_EXPR_SUBLINK {
		return "", b.c.errAt(sl.Location, qerr.CodeUnsupportedSQL, "EXISTS over the groups of an aggregate query is not supported").
			WithHint("test EXISTS in WHERE, or aggregate in a subquery first")
	}
	if err := b.oneRow(sl); err != nil {
		return "", err
	}
	name, err := b.oneRowJoin(sl.Subselect.GetSelectStmt(), "h", &b.over.joins, &b.over.ins)
	b.scalars[sl] = name
	return name, err
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
