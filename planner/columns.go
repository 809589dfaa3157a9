package planner

import (
	"slices"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/quarrydb/quarry/internal/qerr"
)

// What each node type reads from its inputs, by column name. Projection
// pushdown (InputColumns) and index resolution (ResolveIndices) ask the
// nodes through the two optional interfaces below instead of switching on
// node types; a node type that implements neither is treated
// conservatively (it reads every column of every input, and holds no
// column index).

// ColumnSet is a set of column names read from a node's output. All means
// every column (Names is then ignored); the zero value is the empty set
// (e.g. count(*), which reads rows but no values).
type ColumnSet struct {
	All   bool
	Names []string
}

// With returns s plus names, skipping "*" and names already present; s
// itself when s.All. s is not modified.
func (s ColumnSet) With(names ...string) ColumnSet {
	if s.All {
		return s
	}
	out := ColumnSet{Names: slices.Clone(s.Names)}
	for _, c := range names {
		if c != "*" && !slices.Contains(out.Names, c) {
			out.Names = append(out.Names, c)
		}
	}
	return out
}

// ColumnUser is implemented by nodes that know which input columns they
// read.
type ColumnUser interface {
	// InputColumns returns, one per child in Children order, the columns
	// the node needs from that child when its own consumer reads out.
	InputColumns(out ColumnSet) []ColumnSet
}

// IndexResolver is implemented by nodes that hold input column positions
// alongside the column names.
type IndexResolver interface {
	// ResolveIndices recomputes the node's column positions from its column
	// names and its children's current schemas. It modifies the receiver:
	// call it only on nodes you own (being built, or Clone'd).
	ResolveIndices() error
}

// InputColumns returns what n needs from each of its children when its
// consumer reads out: n's own answer when it is a ColumnUser, otherwise
// every column of every child.
func InputColumns(n Node, out ColumnSet) ([]ColumnSet, error) {
	k := len(n.Children())
	if u, ok := n.(ColumnUser); ok {
		sets := u.InputColumns(out)
		if len(sets) != k {
			return nil, qerr.Internal(ErrChildren, "planner: %T reports columns for %d inputs, it has %d", n, len(sets), k)
		}
		return sets, nil
	}
	sets := make([]ColumnSet, k)
	for i := range sets {
		sets[i].All = true
	}
	return sets, nil
}

// Resolve recomputes, bottom-up, every column index in the plan from the
// column names and the child schemas (each IndexResolver's
// ResolveIndices). Optimizer rules change schemas (projection pushdown);
// Resolve keeps indices consistent with them. It modifies the plan in
// place: call it only on a plan you own.
func Resolve(n Node) error {
	for _, c := range n.Children() {
		if err := Resolve(c); err != nil {
			return err
		}
	}
	if r, ok := n.(IndexResolver); ok {
		return r.ResolveIndices()
	}
	return nil
}

// colIndex is the position of the column name in s.
func colIndex(s *arrow.Schema, name string) (int, error) {
	is := s.FieldIndices(name)
	if len(is) == 0 {
		return -1, qerr.Internal(nil, "planner: column %q vanished from %s", name, s)
	}
	return is[0], nil
}

// resolveNames sets idx (grown to len(names)) to the positions of names in
// s and returns it.
func resolveNames(s *arrow.Schema, names []string, idx []int) ([]int, error) {
	idx = slices.Grow(idx[:0], len(names))[:len(names)]
	for i, c := range names {
		var err error
		if idx[i], err = colIndex(s, c); err != nil {
			return idx, err
		}
	}
	return idx, nil
}

