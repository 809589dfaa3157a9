package planner

import (
	"errors"
	"slices"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/quarrydb/quarry/internal/qerr"
)

// Node is one logical plan operator. Nodes are pure data: no I/O, no Arrow
// memory. The engine builds iterators from them separately. The contract
// every node type follows (see the package documentation, "Plan nodes"):
// tree traversal and rewriting go through Children and WithChildren only,
// so generic code (Transform, Inspect, Clone, the optimizer rules, the
// engine's shape check) never switches on node types to reach inputs.
type Node interface {
	// Schema is the Arrow schema of the rows this node produces.
	Schema() *arrow.Schema
	// Children are the input nodes in a fixed order (none for Scan). The
	// slice is new on every call: callers may modify it.
	Children() []Node
	// WithChildren returns a copy of the node with the given inputs (in
	// Children order), leaving the receiver unchanged. The copy shares no
	// mutable state with the receiver (its slices and expressions are
	// copied), so either may be modified afterwards. A wrong number of
	// children is an error wrapping ErrChildren (and qerr.ErrInternal).
	WithChildren(children ...Node) (Node, error)
	// Describe is this node's one-line description, e.g. "Filter: region = 'north'".
	Describe() string
}

// Literal is a filter operand coerced to the column's Arrow type.
// Value holds: for all signed/unsigned integer columns an int64, or a Number
// for an operand no int64 holds (beyond the int64 range, or with a
// fraction; compared exactly), float64 for floats,
// string for strings, bool for booleans, int32 days since epoch for date32,
// int64 in the column's unit for timestamps.
type Literal struct {
	Type  arrow.DataType
	Value any
}

// Predicate is a validated, typed filter on one input column, or (Op ==
// OpAny) an OR group of such predicates.
type Predicate struct {
	// Col is the column name; Index its position in the input schema of the
	// node holding it. Empty and -1 for an OR group.
	Col   string
	Index int
	// Op is a registered filter operator, or OpAny.
	Op Op
	// Value: eq/neq/lt/lte/gt/gte/contains/starts_with/ends_with, and the
	// pattern (a string literal) for regex. Nil for is_null/is_not_null.
	Value *Literal
	// Values: in and not_in.
	Values []Literal
	// Min/Max: range (either may be nil; bounds inclusive).
	Min, Max *Literal
	// CaseInsensitive: string ops compare with Unicode simple case folding.
	CaseInsensitive bool
	// Any holds the members of an OR group (Op == OpAny); never nested further.
	Any []Predicate
}

// Scan reads a dataset. Columns is the projection pushed into the source
// (nil = all); Filters are predicates pushed into the scan that the source
// must apply (the optimizer only pushes filters a source reports it handles;
// otherwise they stay in a Filter node above the scan).
type Scan struct {
	Dataset string
	// Out is the schema after projection.
	Out     *arrow.Schema
	Columns []string
	Filters []Predicate
	// ZoneFilters are copies of predicates of the Filter sitting directly
	// on this Scan that the source may use to skip whole batches in which
	// no row can satisfy them (zone maps: per-batch min/max and null
	// counts). The Filter still applies them to the batches the source
	// returns; see ZoneFilterer and rule ZoneFilters.
	ZoneFilters []Predicate
	// RowCount is the dataset's row count (for estimates); RowCountExact says if it is exact.
	RowCount      int64
	RowCountExact bool
	// Pushed, when set, is a subtree over this dataset that its source
	// runs itself (a remote engine; PushSubtree): Out is its schema and
	// Columns and Filters are empty.
	Pushed Node
}

// Filter keeps the rows for which all predicates hold.
type Filter struct {
	Input Node
	Preds []Predicate
}

// Project keeps the named input columns in order (Indices into the input schema).
type Project struct {
	Input   Node
	Columns []string
	Indices []int
	Out     *arrow.Schema
}

