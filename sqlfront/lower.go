package sqlfront

import (
	"context"
	"encoding/json"
	"slices"
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	pg "github.com/pganalyze/pg_query_go/v6"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/quarrydb/quarry/internal/qerr"
	"github.com/quarrydb/quarry/planner"
)

// Catalog resolves table names to planner inputs.
type Catalog interface {
	// Input resolves a table name (a dataset id, or the last element of
	// one when unique) to its planner input. Unknown names are
	// dataset_not_found errors with suggestions.
	Input(ctx context.Context, name string) (planner.Input, error)
}

// Compiled is a statement lowered to a logical plan.
type Compiled struct {
	// Plan is the unoptimized logical plan.
	Plan planner.Node
	// Spec is the knob spec of the outermost SELECT block.
	Spec planner.Spec
	// Datasets are the catalog inputs the plan scans, by dataset id.
	Datasets map[string]planner.Input
	// Explain is "", "plan" or "analyze" (an EXPLAIN prefix).
	Explain string
}

// Compile lowers the statement to a plan over the catalog; params are the
// values of $1, $2, ... (JSON scalars).
func (st *Statement) Compile(ctx context.Context, cat Catalog, params []any) (*Compiled, error) {
	c := &compiler{ctx: ctx, sql: st.sql, cat: cat, params: params, datasets: map[string]planner.Input{}}
	node, spec, err := c.selectPlan(st.sel, nil)
	if err != nil {
		return nil, err
	}
	return &Compiled{Plan: node, Spec: spec, Datasets: c.datasets, Explain: st.Explain}, nil
}

type compiler struct {
	ctx      context.Context
	sql      string
	cat      Catalog
	params   []any
	datasets map[string]planner.Input
	// outer are the FROM scopes of the blocks enclosing the subquery in an
	// expression being lowered (innermost last): a column found there but
	// not in the subquery makes it correlated (see correlated).
	outer []*scope
}

// inSubquery lowers an expression subquery of a block whose FROM scope is s.
func inSubquery[T any](c *compiler, s *scope, lower func() (T, error)) (T, error) {
	c.outer = append(c.outer, s)
	defer func() { c.outer = c.outer[:len(c.outer)-1] }()
	return lower()
}

// correlated reports whether ref, unknown in the current block, names a
// column of an enclosing block: a correlated subquery, which is refused
// as such instead of as an unknown column.
func (c *compiler) correlated(ref *pg.ColumnRef) *qerr.Error {
	outer := c.outer
	c.outer = nil
	defer func() { c.outer = outer }()
	for _, s := range outer {
		if _, _, err := s.column(c, ref); err == nil {
			return c.errAt(ref.Location, qerr.CodeUnsupportedSQL, "correlated subqueries are not supported: %s is a column of the enclosing query", columnText(ref)).
				WithHint("join instead: aggregate the subquery per the correlated column in FROM, e.g. JOIN (SELECT k, avg(x) AS avg_x FROM t GROUP BY k) s ON s.k = o.k, and compare with s.avg_x")
		}
	}
	return nil
}

// columnText is a column reference as written (a.b).
func columnText(ref *pg.ColumnRef) string {
	var parts []string
	for _, f := range ref.Fields {
		if sv := f.GetString_(); sv != nil {
			parts = append(parts, sv.GetSval())
		}
	}
	return strings.Join(parts, ".")
}

// ctes are the CTEs visible in a block, innermost first.
type ctes struct {
	defs   map[string]*pg.CommonTableExpr
	parent *ctes
}

func (e *ctes) lookup(name string) (*pg.CommonTableExpr, *ctes) {
	for x := e; x != nil; x = x.parent {
		if d, ok := x.defs[name]; ok {
			return d, x.parent
		}
	}
	return nil, nil
}

// col is one column visible in a FROM scope.
type col struct {
	name     string // SQL name
	internal string // name in the plan's schema
	typ      arrow.DataType
}

