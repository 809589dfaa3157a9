package sqlfront

import (
	"encoding/json"
	"errors"
	"slices"
	"strconv"
	"strings"

	pg "github.com/pganalyze/pg_query_go/v6"

	"github.com/quarrydb/quarry/internal/funcs"
	"github.com/quarrydb/quarry/internal/qerr"
	"github.com/quarrydb/quarry/planner"
)

// item is one SELECT list entry after * expansion.
type item struct {
	val  *pg.Node
	name string // the name in the block's plan
	out  string // the output name (name, unless renamed above the plan)
	text string // rendered over the block's row source
}

// block holds the state of one SELECT block being lowered.
type block struct {
	c       *compiler
	sel     *pg.SelectStmt
	f       *from
	pre     *renderer // over the FROM columns
	post    *renderer // over the aggregate's output (grouped blocks)
	items   []item
	grouped bool
	keys    map[string]string // pre-aggregation text -> group key name
	aggOf   map[*pg.Node]string
	winOf   map[*pg.Node]string
	spec    planner.Spec
	in      *planner.Input
	env     *ctes
	scalars map[*pg.SubLink]string
	// post are the scalar subqueries over the groups (HAVING, the SELECT
	// list of a grouped block): cross joins above the aggregate.
	over postJoins
	// renamed is set when an output name collides with a column of the
	// rows the SELECT list is evaluated over: the block's plan names
	// those outputs apart and a projection above renames them.
	renamed bool
}

// selectPlan lowers one SELECT block (and, recursively, its subqueries).
func (c *compiler) selectPlan(sel *pg.SelectStmt, env *ctes) (planner.Node, planner.Spec, error) {
	if err := c.ctx.Err(); err != nil {
		return nil, planner.Spec{}, qerr.As(err)
	}
	if sel.WithClause != nil {
		for _, n := range sel.WithClause.Ctes {
			cte := n.GetCommonTableExpr()
			env = &ctes{defs: map[string]*pg.CommonTableExpr{cte.Ctename: cte}, parent: env}
		}
	}
	if !isSetOp(sel) && hasGroupingSets(sel) {
		var err error
		if sel, err = c.groupingSetsPlan(sel); err != nil {
			return nil, planner.Spec{}, err
		}
	}
	if isSetOp(sel) {
		return c.setOpPlan(sel, env)
	}
	if len(sel.ValuesLists) > 0 {
		node, err := c.valuesPlan(sel)
		return node, planner.Spec{}, err
	}
	f, err := c.fromClause(sel, env)
	if err != nil {
		return nil, planner.Spec{}, err
	}
	b := &block{c: c, sel: sel, f: f, keys: map[string]string{}, aggOf: map[*pg.Node]string{}, winOf: map[*pg.Node]string{}}
	in := f.in
	in.Joins = f.ins
	b.in, b.env, b.scalars = &in, env, map[*pg.SubLink]string{}
	b.pre = &renderer{c: c, scope: f.scope, sub: b.scalar}
	b.spec.Join = f.joins
	if len(sel.DistinctClause) > 0 {
		if len(sel.DistinctClause) > 1 || sel.DistinctClause[0].Node != nil {
			return nil, planner.Spec{}, c.errAt(nodeLoc(sel.DistinctClause[0]), qerr.CodeUnsupportedSQL, "DISTINCT ON is not supported").
				WithHint("use row_number() OVER (PARTITION BY ... ORDER BY ...) in a subquery and keep rank 1")
		}
		b.spec.Distinct = true
	}
	if err := b.where(&in, env); err != nil {
		return nil, planner.Spec{}, err
	}
	if err := b.expandTargets(); err != nil {
		return nil, planner.Spec{}, err
	}
	for _, n := range b.clauses() {
		walk(n, func(x *pg.Node) bool {
			if isAgg(x) != nil {
				b.grouped = true
			}
			return true
		})
	}
	if len(sel.GroupClause) > 0 || sel.HavingClause != nil {
		b.grouped = true
	}
	if b.grouped {
		if err := b.groupBy(); err != nil {
			return nil, planner.Spec{}, err
		}
		if err := b.aggregates(); err != nil {
			return nil, planner.Spec{}, err
		}
		b.post = &renderer{c: c, scope: f.scope, hook: b.postHook, sub: b.postSub}
		if sel.HavingClause != nil {
			if b.spec.Having, err = c.filters(sel.HavingClause, b.post, b.postCol); err != nil {
				return nil, planner.Spec{}, err
			}
		}
	} else {
		b.pre.hook = b.winHook
	}
	if err := b.windows(); err != nil {
		return nil, planner.Spec{}, err
	}
	if err := b.columns(); err != nil {
		return nil, planner.Spec{}, err
	}
	if err := b.orderBy(); err != nil {
		return nil, planner.Spec{}, err
	}
	if b.spec.Limit, err = c.limitValue(sel.LimitCount, "LIMIT"); err != nil {
		return nil, planner.Spec{}, err
	}
	if b.spec.Offset, err = c.limitValue(sel.LimitOffset, "OFFSET"); err != nil {
		return nil, planner.Spec{}, err
	}
	node, err := b.build(in)
	if err != nil {
		return nil, planner.Spec{}, err
	}
	if b.renamed {
		if node, err = b.rename(node); err != nil {
			return nil, planner.Spec{}, err
		}
	}
	return node, b.spec, nil
}

