package planner

import (
	"slices"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/quarrydb/quarry/internal/qerr"
)

// FilterPushdowner is implemented by sources that can evaluate some
// predicates themselves while reading (e.g. skipping row groups or chunks).
// HandlesFilter reports whether the source fully applies p; the optimizer
// moves only those predicates into the Scan. p may use any Op* constant
// (including OpAny groups and CaseInsensitive string ops): a source must
// return false for whatever it does not fully understand.
type FilterPushdowner interface {
	HandlesFilter(p Predicate) bool
}

// OptimizeOptions configures Optimize.
type OptimizeOptions struct {
	// Pushdown, when non-nil, receives filters it reports it handles
	// (rule PushFilters). Nil means no filter is pushed into the scan.
	Pushdown FilterPushdowner
}

// Rule is one optimizer rewrite. Rules take and return a plan; they never
// mutate their input (Optimize clones the plan first).
type Rule struct {
	// Name identifies the rule in explain output and tests.
	Name string
	// Apply rewrites the (already cloned) plan.
	Apply func(n Node, opts OptimizeOptions) (Node, error)
}

// Rules is the optimizer pipeline, in order.
var Rules = []Rule{
	{Name: "fold_constants", Apply: FoldConstants},
	{Name: "push_filters", Apply: PushFilters},
	{Name: "push_limit", Apply: PushLimit},
	{Name: "push_projection", Apply: PushProjection},
}

// Optimize clones the plan and applies Rules in order, then re-resolves
// every column index against the rewritten child schemas.
func Optimize(n Node, opts OptimizeOptions) (Node, error) {
	n = Clone(n)
	var err error
	for _, r := range Rules {
		if n, err = r.Apply(n, opts); err != nil {
			return nil, err
		}
	}
	return n, Resolve(n)
}

// PushFilters moves the predicates of a Filter sitting directly on a Scan
// into the Scan when opts.Pushdown handles them; the rest stay in the Filter
// (which is removed when empty).
func PushFilters(n Node, opts OptimizeOptions) (Node, error) {
	if opts.Pushdown == nil {
		return n, nil
	}
	return rewrite(n, func(n Node) Node {
		f, ok := n.(*Filter)
		if !ok {
			return n
		}
		s, ok := f.Input.(*Scan)
		if !ok {
			return n
		}
		var keep []Predicate
		for _, p := range f.Preds {
			if opts.Pushdown.HandlesFilter(p) {
				s.Filters = append(s.Filters, p)
			} else {
				keep = append(keep, p)
			}
		}
		if len(keep) == 0 {
			return s
		}
		f.Preds = keep
		return f
	}), nil
}

// PushLimit moves a Limit below the Project and Compute nodes under it
// (they neither add, drop nor reorder rows), so a Limit lands directly on a
// Sort (top-k in the engine) or on the scan pipeline (early exit), and
// expressions are computed only for the rows returned.
func PushLimit(n Node, _ OptimizeOptions) (Node, error) {
	return rewrite(n, func(n Node) Node {
		l, ok := n.(*Limit)
		if !ok {
			return n
		}
		var root, parent Node = l, nil
		setInput := func(p, c Node) {
			switch x := p.(type) {
			case *Project:
				x.Input = c
			case *Compute:
				x.Input = c
			}
		}
		for {
			var moved Node
			switch x := l.Input.(type) {
			case *Project:
				l.Input, x.Input, moved = x.Input, l, x
			case *Compute:
				l.Input, x.Input, moved = x.Input, l, x
			default:
				return root
			}
			if parent == nil {
				root = moved
			} else {
				setInput(parent, moved)
			}
			parent = moved
		}
	}), nil
}

// PushProjection makes the Scan read only the columns the plan uses. When
// the plan needs no column at all (count(*)), the scan reads the first
// column only, for row counts.
func PushProjection(n Node, _ OptimizeOptions) (Node, error) {
	var walk func(n Node, need []string, all bool)
	walk = func(n Node, need []string, all bool) {
		add := func(cols ...string) {
			for _, c := range cols {
				if c != "*" && !slices.Contains(need, c) {
					need = append(need, c)
				}
			}
		}
		addPreds := func(ps []Predicate) {
			for _, p := range ps {
				add(predColumns(p)...)
			}
		}
		switch x := n.(type) {
		case *Scan:
			if all {
				return
			}
			var cols []string
			var fields []arrow.Field
			addPreds(x.Filters)
			for _, f := range x.Out.Fields() {
				if slices.Contains(need, f.Name) {
					cols = append(cols, f.Name)
					fields = append(fields, f)
				}
			}
			if len(cols) == 0 && x.Out.NumFields() > 0 {
				cols = []string{x.Out.Field(0).Name}
				fields = []arrow.Field{x.Out.Field(0)}
			}
			if len(cols) == x.Out.NumFields() {
				return
			}
			x.Columns = cols
			x.Out = arrow.NewSchema(fields, nil)
		case *Filter:
			if !all {
				addPreds(x.Preds)
			}
			walk(x.Input, need, all)
		case *Compute:
			if all {
				walk(x.Input, nil, true)
				return
			}
			var below []string
			for _, c := range need {
				if !slices.ContainsFunc(x.Exprs, func(e NamedExpr) bool { return e.Name == c }) {
					below = append(below, c)
				}
			}
			need = below
			for _, e := range x.Exprs {
				add(ExprColumns(e.Expr)...)
			}
			walk(x.Input, need, false)
		case *Project:
			walk(x.Input, slices.Clone(x.Columns), false)
		case *Aggregate:
			need = slices.Clone(x.GroupBy)
			for _, a := range x.Aggs {
				add(a.Col)
			}
			walk(x.Input, need, false)
		case *Sort:
			if !all {
				for _, k := range x.Keys {
					add(k.Col)
				}
			}
			walk(x.Input, need, all)
		case *Distinct:
			walk(x.Input, nil, true) // every input column takes part in the comparison
		case *Deduplicate:
			if len(x.Columns) == 0 {
				walk(x.Input, nil, true)
				return
			}
			if !all {
				add(x.Columns...)
			}
			walk(x.Input, need, all)
		case *Limit:
			walk(x.Input, need, all)
		}
	}
	walk(n, nil, true)
	return n, nil
}