// rel is one FROM item.
type rel struct {
	names   []string // qualifiers that reach it
	cols    []col
	dataset string // the catalog dataset it reads; "" for subqueries and CTEs
}

type scope struct {
	rels []rel
	// using are merged USING columns: SQL name -> expression text.
	using map[string]string
}

func (c *compiler) errAt(loc int32, code, format string, args ...any) *qerr.Error {
	return sqlErr(c.sql, loc, code, format, args...)
}

// column resolves a column reference to its internal name and type.
func (s *scope) column(c *compiler, ref *pg.ColumnRef) (string, arrow.DataType, error) {
	var fields []string
	for _, f := range ref.Fields {
		if f.GetAStar() != nil {
			return "", nil, c.errAt(ref.Location, qerr.CodeUnsupportedSQL, "* is only allowed in the SELECT list and count(*)")
		}
		fields = append(fields, f.GetString_().GetSval())
	}
	var cands []col
	var all []string
	switch len(fields) {
	case 1:
		if u, ok := s.using[fields[0]]; ok {
			return u, nil, nil
		}
		for _, r := range s.rels {
			for _, cl := range r.cols {
				all = append(all, cl.name)
				if cl.name == fields[0] {
					cands = append(cands, cl)
				}
			}
		}
		if len(cands) == 0 {
			for _, r := range s.rels {
				for _, cl := range r.cols {
					if strings.EqualFold(cl.name, fields[0]) {
						cands = append(cands, cl)
					}
				}
			}
		}
	case 2:
		for _, r := range s.rels {
			if !slices.Contains(r.names, fields[0]) {
				continue
			}
			for _, cl := range r.cols {
				all = append(all, fields[0]+"."+cl.name)
				if cl.name == fields[1] {
					cands = append(cands, cl)
				}
			}
			if len(cands) == 0 {
				for _, cl := range r.cols {
					if strings.EqualFold(cl.name, fields[1]) {
						cands = append(cands, cl)
					}
				}
			}
		}
		if all == nil {
			if ce := c.correlated(ref); ce != nil {
				return "", nil, ce
			}
			var quals []string
			for _, r := range s.rels {
				quals = append(quals, r.names...)
			}
			return "", nil, c.errAt(ref.Location, qerr.CodeInvalidColumn, "unknown table or alias %q", fields[0]).
				With("suggestions", qerr.Suggest(fields[0], quals, 3)).WithHint("tables in scope: %s", strings.Join(quals, ", "))
		}
	default:
		return "", nil, c.errAt(ref.Location, qerr.CodeUnsupportedSQL, "column reference %s has too many parts", strings.Join(fields, ".")).
			WithHint("write alias.column; double-quote dataset ids")
	}
	switch len(cands) {
	case 1:
		return cands[0].internal, cands[0].typ, nil
	case 0:
		if ce := c.correlated(ref); ce != nil {
			return "", nil, ce
		}
		name := strings.Join(fields, ".")
		e := c.errAt(ref.Location, qerr.CodeInvalidColumn, "unknown column %q", name).With("column", name)
		if sugg := qerr.Suggest(name, all, 3); len(sugg) > 0 {
			return "", nil, e.With("suggestions", sugg).WithHint("did you mean %s?", strings.Join(sugg, ", "))
		}
		return "", nil, e.WithHint("columns in scope: %s", strings.Join(truncate(all, 30), ", "))
	}
	return "", nil, c.errAt(ref.Location, qerr.CodeInvalidColumn, "column %q is ambiguous", strings.Join(fields, ".")).
		WithHint("qualify it with its table alias, e.g. a.%s", fields[len(fields)-1])
}

func truncate(xs []string, n int) []string {
	if len(xs) > n {
		return append(slices.Clip(xs[:n]), "…")
	}
	return xs
}

