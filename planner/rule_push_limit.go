package planner

// RowPreserver is implemented by single-input nodes that produce exactly
// one output row per input row, in input order (Project, Compute): a Limit
// above such a node can move below it.
type RowPreserver interface {
	PreservesRows() bool
}

// PreservesRows implements RowPreserver.
func (p *Project) PreservesRows() bool { return true }

// PreservesRows implements RowPreserver.
func (c *Compute) PreservesRows() bool { return true }

// PushLimit moves a Limit below the row-preserving nodes under it (Project
// and Compute: they neither add, drop nor reorder rows), so a Limit lands
// directly on a Sort (top-k in the engine) or on the scan pipeline (early
// exit), and expressions are computed only for the rows returned.
func PushLimit(n Node, _ OptimizeOptions) (Node, error) {
	out, _, err := Transform(n, func(n Node) (Node, bool, error) {
		if _, ok := n.(*Limit); !ok {
			return n, false, nil
		}
		return sinkLimit(n)
	})
	return out, err
}

// sinkLimit moves the single-input node l below the chain of
// row-preserving nodes directly under it.
func sinkLimit(l Node) (Node, bool, error) {
	below := l.Children()
	if len(below) != 1 {
		return l, false, nil
	}
	r, ok := below[0].(RowPreserver)
	if !ok || !r.PreservesRows() {
		return l, false, nil
	}
	under := below[0].Children()
	if len(under) != 1 {
		return l, false, nil
	}
	moved, err := l.WithChildren(under[0])
	if err != nil {
		return nil, false, err
	}
	if moved, _, err = sinkLimit(moved); err != nil {
		return nil, false, err
	}
	top, err := below[0].WithChildren(moved)
	if err != nil {
		return nil, false, err
	}
	return top, true, nil
}
