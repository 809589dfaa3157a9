package planner

import "strings"

// PushJoinResidual moves the parts of a join's residual (its non-equi
// condition, an AND of conjuncts) that read one side only into that side
// as a filter:
//
//	Join(left, customer, orders) ON c_custkey = o_custkey WHERE NOT o_comment LIKE '%special%'
//	=> Join(left, customer, Filter(NOT o_comment LIKE '%special%') ← orders) ON c_custkey = o_custkey
//
// A right-side conjunct moves in inner, left, semi and anti joins (a right
// row failing it matches no left row, which is what the residual said); a
// left-side one in inner and semi joins only (in left and anti joins a
// left row failing it is still output, unmatched). Right and full joins
// keep their residual, and so does a join without keys (the residual is
// all it joins on).
func PushJoinResidual(n Node, _ OptimizeOptions) (Node, error) {
	out, _, err := Transform(n, func(n Node) (Node, bool, error) {
		j, ok := n.(*Join)
		if !ok || j.Residual == nil || len(j.LeftKeys) == 0 || j.Type == JoinRight || j.Type == JoinFull {
			return n, false, nil
		}
		var left, right conds
		var keep Expr
		for _, c := range conjuncts(j.Residual) {
			switch residualSide(j, ExprColumns(c)) {
			case 0:
				if j.Type == JoinInner || j.Type == JoinSemi {
					left.exprs = append(left.exprs, c)
					continue
				}
			case 1:
				right.exprs = append(right.exprs, renameExpr(c, j.Alias))
				continue
			}
			keep = boolCall("and", keep, c)
		}
		if left.empty() && right.empty() {
			return n, false, nil
		}
		c, err := j.WithChildren(applyConds(j.Left, left), applyConds(j.Right, right))
		if err != nil {
			return nil, false, err
		}
		c.(*Join).Residual = keep
		return c, true, nil
	})
	return out, err
}

// residualSide tells which input of j the residual columns cols (named as
// in j.PairSchema) come from: 0 the left, 1 the right, -1 both or none.
func residualSide(j *Join, cols []string) int {
	ls, rs := j.Left.Schema(), j.Right.Schema()
	where := -1
	for _, col := range cols {
		s := -1
		if len(ls.FieldIndices(col)) > 0 {
			s = 0
		} else if r, ok := strings.CutPrefix(col, j.Alias+"."); ok && len(rs.FieldIndices(r)) > 0 {
			s = 1
		}
		if s < 0 || where >= 0 && s != where {
			return -1
		}
		where = s
	}
	return where
}
