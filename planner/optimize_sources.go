package planner

// SourceOptions are what one scanned dataset's source does with filters
// (OptimizeOptions.Sources): evaluate them while reading (Pushdown, rule
// push_filters) and skip batches with them (Zones, rule zone_filters).
type SourceOptions struct {
	Pushdown FilterPushdowner
	Zones    ZoneFilterer
}

// source is the SourceOptions for a Scan of dataset.
func (o OptimizeOptions) source(dataset string) SourceOptions {
	if s, ok := o.Sources[dataset]; ok {
		return s
	}
	return SourceOptions{Pushdown: o.Pushdown, Zones: o.Zones}
}

// scansSources reports whether any scan may get pushdown or zone filters.
func (o OptimizeOptions) scansSources() bool {
	if o.Pushdown != nil || o.Zones != nil {
		return true
	}
	for _, s := range o.Sources {
		if s.Pushdown != nil || s.Zones != nil {
			return true
		}
	}
	return false
}
