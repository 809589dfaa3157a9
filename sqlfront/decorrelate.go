package sqlfront

import (
	pg "github.com/pganalyze/pg_query_go/v6"
	"google.golang.org/protobuf/proto"

	"github.com/quarrydb/quarry/internal/qerr"
	"github.com/quarrydb/quarry/planner"
)

// Decorrelation: a subquery in WHERE (or the SELECT list) that reads
// columns of the enclosing block only in AND-ed conditions of its own
// WHERE is rewritten to a join. Its WHERE is split against the enclosing
// block's FROM scope (see split):
//
//   - local conditions (no outer column) stay in the subquery;
//   - correlation keys, inner_expr = outer_column, become join keys: the
//     subquery outputs inner_expr as __k0, __k1, ... and the enclosing
//     block joins it on outer_column = __kN;
//   - other correlated conditions (l3.l_suppkey <> l1.l_suppkey) become
//     the join's residual (Join.Residual, knob join[].where); the inner
//     columns they read are output as __r0, __r1, ...
//
// [NOT] EXISTS is then a semi (anti) join; x IN (SELECT y ...) a semi join
// on x = y plus the keys; x NOT IN (SELECT y ...) an anti join on x = y
// plus the keys whose result is filtered by the SQL null rule (notIn); a
// scalar aggregate subquery is the aggregate grouped by the keys, left
// joined on them, with the aggregate's value over no rows (count is 0)
// where no group matches. Anything else that reads an outer column is
// refused as a correlated subquery (compiler.correlated).

// corrKey is one correlation equality: outer (a column of the enclosing
// rows, by its plan name) = inner (an expression of the subquery).
type corrKey struct {
	outer string
	inner *pg.Node
}

// corr is a subquery's WHERE split against the enclosing block.
type corr struct {
	local    []*pg.Node
	keys     []corrKey
	residual []*pg.Node // cloned; inner column references rewritten by residualRefs
	inner    *scope     // the subquery's FROM scope
}

func (k *corr) correlated() bool { return len(k.keys) > 0 || len(k.residual) > 0 }

// subEnv is the CTE environment inside sel (its own WITH clause on top of env).
func subEnv(sel *pg.SelectStmt, env *ctes) *ctes {
	if sel.WithClause != nil {
		for _, n := range sel.WithClause.Ctes {
			cte := n.GetCommonTableExpr()
			env = &ctes{defs: map[string]*pg.CommonTableExpr{cte.Ctename: cte}, parent: env}
		}
	}
	return env
}

// refSide tells where a column reference resolves: 'i' in the subquery's
// FROM (innermost wins, as in SQL), 'o' in the enclosing block, 0 neither.
func (b *block) refSide(ref *pg.ColumnRef, inner *scope) byte {
	outer := b.c.outer
	b.c.outer = nil
	defer func() { b.c.outer = outer }()
	if _, _, err := inner.column(b.c, ref); err == nil {
		return 'i'
	}
	if _, _, err := b.f.scope.column(b.c, ref); err == nil {
		return 'o'
	}
	return 0
}

// refs are the column references of n outside its subqueries.
func refs(n *pg.Node) []*pg.ColumnRef {
	var out []*pg.ColumnRef
	walk(n, func(x *pg.Node) bool {
		if r := x.GetColumnRef(); r != nil {
			out = append(out, r)
		}
		return true
	})
	return out
}