// resolvePreds sets the Index of every predicate (OR group members
// included) to its column's position in s.
func resolvePreds(s *arrow.Schema, ps []Predicate) error {
	for i := range ps {
		var err error
		if ps[i].Op == OpAny {
			err = resolvePreds(s, ps[i].Any)
		} else {
			ps[i].Index, err = colIndex(s, ps[i].Col)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// predColumns lists the columns a predicate reads (the members' for an OR group).
func predColumns(p Predicate) []string {
	if p.Op != OpAny {
		return []string{p.Col}
	}
	var out []string
	for _, m := range p.Any {
		out = append(out, predColumns(m)...)
	}
	return out
}

// predsColumns lists the columns a list of predicates reads.
func predsColumns(ps []Predicate) []string {
	var out []string
	for _, p := range ps {
		out = append(out, predColumns(p)...)
	}
	return out
}

// clonePreds deep-copies predicates (OR group members included).
func clonePreds(ps []Predicate) []Predicate {
	if ps == nil {
		return nil
	}
	out := slices.Clone(ps)
	for i := range out {
		out[i].Any = clonePreds(out[i].Any)
	}
	return out
}

// ResolveIndices implements IndexResolver: the pushed filters' and zone
// filters' columns in the scan's output.
func (s *Scan) ResolveIndices() error {
	if err := resolvePreds(s.Out, s.Filters); err != nil {
		return err
	}
	return resolvePreds(s.Out, s.ZoneFilters)
}

// InputColumns implements ColumnUser: what the consumer reads plus the
// predicates' columns.
func (f *Filter) InputColumns(out ColumnSet) []ColumnSet {
	return []ColumnSet{out.With(predsColumns(f.Preds)...)}
}

// ResolveIndices implements IndexResolver.
func (f *Filter) ResolveIndices() error { return resolvePreds(f.Input.Schema(), f.Preds) }

// InputColumns implements ColumnUser: exactly the projected columns.
func (p *Project) InputColumns(ColumnSet) []ColumnSet {
	return []ColumnSet{ColumnSet{}.With(p.Columns...)}
}

// ResolveIndices implements IndexResolver.
func (p *Project) ResolveIndices() (err error) {
	p.Indices, err = resolveNames(p.Input.Schema(), p.Columns, p.Indices)
	return err
}

// InputColumns implements ColumnUser: the group keys and the aggregate inputs.
func (a *Aggregate) InputColumns(ColumnSet) []ColumnSet {
	need := ColumnSet{}.With(a.GroupBy...)
	for _, e := range a.Aggs {
		need = need.With(e.Col).With(e.inputColumns()...)
	}
	return []ColumnSet{need}
}

// ResolveIndices implements IndexResolver.
func (a *Aggregate) ResolveIndices() (err error) {
	s := a.Input.Schema()
	if a.GroupIdx, err = resolveNames(s, a.GroupBy, a.GroupIdx); err != nil {
		return err
	}
	for i := range a.Aggs {
		if a.Aggs[i].Col != "*" {
			if a.Aggs[i].Index, err = colIndex(s, a.Aggs[i].Col); err != nil {
				return err
			}
		}
		if err := a.Aggs[i].resolveExtra(s); err != nil {
			return err
		}
	}
	return nil
}

// InputColumns implements ColumnUser: every input column takes part in the comparison.
func (d *Distinct) InputColumns(ColumnSet) []ColumnSet { return []ColumnSet{{All: true}} }

// InputColumns implements ColumnUser: what the consumer reads plus the
// keys (every column without keys).
func (d *Deduplicate) InputColumns(out ColumnSet) []ColumnSet {
	if len(d.Columns) == 0 {
		return []ColumnSet{{All: true}}
	}
	return []ColumnSet{out.With(d.Columns...)}
}

// ResolveIndices implements IndexResolver.
func (d *Deduplicate) ResolveIndices() (err error) {
	d.Indices, err = resolveNames(d.Input.Schema(), d.Columns, d.Indices)
	return err
}

// InputColumns implements ColumnUser: what the consumer reads that is not
// computed here, plus the expressions' inputs.
func (c *Compute) InputColumns(out ColumnSet) []ColumnSet {
	if out.All {
		return []ColumnSet{out}
	}
	var need ColumnSet
	for _, n := range out.Names {
		if !slices.ContainsFunc(c.Exprs, func(e NamedExpr) bool { return e.Name == n }) {
			need = need.With(n)
		}
	}
	for _, e := range c.Exprs {
		need = need.With(ExprColumns(e.Expr)...)
	}
	return []ColumnSet{need}
}

// ResolveIndices implements IndexResolver: the expressions' column references.
func (c *Compute) ResolveIndices() error {
	s := c.Input.Schema()
	var err error
	for _, e := range c.Exprs {
		WalkExpr(e.Expr, func(e Expr) {
			if r, ok := e.(*ColRef); ok && err == nil {
				r.Index, err = colIndex(s, r.Name)
			}
		})
	}
	return err
}

// InputColumns implements ColumnUser: what the consumer reads plus the keys.
func (s *Sort) InputColumns(out ColumnSet) []ColumnSet {
	need := out
	for _, k := range s.Keys {
		need = need.With(k.Col)
	}
	return []ColumnSet{need}
}

// ResolveIndices implements IndexResolver.
func (s *Sort) ResolveIndices() (err error) {
	in := s.Input.Schema()
	for i := range s.Keys {
		if s.Keys[i].Index, err = colIndex(in, s.Keys[i].Col); err != nil {
			return err
		}
	}
	return nil
}

// InputColumns implements ColumnUser: what the consumer reads.
func (l *Limit) InputColumns(out ColumnSet) []ColumnSet { return []ColumnSet{out} }
