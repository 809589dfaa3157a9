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
	Columns []string `json:"columns,omitempty" jsonschema:"Columns to return, in order. Omit for all columns. An entry may also be an expression, optionally named: \"qty * price AS revenue\", \"upper(left(name, 1)) AS initial\", \"CASE WHEN qty > 10 THEN 'bulk' ELSE 'unit' END AS kind\", \"year(date) AS year\" (operators + - * / % ||, comparisons, AND/OR/NOT, IS NULL, LIKE, IN, BETWEEN, CASE, CAST; string, number and date functions: see docs). Strings are 'single-quoted'; double-quote column names that are not identifiers."`
	// Filters are ANDed. An element with Any is an OR group.
	Filters []FilterSpec `json:"filters,omitempty" jsonschema:"Row filters, all of which must hold (AND). An element {\"any\": [filters...]} holds when at least one of its filters holds (OR)."`
	// GroupBy keys (columns or named expressions, see GroupKeys); with Aggs,
	// one output row per distinct key.
	GroupBy GroupKeys `json:"group_by,omitempty" jsonschema:"Group keys; combine with aggs. Each is a column name, an expression with optional AS name (\"floor(temp_max / 5) * 5 AS bucket\"), or {\"expr\": ..., \"as\": ...}."`
	// Aggs computed per group (or over the whole result when GroupBy is empty).
	Aggs []AggSpec `json:"aggs,omitempty" jsonschema:"Aggregates to compute per group, or over all rows when group_by is empty."`
	// Having filters the groups after aggregation (see having.go).
	Having []FilterSpec `json:"having,omitempty" jsonschema:"Filters on the aggregated rows, applied after aggregation and before order_by/top_n/limit: the same language as filters (expr conditions included: {\"expr\": \"sum_qty / count_all > 3\"}), on group keys and aggregate output names (count_all, sum_qty, as)."`
	// Distinct returns the distinct rows of the projection.
	Distinct bool `json:"distinct,omitempty" jsonschema:"Return only distinct rows of the selected columns (order unspecified unless order_by)."`
	// Deduplicate drops every row whose selected columns equal those of an
	// earlier row (input order), keeping the first; the result keeps input
	// order and order_by may still name columns that are not selected.
	Deduplicate bool `json:"deduplicate,omitempty" jsonschema:"Drop rows whose selected columns duplicate an earlier row, keeping the first occurrence and the original row order."`
	// NullPolicy is NullKeep (default) or NullDrop.
	NullPolicy string `json:"null_policy,omitempty" jsonschema:"enum=keep,enum=drop" jsonschema_description:"keep (default) or drop: drop rows with a null in any selected column (with group_by/aggs: in any group_by column or aggregate input, before aggregating)."`
	// OrderBy keys, applied after aggregation; nulls sort last; ties keep input order.
	OrderBy []OrderSpec `json:"order_by,omitempty" jsonschema:"Sort keys applied to the final result (nulls last, ties keep input order). May name aggregate outputs and named expressions."`
	// Limit on the final result; nil means no limit.
	Limit *int64 `json:"limit,omitempty" jsonschema:"Maximum number of result rows (after offset)."`
	// Offset skips rows of the final result; nil means 0.
	Offset *int64 `json:"offset,omitempty" jsonschema:"Number of result rows to skip first."`
	// TopN keeps, in an aggregate query, the N best groups ranked by OrderBy
	// (or, without OrderBy, by the first aggregate descending); Offset and
	// Limit then apply within them.
	TopN *int64 `json:"top_n,omitempty" jsonschema:"Aggregate queries only: keep the top N groups ranked by order_by (without order_by: by the first aggregate, descending). offset/limit apply within them."`
	// Join joins other datasets to the query's dataset before everything
	// else (filters, aggregates, ...); see JoinSpec and docs/QUERY.md.
	Join []JoinSpec `json:"join,omitempty" jsonschema:"Datasets to join before filtering and aggregating, in order: [{dataset, on: [{left, right}], type?, columns?, as?}]. Their columns are named alias.col (alias: the last path element of the dataset id, or as)."`
	// Windows are window functions, computed after the filters (and after
	// aggregation when the query aggregates); each adds a column usable in
	// columns and order_by. See WindowSpec.
	Windows []WindowSpec `json:"windows,omitempty" jsonschema:"Window functions (ranking, lag/lead, running and moving aggregates), each added as a column named as; computed after filters, and over the aggregated rows when the query aggregates. Usable in columns, expressions and order_by."`
	// TopNPerGroup keeps the best N rows of every group (see TopNPerGroupSpec).
	TopNPerGroup *TopNPerGroupSpec `json:"top_n_per_group,omitempty" jsonschema:"Keep the first n rows of every group ranked by by (e.g. the two largest v3 per id6); groups are group_by (without aggs) or partition_by. Output: group by group, in rank order."`
}

