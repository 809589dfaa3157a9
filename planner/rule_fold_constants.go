package planner

// FoldConstants is the optimizer rule that replaces every number-only
// subexpression of every Compute node by its value (see FoldExpr).
func FoldConstants(n Node, _ OptimizeOptions) (Node, error) {
	out, _, err := Transform(n, func(n Node) (Node, bool, error) {
		c, ok := n.(*Compute)
		if !ok {
			return n, false, nil
		}
		cc, err := c.WithChildren(c.Input) // a copy with its own expressions to fold
		if err != nil {
			return nil, false, err
		}
		nc := cc.(*Compute)
		changed := false
		for i := range nc.Exprs {
			var ch bool
			nc.Exprs[i].Expr, ch = foldExpr(nc.Exprs[i].Expr)
			changed = changed || ch
		}
		if !changed {
			return n, false, nil
		}
		return nc, true, nil
	})
	return out, err
}
