package planner

import (
	"slices"

	"github.com/apache/arrow-go/v18/arrow"
)

// PushProjection makes the Scan read only the columns the plan uses. When
// the plan needs no column at all (count(*)), the scan reads the first
// column only, for row counts. What each node reads from its inputs comes
// from InputColumns (top-down, starting from every column of the root).
func PushProjection(n Node, _ OptimizeOptions) (Node, error) {
	out, _, err := pushProjection(n, ColumnSet{All: true})
	return out, err
}

// pushProjection rewrites the subtree n whose consumer reads out.
func pushProjection(n Node, out ColumnSet) (Node, bool, error) {
	if s, ok := n.(*Scan); ok {
		return projectScan(s, out)
	}
	narrowed := false
	if p, ok := n.(*Project); ok {
		if np := narrowProject(p, out); np != nil {
			n, narrowed = np, true
		}
	}
	need, err := InputColumns(n, out)
	if err != nil {
		return nil, false, err
	}
	children := n.Children()
	changed := false
	for i, c := range children {
		nc, ch, err := pushProjection(c, need[i])
		if err != nil {
			return nil, false, err
		}
		if ch {
			children[i], changed = nc, true
		}
	}
	if !changed {
		return n, narrowed, nil
	}
	nn, err := n.WithChildren(children...)
	return nn, err == nil, err
}

// projectScan narrows s to the columns out and its own filters read.
func projectScan(s *Scan, out ColumnSet) (Node, bool, error) {
	if out.All {
		return s, false, nil
	}
	need := out.With(predsColumns(s.Filters)...)
	var cols []string
	var fields []arrow.Field
	for _, f := range s.Out.Fields() {
		if slices.Contains(need.Names, f.Name) {
			cols = append(cols, f.Name)
			fields = append(fields, f)
		}
	}
	if len(cols) == 0 && s.Out.NumFields() > 0 {
		cols = []string{s.Out.Field(0).Name}
		fields = []arrow.Field{s.Out.Field(0)}
	}
	if len(cols) == s.Out.NumFields() {
		return s, false, nil
	}
	c, err := s.WithChildren()
	if err != nil {
		return nil, false, err
	}
	ns := c.(*Scan)
	ns.Columns = cols
	ns.Out = arrow.NewSchema(fields, nil)
	return ns, true, nil
}

// narrowProject returns a copy of p keeping only the columns out reads (in
// p's order; at least one, for row counts), or nil when p keeps nothing
// more than that. An inner Project (e.g. the one restoring the columns
// after an expression filter) then no longer makes the scan read columns
// that nothing above uses.
func narrowProject(p *Project, out ColumnSet) *Project {
	if out.All {
		return nil
	}
	var keep []int
	for i, c := range p.Columns {
		if slices.Contains(out.Names, c) {
			keep = append(keep, i)
		}
	}
	if len(keep) == 0 && len(p.Columns) > 0 {
		keep = []int{0}
	}
	if len(keep) == len(p.Columns) {
		return nil
	}
	np := &Project{Input: p.Input}
	fields := make([]arrow.Field, 0, len(keep))
	for _, i := range keep {
		np.Columns = append(np.Columns, p.Columns[i])
		if i < len(p.Indices) {
			np.Indices = append(np.Indices, p.Indices[i])
		}
		fields = append(fields, p.Out.Field(i))
	}
	np.Out = arrow.NewSchema(fields, nil)
	return np
}
