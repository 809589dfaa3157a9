package planner

import (
	"fmt"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/quarrydb/quarry/internal/funcs"
	"github.com/quarrydb/quarry/internal/qerr"
)

// SetOpKind is the kind of a set operation (SetOp.Kind).
type SetOpKind string

// Set operation kinds. Each combines two inputs with the same number of
// columns, matched by position.
const (
	SetUnion     SetOpKind = "union"
	SetIntersect SetOpKind = "intersect"
	SetExcept    SetOpKind = "except"
)

// SetOpKinds lists every set operation kind.
var SetOpKinds = []SetOpKind{SetUnion, SetIntersect, SetExcept}

// SetOp is a SQL set operation of two inputs, columns matched by position,
// with SQL semantics: rows compare as whole tuples, nulls equal to nulls
// (and, as in grouping, NaN to NaN and -0 to 0).
//
//   - union all: every left row, then every right row (streaming).
//   - union: the distinct rows of both.
//   - intersect: the distinct left rows that occur on the right; intersect
//     all: a row occurring m times on the left and n times on the right
//     occurs min(m, n) times.
//   - except: the distinct left rows that do not occur on the right; except
//     all: max(m-n, 0) times.
//
// Output names are the left input's; each column's type is the two inputs'
// types unified by UnifySetTypes (the engine converts each side's values);
// a column is nullable when it is on either side. Only union all keeps
// an order (left rows in order, then right rows); the others emit left rows
// in first-occurrence order, which callers must not rely on.
type SetOp struct {
	Kind        SetOpKind
	All         bool
	Left, Right Node
}

// NewSetOp validates a set operation of left and right: a known kind,
// the same number of columns, and column types that unify
// (UnifySetTypes). Errors are *qerr.Error with code invalid_argument and
// a "column" diagnostic (1-based position) for a type mismatch.
func NewSetOp(kind SetOpKind, all bool, left, right Node) (*SetOp, error) {
	known := false
	for _, k := range SetOpKinds {
		known = known || k == kind
	}
	if !known {
		return nil, qerr.Invalid(qerr.CodeInvalidArgument, "unknown set operation %q", kind).
			WithHint("use union, intersect or except")
	}
	if left == nil || right == nil {
		return nil, qerr.Internal(nil, "planner: set operation with a nil input")
	}
	ls, rs := left.Schema(), right.Schema()
	if ls.NumFields() != rs.NumFields() {
		return nil, qerr.Invalid(qerr.CodeInvalidArgument, "each %s query must have the same number of columns: %d on the left, %d on the right",
			strings.ToUpper(string(kind)), ls.NumFields(), rs.NumFields()).
			With("left_columns", ls.NumFields()).With("right_columns", rs.NumFields()).
			WithHint("select the same number of columns on both sides (add NULL or a constant for a missing one)")
	}
	if _, err := UnifySetTypes(ls, rs); err != nil {
		return nil, err
	}
	return &SetOp{Kind: kind, All: all, Left: left, Right: right}, nil
}

// UnifyTypes is the type two values of types a and b are combined in by
// a set operation or a VALUES column: a itself when the types are equal;
// the other type when one is the null type (an untyped NULL); otherwise
// both widen as expressions widen columns (integers to int64, floats to
// float64, dictionary-encoded strings to their string type) and meet in
// funcs.CommonType: int64 with int64 is int64, any other mix of numbers
// float64; strings utf8 (large_utf8 when both are large); dates and
// timestamps a timestamp; booleans boolean. False when they do not mix
// (e.g. a string and a number).
func UnifyTypes(a, b arrow.DataType) (arrow.DataType, bool) {
	switch {
	case arrow.TypeEqual(a, b):
		return a, true
	case a.ID() == arrow.NULL:
		return b, true
	case b.ID() == arrow.NULL:
		return a, true
	}
	ea, ok := funcs.ExprType(a)
	if !ok {
		return nil, false
	}
	eb, ok := funcs.ExprType(b)
	if !ok {
		return nil, false
	}
	return funcs.CommonType([]arrow.DataType{ea, eb})
}

// UnifySetTypes returns the output column types of a set operation of
// inputs with schemas l and r (same number of columns): UnifyTypes of
// each pair, or an invalid_argument error naming the first column whose
// types do not mix.
func UnifySetTypes(l, r *arrow.Schema) ([]arrow.DataType, error) {
	if l.NumFields() != r.NumFields() {
		return nil, qerr.Invalid(qerr.CodeInvalidArgument, "set operation inputs have %d and %d columns", l.NumFields(), r.NumFields())
	}
	out := make([]arrow.DataType, l.NumFields())
	for i := range out {
		lf, rf := l.Field(i), r.Field(i)
		t, ok := UnifyTypes(lf.Type, rf.Type)
		if !ok || !funcs.CanCast(lf.Type, t) || !funcs.CanCast(rf.Type, t) {
			return nil, qerr.Invalid(qerr.CodeInvalidArgument, "column %d of the set operation: %s (%s) and %s (%s) have types that do not mix",
				i+1, quoteIdent(lf.Name), typeName(lf.Type), quoteIdent(rf.Name), typeName(rf.Type)).
				With("column", i+1).With("left_type", typeName(lf.Type)).With("right_type", typeName(rf.Type)).
				WithHint("CAST one side so both have the same kind: numbers mix with numbers, strings with strings, dates with timestamps")
		}
		out[i] = t
	}
	return out, nil
}

