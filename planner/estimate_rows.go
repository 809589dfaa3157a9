package planner

import "github.com/apache/arrow-go/v18/arrow"

// Row estimates for join planning (the engine's build side choice). They
// start from the catalog's row counts (Scan.RowCount) and scale them by
// fixed selectivities per filter condition, since the catalog keeps no
// value distributions: what matters is which input is smaller, not the
// exact size.

// Selectivities of one filter condition, by kind.
const (
	selEq    = 0.1  // col = v, and each value of an IN list
	selRange = 0.33 // <, <=, >, >=, BETWEEN, an expression of no known shape
	selOther = 0.5  // !=, NOT IN, string matches, IS NOT NULL, ...
)

// EstimateRows estimates the rows n produces (at least 1 unless a source
// is empty).
func EstimateRows(n Node) float64 {
	est, _ := estimateRows(n)
	return est
}

// estimateRows returns n's estimated rows and its base: the rows of the
// relation n's rows are drawn from before filters (for a join, the larger
// input's), which join estimates divide by.
func estimateRows(n Node) (est, base float64) {
	if x, exprs, ok := matchExprFilter(n); ok {
		est, base = estimateRows(x)
		for _, e := range exprs {
			est *= exprSel(e)
		}
		return max(est, min(1, base)), base
	}
	switch x := n.(type) {
	case *Scan:
		rows := float64(x.RowCount)
		return max(rows*predsSel(x.Filters), min(1, rows)), rows
	case *Filter:
		est, base = estimateRows(x.Input)
		return max(est*filterSel(x), min(1, est)), base
	case *Join:
		return estimateJoin(x)
	case *Aggregate:
		est, _ = estimateRows(x.Input)
		if len(x.GroupBy) == 0 {
			return 1, 1
		}
		est = max(est*selEq, min(1, est))
		return est, est
	case *Limit:
		est, base = estimateRows(x.Input)
		if x.Count >= 0 {
			est = min(est, float64(x.Count))
		}
		return est, base
	}
	c := n.Children()
	if len(c) == 0 {
		return 1, 1
	}
	return estimateRows(c[0])
}

// estimateJoin estimates a join: an equi-join matches each row of one side
// with about one row of the other side's unfiltered base (a key of a
// dimension table), scaled by how much filters kept of that base.
func estimateJoin(j *Join) (est, base float64) {
	l, lb := estimateRows(j.Left)
	r, rb := estimateRows(j.Right)
	base = max(lb, rb)
	switch {
	case j.Type == JoinCross || len(j.LeftKeys) == 0:
		est = l * r
	case j.Type == JoinSemi || j.Type == JoinAnti:
		return max(l*selOther, min(1, l)), lb
	default:
		est = l * r / max(min(lb, rb), 1)
	}
	if j.Residual != nil {
		est *= selRange
	}
	switch j.Type {
	case JoinLeft:
		est = max(est, l)
	case JoinRight:
		est = max(est, r)
	case JoinFull:
		est = max(est, l+r)
	}
	return est, base
}

// predsSel is the selectivity of ANDed predicates.
func predsSel(ps []Predicate) float64 {
	s := 1.0
	for _, p := range ps {
		s *= predSel(p)
	}
	return s
}

// filterSel is the selectivity of f's predicates; one that keeps the rows
// where a boolean column computed just below is true (an expression
// filter whose Project projection pushdown narrowed, so that
// matchExprFilter no longer sees it: TPC-H Q13's NOT LIKE below its join)
// counts as that expression.
func filterSel(f *Filter) float64 {
	c, _ := f.Input.(*Compute)
	s := 1.0
	for _, p := range f.Preds {
		if e := computedBool(c, p); e != nil {
			s *= exprSel(e)
		} else {
			s *= predSel(p)
		}
	}
	return s
}

// computedBool is the expression of c that p keeps true (p: col = true
// on a boolean column c computes), or nil.
func computedBool(c *Compute, p Predicate) Expr {
	if c == nil || p.Op != OpEq || p.Value == nil || p.Value.Value != true || p.Value.Type.ID() != arrow.BOOL {
		return nil
	}
	for _, e := range c.Exprs {
		if e.Name == p.Col && e.Expr.Type().ID() == arrow.BOOL {
			return e.Expr
		}
	}
	return nil
}

// predSel is the selectivity of one predicate (an OR group: of any member).
func predSel(p Predicate) float64 {
	switch p.Op {
	case OpAny:
		none := 1.0
		for _, m := range p.Any {
			none *= 1 - predSel(m)
		}
		return 1 - none
	case OpEq, OpIsNull:
		return selEq
	case OpIn:
		return min(1, selEq*float64(max(len(p.Values), 1)))
	case OpLt, OpLte, OpGt, OpGte, OpRange:
		return selRange
	}
	return selOther
}

// exprSel is the selectivity of a boolean filter expression, by its
// structure: AND multiplies, OR combines its branches as independent
// events, NOT complements, and a comparison counts as the predicate of
// its kind (so an OR of conjunctions, TPC-H Q19's per-table conditions,
// estimates like the predicates it is made of).
func exprSel(e Expr) float64 {
	c, ok := e.(*Call)
	if !ok || len(c.Args) == 0 {
		return selRange
	}
	switch c.Fn {
	case "and":
		s := 1.0
		for _, a := range c.Args {
			s *= exprSel(a)
		}
		return s
	case "or":
		none := 1.0
		for _, a := range c.Args {
			none *= 1 - exprSel(a)
		}
		return 1 - none
	case "not":
		return min(max(1-exprSel(c.Args[0]), selEq), 1)
	case "=", "is_null":
		return selEq
	case "in":
		return min(1, selEq*float64(max(len(c.Args)-1, 1)))
	case "<", "<=", ">", ">=", "between":
		return selRange
	}
	return selOther
}