// param is the value of $n.
func (c *compiler) param(p *pg.ParamRef) (any, error) {
	if int(p.Number) > len(c.params) {
		return nil, c.errAt(p.Location, qerr.CodeInvalidArgument, "parameter $%d has no value (%d params given)", p.Number, len(c.params)).
			With("field", "params").WithHint("pass params: [value1, value2, ...] for $1, $2, ...")
	}
	v := c.params[p.Number-1]
	switch x := v.(type) {
	case nil, string, bool, int64, json.Number:
		return v, nil
	case float64:
		if x == float64(int64(x)) && x >= -1e15 && x <= 1e15 {
			return int64(x), nil
		}
		return v, nil
	case int:
		return int64(x), nil
	}
	return nil, c.errAt(p.Location, qerr.CodeInvalidArgument, "parameter $%d must be a string, number, boolean or null", p.Number).With("field", "params")
}

// from is the lowered FROM clause of a block.
type from struct {
	in    planner.Input
	joins []planner.JoinSpec
	ins   []planner.Input
	scope *scope
	// where are conditions of inner joins that are not key equalities.
	where []*pg.Node
}

// source lowers one FROM item that is not a join.
func (c *compiler) source(n *pg.Node, env *ctes) (planner.Input, rel, error) {
	switch x := n.Node.(type) {
	case *pg.Node_RangeVar:
		rv := x.RangeVar
		alias := ""
		if rv.Alias != nil {
			alias = rv.Alias.Aliasname
			if len(rv.Alias.Colnames) > 0 {
				return planner.Input{}, rel{}, c.errAt(rv.Location, qerr.CodeUnsupportedSQL, "column aliases on a table are not supported").
					WithHint("rename columns in the SELECT list with AS")
			}
		}
		if def, outer := env.lookup(rv.Relname); def != nil {
			sub := def.Ctequery.GetSelectStmt()
			if sub == nil {
				return planner.Input{}, rel{}, c.errAt(def.Location, qerr.CodeForbiddenSQL, "a CTE must be a SELECT")
			}
			node, _, err := c.selectPlan(sub, outer)
			if err != nil {
				return planner.Input{}, rel{}, err
			}
			if alias == "" {
				alias = rv.Relname
			}
			return c.subInput(alias, node, def.Aliascolnames, def.Location)
		}
		in, err := c.cat.Input(c.ctx, rv.Relname)
		if err != nil {
			if qe, ok := err.(*qerr.Error); ok {
				line, colno := position(c.sql, int(rv.Location))
				qe.With("line", line).With("col", colno).With("fragment", fragment(c.sql, int(rv.Location)))
				if qe.Hint == "" {
					qe.WithHint("tables are dataset ids from get_catalog; double-quote ids with a slash: FROM \"weather/stations\"")
				}
			}
			return planner.Input{}, rel{}, err
		}
		c.datasets[in.Dataset] = in
		names := []string{rv.Relname, in.Dataset, planner.JoinAlias(in.Dataset)}
		if alias != "" {
			names = []string{alias}
		}
		r := rel{names: names, dataset: in.Dataset}
		for _, f := range in.Schema.Fields() {
			r.cols = append(r.cols, col{name: f.Name, internal: f.Name, typ: f.Type})
		}
		return in, r, nil
	case *pg.Node_RangeSubselect:
		rs := x.RangeSubselect
		if rs.Lateral {
			return planner.Input{}, rel{}, c.errAt(nodeLoc(rs.Subquery), qerr.CodeUnsupportedSQL, "LATERAL subqueries are not supported").
				WithHint("join the subquery on keys instead")
		}
		sub := rs.Subquery.GetSelectStmt()
		node, _, err := c.selectPlan(sub, env)
		if err != nil {
			return planner.Input{}, rel{}, err
		}
		alias := "subquery"
		var colnames []*pg.Node
		if rs.Alias != nil {
			alias, colnames = rs.Alias.Aliasname, rs.Alias.Colnames
		}
		return c.subInput(alias, node, colnames, -1)
	case *pg.Node_JoinExpr:
		return planner.Input{}, rel{}, c.errAt(nodeLoc(n), qerr.CodeUnsupportedSQL, "a parenthesized join on the right of a join is not supported").
			WithHint("write joins left to right: a JOIN b ON ... JOIN c ON ...")
	}
	return planner.Input{}, rel{}, c.errAt(nodeLoc(n), qerr.CodeUnsupportedSQL, "FROM item %s is not supported", nodeName(n))
}

