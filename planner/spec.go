package planner

import (
	"encoding/json"

	"github.com/quarrydb/quarry/internal/funcs"
)

// Spec is the query spec shared by estimate_query, query_data and aggregate.
// It is bound straight from the tool arguments; Build validates it against a
// dataset schema. Zero values mean "not set". docs/QUERY.md is the full
// reference.
type Spec struct {
	// Columns to return, in order. Empty means all columns (or, with GroupBy/Aggs,
	// the group keys followed by the aggregates). An entry that is not a column
	// name may be an arithmetic expression ("qty * price", "(a - b) / b",
	// `"unit price" * 2`), optionally named with a trailing "AS name"
	// ("qty * price AS revenue"); see ParseExpr. A known column name always wins.
	Columns []string `json:"columns,omitempty" jsonschema:"Columns (default all) or SQL expressions [AS name]: \"qty * price AS revenue\"."`
	// Filters are ANDed. An element with Any is an OR group.
	Filters []FilterSpec `json:"filters,omitempty" jsonschema:"Row filters, ANDed; {\"any\": [...]} is an OR group."`
	// GroupBy keys (columns or named expressions, see GroupKeys); with Aggs,
	// one output row per distinct key.
	GroupBy GroupKeys `json:"group_by,omitempty" jsonschema:"Group keys (columns or expressions)."`
	// Aggs computed per group (or over the whole result when GroupBy is empty).
	Aggs []AggSpec `json:"aggs,omitempty"`
	// Having filters the groups after aggregation (see having.go).
	Having []FilterSpec `json:"having,omitempty" jsonschema:"Filters on groups, by aggregate names (count_all, sum_qty)."`
	// Distinct returns the distinct rows of the projection.
	Distinct bool `json:"distinct,omitempty"`
	// Deduplicate drops every row whose selected columns equal those of an
	// earlier row (input order), keeping the first; the result keeps input
	// order and order_by may still name columns that are not selected.
	Deduplicate bool `json:"deduplicate,omitempty" jsonschema:"Drop repeated rows, keep order."`
	// NullPolicy is NullKeep (default) or NullDrop.
	NullPolicy string `json:"null_policy,omitempty" jsonschema:"enum=keep,enum=drop" jsonschema_description:"drop: skip rows with nulls."`
	// OrderBy keys, applied after aggregation; nulls sort last; ties keep input order.
	OrderBy []OrderSpec `json:"order_by,omitempty"`
	// Limit on the final result; nil means no limit.
	Limit *int64 `json:"limit,omitempty"`
	// Offset skips rows of the final result; nil means 0.
	Offset *int64 `json:"offset,omitempty"`
	// TopN keeps, in an aggregate query, the N best groups ranked by OrderBy
	// (or, without OrderBy, by the first aggregate descending); Offset and
	// Limit then apply within them.
	TopN *int64 `json:"top_n,omitempty" jsonschema:"Top N groups by order_by."`
	// Join joins other datasets to the query's dataset before everything
	// else (filters, aggregates, ...); see JoinSpec and docs/QUERY.md.
	Join []JoinSpec `json:"join,omitempty" jsonschema:"Datasets to join; their columns become alias.col."`
	// Windows are window functions, computed after the filters (and after
	// aggregation when the query aggregates); each adds a column usable in
	// columns and order_by. See WindowSpec.
	Windows []WindowSpec `json:"windows,omitempty" jsonschema:"Window functions (rank, lag, running sums, ...) as new columns."`
	// TopNPerGroup keeps the best N rows of every group (see TopNPerGroupSpec).
	TopNPerGroup *TopNPerGroupSpec `json:"top_n_per_group,omitempty" jsonschema:"First n rows per group."`
}

// FilterSpec is one element of Spec.Filters: either a predicate {col, op,
// value?, case_insensitive?}, an OR group {any: [...]} (then col, op and
// value must be omitted) or a boolean expression {expr: "..."}. OR groups nest one level: their members are plain
// predicates (FilterCond).
type FilterSpec struct {
	// Col is the column name (required unless Any is given).
	Col string `json:"col,omitempty"`
	// Op is a registered filter operator (required unless Any is given);
	// the tool schemas list the registry's operators as its enum.
	Op Op `json:"op,omitempty"`
	// Value is the operand: a scalar; a list for in/not_in; {min,max} for
	// range; a pattern for regex; absent for is_null/is_not_null. Kept raw so
	// Build can coerce it to the column type.
	Value json.RawMessage `json:"value,omitempty" jsonschema:"Scalar; list (in); {min, max} (range)."`
	// CaseInsensitive makes string ops (eq, neq, in, not_in, contains,
	// starts_with, ends_with, regex) compare with Unicode simple case folding.
	CaseInsensitive bool `json:"case_insensitive,omitempty" jsonschema:"Ignore case (string ops)."`
	// Any makes this element an OR group of predicates.
	Any []FilterCond `json:"any,omitempty" jsonschema:"OR group of {col, op, value} filters."`
	// Expr makes this element a boolean expression (see ParseExpr): the row
	// passes when it is true (false and null drop the row). Its schema
	// description must not contain "=": mcp-go splits descriptions at commas
	// and rejects an option with one.
	Expr string `json:"expr,omitempty" jsonschema:"SQL condition instead: \"qty * price > 100\"."`
	// FilterToken is a confirmed filter signed by pattern_filter; the
	// service replaces it with the filter it stands for before planning.
	FilterToken string `json:"filter_token,omitempty" jsonschema:"pattern_filter token instead."`
}

