package planner

// ZoneFilters copies into a Scan the predicates of the Filter sitting
// directly on it that the scanned dataset's zone filterer (opts.Zones, or
// its entry in opts.Sources) can use to skip batches
// (Scan.ZoneFilters). The Filter keeps every predicate: a source uses zone
// filters only to skip batches in which no row can match, and the Filter
// evaluates them on the rows it does return. It runs after the other rules
// so the Scan's columns are final.
func ZoneFilters(n Node, opts OptimizeOptions) (Node, error) {
	if !opts.scansSources() {
		return n, nil
	}
	return transformFilterOnScan(n, func(f *Filter, s *Scan) (Node, bool, error) {
		zf := opts.source(s.Dataset).Zones
		if zf == nil {
			return f, false, nil
		}
		// Earlier rules may have narrowed the Scan without re-resolving
		// the Filter's indices (Optimize resolves at the end): resolve
		// copies against the Scan's output first.
		preds := clonePreds(f.Preds)
		if err := resolvePreds(s.Out, preds); err != nil {
			return nil, false, err
		}
		var zone []Predicate
		for _, p := range preds {
			if zf.UsesZoneFilter(p, s.Out) {
				zone = append(zone, p)
			}
		}
		if len(zone) == 0 {
			return f, false, nil
		}
		sc, err := s.WithChildren()
		if err != nil {
			return nil, false, err
		}
		sc.(*Scan).ZoneFilters = zone
		fc, err := f.WithChildren(sc)
		if err != nil {
			return nil, false, err
		}
		return fc, true, nil
	})
}