// FilterSpec is one element of Spec.Filters: either a predicate {col, op,
// value?, case_insensitive?}, an OR group {any: [...]} (then col, op and
// value must be omitted) or a boolean expression {expr: "..."}. OR groups nest one level: their members are plain
// predicates (FilterCond).
type FilterSpec struct {
	// Col is the column name (required unless Any is given).
	Col string `json:"col,omitempty" jsonschema:"Column name (required unless any is given)."`
	// Op is a registered filter operator (required unless Any is given);
	// the tool schemas list the registry's operators as its enum.
	Op Op `json:"op,omitempty" jsonschema:"Operator (required unless any is given)."`
	// Value is the operand: a scalar; a list for in/not_in; {min,max} for
	// range; a pattern for regex; absent for is_null/is_not_null. Kept raw so
	// Build can coerce it to the column type.
	Value json.RawMessage `json:"value,omitempty" jsonschema:"Operand: a scalar, a list for in/not_in, {min,max} for range (inclusive), an RE2 pattern for regex, omitted for is_null/is_not_null."`
	// CaseInsensitive makes string ops (eq, neq, in, not_in, contains,
	// starts_with, ends_with, regex) compare with Unicode simple case folding.
	CaseInsensitive bool `json:"case_insensitive,omitempty" jsonschema:"String ops only (eq, neq, in, not_in, contains, starts_with, ends_with, regex): ignore case (Unicode simple folding)."`
	// Any makes this element an OR group of predicates.
	Any []FilterCond `json:"any,omitempty" jsonschema:"OR group: the row passes when at least one of these filters holds. Omit col/op/value when given."`
	// Expr makes this element a boolean expression (see ParseExpr): the row
	// passes when it is true (false and null drop the row). Its schema
	// description must not contain "=": mcp-go splits descriptions at commas
	// and rejects an option with one.
	Expr string `json:"expr,omitempty" jsonschema:"Boolean expression filter instead of col/op/value, e.g. \"lower(city) LIKE 'par%' AND qty * price > 100\": the row passes when it is true (null counts as false)."`
	// FilterToken is a confirmed filter signed by pattern_filter; the
	// service replaces it with the filter it stands for before planning.
	FilterToken string `json:"filter_token,omitempty" jsonschema:"A confirmed filter from pattern_filter (its filter_token) instead of col/op/value: the rows whose column is one of the confirmed values. Valid for the datasets pattern_filter scanned, until it expires."`
}

// FilterCond is one member of an OR group: the same fields as FilterSpec
// without further nesting.
type FilterCond struct {
	// Col is the column name.
	Col string `json:"col" jsonschema:"Column name."`
	// Op is a registered filter operator.
	Op Op `json:"op"`
	// Value is the operand, as in FilterSpec.
	Value json.RawMessage `json:"value,omitempty" jsonschema:"Operand, as for filters."`
	// CaseInsensitive is as in FilterSpec.
	CaseInsensitive bool `json:"case_insensitive,omitempty" jsonschema:"String ops only: ignore case."`
}

// AggSpec is one aggregate {col, fn, q?, as?}.
type AggSpec struct {
	// Col is the input column or an arithmetic expression; "*" only with count.
	Col string `json:"col" jsonschema:"Input column (or an expression such as qty * price or CASE WHEN ok THEN 1 ELSE 0 END), or * with count."`
	// Fn is a registered aggregate function; the tool schemas list the
	// registry's functions as its enum.
	Fn AggFn `json:"fn"`
	// Q is the quantile in [0, 1]; required with quantile, rejected otherwise.
	Q *float64 `json:"q,omitempty" jsonschema:"quantile only: the quantile in [0, 1] (0.5 is the median)."`
	// As names the output column; default fn_col (count_all for count(*),
	// quantile_<q>_col for quantile, fn_col_arg for a column arg).
	As string `json:"as,omitempty" jsonschema:"Output column name; default fn_col (quantile: quantile_<q>_col; with a column arg: fn_col_arg)."`
	// Arg is the second argument of the aggregates that declare one
	// (funcs.AggDecl.Arg): a column or expression, or a text literal.
	Arg *string `json:"arg,omitempty" jsonschema:"Second argument, only for the functions that take one: corr, covar_*, regr_*: the x column (col is y); arg_min/arg_max: the column compared (col is the value returned); string_agg: the separator text (default ,)."`
	// Filter keeps the rows this aggregate sees (SQL's FILTER (WHERE ...)):
	// the same language as Spec.Filters, ANDed.
	Filter []FilterSpec `json:"filter,omitempty" jsonschema:"Rows this aggregate counts (FILTER (WHERE ...)): filters in the same form as the top-level filters, all of which must hold. Other aggregates and the groups are unaffected; a group no row of which passes gets this aggregate's empty result (count: 0, others null)."`
}

// OrderSpec is one sort key.
type OrderSpec struct {
	// Col is an output column, an aggregate output name, a named expression,
	// or (without aggregation) any input column.
	Col string `json:"col" jsonschema:"Column or aggregate output name."`
	// Desc sorts descending.
	Desc bool `json:"desc,omitempty" jsonschema:"Sort descending."`
	// NullsFirst sorts nulls before the other values (SQL ORDER BY ...
	// NULLS FIRST); not a knob yet.
	NullsFirst bool `json:"-"`
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
