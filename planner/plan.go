package planner

import "github.com/apache/arrow-go/v18/arrow"

// Node is one logical plan operator. Nodes are pure data: no I/O, no Arrow
// memory. The engine builds iterators from them separately.
type Node interface {
	// Schema is the Arrow schema of the rows this node produces.
	Schema() *arrow.Schema
	// Children are the input nodes (none for Scan).
	Children() []Node
	// Describe is this node's one-line description, e.g. "Filter: region = 'north'".
	Describe() string
}

// Literal is a filter operand coerced to the column's Arrow type.
// Value holds: int64 for all signed/unsigned integer columns (uint64 values
// above MaxInt64 are not representable and rejected), float64 for floats,
// string for strings, bool for booleans, int32 days since epoch for date32,
// int64 in the column's unit for timestamps.
type Literal struct {
	Type  arrow.DataType
	Value any
}

// Predicate is a validated, typed filter on one input column.
type Predicate struct {
	// Col is the column name; Index its position in the input schema of the node holding it.
	Col   string
	Index int
	// Op is one of the Op* constants.
	Op string
	// Value: eq/neq/lt/lte/gt/gte/contains. Nil for is_null/is_not_null.
	Value *Literal
	// Values: in.
	Values []Literal
	// Min/Max: range (either may be nil; bounds inclusive).
	Min, Max *Literal
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
	// RowCount is the dataset's row count (for estimates); RowCountExact says if it is exact.
	RowCount      int64
	RowCountExact bool
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
	// Fn is one of the Agg* constants.
	Fn string
	// Col is the input column name, "*" for count(*); Index its input position (-1 for *).
	Col   string
	Index int
	// Name is the output column name.
	Name string
	// Type is the output type: count -> int64; sum -> int64 for integer input,
	// float64 otherwise; avg -> float64; min/max -> the input type.
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

// SortKey is one resolved sort key. Nulls always sort last; ties keep input order (stable).
type SortKey struct {
	Col   string
	Index int
	Desc  bool
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

func (s *Scan) Schema() *arrow.Schema      { return s.Out }
func (f *Filter) Schema() *arrow.Schema    { return f.Input.Schema() }
func (p *Project) Schema() *arrow.Schema   { return p.Out }
func (a *Aggregate) Schema() *arrow.Schema { return a.Out }
func (d *Distinct) Schema() *arrow.Schema  { return d.Input.Schema() }
func (s *Sort) Schema() *arrow.Schema      { return s.Input.Schema() }
func (l *Limit) Schema() *arrow.Schema     { return l.Input.Schema() }

func (s *Scan) Children() []Node      { return nil }
func (f *Filter) Children() []Node    { return []Node{f.Input} }
func (p *Project) Children() []Node   { return []Node{p.Input} }
func (a *Aggregate) Children() []Node { return []Node{a.Input} }
func (d *Distinct) Children() []Node  { return []Node{d.Input} }
func (s *Sort) Children() []Node      { return []Node{s.Input} }
func (l *Limit) Children() []Node     { return []Node{l.Input} }