// split splits the WHERE of the subquery sel (not a set operation)
// against the enclosing block's scope.
func (b *block) split(sel *pg.SelectStmt) (*corr, error) {
	k := &corr{}
	if sel.WhereClause == nil || isSetOp(sel) || len(sel.ValuesLists) > 0 {
		return k, nil
	}
	f, err := inSubquery(b.c, b.f.scope, func() (*from, error) { return b.c.fromClause(sel, subEnv(sel, b.env)) })
	if err != nil {
		return nil, err
	}
	k.inner = f.scope
	for _, q := range conjuncts(sel.WhereClause) {
		outer := false
		for _, r := range refs(q) {
			outer = outer || b.refSide(r, k.inner) == 'o'
		}
		switch {
		case !outer:
			k.local = append(k.local, q)
		default:
			if key, ok := b.corrKey(q, k.inner); ok {
				k.keys = append(k.keys, key)
			} else {
				k.residual = append(k.residual, proto.Clone(q).(*pg.Node))
			}
		}
	}
	return k, nil
}

// corrKey recognizes outer_column = inner_expr (either way round).
func (b *block) corrKey(q *pg.Node, inner *scope) (corrKey, bool) {
	a := q.GetAExpr()
	if a == nil || a.Kind != pg.A_Expr_Kind_AEXPR_OP || len(a.Name) != 1 || a.Name[0].GetString_().GetSval() != "=" || a.Lexpr == nil {
		return corrKey{}, false
	}
	for _, sides := range [][2]*pg.Node{{a.Lexpr, a.Rexpr}, {a.Rexpr, a.Lexpr}} {
		ref := sides[0].GetColumnRef()
		if ref == nil || b.refSide(ref, inner) != 'o' {
			continue
		}
		innerOnly := true
		for _, r := range refs(sides[1]) {
			innerOnly = innerOnly && b.refSide(r, inner) == 'i'
		}
		if !innerOnly || sides[1].GetSubLink() != nil {
			continue
		}
		name, typ, err := b.f.scope.column(b.c, ref)
		if err != nil || typ == nil {
			continue
		}
		return corrKey{outer: name, inner: sides[1]}, true
	}
	return corrKey{}, false
}

// grouped reports an aggregating SELECT (GROUP BY, HAVING or an aggregate
// in the SELECT list).
func groupedSelect(sel *pg.SelectStmt) bool {
	if len(sel.GroupClause) > 0 || sel.HavingClause != nil {
		return true
	}
	for _, t := range sel.TargetList {
		if hasAgg(t.GetResTarget().GetVal()) {
			return true
		}
	}
	return false
}

// hasAgg reports an aggregate call in n (outside window calls and subqueries).
func hasAgg(n *pg.Node) bool {
	agg := false
	walk(n, func(x *pg.Node) bool {
		agg = agg || isAgg(x) != nil
		return isWindow(x) == nil
	})
	return agg
}

// rewritable reports whether a correlated subquery can be rewritten: a
// plain SELECT block without LIMIT/OFFSET or DISTINCT ON.
func (b *block) rewritable(sel *pg.SelectStmt, sl *pg.SubLink, grouped bool) error {
	if isSetOp(sel) || sel.LimitCount != nil || sel.LimitOffset != nil || len(sel.ValuesLists) > 0 || groupedSelect(sel) != grouped {
		what := "a set operation, LIMIT/OFFSET or VALUES"
		if groupedSelect(sel) != grouped {
			what = "GROUP BY, HAVING or aggregates"
			if grouped {
				what = "no aggregate"
			}
		}
		return b.c.errAt(sl.Location, qerr.CodeUnsupportedSQL, "this correlated subquery cannot be rewritten to a join (it has %s)", what).
			WithHint("correlated subqueries are decorrelated when they are plain SELECTs (EXISTS, IN) or one aggregate (scalar) whose WHERE relates them to the outer query with AND-ed conditions; join a grouped subquery in FROM instead")
	}
	return nil
}

