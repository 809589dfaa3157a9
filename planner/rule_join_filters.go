package planner

import (
	"slices"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
)

// PushJoinFilters moves filter conditions that read one side of a join
// below the join, into that side (down to its scans, where the scan rules
// and zone maps take them):
//
//	Filter(c_mktsegment = 'BUILDING' AND o_orderdate < d) ← Join(inner, customer, orders AS orders)
//	=> Join(inner, Filter(c_mktsegment = 'BUILDING') ← customer, Filter(o_orderdate < d) ← orders)
//
// Plain predicates and expression filters (see matchExprFilter) both move;
// a condition reading both sides stays above the join. Which side may take
// a condition depends on the join type: both sides of inner and cross
// joins; the left (preserved) side of left, semi and anti joins (semi and
// anti joins output only left columns); nothing for right and full joins.
// Conditions pass down through Filters and column selections (Project).
//
// A predicate on a join key also holds for the other side's key of the
// rows that match (transitive equality: a.k = b.k AND a.k = 5 gives
// b.k = 5), so a copy goes to the other side when that side's key has the
// same type: from the left side to the right in inner, left, semi and anti
// joins (the right rows it removes match no kept left row), from the right
// to the left in inner joins.
func PushJoinFilters(n Node, _ OptimizeOptions) (Node, error) {
	out, _, err := Transform(n, func(n Node) (Node, bool, error) {
		x, c, ok := filterOn(n)
		if !ok || !sinkable(x) {
			return n, false, nil
		}
		if out, moved := sinkConds(x, c); moved {
			return out, true, nil
		}
		return n, false, nil
	})
	return out, err
}

// filterOn splits a Filter or an expression filter block into its input and conditions.
func filterOn(n Node) (Node, conds, bool) {
	if f, ok := n.(*Filter); ok {
		return f.Input, conds{preds: clonePreds(f.Preds)}, true
	}
	if x, exprs, ok := matchExprFilter(n); ok {
		var c conds
		for _, e := range exprs {
			c.exprs = append(c.exprs, conjuncts(e)...)
		}
		return x, c, true
	}
	return nil, conds{}, false
}

// conjuncts splits e at its top-level ANDs (a row passes e exactly when
// every part is true).
func conjuncts(e Expr) []Expr {
	if c, ok := e.(*Call); ok && c.Fn == "and" {
		var out []Expr
		for _, a := range c.Args {
			out = append(out, conjuncts(a)...)
		}
		return out
	}
	return []Expr{e}
}

// sinkable reports whether conditions on n could move below a join in it.
func sinkable(n Node) bool {
	switch x := n.(type) {
	case *Join:
		return x.Type != JoinRight && x.Type != JoinFull
	case *Project:
		if selection(x) {
			return sinkable(x.Input)
		}
	}
	if in, _, ok := filterOn(n); ok {
		return sinkable(in)
	}
	return false
}

// sinkConds applies c (conditions over n's columns) to n, as deep as they
// go, and reports whether any went below a join.
func sinkConds(n Node, c conds) (Node, bool) {
	if c.empty() {
		return n, false
	}
	if in, more, ok := filterOn(n); ok {
		return sinkConds(in, more.add(c))
	}
	switch x := n.(type) {
	case *Project:
		if selection(x) && sinkable(x.Input) {
			in, moved := sinkConds(x.Input, c)
			if p, err := x.WithChildren(in); err == nil {
				return p, moved
			}
		}
	case *Join:
		if x.Type != JoinRight && x.Type != JoinFull {
			return sinkJoin(x, c)
		}
	}
	return applyConds(n, c), false
}

