package sqlfront

import (
	"slices"
	"strconv"
	"strings"

	pg "github.com/pganalyze/pg_query_go/v6"

	"github.com/quarrydb/quarry/internal/qerr"
	"github.com/quarrydb/quarry/planner"
)

// setOpKinds maps the parser's set operations to planner kinds.
var setOpKinds = map[pg.SetOperation]planner.SetOpKind{
	pg.SetOperation_SETOP_UNION:     planner.SetUnion,
	pg.SetOperation_SETOP_INTERSECT: planner.SetIntersect,
	pg.SetOperation_SETOP_EXCEPT:    planner.SetExcept,
}

// isSetOp reports a UNION/INTERSECT/EXCEPT statement.
func isSetOp(sel *pg.SelectStmt) bool {
	return sel.Op != pg.SetOperation_SETOP_NONE && sel.Op != pg.SetOperation_SET_OPERATION_UNDEFINED
}

// setOpPlan lowers a set operation: both sides as blocks (recursively),
// combined by a planner.SetOp, then the statement's ORDER BY, LIMIT and
// OFFSET over the combined rows (by output name or position).
func (c *compiler) setOpPlan(sel *pg.SelectStmt, env *ctes) (planner.Node, planner.Spec, error) {
	kind, ok := setOpKinds[sel.Op]
	if !ok {
		return nil, planner.Spec{}, c.errAt(firstLoc(sel.Rarg), qerr.CodeUnsupportedSQL, "set operation %s is not supported", sel.Op).
			WithHint("use UNION, INTERSECT or EXCEPT")
	}
	left, _, err := c.selectPlan(sel.Larg, env)
	if err != nil {
		return nil, planner.Spec{}, err
	}
	right, _, err := c.selectPlan(sel.Rarg, env)
	if err != nil {
		return nil, planner.Spec{}, err
	}
	node, err := planner.NewSetOp(kind, sel.All, left, right)
	if err != nil {
		if qe, ok := err.(*qerr.Error); ok && firstLoc(sel.Rarg) >= 0 {
			line, col := position(c.sql, int(firstLoc(sel.Rarg)))
			qe.With("line", line).With("col", col).With("fragment", fragment(c.sql, int(firstLoc(sel.Rarg))))
		}
		return nil, planner.Spec{}, err
	}
	var spec planner.Spec
	out := node.Schema()
	for _, s := range sel.SortClause {
		sb := s.GetSortBy()
		o, err := c.orderSpec(sb)
		if err != nil {
			return nil, planner.Spec{}, err
		}
		if k, ok := ordinal(sb.Node); ok {
			if k < 1 || k > out.NumFields() {
				return nil, planner.Spec{}, c.errAt(sb.Location, qerr.CodeInvalidArgument, "ORDER BY position %d is not in the SELECT list (1 to %d)", k, out.NumFields())
			}
			o.Col = out.Field(k - 1).Name
		} else {
			sc := &scope{rels: []rel{{names: []string{""}}}, using: map[string]string{}}
			for _, f := range out.Fields() {
				sc.rels[0].cols = append(sc.rels[0].cols, col{name: f.Name, internal: f.Name, typ: f.Type})
			}
			text, err := (&renderer{c: c, scope: sc}).expr(sb.Node)
			if err != nil {
				if qe, ok := err.(*qerr.Error); ok && qe.Code == qerr.CodeInvalidColumn {
					qe.WithHint("ORDER BY of a %s names its output columns (of the first SELECT) or their positions", kind)
				}
				return nil, planner.Spec{}, err
			}
			o.Col = text
			if name, ok := colName(text); ok {
				o.Col = name
			}
		}
		spec.OrderBy = append(spec.OrderBy, o)
	}
	if spec.Limit, err = c.limitValue(sel.LimitCount, "LIMIT"); err != nil {
		return nil, planner.Spec{}, err
	}
	if spec.Offset, err = c.limitValue(sel.LimitOffset, "OFFSET"); err != nil {
		return nil, planner.Spec{}, err
	}
	if len(spec.OrderBy) == 0 && spec.Limit == nil && spec.Offset == nil {
		return node, spec, nil
	}
	plan, err := planner.Build(spec, planner.Input{Dataset: "setop", Schema: out, Node: node})
	if err != nil {
		return nil, planner.Spec{}, err
	}
	return plan, spec, nil
}