func firstLoc(sel *pg.SelectStmt) int32 {
	for sel != nil {
		if len(sel.TargetList) > 0 {
			return nodeLoc(sel.TargetList[0])
		}
		sel = sel.Larg
	}
	return -1
}

// clauses are the nodes that may hold aggregates and windows.
func (b *block) clauses() []*pg.Node {
	var out []*pg.Node
	for _, it := range b.items {
		out = append(out, it.val)
	}
	if b.sel.HavingClause != nil {
		out = append(out, b.sel.HavingClause)
	}
	for _, s := range b.sel.SortClause {
		out = append(out, s.GetSortBy().Node)
	}
	return out
}

// where lowers WHERE (and the non-key conditions of inner joins); x IN
// (SELECT ...) conjuncts become semi joins.
func (b *block) where(in *planner.Input, env *ctes) error {
	var conds []*pg.Node
	if b.sel.WhereClause != nil {
		conds = conjuncts(b.sel.WhereClause)
	}
	conds = append(conds, b.f.where...)
	conds = b.promoteKeys(b.factorOr(conds))
	for _, q := range conds {
		if ok, err := b.subCondition(q); ok || err != nil {
			if err != nil {
				return err
			}
			continue
		}
		if fc := q.GetFuncCall(); fc != nil && isFilterToken(fc) {
			f, err := b.tokenFilter(fc)
			if err != nil {
				return err
			}
			b.spec.Filters = append(b.spec.Filters, f)
			continue
		}
		fs, err := b.c.filters(q, b.pre, b.preCol)
		if err != nil {
			return err
		}
		b.spec.Filters = append(b.spec.Filters, fs...)
	}
	return nil
}

// scalar lowers an uncorrelated scalar subquery that returns exactly one
// row (an aggregate without GROUP BY, HAVING, LIMIT or OFFSET) to a cross
// join with its one row, and returns the joined column.
func (b *block) scalar(sl *pg.SubLink) (string, error) {
	if text, ok := b.scalars[sl]; ok {
		return text, nil
	}
	if sl.SubLinkType == pg.SubLinkType_EXISTS_SUBLINK {
		text, err := b.existsValue(sl)
		b.scalars[sl] = text
		return text, err
	}
	if sl.SubLinkType == pg.SubLinkType_ANY_SUBLINK {
		text, err := b.inValue(b.rows(), sl)
		b.scalars[sl] = text
		return text, err
	}
	sel := sl.Subselect.GetSelectStmt()
	if err := b.oneRow(sl); err != nil {
		return "", err
	}
	if k, err := b.split(sel); err != nil || k.correlated() {
		if err != nil {
			return "", err
		}
		text, err := b.corrScalar(b.rows(), sl, sel, k)
		b.scalars[sl] = text
		return text, err
	}
	name, err := b.oneRowJoin(sel, "s", &b.spec.Join, &b.in.Joins)
	b.scalars[sl] = name
	return name, err
}