// FilterCond is one member of an OR group: the same fields as FilterSpec
// without further nesting.
type FilterCond struct {
	// Col is the column name.
	Col string `json:"col"`
	// Op is a registered filter operator.
	Op Op `json:"op"`
	// Value is the operand, as in FilterSpec.
	Value json.RawMessage `json:"value,omitempty"`
	// CaseInsensitive is as in FilterSpec.
	CaseInsensitive bool `json:"case_insensitive,omitempty"`
}

// AggSpec is one aggregate {col, fn, q?, as?}.
type AggSpec struct {
	// Col is the input column or an arithmetic expression; "*" only with count.
	Col string `json:"col" jsonschema:"Column or expression; * with count."`
	// Fn is a registered aggregate function; the tool schemas list the
	// registry's functions as its enum.
	Fn AggFn `json:"fn"`
	// Q is the quantile in [0, 1]; required with quantile, rejected otherwise.
	Q *float64 `json:"q,omitempty" jsonschema:"quantile: q in [0, 1]."`
	// As names the output column; default fn_col (count_all for count(*),
	// quantile_<q>_col for quantile, fn_col_arg for a column arg).
	As string `json:"as,omitempty" jsonschema:"Output name (default fn_col)."`
	// Arg is the second argument of the aggregates that declare one
	// (funcs.AggDecl.Arg): a column or expression, or a text literal.
	Arg *string `json:"arg,omitempty" jsonschema:"Second argument (corr x, arg_max key, string_agg separator)."`
	// Filter keeps the rows this aggregate sees (SQL's FILTER (WHERE ...)):
	// the same language as Spec.Filters, ANDed.
	Filter []FilterSpec `json:"filter,omitempty" jsonschema:"FILTER (WHERE ...): only rows passing these filters."`
}

// OrderSpec is one sort key.
type OrderSpec struct {
	// Col is an output column, an aggregate output name, a named expression,
	// or (without aggregation) any input column.
	Col string `json:"col" jsonschema:"Column or output name."`
	// Desc sorts descending.
	Desc bool `json:"desc,omitempty"`
	// NullsFirst sorts nulls before the other values (SQL ORDER BY ...
	// NULLS FIRST); only in the query's order_by (windows sort nulls last).
	NullsFirst bool `json:"nulls_first,omitempty" jsonschema:"Nulls first (default last)." compact:"-"`
}

// Op is a filter operator (declared in the function registry, package
// internal/funcs); the Op* constants name the built-in ones.
type Op = funcs.Op

// Filter operators (see funcs.Ops for their declarations).
const (
	OpEq         = funcs.OpEq
	OpNeq        = funcs.OpNeq
	OpLt         = funcs.OpLt
	OpLte        = funcs.OpLte
	OpGt         = funcs.OpGt
	OpGte        = funcs.OpGte
	OpIn         = funcs.OpIn
	OpNotIn      = funcs.OpNotIn
	OpRange      = funcs.OpRange
	OpContains   = funcs.OpContains
	OpStartsWith = funcs.OpStartsWith
	OpEndsWith   = funcs.OpEndsWith
	OpRegex      = funcs.OpRegex
	OpIsNull     = funcs.OpIsNull
	OpIsNotNull  = funcs.OpIsNotNull
	// OpAny is the op of a Predicate that is an OR group (Predicate.Any).
	// It never appears in a Spec.
	OpAny = funcs.OpAny
)

// MaxRegexLen is the longest accepted regex pattern, in bytes.
const MaxRegexLen = funcs.MaxPatternLen

// AggFn is an aggregate function (declared in the function registry,
// package internal/funcs); the Agg* constants name the built-in ones.
type AggFn = funcs.AggFn

// Aggregate functions (see funcs.Aggs for their declarations).
const (
	AggCount         = funcs.AggCount
	AggCountDistinct = funcs.AggCountDistinct
	AggSum           = funcs.AggSum
	AggAvg           = funcs.AggAvg
	AggMin           = funcs.AggMin
	AggMax           = funcs.AggMax
	AggMedian        = funcs.AggMedian
	AggStddev        = funcs.AggStddev
	AggQuantile      = funcs.AggQuantile
	AggFirst         = funcs.AggFirst
	AggLast          = funcs.AggLast
)

// Null policies (Spec.NullPolicy).
const (
	NullKeep = "keep"
	NullDrop = "drop"
)
