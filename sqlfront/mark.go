package sqlfront

import (
	pg "github.com/pganalyze/pg_query_go/v6"

	"github.com/quarrydb/quarry/internal/qerr"
	"github.com/quarrydb/quarry/planner"
)

// Subqueries inside expressions: x IN (SELECT y ...) and EXISTS (...) as
// values (in CASE, OR-ed with other conditions, in the SELECT list), and
// subqueries over the groups of a grouped block (HAVING, grouped SELECT
// list), correlated or not.
//
// x IN (SELECT y ...) as a value is a mark join built from a left join and
// a count: the distinct set (y and the correlation keys) is left joined on
// x = y plus the keys, and count(*) and count(y) of the set (per key) are
// joined beside it. SQL's three-valued IN is then
//
//	CASE WHEN coalesce(n, 0) = 0 THEN false       -- empty set
//	     WHEN matched THEN true
//	     WHEN x IS NULL OR n <> nn THEN null       -- unknown
//	     ELSE false END
//
// so NOT (x IN ...) is SQL's NOT IN. Over the groups the joins go above the
// aggregate (block.over), and a correlated subquery may relate to the
// outer query only through its GROUP BY columns.

// level is where a subquery's joins go: the block's FROM rows, or the
// groups of a grouped block (the second build stage, see block.build).
type level struct {
	joins *[]planner.JoinSpec
	ins   *[]planner.Input
	kind  string // alias prefix of the joins
	// col maps a column of the block's FROM rows (a correlation key's
	// outer side) to this level's column; false when it has none.
	col func(name string) (string, bool)
	// left renders the x of x IN (...) as a column of this level.
	left func(n *pg.Node) (string, bool)
}

// rows is the level of the block's FROM rows.
func (b *block) rows() level {
	return level{joins: &b.spec.Join, ins: &b.in.Joins,
		col:  func(name string) (string, bool) { return name, true },
		left: b.preCol}
}

// groups is the level of a grouped block's groups: a FROM column is
// available when it is a GROUP BY key.
func (b *block) groups() level {
	return level{joins: &b.over.joins, ins: &b.over.ins, kind: "h",
		col: func(name string) (string, bool) {
			key, ok := b.keys[quote(name)]
			return key, ok
		},
		left: b.postCol}
}

// keyOnAt are the correlation join keys at level lv.
func (b *block) keyOnAt(lv level, k *corr, loc int32) ([]planner.JoinOn, error) {
	on := k.keyOn()
	for i := range on {
		col, ok := lv.col(on[i].Left)
		if !ok {
			return nil, b.c.errAt(loc, qerr.CodeUnsupportedSQL, "a correlated subquery over the groups may refer only to GROUP BY columns of the outer query").
				WithHint("group by the column the subquery refers to, or move the subquery into WHERE")
		}
		on[i].Left = col
	}
	return on, nil
}

// postSub lowers a subquery over the groups of a grouped block (HAVING,
// a grouped SELECT list): EXISTS, IN, or a scalar aggregate.
func (b *block) postSub(sl *pg.SubLink) (string, error) {
	if text, ok := b.scalars[sl]; ok {
		return text, nil
	}
	var text string
	var err error
	switch sl.SubLinkType {
	case pg.SubLinkType_EXISTS_SUBLINK:
		text, err = b.existsAt(b.groups(), sl)
	case pg.SubLinkType_ANY_SUBLINK:
		text, err = b.inValue(b.groups(), sl)
	default:
		text, err = b.postScalar(sl)
	}
	b.scalars[sl] = text
	return text, err
}

