package planner

import (
	"strconv"

	"github.com/apache/arrow-go/v18/arrow"
)

// conds are the conditions of a filter as the optimizer's filter rules
// move them: plain predicates and boolean expressions (kept when true).
// Both are over the columns of the node they filter, by name.
type conds struct {
	preds []Predicate
	exprs []Expr
}

func (c conds) empty() bool { return len(c.preds) == 0 && len(c.exprs) == 0 }

// add appends d's conditions.
func (c conds) add(d conds) conds {
	return conds{preds: append(c.preds, d.preds...), exprs: append(c.exprs, d.exprs...)}
}

// matchExprFilter recognizes the nodes exprFilters builds for expression
// filters over x:
//
//	Project(every column of x, in order) ← Filter(h1 = true AND ...) ← Compute(e1 AS h1, ...) ← x
//
// and returns x and the expressions (each kept when true).
func matchExprFilter(n Node) (x Node, exprs []Expr, ok bool) {
	p, ok := n.(*Project)
	if !ok {
		return nil, nil, false
	}
	f, ok := p.Input.(*Filter)
	if !ok {
		return nil, nil, false
	}
	c, ok := f.Input.(*Compute)
	if !ok || len(f.Preds) != len(c.Exprs) {
		return nil, nil, false
	}
	x = c.Input
	if !sameNames(p.Out, x.Schema()) {
		return nil, nil, false
	}
	for i, t := range f.Preds {
		if t.Op != OpEq || t.Value == nil || t.Value.Value != true || t.Col != c.Exprs[i].Name || t.Value.Type.ID() != arrow.BOOL {
			return nil, nil, false
		}
		if c.Exprs[i].Expr.Type().ID() != arrow.BOOL {
			return nil, nil, false
		}
		exprs = append(exprs, c.Exprs[i].Expr)
	}
	return x, exprs, true
}

// sameNames reports whether a and b have the same column names in the same order.
func sameNames(a, b *arrow.Schema) bool {
	if a.NumFields() != b.NumFields() {
		return false
	}
	for i := range a.Fields() {
		if a.Field(i).Name != b.Field(i).Name {
			return false
		}
	}
	return true
}

// selection reports whether p only selects columns of its input under
// their own names (conditions on its output can go below it).
func selection(p *Project) bool {
	if len(p.Columns) != p.Out.NumFields() {
		return false
	}
	for i, c := range p.Columns {
		if p.Out.Field(i).Name != c {
			return false
		}
	}
	return true
}

// applyConds filters x by c the way Build does: a Filter with the
// predicates (merged into x when x is a Filter), then the expressions as
// hidden boolean columns (see exprFilters) with a Project restoring x's
// columns.
func applyConds(x Node, c conds) Node {
	node := x
	if len(c.preds) > 0 {
		preds := clonePreds(c.preds)
		if f, ok := x.(*Filter); ok {
			node = &Filter{Input: f.Input, Preds: append(clonePreds(f.Preds), preds...)}
		} else {
			node = &Filter{Input: x, Preds: preds}
		}
	}
	if len(c.exprs) == 0 {
		return node
	}
	s := x.Schema()
	comp := &Compute{Input: node}
	var tests []Predicate
	for i, e := range c.exprs {
		name := hiddenName(s, "__filter_"+strconv.Itoa(i))
		comp.Exprs = append(comp.Exprs, NamedExpr{Name: name, Expr: CloneExpr(e)})
		tests = append(tests, Predicate{Col: name, Index: s.NumFields() + i, Op: OpEq,
			Value: &Literal{Type: arrow.FixedWidthTypes.Boolean, Value: true}})
	}
	p := &Project{Input: &Filter{Input: comp, Preds: tests}, Out: s}
	for i, f := range s.Fields() {
		p.Columns = append(p.Columns, f.Name)
		p.Indices = append(p.Indices, i)
	}
	return p
}