// subInput makes a subquery's plan a FROM input.
func (c *compiler) subInput(alias string, node planner.Node, colnames []*pg.Node, loc int32) (planner.Input, rel, error) {
	if len(colnames) > 0 {
		var err error
		if node, err = c.renameColumns(node, colnames, loc); err != nil {
			return planner.Input{}, rel{}, err
		}
	}
	in := planner.Input{Dataset: alias, Schema: node.Schema(), Node: node}
	planner.Inspect(node, func(n planner.Node, _ int) bool {
		if s, ok := n.(*planner.Scan); ok && in.RowCount < s.RowCount {
			in.RowCount = s.RowCount
		}
		return true
	})
	r := rel{names: []string{alias}}
	for _, f := range in.Schema.Fields() {
		r.cols = append(r.cols, col{name: f.Name, internal: f.Name, typ: f.Type})
	}
	return in, r, nil
}

// fromClause lowers FROM: one item, possibly a left-deep chain of joins.
func (c *compiler) fromClause(sel *pg.SelectStmt, env *ctes) (*from, error) {
	if len(sel.FromClause) == 0 {
		in, err := noFrom()
		if err != nil {
			return nil, err
		}
		return &from{in: in, scope: &scope{rels: []rel{{}}, using: map[string]string{}}}, nil
	}
	// A comma list is a chain of cross joins, in the written order; WHERE
	// equalities between a table and the ones before it make them inner
	// joins (see block.promoteKeys).
	item := sel.FromClause[0]
	for _, n := range sel.FromClause[1:] {
		item = &pg.Node{Node: &pg.Node_JoinExpr{JoinExpr: &pg.JoinExpr{Jointype: pg.JoinType_JOIN_INNER, Larg: item, Rarg: n}}}
	}
	f := &from{scope: &scope{using: map[string]string{}}}
	if err := c.fromItem(item, env, f); err != nil {
		return nil, err
	}
	return f, nil
}

