package planner

// PushFilters moves the predicates of a Filter sitting directly on a Scan
// into the Scan when the scanned dataset's pushdown (opts.Pushdown, or
// its entry in opts.Sources) handles them; the rest stay in the Filter
// (which is removed when empty).
func PushFilters(n Node, opts OptimizeOptions) (Node, error) {
	if !opts.scansSources() {
		return n, nil
	}
	return transformFilterOnScan(n, func(f *Filter, s *Scan) (Node, bool, error) {
		pd := opts.source(s.Dataset).Pushdown
		if pd == nil {
			return f, false, nil
		}
		var push, keep []Predicate
		for _, p := range f.Preds {
			if pd.HandlesFilter(p) {
				push = append(push, p)
			} else {
				keep = append(keep, p)
			}
		}
		if len(push) == 0 {
			return f, false, nil
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
}

// transformFilterOnScan rewrites (Transform) every Filter sitting directly
// on a Scan with fn, which returns the Filter's replacement and whether it
// differs from f (when it does not, it must return f).
func transformFilterOnScan(n Node, fn func(f *Filter, s *Scan) (Node, bool, error)) (Node, error) {
	out, _, err := Transform(n, func(n Node) (Node, bool, error) {
		if f, ok := n.(*Filter); ok {
			if s, ok := f.Input.(*Scan); ok {
				return fn(f, s)
			}
		}
		return n, false, nil
	})
	return out, err
}