// rewrite is sel with WHERE reduced to the local conditions, the SELECT
// list replaced by targets (named), and the correlation keys appended as
// __k0, __k1, ... (and as GROUP BY keys when group is set).
func (k *corr) rewrite(sel *pg.SelectStmt, targets []*pg.Node, group bool) *pg.SelectStmt {
	sub := proto.Clone(sel).(*pg.SelectStmt)
	sub.WhereClause = nil
	if len(k.local) > 0 {
		sub.WhereClause = pg.MakeBoolExprNode(pg.BoolExprType_AND_EXPR, k.local, -1)
		if len(k.local) == 1 {
			sub.WhereClause = k.local[0]
		}
	}
	sub.TargetList = targets
	sub.SortClause = nil
	for i, key := range k.keys {
		sub.TargetList = append(sub.TargetList, pg.MakeResTargetNodeWithNameAndVal(keyName(i), key.inner, -1))
		if group {
			sub.GroupClause = append(sub.GroupClause, key.inner)
		}
	}
	return sub
}

func keyName(i int) string { return hiddenName("k", i) }

// residualRefs rewrites the inner column references of the residual
// conditions to alias.__rN and appends them to sub's SELECT list; it
// returns the scope the residual renders in (the enclosing block's plus
// the subquery's output columns).
func (b *block) residualRefs(k *corr, sub *pg.SelectStmt, alias string) *scope {
	seen := map[string]string{}
	for _, q := range k.residual {
		for _, r := range refs(q) {
			if b.refSide(r, k.inner) != 'i' {
				continue
			}
			name, _, _ := k.inner.column(b.c, r)
			out, ok := seen[name]
			if !ok {
				out = hiddenName("r", len(seen))
				seen[name] = out
				sub.TargetList = append(sub.TargetList, pg.MakeResTargetNodeWithNameAndVal(out, proto.Clone(&pg.Node{Node: &pg.Node_ColumnRef{ColumnRef: r}}).(*pg.Node), -1))
			}
			r.Fields = []*pg.Node{pg.MakeStrNode(alias), pg.MakeStrNode(out)}
		}
	}
	return &scope{rels: append(append([]rel(nil), b.f.scope.rels...), rel{names: []string{alias}}), using: b.f.scope.using}
}

// joinSub lowers sub (a rewritten subquery) and appends it to the block's
// joins as alias with the given type, keys and residual.
func (b *block) joinSub(sub *pg.SelectStmt, alias string, typ planner.JoinType, on []planner.JoinOn, where string, rowCount int64) (planner.Node, error) {
	return b.joinSubAt(b.rows(), sub, alias, typ, on, where, rowCount)
}

// joinSubAt is joinSub at level lv (the FROM rows or the groups).
func (b *block) joinSubAt(lv level, sub *pg.SelectStmt, alias string, typ planner.JoinType, on []planner.JoinOn, where string, rowCount int64) (planner.Node, error) {
	node, err := inSubquery(b.c, b.f.scope, func() (planner.Node, error) {
		node, _, err := b.c.selectPlan(sub, b.env)
		return node, err
	})
	if err != nil {
		return nil, err
	}
	*lv.joins = append(*lv.joins, planner.JoinSpec{Dataset: alias, As: alias, Type: typ, On: on, Where: where})
	in := planner.Input{Dataset: alias, Schema: node.Schema(), Node: node}
	if rowCount > 0 {
		in.RowCount, in.RowCountExact = rowCount, true
	}
	*lv.ins = append(*lv.ins, in)
	return node, nil
}

// keyOn are the join keys outer = alias.__kN.
func (k *corr) keyOn() []planner.JoinOn {
	on := make([]planner.JoinOn, len(k.keys))
	for i, key := range k.keys {
		on[i] = planner.JoinOn{Left: key.outer, Right: keyName(i)}
	}
	return on
}

// renderResidual prints the residual conditions in scope sc (after
// residualRefs rewrote them); the subquery's columns are typed from node.
func (b *block) renderResidual(k *corr, sc *scope, node planner.Node, alias string) (string, error) {
	if len(k.residual) == 0 {
		return "", nil
	}
	r := &sc.rels[len(sc.rels)-1]
	for _, f := range node.Schema().Fields() {
		r.cols = append(r.cols, col{name: f.Name, internal: planner.JoinedName(alias, f.Name), typ: f.Type})
	}
	rd := &renderer{c: b.c, scope: sc}
	text := ""
	for i, q := range k.residual {
		s, err := rd.expr(q)
		if err != nil {
			return "", err
		}
		if i > 0 {
			text += " AND "
		}
		text += "(" + s + ")"
	}
	return text, nil
}