func (c *compiler) fromItem(n *pg.Node, env *ctes, f *from) error {
	j := n.GetJoinExpr()
	if j == nil {
		in, r, err := c.source(n, env)
		if err != nil {
			return err
		}
		f.in = in
		f.scope.rels = append(f.scope.rels, r)
		return nil
	}
	if j.IsNatural {
		return c.errAt(nodeLoc(j.Rarg), qerr.CodeUnsupportedSQL, "NATURAL JOIN is not supported").WithHint("write JOIN ... USING (cols) or ON")
	}
	if j.Alias != nil || j.JoinUsingAlias != nil {
		return c.errAt(nodeLoc(j.Rarg), qerr.CodeUnsupportedSQL, "an alias on a join is not supported")
	}
	if err := c.fromItem(j.Larg, env, f); err != nil {
		return err
	}
	in, r, err := c.source(j.Rarg, env)
	if err != nil {
		return err
	}
	alias := r.names[0]
	if in.Node == nil && len(r.names) > 1 {
		alias = planner.JoinAlias(in.Dataset)
		r.names = append(r.names, alias)
	}
	for i := range r.cols {
		r.cols[i].internal = planner.JoinedName(alias, r.cols[i].name)
	}
	js := planner.JoinSpec{Dataset: in.Dataset, As: alias}
	switch j.Jointype {
	case pg.JoinType_JOIN_INNER:
		js.Type = planner.JoinInner
		if j.Quals == nil && len(j.UsingClause) == 0 {
			js.Type = planner.JoinCross
		}
	case pg.JoinType_JOIN_LEFT:
		js.Type = planner.JoinLeft
	case pg.JoinType_JOIN_RIGHT:
		js.Type = planner.JoinRight
	case pg.JoinType_JOIN_FULL:
		js.Type = planner.JoinFull
	default:
		return c.errAt(nodeLoc(j.Rarg), qerr.CodeUnsupportedSQL, "this join type is not supported")
	}
	left := &scope{rels: slices.Clone(f.scope.rels), using: f.scope.using}
	right := &scope{rels: []rel{r}}
	for _, u := range j.UsingClause {
		name := u.GetString_().GetSval()
		ref := &pg.ColumnRef{Fields: []*pg.Node{pg.MakeStrNode(name)}, Location: nodeLoc(j.Rarg)}
		ln, _, err := left.column(c, ref)
		if err != nil {
			return err
		}
		rn, _, err := right.column(c, ref)
		if err != nil {
			return err
		}
		js.On = append(js.On, planner.JoinOn{Left: ln, Right: strings.TrimPrefix(rn, alias+".")})
		switch js.Type {
		case planner.JoinRight:
			f.scope.using[name] = rn
		case planner.JoinFull:
			f.scope.using[name] = "coalesce(" + quote(ln) + ", " + quote(rn) + ")"
		default:
			f.scope.using[name] = ln
		}
	}
	if j.Quals != nil {
		var residual []*pg.Node
		for _, q := range conjuncts(j.Quals) {
			l, rt, ok := c.equiKey(q, left, right)
			if ok {
				js.On = append(js.On, planner.JoinOn{Left: l, Right: strings.TrimPrefix(rt, alias+".")})
				continue
			}
			if js.Type != planner.JoinInner {
				residual = append(residual, q)
				continue
			}
			f.where = append(f.where, q)
		}
		if err := c.joinResidual(&js, residual, left, r); err != nil {
			return err
		}
		if len(js.On) == 0 && js.Where == "" {
			js.Type = planner.JoinCross
		}
	}
	f.joins = append(f.joins, js)
	f.ins = append(f.ins, in)
	f.scope.rels = append(f.scope.rels, r)
	if in.Node == nil {
		c.datasets[in.Dataset] = in
	}
	return nil
}

// equiKey recognizes l = r with one column of each side.
func (c *compiler) equiKey(q *pg.Node, left, right *scope) (string, string, bool) {
	a := q.GetAExpr()
	if a == nil || a.Kind != pg.A_Expr_Kind_AEXPR_OP || len(a.Name) != 1 || a.Name[0].GetString_().GetSval() != "=" {
		return "", "", false
	}
	lr, rr := a.Lexpr.GetColumnRef(), a.Rexpr.GetColumnRef()
	if lr == nil || rr == nil {
		return "", "", false
	}
	if l, _, err := left.column(c, lr); err == nil {
		if r, _, err := right.column(c, rr); err == nil {
			return l, r, true
		}
	}
	if l, _, err := left.column(c, rr); err == nil {
		if r, _, err := right.column(c, lr); err == nil {
			return l, r, true
		}
	}
	return "", "", false
}

// conjuncts splits AND.
func conjuncts(n *pg.Node) []*pg.Node {
	if b := n.GetBoolExpr(); b != nil && b.Boolop == pg.BoolExprType_AND_EXPR {
		var out []*pg.Node
		for _, a := range b.Args {
			out = append(out, conjuncts(a)...)
		}
		return out
	}
	return []*pg.Node{n}
}

// simpleOps maps comparison operators to filter ops (and their mirror).
var simpleOps = map[string][2]planner.Op{
	"=": {planner.OpEq, planner.OpEq}, "<>": {planner.OpNeq, planner.OpNeq}, "!=": {planner.OpNeq, planner.OpNeq},
	"<": {planner.OpLt, planner.OpGt}, "<=": {planner.OpLte, planner.OpGte}, ">": {planner.OpGt, planner.OpLt}, ">=": {planner.OpGte, planner.OpLte},
}

