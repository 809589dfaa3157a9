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
		return n, false, nil
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