// exists lowers a top-level [NOT] EXISTS (sub) condition of WHERE: a semi
// (anti) join on the correlation keys with the other correlated
// conditions as its residual; an uncorrelated one a test of the
// subquery's row count (a cross join with one row).
func (b *block) exists(sl *pg.SubLink, neg bool) error {
	sel := sl.Subselect.GetSelectStmt()
	k, err := b.split(sel)
	if err != nil {
		return err
	}
	if !k.correlated() {
		n, err := b.countRows(sel)
		if err != nil {
			return err
		}
		op := " > 0"
		if neg {
			op = " = 0"
		}
		b.spec.Filters = append(b.spec.Filters, planner.FilterSpec{Expr: "(" + n + op + ")"})
		return nil
	}
	if err := b.rewritable(sel, sl, false); err != nil {
		return err
	}
	alias := hiddenName("ex", len(b.spec.Join))
	sub := k.rewrite(sel, nil, false)
	sub.DistinctClause = nil
	sc := b.residualRefs(k, sub, alias)
	if len(sub.TargetList) == 0 { // only residual-free keys or none: keep one column
		sub.TargetList = []*pg.Node{pg.MakeResTargetNodeWithNameAndVal(hiddenName("one", 0), pg.MakeAConstIntNode(1, -1), -1)}
	}
	typ := planner.JoinSemi
	if neg {
		typ = planner.JoinAnti
	}
	return b.joinResidualSub(k, sub, sc, alias, typ, k.keyOn())
}

// joinResidualSub lowers sub, renders the residual over its columns and
// joins it.
func (b *block) joinResidualSub(k *corr, sub *pg.SelectStmt, sc *scope, alias string, typ planner.JoinType, on []planner.JoinOn) error {
	node, err := b.joinSub(sub, alias, typ, on, "", 0)
	if err != nil {
		return err
	}
	where, err := b.renderResidual(k, sc, node, alias)
	if err != nil {
		return err
	}
	b.spec.Join[len(b.spec.Join)-1].Where = where
	if len(on) == 0 && where == "" {
		b.spec.Join[len(b.spec.Join)-1].Where = "true"
	}
	return nil
}

// countRows cross joins SELECT count(*) FROM (sel) and returns the count
// column (quoted).
func (b *block) countRows(sel *pg.SelectStmt) (string, error) {
	count := &pg.SelectStmt{
		TargetList: []*pg.Node{pg.MakeResTargetNodeWithNameAndVal(hiddenName("n", 0), countStar(), -1)},
		FromClause: []*pg.Node{{Node: &pg.Node_RangeSubselect{RangeSubselect: &pg.RangeSubselect{
			Subquery: &pg.Node{Node: &pg.Node_SelectStmt{SelectStmt: sel}}, Alias: &pg.Alias{Aliasname: "t"}}}}},
	}
	alias := hiddenName("s", len(b.spec.Join))
	if _, err := b.joinSub(count, alias, planner.JoinCross, nil, "", 1); err != nil {
		return "", err
	}
	return quote(planner.JoinedName(alias, hiddenName("n", 0))), nil
}

func countStar() *pg.Node {
	fc := pg.MakeFuncCallNode([]*pg.Node{pg.MakeStrNode("count")}, nil, -1)
	fc.GetFuncCall().AggStar = true
	return fc
}