// oneRow refuses a scalar subquery that may not return exactly one row
// (only one aggregate column without GROUP BY, HAVING, LIMIT or OFFSET is
// accepted).
func (b *block) oneRow(sl *pg.SubLink) error {
	sel := sl.Subselect.GetSelectStmt()
	one := sel != nil && len(sel.TargetList) == 1 && len(sel.GroupClause) == 0 && sel.HavingClause == nil &&
		sel.LimitCount == nil && sel.LimitOffset == nil && len(sel.DistinctClause) == 0 &&
		!isSetOp(sel)
	one = one && hasAgg(sel.TargetList[0].GetResTarget().Val)
	if !one {
		return b.c.errAt(sl.Location, qerr.CodeUnsupportedSQL, "only scalar subqueries that aggregate to one row are supported (one aggregate column, no GROUP BY, HAVING or LIMIT)").
			WithHint("e.g. WHERE x > (SELECT avg(x) FROM t); join other subqueries in FROM")
	}
	return nil
}

// promoteKeys turns cross joins (comma lists, CROSS JOIN) into inner
// joins on the WHERE equalities between the joined table and the tables
// before it, and returns the other conditions.
func (b *block) promoteKeys(conds []*pg.Node) []*pg.Node {
	for k := range b.spec.Join {
		js := &b.spec.Join[k]
		if js.Type != planner.JoinCross {
			continue
		}
		left := &scope{rels: b.f.scope.rels[:k+1], using: b.f.scope.using}
		right := &scope{rels: b.f.scope.rels[k+1 : k+2]}
		rest := conds[:0:0]
		for _, q := range conds {
			if l, r, ok := b.c.equiKey(q, left, right); ok {
				js.On = append(js.On, planner.JoinOn{Left: l, Right: strings.TrimPrefix(r, js.As+".")})
				js.Type = planner.JoinInner
				continue
			}
			rest = append(rest, q)
		}
		conds = rest
	}
	return conds
}

// semiJoin lowers left IN (SELECT one column ...), uncorrelated, to a
// semi join (see inSub).
func (b *block) semiJoin(sl *pg.SubLink, left string) error {
	in, env := b.in, b.env
	node, err := inSubquery(b.c, b.f.scope, func() (planner.Node, error) {
		node, _, err := b.c.selectPlan(sl.Subselect.GetSelectStmt(), env)
		return node, err
	})
	if err != nil {
		return err
	}
	if node.Schema().NumFields() != 1 {
		return b.c.errAt(sl.Location, qerr.CodeInvalidArgument, "the IN subquery returns %d columns; it must return one", node.Schema().NumFields())
	}
	alias := hiddenName("in", len(b.spec.Join))
	b.spec.Join = append(b.spec.Join, planner.JoinSpec{Dataset: alias, As: alias, Type: planner.JoinSemi,
		On: []planner.JoinOn{{Left: left, Right: node.Schema().Field(0).Name}}})
	in.Joins = append(in.Joins, planner.Input{Dataset: alias, Schema: node.Schema(), Node: node})
	return nil
}

// preCol is a plain FROM column (not a merged USING column).
func (b *block) preCol(n *pg.Node) (string, bool) {
	ref := n.GetColumnRef()
	if ref == nil {
		return "", false
	}
	name, typ, err := b.f.scope.column(b.c, ref)
	return name, err == nil && typ != nil
}

// postCol is a group key or aggregate output.
func (b *block) postCol(n *pg.Node) (string, bool) {
	text, err := b.post.expr(n)
	if err != nil {
		return "", false
	}
	return colName(text)
}

// colName is the column a rendered expression names, if it is one.
func colName(text string) (string, bool) {
	e, _, err := planner.ParseExpr(text)
	if err != nil {
		return "", false
	}
	ref, ok := e.(*planner.ColRef)
	if !ok {
		return "", false
	}
	return ref.Name, true
}

// expandTargets expands * and names the SELECT items.
func (b *block) expandTargets() error {
	for _, t := range b.sel.TargetList {
		rt := t.GetResTarget()
		if ref := rt.Val.GetColumnRef(); ref != nil && ref.Fields[len(ref.Fields)-1].GetAStar() != nil {
			qual := ""
			if len(ref.Fields) == 2 {
				qual = ref.Fields[0].GetString_().GetSval()
			}
			found := false
			for i, r := range b.f.scope.rels {
				if qual != "" && !slices.Contains(r.names, qual) {
					continue
				}
				found = true
				for _, cl := range r.cols {
					if _, merged := b.f.scope.using[cl.name]; merged && qual == "" && i > 0 {
						continue
					}
					fields := []*pg.Node{pg.MakeStrNode(cl.name)}
					if qual != "" || len(b.f.scope.rels) > 1 {
						fields = []*pg.Node{pg.MakeStrNode(r.names[0]), pg.MakeStrNode(cl.name)}
						if _, merged := b.f.scope.using[cl.name]; merged && qual == "" {
							fields = fields[1:]
						}
					}
					b.items = append(b.items, item{val: &pg.Node{Node: &pg.Node_ColumnRef{ColumnRef: &pg.ColumnRef{Fields: fields, Location: ref.Location}}}, name: cl.name})
				}
			}
			if !found {
				return b.c.errAt(ref.Location, qerr.CodeInvalidColumn, "unknown table or alias %q", qual)
			}
			continue
		}
		it := item{val: rt.Val, name: rt.Name}
		b.items = append(b.items, it)
	}
	return nil
}

