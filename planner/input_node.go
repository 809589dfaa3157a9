package planner

// source is the plan an Input reads: its Node when set (a subquery of the
// SQL front-end), else a Scan of its dataset.
func (in Input) source() Node {
	if in.Node != nil {
		return in.Node
	}
	return &Scan{Dataset: in.Dataset, Out: in.Schema, RowCount: in.RowCount, RowCountExact: in.RowCountExact}
}