// AggExpr is one resolved aggregate.
type AggExpr struct {
	// Fn is a registered aggregate function.
	Fn AggFn
	// Q is the parameter of an aggregate that takes one (AggQuantile), in [0, 1].
	Q float64
	// Col is the input column name, "*" for count(*); Index its input position (-1 for *).
	Col   string
	Index int
	// Arg is the second argument (funcs.AggDecl.Arg): a column name, whose
	// input position is ArgIndex, or a text literal (ArgIndex -1). Which of
	// the two is the declaration's to say.
	Arg      string
	ArgIndex int
	// Filter holds the predicates a row must pass to reach this aggregate
	// (indices into the aggregate's input); nil: every row.
	Filter []Predicate
	// Name is the output column name.
	Name string
	// Type is the output type: count, count_distinct -> int64; sum -> int64
	// for integer input, float64 otherwise; avg, median, quantile, stddev ->
	// float64; min, max, first, last -> the input type (a dictionary-encoded
	// string input gives a plain string).
	Type arrow.DataType
}

// Aggregate groups by the key columns (input indices GroupIdx) and computes
// Aggs. Output: the group keys in order, then one column per AggExpr. Without
// keys it produces exactly one row. Group order is unspecified unless a Sort follows.
type Aggregate struct {
	Input    Node
	GroupBy  []string
	GroupIdx []int
	Aggs     []AggExpr
	Out      *arrow.Schema
}

// Distinct keeps the first occurrence of each distinct row (all columns).
type Distinct struct {
	Input Node
}

// Deduplicate keeps the first occurrence (input order) of each distinct
// tuple of the key Columns (Indices into the input schema) and passes every
// column of the kept rows through. No Columns means all columns.
type Deduplicate struct {
	Input   Node
	Columns []string
	Indices []int
}

// NamedExpr is one computed column: Expr evaluated per row, named Name.
type NamedExpr struct {
	Name string
	Expr Expr
}

// Compute appends one column per expression to its input's columns (the
// input columns pass through unchanged). Expression column references
// index into the input schema.
type Compute struct {
	Input Node
	Exprs []NamedExpr
}

// SortKey is one resolved sort key. Nulls sort last unless NullsFirst; ties keep input order (stable).
type SortKey struct {
	Col        string
	Index      int
	Desc       bool
	NullsFirst bool
}

// Sort orders rows by Keys (stable).
type Sort struct {
	Input Node
	Keys  []SortKey
}

// Limit skips Offset rows and then returns at most Count rows (Count < 0: no limit).
type Limit struct {
	Input  Node
	Offset int64
	Count  int64
}

// Schema implements Node.
func (s *Scan) Schema() *arrow.Schema { return s.Out }

// Schema implements Node.
func (f *Filter) Schema() *arrow.Schema { return f.Input.Schema() }

// Schema implements Node.
func (p *Project) Schema() *arrow.Schema { return p.Out }

// Schema implements Node.
func (a *Aggregate) Schema() *arrow.Schema { return a.Out }

// Schema implements Node.
func (d *Distinct) Schema() *arrow.Schema { return d.Input.Schema() }

// Schema implements Node.
func (d *Deduplicate) Schema() *arrow.Schema { return d.Input.Schema() }

// Schema implements Node: the input fields followed by one nullable field per expression.
func (c *Compute) Schema() *arrow.Schema {
	in := c.Input.Schema()
	fields := make([]arrow.Field, 0, in.NumFields()+len(c.Exprs))
	fields = append(fields, in.Fields()...)
	for _, e := range c.Exprs {
		fields = append(fields, arrow.Field{Name: e.Name, Type: e.Expr.Type(), Nullable: true})
	}
	return arrow.NewSchema(fields, nil)
}

// Schema implements Node.
func (s *Sort) Schema() *arrow.Schema { return s.Input.Schema() }

// Schema implements Node.
func (l *Limit) Schema() *arrow.Schema { return l.Input.Schema() }

// Children implements Node.
func (s *Scan) Children() []Node { return nil }

// Children implements Node.
func (f *Filter) Children() []Node { return []Node{f.Input} }

// Children implements Node.
func (p *Project) Children() []Node { return []Node{p.Input} }

// Children implements Node.
func (a *Aggregate) Children() []Node { return []Node{a.Input} }

// Children implements Node.
func (d *Distinct) Children() []Node { return []Node{d.Input} }

// Children implements Node.
func (d *Deduplicate) Children() []Node { return []Node{d.Input} }