// groupBy lowers GROUP BY keys (columns, expressions, ordinals, aliases).
func (b *block) groupBy() error {
	for i, g := range b.sel.GroupClause {
		node := g
		if k, ok := ordinal(g); ok {
			if k < 1 || k > len(b.items) {
				return b.c.errAt(nodeLoc(g), qerr.CodeInvalidArgument, "GROUP BY position %d is not in the SELECT list (1 to %d)", k, len(b.items))
			}
			node = b.items[k-1].val
		} else if ref := g.GetColumnRef(); ref != nil && len(ref.Fields) == 1 {
			if _, _, err := b.f.scope.column(b.c, ref); err != nil {
				for _, it := range b.items {
					if it.name != "" && it.name == ref.Fields[0].GetString_().GetSval() {
						node = it.val
					}
				}
			}
		}
		text, err := b.pre.expr(node)
		if err != nil {
			return err
		}
		if _, dup := b.keys[text]; dup {
			continue
		}
		if name, ok := b.preCol(node); ok {
			b.keys[text] = name
			b.spec.GroupBy = append(b.spec.GroupBy, name)
			continue
		}
		name := hiddenName("g", i)
		for _, it := range b.items {
			if it.name != "" && it.val == node || it.name != "" && b.sameText(it.val, text) {
				name = it.name
				break
			}
		}
		b.keys[text] = name
		b.spec.GroupBy = append(b.spec.GroupBy, text+" AS "+quote(name))
	}
	return nil
}

func (b *block) sameText(n *pg.Node, text string) bool {
	t, err := b.pre.expr(n)
	return err == nil && t == text
}

// postHook renders aggregate calls, window calls and group keys as the
// aggregate's output columns.
func (b *block) postHook(n *pg.Node) (string, bool, error) {
	if name, ok := b.aggOf[n]; ok {
		return quote(name), true, nil
	}
	if name, ok := b.winOf[n]; ok {
		return quote(name), true, nil
	}
	if isWindow(n) != nil || n.GetSubLink() != nil {
		return "", false, nil
	}
	// a group key holds no subquery: one inside n is lowered over the
	// groups (postSub), not over the FROM rows
	sub := b.pre.sub
	b.pre.sub = func(*pg.SubLink) (string, error) { return "", errNoSubquery }
	text, err := b.pre.expr(n)
	b.pre.sub = sub
	if errors.Is(err, errNoSubquery) {
		return "", false, nil
	}
	if err == nil {
		if name, ok := b.keys[text]; ok {
			return quote(name), true, nil
		}
	}
	if ref := n.GetColumnRef(); ref != nil {
		if err != nil {
			return "", false, err
		}
		return "", false, b.c.errAt(ref.Location, qerr.CodeInvalidAggregate, "column %s must appear in GROUP BY or be used in an aggregate", text).
			WithHint("add it to GROUP BY, or aggregate it (min, max, first, ...)")
	}
	return "", false, nil
}

// winHook renders window calls as the Window node's output columns.
func (b *block) winHook(n *pg.Node) (string, bool, error) {
	if name, ok := b.winOf[n]; ok {
		return quote(name), true, nil
	}
	return "", false, nil
}

// itemFor is the SELECT item whose expression is exactly n.
func (b *block) itemFor(n *pg.Node) *item {
	for i := range b.items {
		if b.items[i].val == n && b.items[i].name != "" {
			return &b.items[i]
		}
	}
	return nil
}