// Schema implements Node: the left names, the unified types.
func (s *SetOp) Schema() *arrow.Schema {
	ls, rs := s.Left.Schema(), s.Right.Schema()
	fields := make([]arrow.Field, ls.NumFields())
	for i, f := range ls.Fields() {
		fields[i] = arrow.Field{Name: f.Name, Type: f.Type, Nullable: f.Nullable}
		if i < rs.NumFields() {
			if t, ok := UnifyTypes(f.Type, rs.Field(i).Type); ok {
				fields[i].Type = t
			}
			fields[i].Nullable = f.Nullable || rs.Field(i).Nullable
		}
	}
	return arrow.NewSchema(fields, nil)
}

// Children implements Node: the left then the right input.
func (s *SetOp) Children() []Node { return []Node{s.Left, s.Right} }

// WithChildren implements Node.
func (s *SetOp) WithChildren(children ...Node) (Node, error) {
	if err := CheckChildren(s, 2, children); err != nil {
		return nil, err
	}
	c := *s
	c.Left, c.Right = children[0], children[1]
	return &c, nil
}

// Name is the operation as SQL writes it: "UNION ALL", "EXCEPT", ...
func (s *SetOp) Name() string {
	n := strings.ToUpper(string(s.Kind))
	if s.All {
		n += " ALL"
	}
	return n
}

// Describe implements Node.
func (s *SetOp) Describe() string {
	return fmt.Sprintf("SetOp: %s", s.Name())
}

// InputColumns implements ColumnUser: a set operation compares and emits
// whole rows by position, so it reads every column of both inputs (the
// inputs still narrow their own inputs to what they compute).
func (s *SetOp) InputColumns(ColumnSet) []ColumnSet {
	return []ColumnSet{{All: true}, {All: true}}
}

// PushLimitIntoUnion copies a Limit sitting on a UNION ALL into both of
// its inputs (as a Limit of offset+count rows: neither side can contribute
// more), so each side stops early; the Limit above stays and applies the
// offset. Sides that already end in a Limit at most as large are left
// alone, so the rule is idempotent.
func PushLimitIntoUnion(n Node, _ OptimizeOptions) (Node, error) {
	out, _, err := Transform(n, func(n Node) (Node, bool, error) {
		l, ok := n.(*Limit)
		if !ok || l.Count < 0 {
			return n, false, nil
		}
		u, ok := l.Input.(*SetOp)
		if !ok || u.Kind != SetUnion || !u.All {
			return n, false, nil
		}
		k := l.Count + max(l.Offset, 0)
		if k < l.Count { // overflow: no useful bound
			return n, false, nil
		}
		children := u.Children()
		changed := false
		for i, c := range children {
			if cl, ok := c.(*Limit); ok && cl.Count >= 0 && cl.Count+max(cl.Offset, 0) <= k {
				continue
			}
			children[i], changed = &Limit{Input: c, Offset: 0, Count: k}, true
		}
		if !changed {
			return n, false, nil
		}
		nu, err := u.WithChildren(children...)
		if err != nil {
			return nil, false, err
		}
		nl, err := l.WithChildren(nu)
		if err != nil {
			return nil, false, err
		}
		return nl, true, nil
	})
	return out, err
}

// PushProjectionIntoUnion moves a Project that keeps some of the columns
// of a UNION ALL below it: Project(a, c) over SetOp(l, r) becomes
// SetOp(Project(l's a, c positions), Project(r's same positions)), so each
// side computes and reads only what is used (projection pushdown then
// narrows their scans). Only UNION ALL: the other kinds compare whole
// rows. Names must be unambiguous (each projected column at one position
// of the set operation and of each input); otherwise the plan is left as is.
func PushProjectionIntoUnion(n Node, _ OptimizeOptions) (Node, error) {
	out, _, err := Transform(n, func(n Node) (Node, bool, error) {
		p, ok := n.(*Project)
		if !ok {
			return n, false, nil
		}
		u, ok := p.Input.(*SetOp)
		if !ok || u.Kind != SetUnion || !u.All {
			return n, false, nil
		}
		us := u.Schema()
		pos := make([]int, len(p.Columns))
		for i, c := range p.Columns {
			idx := us.FieldIndices(c)
			if len(idx) != 1 {
				return n, false, nil
			}
			pos[i] = idx[0]
		}
		children := u.Children()
		for i, c := range children {
			np, ok := projectPositions(c, pos)
			if !ok {
				return n, false, nil
			}
			children[i] = np
		}
		nu, err := u.WithChildren(children...)
		if err != nil {
			return nil, false, err
		}
		if !nu.Schema().Equal(p.Schema()) { // names or types would change: keep the plan
			return n, false, nil
		}
		return nu, true, nil
	})
	return out, err
}

// projectPositions is a Project of the columns of c at positions pos (a
// narrower copy when c is a Project itself), or false when one of their
// names is ambiguous in c's schema.
func projectPositions(c Node, pos []int) (*Project, bool) {
	s := c.Schema()
	if inner, ok := c.(*Project); ok && len(inner.Indices) == len(inner.Columns) {
		p := &Project{Input: inner.Input}
		fields := make([]arrow.Field, len(pos))
		for i, k := range pos {
			p.Columns, p.Indices, fields[i] = append(p.Columns, inner.Columns[k]), append(p.Indices, inner.Indices[k]), inner.Out.Field(k)
		}
		p.Out = arrow.NewSchema(fields, nil)
		return p, true
	}
	p := &Project{Input: c}
	fields := make([]arrow.Field, len(pos))
	for i, k := range pos {
		f := s.Field(k)
		if len(s.FieldIndices(f.Name)) != 1 {
			return nil, false
		}
		p.Columns, p.Indices, fields[i] = append(p.Columns, f.Name), append(p.Indices, k), f
	}
	p.Out = arrow.NewSchema(fields, nil)
	return p, true
}