// Children implements Node.
func (c *Compute) Children() []Node { return []Node{c.Input} }

// Children implements Node.
func (s *Sort) Children() []Node { return []Node{s.Input} }

// Children implements Node.
func (l *Limit) Children() []Node { return []Node{l.Input} }

// ErrChildren is wrapped by WithChildren errors: the number of children
// does not match the node type's arity.
var ErrChildren = errors.New("planner: wrong number of children")

// CheckChildren returns nil when children has exactly want elements, and
// otherwise an internal error wrapping ErrChildren that names node n.
// WithChildren implementations call it first.
func CheckChildren(n Node, want int, children []Node) error {
	if len(children) == want {
		return nil
	}
	return qerr.Internal(ErrChildren, "planner: %T takes %d children, got %d", n, want, len(children))
}

// WithChildren implements Node (a Scan has none).
func (s *Scan) WithChildren(children ...Node) (Node, error) {
	if err := CheckChildren(s, 0, children); err != nil {
		return nil, err
	}
	c := *s
	c.Columns = slices.Clone(s.Columns)
	c.Filters = clonePreds(s.Filters)
	c.ZoneFilters = clonePreds(s.ZoneFilters)
	return &c, nil
}

// WithChildren implements Node.
func (f *Filter) WithChildren(children ...Node) (Node, error) {
	if err := CheckChildren(f, 1, children); err != nil {
		return nil, err
	}
	c := *f
	c.Input, c.Preds = children[0], clonePreds(f.Preds)
	return &c, nil
}

// WithChildren implements Node.
func (p *Project) WithChildren(children ...Node) (Node, error) {
	if err := CheckChildren(p, 1, children); err != nil {
		return nil, err
	}
	c := *p
	c.Input, c.Columns, c.Indices = children[0], slices.Clone(p.Columns), slices.Clone(p.Indices)
	return &c, nil
}

// WithChildren implements Node.
func (a *Aggregate) WithChildren(children ...Node) (Node, error) {
	if err := CheckChildren(a, 1, children); err != nil {
		return nil, err
	}
	c := *a
	c.Input, c.GroupBy, c.GroupIdx, c.Aggs = children[0], slices.Clone(a.GroupBy), slices.Clone(a.GroupIdx), slices.Clone(a.Aggs)
	for i := range c.Aggs {
		c.Aggs[i].Filter = clonePreds(c.Aggs[i].Filter)
	}
	return &c, nil
}

// WithChildren implements Node.
func (d *Distinct) WithChildren(children ...Node) (Node, error) {
	if err := CheckChildren(d, 1, children); err != nil {
		return nil, err
	}
	c := *d
	c.Input = children[0]
	return &c, nil
}

// WithChildren implements Node.
func (d *Deduplicate) WithChildren(children ...Node) (Node, error) {
	if err := CheckChildren(d, 1, children); err != nil {
		return nil, err
	}
	c := *d
	c.Input, c.Columns, c.Indices = children[0], slices.Clone(d.Columns), slices.Clone(d.Indices)
	return &c, nil
}

// WithChildren implements Node; the expressions are deep-copied.
func (c *Compute) WithChildren(children ...Node) (Node, error) {
	if err := CheckChildren(c, 1, children); err != nil {
		return nil, err
	}
	n := *c
	n.Input, n.Exprs = children[0], make([]NamedExpr, len(c.Exprs))
	for i, e := range c.Exprs {
		n.Exprs[i] = NamedExpr{Name: e.Name, Expr: CloneExpr(e.Expr)}
	}
	return &n, nil
}

// WithChildren implements Node.
func (s *Sort) WithChildren(children ...Node) (Node, error) {
	if err := CheckChildren(s, 1, children); err != nil {
		return nil, err
	}
	c := *s
	c.Input, c.Keys = children[0], slices.Clone(s.Keys)
	return &c, nil
}

// WithChildren implements Node.
func (l *Limit) WithChildren(children ...Node) (Node, error) {
	if err := CheckChildren(l, 1, children); err != nil {
		return nil, err
	}
	c := *l
	c.Input = children[0]
	return &c, nil
}