// aggregates collects the aggregate calls into aggs.
func (b *block) aggregates() error {
	seen := map[string]string{}
	var err error
	for _, n := range b.clauses() {
		walk(n, func(x *pg.Node) bool {
			fc := isAgg(x)
			if fc == nil || err != nil {
				return err == nil
			}
			var a planner.AggSpec
			var key string
			if a, key, err = b.aggSpec(fc); err != nil {
				return false
			}
			if name, ok := seen[key]; ok {
				b.aggOf[x] = name
				return false
			}
			name := hiddenName("a", len(b.spec.Aggs))
			if it := b.itemFor(x); it != nil {
				name = it.name
			} else if b.itemValIs(x) {
				name = aggDefault(a)
			}
			a.As = name
			seen[key] = name
			b.aggOf[x] = name
			b.spec.Aggs = append(b.spec.Aggs, a)
			return false
		})
	}
	return err
}

// itemValIs reports whether n is an unnamed SELECT item's expression.
func (b *block) itemValIs(n *pg.Node) bool {
	for _, it := range b.items {
		if it.val == n {
			return true
		}
	}
	return false
}

// aggDefault is the knob default name of an aggregate.
func aggDefault(a planner.AggSpec) string {
	switch {
	case a.Col == "*":
		return "count_all"
	case a.Q != nil:
		return string(a.Fn) + "_" + strconv.FormatFloat(*a.Q, 'g', -1, 64) + "_" + normName(a.Col)
	}
	name := string(a.Fn) + "_" + a.Col
	if !isPlainName(a.Col) {
		name = string(a.Fn) + "_" + normName(a.Col)
	}
	if a.Arg != nil {
		name += "_" + *a.Arg
	}
	return name
}

func isPlainName(s string) bool { return !planner.LooksLikeExpr(s) }

// aggSpec lowers one aggregate call.
func (b *block) aggSpec(fc *pg.FuncCall) (planner.AggSpec, string, error) {
	fn, _ := aggName(fc)
	decl, _ := funcs.AggFn(fn).Lookup()
	a := planner.AggSpec{Fn: funcs.AggFn(fn)}
	if len(fc.AggOrder) > 0 || fc.AggWithinGroup {
		return a, "", b.c.errAt(fc.Location, qerr.CodeUnsupportedSQL, "ORDER BY inside an aggregate is not supported").
			WithHint("quantile(x, q) takes the quantile directly")
	}
	if fc.AggDistinct && fn != "count_distinct" {
		return a, "", b.c.errAt(fc.Location, qerr.CodeUnsupportedSQL, "DISTINCT is supported in count(DISTINCT x) only").
			WithHint("aggregate a subquery with SELECT DISTINCT instead")
	}
	args := fc.Args
	arg := func(n *pg.Node) (string, error) {
		if name, ok := b.preCol(n); ok {
			return name, nil
		}
		return b.pre.expr(n)
	}
	switch {
	case fc.AggStar:
		a.Col = "*"
	case len(args) == 0:
		return a, "", b.c.errAt(fc.Location, qerr.CodeInvalidAggregate, "%s needs an argument", fn)
	default:
		var err error
		if a.Col, err = arg(args[0]); err != nil {
			return a, "", err
		}
		args = args[1:]
	}
	if decl.Param && len(args) > 0 {
		raw, ok := b.c.literal(args[0])
		var q float64
		if !ok || json.Unmarshal(raw, &q) != nil {
			return a, "", b.c.errAt(nodeLoc(args[0]), qerr.CodeInvalidAggregate, "the quantile of %s must be a number constant", fn)
		}
		a.Q = &q
		args = args[1:]
	}
	if decl.Arg != nil && len(args) > 0 {
		var s string
		if sv := args[0].GetAConst().GetSval(); sv != nil {
			s = sv.Sval
		} else {
			var err error
			if s, err = arg(args[0]); err != nil {
				return a, "", err
			}
		}
		a.Arg = &s
		args = args[1:]
	}
	if len(args) > 0 {
		return a, "", b.c.errAt(nodeLoc(args[0]), qerr.CodeInvalidAggregate, "%s takes fewer arguments", fn)
	}
	if fc.AggFilter != nil {
		var err error
		if a.Filter, err = b.c.filters(fc.AggFilter, b.pre, b.preCol); err != nil {
			return a, "", err
		}
	}
	fj, _ := json.Marshal(a)
	return a, string(fj), nil
}

