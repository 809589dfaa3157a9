package planner

import "encoding/json"

// Spec is the query spec shared by estimate_query, query_data and aggregate.
// It is bound straight from the tool arguments; Build validates it against a
// dataset schema. Zero values mean "not set".
type Spec struct {
	// Columns to return, in order. Empty means all columns (or, with GroupBy/Aggs,
	// the group keys followed by the aggregates).
	Columns []string `json:"columns,omitempty" jsonschema:"Columns to return, in order. Omit for all columns."`
	// Filters are ANDed.
	Filters []FilterSpec `json:"filters,omitempty" jsonschema:"Row filters, all of which must hold (AND)."`
	// GroupBy columns; with Aggs, one output row per distinct key.
	GroupBy []string `json:"group_by,omitempty" jsonschema:"Columns to group by; combine with aggs."`
	// Aggs computed per group (or over the whole result when GroupBy is empty).
	Aggs []AggSpec `json:"aggs,omitempty" jsonschema:"Aggregates to compute per group, or over all rows when group_by is empty."`
	// Distinct returns the distinct rows of the projection.
	Distinct bool `json:"distinct,omitempty" jsonschema:"Return only distinct rows of the selected columns."`
	// OrderBy keys, applied after aggregation; nulls sort last.
	OrderBy []OrderSpec `json:"order_by,omitempty" jsonschema:"Sort keys applied to the final result (nulls last). May name aggregate outputs."`
	// Limit on the final result; nil means no limit.
	Limit *int64 `json:"limit,omitempty" jsonschema:"Maximum number of result rows (after offset)."`
	// Offset skips rows of the final result; nil means 0.
	Offset *int64 `json:"offset,omitempty" jsonschema:"Number of result rows to skip first."`
}

// FilterSpec is one predicate {col, op, value}.
type FilterSpec struct {
	// Col is the column name.
	Col string `json:"col" jsonschema:"Column name."`
	// Op is one of the Op* constants.
	Op string `json:"op" jsonschema:"enum=eq,enum=neq,enum=lt,enum=lte,enum=gt,enum=gte,enum=in,enum=range,enum=contains,enum=is_null,enum=is_not_null"`
	// Value is the operand: a scalar; a list for in; {min,max} for range;
	// absent for is_null/is_not_null. Kept raw so Build can coerce it to the column type.
	Value json.RawMessage `json:"value,omitempty" jsonschema:"Operand: a scalar, a list for in, {min,max} for range (inclusive), omitted for is_null/is_not_null."`
}

// AggSpec is one aggregate {col, fn, as?}.
type AggSpec struct {
	// Col is the input column; "*" only with count.
	Col string `json:"col" jsonschema:"Input column, or * with count."`
	// Fn is one of the Agg* constants.
	Fn string `json:"fn" jsonschema:"enum=count,enum=sum,enum=avg,enum=min,enum=max"`
	// As names the output column; default fn_col (count_all for count(*)).
	As string `json:"as,omitempty" jsonschema:"Output column name; default fn_col."`
}

// OrderSpec is one sort key.
type OrderSpec struct {
	// Col is an input column or an aggregate output name.
	Col string `json:"col" jsonschema:"Column or aggregate output name."`
	// Desc sorts descending.
	Desc bool `json:"desc,omitempty" jsonschema:"Sort descending."`
}

// Filter operators.
const (
	OpEq        = "eq"
	OpNeq       = "neq"
	OpLt        = "lt"
	OpLte       = "lte"
	OpGt        = "gt"
	OpGte       = "gte"
	OpIn        = "in"
	OpRange     = "range"
	OpContains  = "contains"
	OpIsNull    = "is_null"
	OpIsNotNull = "is_not_null"
)

// Aggregate functions.
const (
	AggCount = "count"
	AggSum   = "sum"
	AggAvg   = "avg"
	AggMin   = "min"
	AggMax   = "max"
)