// literal is the JSON of a literal node (a constant, a negated number or a
// parameter); false when n is not one.
func (c *compiler) literal(n *pg.Node) (json.RawMessage, bool) {
	var v any
	switch {
	case n.GetAConst() != nil:
		x, err := c.constValue(n.GetAConst())
		if err != nil || x == nil {
			return nil, false
		}
		v = x
	case n.GetParamRef() != nil:
		x, err := c.param(n.GetParamRef())
		if err != nil || x == nil {
			return nil, false
		}
		v = x
	case n.GetAExpr() != nil && n.GetAExpr().Lexpr == nil && len(n.GetAExpr().Name) == 1 && n.GetAExpr().Name[0].GetString_().GetSval() == "-":
		raw, ok := c.literal(n.GetAExpr().Rexpr)
		if !ok || !strings.ContainsAny(string(raw[:1]), "0123456789") {
			return nil, false
		}
		return append(json.RawMessage("-"), raw...), true
	default:
		return nil, false
	}
	raw, err := json.Marshal(v)
	return raw, err == nil
}

// simpleFilter recognizes col op literal, col IS [NOT] NULL, col IN
// (literals) and col BETWEEN literals as a knob predicate (the form the
// knob tools produce), so such filters plan exactly like theirs.
func (c *compiler) simpleFilter(n *pg.Node, colOf func(*pg.Node) (string, bool)) (planner.FilterCond, bool) {
	if nt := n.GetNullTest(); nt != nil {
		name, ok := colOf(nt.Arg)
		op := planner.OpIsNull
		if nt.Nulltesttype == pg.NullTestType_IS_NOT_NULL {
			op = planner.OpIsNotNull
		}
		return planner.FilterCond{Col: name, Op: op}, ok
	}
	a := n.GetAExpr()
	if a == nil || len(a.Name) != 1 {
		return planner.FilterCond{}, false
	}
	op := a.Name[0].GetString_().GetSval()
	switch a.Kind {
	case pg.A_Expr_Kind_AEXPR_OP:
		ops, ok := simpleOps[op]
		if !ok || a.Lexpr == nil {
			return planner.FilterCond{}, false
		}
		if name, ok := colOf(a.Lexpr); ok {
			if v, ok := c.literal(a.Rexpr); ok {
				return planner.FilterCond{Col: name, Op: ops[0], Value: v}, true
			}
		}
		if name, ok := colOf(a.Rexpr); ok {
			if v, ok := c.literal(a.Lexpr); ok {
				return planner.FilterCond{Col: name, Op: ops[1], Value: v}, true
			}
		}
	case pg.A_Expr_Kind_AEXPR_IN:
		name, ok := colOf(a.Lexpr)
		lst := a.Rexpr.GetList()
		if !ok || lst == nil || op != "=" {
			return planner.FilterCond{}, false
		}
		vals := make([]json.RawMessage, len(lst.Items))
		for i, it := range lst.Items {
			if vals[i], ok = c.literal(it); !ok {
				return planner.FilterCond{}, false
			}
		}
		raw, _ := json.Marshal(vals)
		return planner.FilterCond{Col: name, Op: planner.OpIn, Value: raw}, true
	case pg.A_Expr_Kind_AEXPR_BETWEEN:
		name, ok := colOf(a.Lexpr)
		b := a.Rexpr.GetList()
		if !ok || b == nil || len(b.Items) != 2 {
			return planner.FilterCond{}, false
		}
		lo, ok1 := c.literal(b.Items[0])
		hi, ok2 := c.literal(b.Items[1])
		if !ok1 || !ok2 {
			return planner.FilterCond{}, false
		}
		raw, _ := json.Marshal(map[string]json.RawMessage{"min": lo, "max": hi})
		return planner.FilterCond{Col: name, Op: planner.OpRange, Value: raw}, true
	}
	return planner.FilterCond{}, false
}

