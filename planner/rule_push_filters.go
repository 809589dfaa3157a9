package planner

// PushFilters moves the predicates of a Filter sitting directly on a Scan
// into the Scan when opts.Pushdown handles them; the rest stay in the Filter
// (which is removed when empty).
func PushFilters(n Node, opts OptimizeOptions) (Node, error) {
	if opts.Pushdown == nil {
		return n, nil
	}
	out, _, err := Transform(n, func(n Node) (Node, bool, error) {
		f, ok := n.(*Filter)
		if !ok {
			return n, false, nil
		}
		s, ok := f.Input.(*Scan)
		if !ok {
			return n, false, nil
		}
		var push, keep []Predicate
		for _, p := range f.Preds {
			if opts.Pushdown.HandlesFilter(p) {
				push = append(push, p)
			} else {
				keep = append(keep, p)
			}
		}
		if len(push) == 0 {
			return n, false, nil
		}
		sc, err := s.WithChildren()
		if err != nil {
			return nil, false, err
		}
		ns := sc.(*Scan)
		ns.Filters = append(ns.Filters, clonePreds(push)...)
		if len(keep) == 0 {
			return ns, true, nil
		}
		fc, err := f.WithChildren(ns)
		if err != nil {
			return nil, false, err
		}
		fc.(*Filter).Preds = clonePreds(keep)
		return fc, true, nil
	})
	return out, err
}