// inSub lowers a top-level x [NOT] IN (SELECT y ...) condition of WHERE.
// IN is a semi join on x = y plus the correlation keys (other correlated
// conditions are its residual). NOT IN follows SQL's null rule: a row is
// kept when the subquery has no rows (for its keys), or when x is not
// null, the subquery's y has no null and no y equals x. Uncorrelated it is
// one null-aware anti join (planner.Join.NullAware); correlated, an anti
// join on x = y plus the keys and a left join on the keys with the
// subquery's count(*) and count(y) per key that the rule then filters on.
func (b *block) inSub(sl *pg.SubLink, neg bool) error {
	sel := sl.Subselect.GetSelectStmt()
	ref := sl.Testexpr.GetColumnRef()
	if ref == nil || (len(sl.OperName) > 0 && sl.OperName[0].GetString_().GetSval() != "=") {
		return b.c.errAt(sl.Location, qerr.CodeUnsupportedSQL, "only column [NOT] IN (SELECT ...) is supported").
			WithHint("compare a column: WHERE id IN (SELECT id FROM ...)")
	}
	left, typ, err := b.f.scope.column(b.c, ref)
	if err != nil {
		return err
	}
	if typ == nil {
		return b.c.errAt(sl.Location, qerr.CodeUnsupportedSQL, "[NOT] IN (SELECT ...) needs a plain column on its left").
			WithHint("name the column with its table alias instead of a USING column")
	}
	k, err := b.split(sel)
	if err != nil {
		return err
	}
	if !k.correlated() && !neg {
		return b.semiJoin(sl, left)
	}
	if neg && len(k.residual) > 0 {
		return b.c.errAt(sl.Location, qerr.CodeUnsupportedSQL, "NOT IN over a subquery correlated by a condition other than equality is not supported").
			WithHint("write NOT EXISTS (SELECT ... WHERE y = x AND ...) if the subquery's column has no nulls")
	}
	if k.correlated() {
		if err := b.rewritable(sel, sl, false); err != nil {
			return err
		}
	}
	if len(sel.TargetList) != 1 && !isSetOp(sel) {
		return b.c.errAt(sl.Location, qerr.CodeInvalidArgument, "the IN subquery returns %d columns; it must return one", len(sel.TargetList))
	}
	alias := hiddenName("in", len(b.spec.Join))
	on := append([]planner.JoinOn{{Left: left, Right: hiddenName("v", 0)}}, k.keyOn()...)
	if !neg {
		sub := inSet(sel, k)
		sc := b.residualRefs(k, sub, alias)
		return b.joinResidualSub(k, sub, sc, alias, planner.JoinSemi, on)
	}
	if _, err := b.joinSub(inSet(sel, k), alias, planner.JoinAnti, on, "", 0); err != nil {
		return err
	}
	if !k.correlated() { // one null-aware anti join (engine/join_nullaware.go)
		b.spec.Join[len(b.spec.Join)-1].NullAware = true
		return nil
	}
	n, nn, err := b.setCounts(b.rows(), inSet(sel, k), k, k.keyOn())
	if err != nil {
		return err
	}
	b.spec.Filters = append(b.spec.Filters, planner.FilterSpec{Expr: "(coalesce(" + n + ", 0) = 0 OR (" + quote(left) + " IS NOT NULL AND " + n + " = " + nn + "))"})
	return nil
}

// inSet is the value set of x IN (sel): sel's one column as __v0 and the
// correlation keys as __kN, or sel itself (its column renamed) when
// uncorrelated.
func inSet(sel *pg.SelectStmt, k *corr) *pg.SelectStmt {
	value := hiddenName("v", 0)
	if !k.correlated() {
		return &pg.SelectStmt{
			TargetList: []*pg.Node{pg.MakeResTargetNodeWithNameAndVal(value, pg.MakeColumnRefNode([]*pg.Node{pg.MakeStrNode(value)}, -1), -1)},
			FromClause: []*pg.Node{{Node: &pg.Node_RangeSubselect{RangeSubselect: &pg.RangeSubselect{
				Subquery: &pg.Node{Node: &pg.Node_SelectStmt{SelectStmt: sel}}, Alias: &pg.Alias{Aliasname: "t", Colnames: []*pg.Node{pg.MakeStrNode(value)}}}}}},
		}
	}
	return k.rewrite(sel, []*pg.Node{pg.MakeResTargetNodeWithNameAndVal(value, sel.TargetList[0].GetResTarget().Val, -1)}, false)
}