// filters lowers a boolean condition (WHERE, HAVING, FILTER) to filter
// knobs: one per AND-ed conjunct, a predicate or an OR group of
// predicates when the conjunct is that simple, else an expression.
func (c *compiler) filters(n *pg.Node, r *renderer, colOf func(*pg.Node) (string, bool)) ([]planner.FilterSpec, error) {
	var out []planner.FilterSpec
	for _, q := range conjuncts(n) {
		{
			if p, ok := c.simpleFilter(q, colOf); ok {
				out = append(out, planner.FilterSpec{Col: p.Col, Op: p.Op, Value: p.Value})
				continue
			}
			if b := q.GetBoolExpr(); b != nil && b.Boolop == pg.BoolExprType_OR_EXPR {
				var any []planner.FilterCond
				for _, a := range b.Args {
					p, ok := c.simpleFilter(a, colOf)
					if !ok {
						any = nil
						break
					}
					any = append(any, p)
				}
				if any != nil {
					out = append(out, planner.FilterSpec{Any: any})
					continue
				}
			}
		}
		s, err := r.expr(q)
		if err != nil {
			return nil, err
		}
		out = append(out, planner.FilterSpec{Expr: s})
	}
	return out, nil
}

// normName is the planner's normalized text of an expression (its default
// output name).
func normName(text string) string {
	if e, _, err := planner.ParseExpr(text); err == nil {
		return e.String()
	}
	return text
}

// ordinal reads an integer constant (GROUP BY 1, ORDER BY 2).
func ordinal(n *pg.Node) (int, bool) {
	if a := n.GetAConst(); a != nil {
		if iv, ok := a.Val.(*pg.A_Const_Ival); ok {
			return int(iv.Ival.Ival), true
		}
	}
	return 0, false
}

// limitValue reads LIMIT/OFFSET.
func (c *compiler) limitValue(n *pg.Node, what string) (*int64, error) {
	if n == nil {
		return nil, nil
	}
	if a := n.GetAConst(); a != nil && a.Isnull {
		return nil, nil // LIMIT ALL / NULL
	}
	raw, ok := c.literal(n)
	var v int64
	if ok {
		ok = json.Unmarshal(raw, &v) == nil
	}
	if !ok || v < 0 {
		return nil, c.errAt(nodeLoc(n), qerr.CodeInvalidArgument, "%s must be a non-negative integer constant or parameter", what)
	}
	return &v, nil
}

// isWindow reports a window call.
func isWindow(n *pg.Node) *pg.FuncCall {
	if fc := n.GetFuncCall(); fc != nil && fc.Over != nil {
		return fc
	}
	return nil
}

// isAgg reports an aggregate call (not a window).
func isAgg(n *pg.Node) *pg.FuncCall {
	if fc := n.GetFuncCall(); fc != nil && fc.Over == nil {
		if _, ok := aggName(fc); ok {
			return fc
		}
	}
	return nil
}

// walk visits n and its sub-nodes (not into subqueries); visit returns
// false to skip the children.
func walk(n *pg.Node, visit func(*pg.Node) bool) {
	if n == nil || n.Node == nil || n.GetSubLink() != nil || !visit(n) {
		return
	}
	walkChildren(n.ProtoReflect(), visit)
}

func walkChildren(m protoreflect.Message, visit func(*pg.Node) bool) {
	handle := func(x protoreflect.Message) {
		if node, ok := x.Interface().(*pg.Node); ok {
			walk(node, visit)
		} else {
			walkChildren(x, visit)
		}
	}
	m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		switch {
		case fd.Message() == nil || fd.IsMap():
		case fd.IsList():
			l := v.List()
			for i := 0; i < l.Len(); i++ {
				handle(l.Get(i).Message())
			}
		default:
			handle(v.Message())
		}
		return true
	})
}

// hidden names of intermediate columns.
func hiddenName(kind string, i int) string { return "__" + kind + strconv.Itoa(i) }