// Resolve recomputes, bottom-up, every column index in the plan from the
// column names and the child schemas. Optimizer rules change schemas
// (projection pushdown); Resolve keeps indices consistent with them.
func Resolve(n Node) error {
	for _, c := range n.Children() {
		if err := Resolve(c); err != nil {
			return err
		}
	}
	idx := func(s *arrow.Schema, name string) (int, error) {
		is := s.FieldIndices(name)
		if len(is) == 0 {
			return -1, qerr.Internal(nil, "planner: column %q vanished from %s", name, s)
		}
		return is[0], nil
	}
	var err error
	var resolvePreds func(s *arrow.Schema, ps []Predicate)
	resolvePreds = func(s *arrow.Schema, ps []Predicate) {
		for i := range ps {
			if ps[i].Op == OpAny {
				resolvePreds(s, ps[i].Any)
				continue
			}
			if err == nil {
				ps[i].Index, err = idx(s, ps[i].Col)
			}
		}
	}
	switch x := n.(type) {
	case *Scan:
		resolvePreds(x.Out, x.Filters)
	case *Filter:
		resolvePreds(x.Input.Schema(), x.Preds)
	case *Project:
		s := x.Input.Schema()
		for i, c := range x.Columns {
			if err == nil {
				x.Indices[i], err = idx(s, c)
			}
		}
	case *Aggregate:
		s := x.Input.Schema()
		for i, g := range x.GroupBy {
			if err == nil {
				x.GroupIdx[i], err = idx(s, g)
			}
		}
		for i := range x.Aggs {
			if x.Aggs[i].Col != "*" && err == nil {
				x.Aggs[i].Index, err = idx(s, x.Aggs[i].Col)
			}
		}
	case *Sort:
		s := x.Input.Schema()
		for i := range x.Keys {
			if err == nil {
				x.Keys[i].Index, err = idx(s, x.Keys[i].Col)
			}
		}
	case *Deduplicate:
		s := x.Input.Schema()
		x.Indices = slices.Grow(x.Indices[:0], len(x.Columns))[:len(x.Columns)]
		for i, c := range x.Columns {
			if err == nil {
				x.Indices[i], err = idx(s, c)
			}
		}
	case *Compute:
		s := x.Input.Schema()
		for _, e := range x.Exprs {
			WalkExpr(e.Expr, func(e Expr) {
				if c, ok := e.(*ColRef); ok && err == nil {
					c.Index, err = idx(s, c.Name)
				}
			})
		}
	}
	return err
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

// Clone deep-copies a plan so rewrites never alias the caller's nodes.
func Clone(n Node) Node {
	switch x := n.(type) {
	case *Scan:
		c := *x
		c.Columns = slices.Clone(x.Columns)
		c.Filters = clonePreds(x.Filters)
		return &c
	case *Filter:
		return &Filter{Input: Clone(x.Input), Preds: clonePreds(x.Preds)}
	case *Compute:
		c := &Compute{Input: Clone(x.Input), Exprs: make([]NamedExpr, len(x.Exprs))}
		for i, e := range x.Exprs {
			c.Exprs[i] = NamedExpr{Name: e.Name, Expr: CloneExpr(e.Expr)}
		}
		return c
	case *Deduplicate:
		return &Deduplicate{Input: Clone(x.Input), Columns: slices.Clone(x.Columns), Indices: slices.Clone(x.Indices)}
	case *Project:
		return &Project{Input: Clone(x.Input), Columns: slices.Clone(x.Columns), Indices: slices.Clone(x.Indices), Out: x.Out}
	case *Aggregate:
		return &Aggregate{Input: Clone(x.Input), GroupBy: slices.Clone(x.GroupBy), GroupIdx: slices.Clone(x.GroupIdx), Aggs: slices.Clone(x.Aggs), Out: x.Out}
	case *Distinct:
		return &Distinct{Input: Clone(x.Input)}
	case *Sort:
		return &Sort{Input: Clone(x.Input), Keys: slices.Clone(x.Keys)}
	case *Limit:
		c := *x
		c.Input = Clone(x.Input)
		return &c
	}
	return n
}

// rewrite applies f to every node bottom-up, replacing children in place.
func rewrite(n Node, f func(Node) Node) Node {
	switch x := n.(type) {
	case *Filter:
		x.Input = rewrite(x.Input, f)
	case *Project:
		x.Input = rewrite(x.Input, f)
	case *Aggregate:
		x.Input = rewrite(x.Input, f)
	case *Distinct:
		x.Input = rewrite(x.Input, f)
	case *Deduplicate:
		x.Input = rewrite(x.Input, f)
	case *Compute:
		x.Input = rewrite(x.Input, f)
	case *Sort:
		x.Input = rewrite(x.Input, f)
	case *Limit:
		x.Input = rewrite(x.Input, f)
	}
	return f(n)
}

// ScanOf returns the plan's Scan leaf (nil if there is none).
func ScanOf(n Node) *Scan {
	for n != nil {
		if s, ok := n.(*Scan); ok {
			return s
		}
		cs := n.Children()
		if len(cs) == 0 {
			return nil
		}
		n = cs[0]
	}
	return nil
}