// Frame option bits of the PostgreSQL parser (parsenodes.h).
const (
	frameNonDefault  = 0x1
	frameRange       = 0x2
	frameRows        = 0x4
	frameGroups      = 0x8
	frameStartUP     = 0x20
	frameEndUP       = 0x40
	frameStartUF     = 0x80
	frameEndUF       = 0x100
	frameStartCR     = 0x200
	frameEndCR       = 0x400
	frameStartOP     = 0x800
	frameEndOP       = 0x1000
	frameStartOF     = 0x2000
	frameEndOF       = 0x4000
	frameExcludeMask = 0x8000 | 0x10000 | 0x20000
)

// windows collects the window calls into windows.
func (b *block) windows() error {
	var err error
	n := 0
	for _, cl := range b.clauses() {
		walk(cl, func(x *pg.Node) bool {
			fc := isWindow(x)
			if fc == nil || err != nil {
				return err == nil
			}
			var ws planner.WindowSpec
			if ws, err = b.windowSpec(fc); err != nil {
				return false
			}
			ws.As = hiddenName("w", n)
			if it := b.itemFor(x); it != nil {
				ws.As = it.name
			} else if b.itemValIs(x) {
				ws.As = planner.WindowDefaultName(ws)
			}
			n++
			b.winOf[x] = ws.As
			b.spec.Windows = append(b.spec.Windows, ws)
			return false
		})
	}
	return err
}

// windowCol is a window argument, partition or order key: it must name a
// column of the rows the window sees.
func (b *block) windowCol(n *pg.Node) (string, error) {
	r := b.pre
	if b.grouped {
		r = b.post
	}
	text, err := r.expr(n)
	if err != nil {
		return "", err
	}
	if name, ok := colName(text); ok {
		return name, nil
	}
	return "", b.c.errAt(nodeLoc(n), qerr.CodeUnsupportedSQL, "window arguments, PARTITION BY and ORDER BY must be columns here, not %s", text).
		WithHint("compute the expression in a subquery (SELECT ..., expr AS k FROM ...) and use k in the window")
}