// setCounts joins count(*) and count(__v0) of set (an inSet) at level lv:
// one row cross joined when uncorrelated, else per correlation key left
// joined on keyOn. It returns the two columns (quoted); where no key
// matched both are null.
func (b *block) setCounts(lv level, set *pg.SelectStmt, k *corr, keyOn []planner.JoinOn) (n, nn string, err error) {
	var group []*pg.Node
	for i := range k.keys {
		group = append(group, pg.MakeColumnRefNode([]*pg.Node{pg.MakeStrNode(keyName(i))}, -1))
	}
	cnt := &pg.SelectStmt{
		TargetList: []*pg.Node{
			pg.MakeResTargetNodeWithNameAndVal(hiddenName("n", 0), countStar(), -1),
			pg.MakeResTargetNodeWithNameAndVal(hiddenName("nn", 0), pg.MakeFuncCallNode([]*pg.Node{pg.MakeStrNode("count")}, []*pg.Node{pg.MakeColumnRefNode([]*pg.Node{pg.MakeStrNode(hiddenName("v", 0))}, -1)}, -1), -1),
		},
		FromClause:  []*pg.Node{{Node: &pg.Node_RangeSubselect{RangeSubselect: &pg.RangeSubselect{Subquery: &pg.Node{Node: &pg.Node_SelectStmt{SelectStmt: set}}, Alias: &pg.Alias{Aliasname: "t"}}}}},
		GroupClause: group,
	}
	for i := range k.keys {
		cnt.TargetList = append(cnt.TargetList, pg.MakeResTargetNodeWithNameAndVal(keyName(i), group[i], -1))
	}
	calias := hiddenName(lv.kind+"cnt", len(*lv.joins))
	jt, rows := planner.JoinCross, int64(1)
	if k.correlated() {
		jt, rows = planner.JoinLeft, 0
	} else {
		keyOn = nil
	}
	if _, err := b.joinSubAt(lv, cnt, calias, jt, keyOn, "", rows); err != nil {
		return "", "", err
	}
	return quote(planner.JoinedName(calias, hiddenName("n", 0))), quote(planner.JoinedName(calias, hiddenName("nn", 0))), nil
}

// corrScalar lowers a correlated scalar aggregate subquery (one aggregate
// column, no GROUP BY) to the aggregate grouped by the correlation keys,
// left joined on them; it returns the value's expression: the joined
// column, or where no group matched the aggregate's value over no rows
// (count(...) is 0, most other aggregates null).
func (b *block) corrScalar(lv level, sl *pg.SubLink, sel *pg.SelectStmt, k *corr) (string, error) {
	if len(k.residual) > 0 {
		return "", b.c.errAt(nodeLoc(k.residual[0]), qerr.CodeUnsupportedSQL, "a correlated scalar subquery may relate to the outer query by equalities only (inner = outer)").
			WithHint("move other conditions on outer columns out of the subquery, or join a grouped subquery in FROM")
	}
	if err := b.rewritable(sel, sl, true); err != nil {
		return "", err
	}
	on, err := b.keyOnAt(lv, k, sl.Location)
	if err != nil {
		return "", err
	}
	val := sel.TargetList[0].GetResTarget().Val
	sub := k.rewrite(sel, []*pg.Node{pg.MakeResTargetNodeWithNameAndVal(hiddenName("v", 0), val, -1)}, true)
	alias := hiddenName(lv.kind+"s", len(*lv.joins))
	if _, err := b.joinSubAt(lv, sub, alias, planner.JoinLeft, on, "", 0); err != nil {
		return "", err
	}
	v := quote(planner.JoinedName(alias, hiddenName("v", 0)))
	empty, strict, err := b.emptyValue(val)
	if err != nil {
		return "", err
	}
	if strict {
		return v, nil
	}
	return "(CASE WHEN " + quote(planner.JoinedName(alias, keyName(0))) + " IS NULL THEN " + empty + " ELSE " + v + " END)", nil
}

