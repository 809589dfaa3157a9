package planner

import "github.com/apache/arrow-go/v18/arrow"

// DeriveJoinORs adds, to an expression filter above a join, the conditions
// its ORs imply for one side of the join: an OR of branches that each
// have conditions on that side alone implies the OR of those conditions,
//
//	(n1.n_name = 'FRANCE' AND n2.n_name = 'GERMANY') OR (n1.n_name = 'GERMANY' AND n2.n_name = 'FRANCE')
//	implies n1.n_name = 'FRANCE' OR n1.n_name = 'GERMANY' (and the same of n2),
//
// which rule push_join_filters then moves below the join (TPC-H Q7, Q19).
// The OR itself stays where it is. Sides are the first join's below the
// filter (through filters and column selections), as push_join_filters
// sees them; an implied condition already in the filter is not added again.
func DeriveJoinORs(n Node, _ OptimizeOptions) (Node, error) {
	out, _, err := Transform(n, func(n Node) (Node, bool, error) {
		x, exprs, ok := matchExprFilter(n)
		if !ok {
			return n, false, nil
		}
		j := firstJoin(x)
		if j == nil {
			return n, false, nil
		}
		side := joinSide(j)
		have := map[string]bool{}
		for _, e := range exprs {
			have[e.String()] = true
		}
		var c conds
		for _, ex := range exprs {
			e := ex
			if side(ExprColumns(e)) >= 0 || len(conjuncts(e)) > 1 {
				continue
			}
			for want := 0; want < 2; want++ {
				if d := impliedBySide(e, side, want); d != nil && !have[d.String()] {
					have[d.String()] = true
					c.exprs = append(c.exprs, d)
				}
			}
		}
		if len(c.exprs) == 0 {
			return n, false, nil
		}
		return applyConds(x, conds{exprs: append(append([]Expr(nil), exprs...), c.exprs...)}), true, nil
	})
	return out, err
}

// firstJoin is the join conditions on n reach first (see sinkable), or nil.
func firstJoin(n Node) *Join {
	for n != nil && sinkable(n) {
		switch x := n.(type) {
		case *Join:
			return x
		case *Project:
			n = x.Input
		default:
			n, _, _ = filterOn(n)
		}
	}
	return nil
}

// impliedBySide is the condition e implies on one side (see
// PushJoinFilters), or nil: the OR over e's OR branches of the AND of each
// branch's conjuncts that side reports on want.
func impliedBySide(e Expr, side func([]string) int, want int) Expr {
	branches := disjuncts(e)
	if len(branches) < 2 {
		return nil
	}
	var out Expr
	for _, b := range branches {
		var part Expr
		for _, c := range conjuncts(b) {
			if side(ExprColumns(c)) == want {
				part = boolCall("and", part, c)
			}
		}
		if part == nil {
			return nil
		}
		out = boolCall("or", out, part)
	}
	return out
}

// disjuncts splits e at its top-level ORs.
func disjuncts(e Expr) []Expr {
	if c, ok := e.(*Call); ok && c.Fn == "or" {
		var out []Expr
		for _, a := range c.Args {
			out = append(out, disjuncts(a)...)
		}
		return out
	}
	return []Expr{e}
}

// boolCall is fn(a, b) for "and" or "or" (b alone when a is nil).
func boolCall(fn string, a, b Expr) Expr {
	if a == nil {
		return CloneExpr(b)
	}
	return &Call{Fn: fn, Args: []Expr{a, CloneExpr(b)}, Typ: arrow.FixedWidthTypes.Boolean}
}