// existsAt lowers EXISTS (sub) as a value at level lv: an uncorrelated one
// tests the subquery's row count, a correlated one whether its distinct
// correlation keys have a match (a left join).
func (b *block) existsAt(lv level, sl *pg.SubLink) (string, error) {
	sel := sl.Subselect.GetSelectStmt()
	k, err := b.split(sel)
	if err != nil {
		return "", err
	}
	if !k.correlated() {
		count := &pg.SelectStmt{
			TargetList: []*pg.Node{pg.MakeResTargetNodeWithNameAndVal(hiddenName("n", 0), countStar(), -1)},
			FromClause: []*pg.Node{{Node: &pg.Node_RangeSubselect{RangeSubselect: &pg.RangeSubselect{
				Subquery: &pg.Node{Node: &pg.Node_SelectStmt{SelectStmt: sel}}, Alias: &pg.Alias{Aliasname: "t"}}}}},
		}
		alias := hiddenName(lv.kind+"s", len(*lv.joins))
		if _, err := b.joinSubAt(lv, count, alias, planner.JoinCross, nil, "", 1); err != nil {
			return "", err
		}
		return "(" + quote(planner.JoinedName(alias, hiddenName("n", 0))) + " > 0)", nil
	}
	if err := b.noResidual(k); err != nil {
		return "", err
	}
	if err := b.rewritable(sel, sl, false); err != nil {
		return "", err
	}
	on, err := b.keyOnAt(lv, k, sl.Location)
	if err != nil {
		return "", err
	}
	sub := k.rewrite(sel, nil, false)
	sub.DistinctClause = []*pg.Node{{}}
	alias := hiddenName(lv.kind+"ex", len(*lv.joins))
	if _, err := b.joinSubAt(lv, sub, alias, planner.JoinLeft, on, "", 0); err != nil {
		return "", err
	}
	return "(" + quote(planner.JoinedName(alias, keyName(0))) + " IS NOT NULL)", nil
}

// noResidual refuses a subquery used as a value that relates to the outer
// query by conditions other than equalities.
func (b *block) noResidual(k *corr) error {
	if len(k.residual) == 0 {
		return nil
	}
	return b.c.errAt(nodeLoc(k.residual[0]), qerr.CodeUnsupportedSQL, "a subquery used as a value may relate to the outer query by equalities only (inner = outer)").
		WithHint("as a WHERE condition of its own ([NOT] EXISTS, IN) other correlated conditions work; or join a grouped subquery in FROM")
}

// inValue lowers x IN (SELECT y ...) as a value at level lv (see the
// comment at the top of this file).
func (b *block) inValue(lv level, sl *pg.SubLink) (string, error) {
	sel := sl.Subselect.GetSelectStmt()
	if len(sl.OperName) > 0 && sl.OperName[0].GetString_().GetSval() != "=" {
		return "", b.c.errAt(sl.Location, qerr.CodeUnsupportedSQL, "only x [NOT] IN (SELECT ...) is supported, not other comparisons with ANY/SOME").
			WithHint("compare with an aggregate instead: x > (SELECT min(y) FROM ...)")
	}
	left, ok := lv.left(sl.Testexpr)
	if !ok {
		return "", b.c.errAt(sl.Location, qerr.CodeUnsupportedSQL, "IN (SELECT ...) inside an expression needs a plain column on its left").
			WithHint("compute the expression in a subquery in FROM first, then test its column")
	}
	k, err := b.split(sel)
	if err != nil {
		return "", err
	}
	if err := b.noResidual(k); err != nil {
		return "", err
	}
	if k.correlated() {
		if err := b.rewritable(sel, sl, false); err != nil {
			return "", err
		}
	}
	if len(sel.TargetList) != 1 && !isSetOp(sel) {
		return "", b.c.errAt(sl.Location, qerr.CodeInvalidArgument, "the IN subquery returns %d columns; it must return one", len(sel.TargetList))
	}
	keyOn, err := b.keyOnAt(lv, k, sl.Location)
	if err != nil {
		return "", err
	}
	set := inSet(sel, k)
	set.DistinctClause = []*pg.Node{{}}
	alias := hiddenName(lv.kind+"m", len(*lv.joins))
	on := append([]planner.JoinOn{{Left: left, Right: hiddenName("v", 0)}}, keyOn...)
	if _, err := b.joinSubAt(lv, set, alias, planner.JoinLeft, on, "", 0); err != nil {
		return "", err
	}
	n, nn, err := b.setCounts(lv, inSet(sel, k), k, keyOn)
	if err != nil {
		return "", err
	}
	matched := quote(planner.JoinedName(alias, hiddenName("v", 0)))
	return "(CASE WHEN coalesce(" + n + ", 0) = 0 THEN false WHEN " + matched + " IS NOT NULL THEN true WHEN " +
		quote(left) + " IS NULL OR " + n + " <> " + nn + " THEN CAST(null AS boolean) ELSE false END)", nil
}