// zeroOnEmpty are the aggregates whose value over no rows is 0, not null.
var zeroOnEmpty = map[string]bool{"count": true, "count_distinct": true, "count_if": true, "approx_count_distinct": true}

// emptyValue renders an aggregate expression's value over no rows: each
// aggregate replaced by 0 (the count family) or null. strict reports that
// it is null anyway (aggregates that are null on no rows combined by
// arithmetic with constants), so no CASE is needed.
func (b *block) emptyValue(val *pg.Node) (string, bool, error) {
	strict := true
	var check func(n *pg.Node) bool
	check = func(n *pg.Node) bool {
		switch {
		case n.GetAConst() != nil:
			return false
		case isAgg(n) != nil:
			name, _ := aggName(isAgg(n))
			return !zeroOnEmpty[name]
		case n.GetTypeCast() != nil:
			return check(n.GetTypeCast().Arg)
		case n.GetAExpr() != nil && n.GetAExpr().Kind == pg.A_Expr_Kind_AEXPR_OP && binOps[n.GetAExpr().Name[0].GetString_().GetSval()] != "":
			a := n.GetAExpr()
			return a.Lexpr != nil && check(a.Lexpr) || check(a.Rexpr)
		}
		strict = false
		return false
	}
	if check(val) && strict {
		return "", true, nil
	}
	r := &renderer{c: b.c, scope: &scope{using: map[string]string{}}, hook: func(n *pg.Node) (string, bool, error) {
		if fc := isAgg(n); fc != nil {
			name, _ := aggName(fc)
			if zeroOnEmpty[name] {
				return "0", true, nil
			}
			return "null", true, nil
		}
		return "", false, nil
	}}
	s, err := r.expr(val)
	return s, false, err
}

// existsValue lowers EXISTS (sub) inside an expression: the subquery's
// row count (per correlation key) compared with 0.
func (b *block) existsValue(sl *pg.SubLink) (string, error) {
	sel := sl.Subselect.GetSelectStmt()
	k, err := b.split(sel)
	if err != nil {
		return "", err
	}
	if !k.correlated() {
		n, err := b.countRows(sel)
		return "(" + n + " > 0)", err
	}
	if err := b.rewritable(sel, sl, false); err != nil {
		return "", err
	}
	count := proto.Clone(sel).(*pg.SelectStmt)
	count.TargetList = []*pg.Node{pg.MakeResTargetNodeWithNameAndVal(hiddenName("n", 0), countStar(), -1)}
	count.DistinctClause = nil
	v, err := b.corrScalar(b.rows(), sl, count, k)
	return "(" + v + " > 0)", err
}

// subCondition lowers a top-level WHERE condition that is a subquery test
// ([NOT] EXISTS, x [NOT] IN (SELECT ...)) to joins; ok is false for
// other conditions.
func (b *block) subCondition(q *pg.Node) (ok bool, err error) {
	neg := false
	if be := q.GetBoolExpr(); be != nil && be.Boolop == pg.BoolExprType_NOT_EXPR && len(be.Args) == 1 {
		q, neg = be.Args[0], true
	}
	sl := q.GetSubLink()
	switch {
	case sl == nil:
		return false, nil
	case sl.SubLinkType == pg.SubLinkType_EXISTS_SUBLINK:
		return true, b.exists(sl, neg)
	case sl.SubLinkType == pg.SubLinkType_ANY_SUBLINK:
		return true, b.inSub(sl, neg)
	}
	return false, nil
}