// sinkJoin splits c over j's sides (see PushJoinFilters) and reports
// whether any condition went below j.
func sinkJoin(j *Join, c conds) (Node, bool) {
	ls, rs := j.Left.Schema(), j.Right.Schema()
	side := joinSide(j)
	var left, right, keep conds
	for _, p := range c.preds {
		switch side(predColumns(p)) {
		case 0:
			left.preds = append(left.preds, p)
		case 1:
			right.preds = append(right.preds, renamePred(p, j.Alias))
		default:
			keep.preds = append(keep.preds, p)
		}
	}
	for _, e := range c.exprs {
		switch side(ExprColumns(e)) {
		case 0:
			left.exprs = append(left.exprs, e)
		case 1:
			right.exprs = append(right.exprs, renameExpr(e, j.Alias))
		default:
			keep.exprs = append(keep.exprs, e)
		}
	}
	if j.Type != JoinCross && j.Type != JoinRight && j.Type != JoinFull {
		right.preds = append(right.preds, keyCopies(left.preds, right.preds, j.LeftKeys, j.RightKeys, ls, rs)...)
	}
	if j.Type == JoinInner {
		left.preds = append(left.preds, keyCopies(right.preds, left.preds, j.RightKeys, j.LeftKeys, rs, ls)...)
	}
	if left.empty() && right.empty() {
		return applyConds(j, keep), false
	}
	l, _ := sinkConds(j.Left, left)
	r, _ := sinkConds(j.Right, right)
	nj, err := j.WithChildren(l, r)
	if err != nil {
		return applyConds(j, c), false
	}
	return applyConds(nj, keep), true
}

// joinSide returns the function telling which side of j may take a
// condition on the columns cols (named as in j's output): 0 the left, 1
// the right, -1 neither (both sides' columns, none, or a side the join
// type keeps conditions from).
func joinSide(j *Join) func(cols []string) int {
	ls, rs := j.Left.Schema(), j.Right.Schema()
	toRight := j.Type == JoinInner || j.Type == JoinCross
	return func(cols []string) int {
		where := -1
		for _, col := range cols {
			s := -1
			if len(ls.FieldIndices(col)) > 0 {
				s = 0
			} else if r, ok := strings.CutPrefix(col, j.Alias+"."); ok && toRight && slices.Contains(j.RightCols, r) && len(rs.FieldIndices(r)) > 0 {
				s = 1
			}
			if s < 0 || where >= 0 && s != where {
				return -1
			}
			where = s
		}
		return where
	}
}

// keyCopies returns, for each plain predicate of from on a key from[i]
// (in schema fs), a copy on the other side's key to[i] (in ts) when both
// keys have the same type and have holds no equal predicate yet.
func keyCopies(from, have []Predicate, fromKeys, toKeys []string, fs, ts *arrow.Schema) []Predicate {
	var out []Predicate
	for _, p := range from {
		if p.Op == OpAny || p.Op == OpIsNull {
			continue
		}
		k := slices.Index(fromKeys, p.Col)
		if k < 0 {
			continue
		}
		fi, ti := fs.FieldIndices(fromKeys[k]), ts.FieldIndices(toKeys[k])
		if len(fi) != 1 || len(ti) != 1 || !arrow.TypeEqual(fs.Field(fi[0]).Type, ts.Field(ti[0]).Type) {
			continue
		}
		q := clonePreds([]Predicate{p})[0]
		q.Col, q.Index = toKeys[k], ti[0]
		if !slices.ContainsFunc(append(have, out...), func(h Predicate) bool { return h.String() == q.String() }) {
			out = append(out, q)
		}
	}
	return out
}

// renamePred is p over the right side's own column names (alias. removed).
func renamePred(p Predicate, alias string) Predicate {
	q := clonePreds([]Predicate{p})[0]
	var strip func(p *Predicate)
	strip = func(p *Predicate) {
		p.Col = strings.TrimPrefix(p.Col, alias+".")
		for i := range p.Any {
			strip(&p.Any[i])
		}
	}
	strip(&q)
	return q
}

// renameExpr is e over the right side's own column names (alias. removed).
func renameExpr(e Expr, alias string) Expr {
	e = CloneExpr(e)
	WalkExpr(e, func(x Expr) {
		if r, ok := x.(*ColRef); ok {
			r.Name = strings.TrimPrefix(r.Name, alias+".")
		}
	})
	return e
}