func (b *block) windowSpec(fc *pg.FuncCall) (planner.WindowSpec, error) {
	name, isAggFn := aggName(fc)
	if !isAggFn {
		name = strings.ToLower(funcName(fc))
	}
	ws := planner.WindowSpec{Fn: funcs.WindowFn(name)}
	if _, ok := ws.Fn.Lookup(); !ok && !isAggFn {
		return ws, b.c.errAt(fc.Location, qerr.CodeInvalidArgument, "unknown window function %s", name).
			With("suggestions", qerr.Suggest(name, funcs.WindowNames(), 3)).WithHint("window functions: %s", strings.Join(funcs.WindowNames(), ", "))
	}
	if fc.AggFilter != nil || len(fc.AggOrder) > 0 || fc.AggDistinct && name != "count_distinct" {
		return ws, b.c.errAt(fc.Location, qerr.CodeUnsupportedSQL, "FILTER, DISTINCT and ORDER BY inside a window function are not supported")
	}
	args := fc.Args
	if fc.AggStar {
		ws.Col = "*"
	} else if len(args) > 0 {
		if name == "ntile" {
			raw, ok := b.c.literal(args[0])
			var k int64
			if !ok || json.Unmarshal(raw, &k) != nil {
				return ws, b.c.errAt(nodeLoc(args[0]), qerr.CodeInvalidArgument, "ntile takes an integer constant")
			}
			ws.Args = []int64{k}
			args = nil
		} else {
			c, err := b.windowCol(args[0])
			if err != nil {
				return ws, err
			}
			ws.Col, args = c, args[1:]
		}
	}
	if decl, ok := funcs.AggFn(name).Lookup(); ok && decl.Param && len(args) > 0 {
		raw, ok := b.c.literal(args[0])
		var q float64
		if !ok || json.Unmarshal(raw, &q) != nil {
			return ws, b.c.errAt(nodeLoc(args[0]), qerr.CodeInvalidArgument, "the quantile must be a number constant")
		}
		ws.Q, args = &q, args[1:]
	}
	for _, a := range args {
		raw, ok := b.c.literal(a)
		var k int64
		if !ok || json.Unmarshal(raw, &k) != nil {
			return ws, b.c.errAt(nodeLoc(a), qerr.CodeUnsupportedSQL, "this window argument must be an integer constant").
				WithHint("lag/lead take (col, offset); nth_value (col, n)")
		}
		ws.Args = append(ws.Args, k)
	}
	over := fc.Over
	def := over
	for _, ref := range []string{over.Refname, over.Name} {
		if ref == "" {
			continue
		}
		found := false
		for _, w := range b.sel.WindowClause {
			if wd := w.GetWindowDef(); wd.Name == ref {
				base := &pg.WindowDef{Name: wd.Name, PartitionClause: wd.PartitionClause, OrderClause: wd.OrderClause,
					FrameOptions: wd.FrameOptions, StartOffset: wd.StartOffset, EndOffset: wd.EndOffset, Location: wd.Location}
				if len(over.OrderClause) > 0 {
					base.OrderClause = over.OrderClause
				}
				if over.FrameOptions&frameNonDefault != 0 {
					base.FrameOptions, base.StartOffset, base.EndOffset = over.FrameOptions, over.StartOffset, over.EndOffset
				}
				def, found = base, true
			}
		}
		if !found {
			return ws, b.c.errAt(over.Location, qerr.CodeInvalidArgument, "window %q is not defined", ref).WithHint("define it in WINDOW %s AS (...)", ref)
		}
	}
	for _, p := range def.PartitionClause {
		c, err := b.windowCol(p)
		if err != nil {
			return ws, err
		}
		ws.PartitionBy = append(ws.PartitionBy, c)
	}
	for _, o := range def.OrderClause {
		sb := o.GetSortBy()
		if err := b.c.checkNulls(sb, false); err != nil {
			return ws, err
		}
		c, err := b.windowCol(sb.Node)
		if err != nil {
			return ws, err
		}
		ws.OrderBy = append(ws.OrderBy, planner.OrderSpec{Col: c, Desc: sb.SortbyDir == pg.SortByDir_SORTBY_DESC})
	}
	if fo := def.FrameOptions; fo&frameNonDefault != 0 {
		if fo&frameGroups != 0 || fo&frameExcludeMask != 0 {
			return ws, b.c.errAt(def.Location, qerr.CodeUnsupportedSQL, "GROUPS frames and EXCLUDE are not supported").WithHint("use ROWS or RANGE")
		}
		fs := &planner.FrameSpec{Type: "rows"}
		if fo&frameRange != 0 {
			fs.Type = "range"
		}
		bound := func(up, uf, cr, op, of int32, off *pg.Node) (string, error) {
			switch {
			case fo&up != 0:
				return "unbounded preceding", nil
			case fo&uf != 0:
				return "unbounded following", nil
			case fo&cr != 0:
				return "current row", nil
			}
			raw, ok := b.c.literal(off)
			if !ok {
				return "", b.c.errAt(nodeLoc(off), qerr.CodeUnsupportedSQL, "frame offsets must be constants")
			}
			if fo&op != 0 {
				return string(raw) + " preceding", nil
			}
			return string(raw) + " following", nil
		}
		var err error
		if fs.Start, err = bound(frameStartUP, frameStartUF, frameStartCR, frameStartOP, frameStartOF, def.StartOffset); err != nil {
			return ws, err
		}
		if fs.End, err = bound(frameEndUP, frameEndUF, frameEndCR, frameEndOP, frameEndOF, def.EndOffset); err != nil {
			return ws, err
		}
		ws.Frame = fs
	}
	return ws, nil
}

// checkNulls refuses USING, and NULLS FIRST unless allowFirst (a window's
// ORDER BY sorts nulls last).
func (c *compiler) checkNulls(sb *pg.SortBy, allowFirst bool) error {
	if sb.Location < 0 {
		sb.Location = nodeLoc(sb.Node)
	}
	if sb.SortbyNulls == pg.SortByNulls_SORTBY_NULLS_FIRST && !allowFirst {
		return c.errAt(sb.Location, qerr.CodeUnsupportedSQL, "NULLS FIRST is not supported in a window's ORDER BY: windows sort nulls last in both directions").
			WithHint("drop NULLS FIRST, or order the window by a column computed in a subquery, e.g. coalesce(x, -1e308)")
	}
	if sb.SortbyDir == pg.SortByDir_SORTBY_USING {
		return c.errAt(sb.Location, qerr.CodeUnsupportedSQL, "ORDER BY ... USING is not supported").WithHint("use ASC or DESC")
	}
	return nil
}

// rowRenderer renders over the rows the SELECT list sees.
func (b *block) rowRenderer() *renderer {
	if b.grouped {
		return b.post
	}
	return b.pre
}