// joinResidual lowers the ON conditions of an outer join that are not key
// equalities to the join's extra condition (JoinSpec.Where, evaluated
// inside the join over the left rows and the joined row r).
func (c *compiler) joinResidual(js *planner.JoinSpec, conds []*pg.Node, left *scope, r rel) error {
	if len(conds) == 0 {
		return nil
	}
	both := &scope{rels: append(slices.Clone(left.rels), r), using: left.using}
	rd := &renderer{c: c, scope: both}
	parts := make([]string, len(conds))
	for i, q := range conds {
		text, err := rd.expr(q)
		if err != nil {
			return err
		}
		parts[i] = "(" + text + ")"
	}
	js.Where = strings.Join(parts, " AND ")
	return nil
}

// valuesPlan lowers VALUES (...), (...) to constant rows; the columns are
// named column1, column2, ... as in PostgreSQL (rename them with an
// alias list: (VALUES ...) AS t(a, b)).
func (c *compiler) valuesPlan(sel *pg.SelectStmt) (planner.Node, error) {
	rd := &renderer{c: c, scope: &scope{using: map[string]string{}}}
	var names []string
	rows := make([][]planner.Expr, len(sel.ValuesLists))
	for i, l := range sel.ValuesLists {
		items := l.GetList().GetItems()
		for k, n := range items {
			text, err := rd.expr(n)
			if err != nil {
				return nil, err
			}
			e, _, err := planner.ParseExpr(text)
			if err != nil {
				return nil, c.errAt(nodeLoc(n), qerr.CodeInvalidArgument, "VALUES row %d column %d: %v", i+1, k+1, err)
			}
			rows[i] = append(rows[i], e)
		}
		for len(names) < len(items) {
			names = append(names, "column"+strconv.Itoa(len(names)+1))
		}
	}
	node, err := planner.NewValues(names, rows)
	if err != nil {
		if qe, ok := err.(*qerr.Error); ok {
			loc := startLoc(sel.ProtoReflect(), -1)
			line, col := position(c.sql, int(loc))
			qe.With("line", line).With("col", col).With("fragment", fragment(c.sql, int(loc)))
		}
		return nil, err
	}
	return node, nil
}

// noFrom is the row source of a SELECT without FROM: one row with one
// hidden column, so the block's SELECT list is evaluated once.
func noFrom() (planner.Input, error) {
	one, _, err := planner.ParseExpr("1")
	if err != nil {
		return planner.Input{}, err
	}
	node, err := planner.NewValues([]string{hiddenName("one", 0)}, [][]planner.Expr{{one}})
	if err != nil {
		return planner.Input{}, err
	}
	return planner.Input{Dataset: "values", Schema: node.Schema(), Node: node, RowCount: 1, RowCountExact: true}, nil
}

// renameColumns renames the first len(colnames) columns of node (an alias
// column list: AS t(a, b), WITH t(a, b) AS ...).
func (c *compiler) renameColumns(node planner.Node, colnames []*pg.Node, loc int32) (planner.Node, error) {
	sc := node.Schema()
	if len(colnames) > sc.NumFields() {
		return nil, c.errAt(loc, qerr.CodeInvalidArgument, "%d column aliases given for %d columns", len(colnames), sc.NumFields()).
			WithHint("name at most as many columns as the subquery returns")
	}
	cols := make([]string, sc.NumFields())
	for i, f := range sc.Fields() {
		cols[i] = quote(f.Name)
		if i < len(colnames) {
			cols[i] += " AS " + quote(colnames[i].GetString_().GetSval())
		}
	}
	return planner.Build(planner.Spec{Columns: cols}, planner.Input{Dataset: "subquery", Schema: sc, Node: node})
}