// columns lowers the SELECT list. An unnamed output whose name repeats
// an earlier one gets a _1, _2, ... suffix.
func (b *block) columns() error {
	r := b.rowRenderer()
	rows := b.defaultColumns()
	var entries, outs []string
	for i := range b.items {
		it := &b.items[i]
		text, err := r.expr(it.val)
		if err != nil {
			return err
		}
		it.text = text
		src, plain := colName(text)
		if it.name == "" {
			switch {
			case it.val.GetColumnRef() != nil:
				ref := it.val.GetColumnRef()
				it.name = ref.Fields[len(ref.Fields)-1].GetString_().GetSval()
			case plain:
				it.name = src
			default:
				it.name = normName(text)
			}
			for k, base := 1, it.name; slices.Contains(outs, it.name); k++ {
				it.name = base + "_" + strconv.Itoa(k)
			}
		}
		if slices.Contains(outs, it.name) {
			return b.c.errAt(nodeLoc(it.val), qerr.CodeInvalidArgument, "output column %q appears twice", it.name).
				WithHint("name one of them apart with AS")
		}
		outs = append(outs, it.name)
		it.out = it.name
		switch {
		case plain && src == it.name:
			entries = append(entries, src)
		case slices.Contains(rows, it.name):
			it.name = hiddenName("c", i)
			b.renamed = true
			entries = append(entries, text+" AS "+quote(it.name))
		default:
			entries = append(entries, text+" AS "+quote(it.name))
		}
	}
	if !slices.Equal(entries, rows) {
		b.spec.Columns = entries
	}
	return nil
}

// rename is the projection above a block whose outputs were renamed.
func (b *block) rename(node planner.Node) (planner.Node, error) {
	cols := make([]string, len(b.items))
	for i, it := range b.items {
		cols[i] = it.out
		if it.name != it.out {
			cols[i] = quote(it.name) + " AS " + quote(it.out)
		}
	}
	return planner.Build(planner.Spec{Columns: cols}, planner.Input{Dataset: "select", Schema: node.Schema(), Node: node})
}

// defaultColumns is what an empty columns knob returns.
func (b *block) defaultColumns() []string {
	var out []string
	if b.grouped {
		for _, g := range b.spec.GroupBy {
			if i := strings.LastIndex(g, " AS "); i >= 0 {
				name, _ := colName(g[i+4:])
				out = append(out, name)
			} else {
				out = append(out, g)
			}
		}
		for _, a := range b.spec.Aggs {
			out = append(out, a.As)
		}
	} else {
		for _, r := range b.f.scope.rels {
			for _, cl := range r.cols {
				out = append(out, cl.internal)
			}
		}
	}
	for _, w := range b.spec.Windows {
		out = append(out, w.As)
	}
	return out
}

// orderBy lowers ORDER BY (ordinals, output names, expressions).
func (b *block) orderBy() error {
	r := b.rowRenderer()
	for _, s := range b.sel.SortClause {
		sb := s.GetSortBy()
		o, err := b.c.orderSpec(sb)
		if err != nil {
			return err
		}
		if k, ok := ordinal(sb.Node); ok {
			if k < 1 || k > len(b.items) {
				return b.c.errAt(sb.Location, qerr.CodeInvalidArgument, "ORDER BY position %d is not in the SELECT list (1 to %d)", k, len(b.items))
			}
			o.Col = b.items[k-1].name
		} else if ref := sb.Node.GetColumnRef(); ref != nil && len(ref.Fields) == 1 && b.itemNamed(ref.Fields[0].GetString_().GetSval()) != nil {
			o.Col = b.itemNamed(ref.Fields[0].GetString_().GetSval()).name
		} else {
			text, err := r.expr(sb.Node)
			if err != nil {
				return err
			}
			o.Col = text
			for _, it := range b.items {
				if it.text == text {
					o.Col = it.name
				}
			}
			if o.Col == text {
				if name, ok := colName(text); ok {
					o.Col = name
				}
			}
		}
		b.spec.OrderBy = append(b.spec.OrderBy, o)
	}
	return nil
}

// itemNamed is the SELECT item whose output is named name.
func (b *block) itemNamed(name string) *item {
	for i := range b.items {
		if b.items[i].out == name {
			return &b.items[i]
		}
	}
	return nil
}
