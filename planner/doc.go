// Package planner validates a query Spec against a dataset schema and builds
// a logical plan: a tree of pure-data Nodes (Scan, Filter, Compute, Project,
// Aggregate, Window, TopNPerGroup, Deduplicate, Distinct, Sort, Limit; Join,
// SetOp and Values: join.go, setop.go, values.go) with a stable printable
// form. It also optimizes plans with small, separate rules (constant
// folding, filter pushdown, limit pushdown, projection pushdown) and
// estimates result rows (estimate_rows.go) and proves upper bounds on them
// and their JSON bytes (bound.go). It performs no I/O; the engine package
// turns plans into Arrow record-batch pipelines. docs/QUERY.md is the user
// reference of the spec; this comment summarizes the semantics the planner
// decides.
//
// # Knobs (Spec)
//
//   - columns: output columns in order; an entry that is not a column name
//     may be an expression (see ParseExpr), named by a trailing
//     "AS name" or by its normalized text. A known column name always wins.
//   - filters: ANDed predicates; an element {"any": [...]} is an OR group of
//     predicates (one level of nesting); an element {"expr": "..."} is a
//     boolean expression (see exprFilters). Operators, aggregate functions and
//     expression functions are declared in the function registry
//     (internal/funcs); the planner validates and types them from their
//     declarations.
//   - group_by / aggs: hash aggregation; aggs[].col may be an expression,
//     and so may a group_by key (GroupKeys: the string form of columns, or
//     {"expr", "as"}), computed below the Aggregate and named by its alias
//     or normalized text.
//   - having: the filter language of filters on the Aggregate's output (group
//     keys and aggregate outputs), a Filter directly on the Aggregate, below
//     the post-aggregation columns (columns expressions over the output),
//     order_by, top_n and limit.
//   - distinct: distinct rows of the projection; output order unspecified
//     unless order_by (order_by may only use selected columns).
//   - deduplicate: drops rows whose selected columns equal an earlier row's
//     (input order), keeping the first; the result keeps input order, and
//     order_by may still use columns that are not selected (the kept row's
//     values are the first occurrence's). With distinct it is redundant.
//   - null_policy: "keep" (default) or "drop": drop rows with a null in any
//     selected column (computed columns included; NaN is not null). In
//     aggregate queries it drops input rows with a null in any group_by
//     column or aggregate input before aggregating (count(*) then counts
//     only complete rows).
//   - order_by: multi-key, stable (ties keep input order), nulls last in both
//     directions, NaN after every number. Keys may name output columns,
//     aggregate outputs, named expressions, expressions (computed for the
//     sort), and in plain queries any input column.
//   - limit / offset: applied last.
//   - top_n: aggregate queries only. Keeps the N best groups ranked by
//     order_by (all keys: ties on the first key are broken by the next keys,
//     then by first-seen order), or, without order_by, by the first
//     aggregate descending. offset/limit then apply within those N groups;
//     Build folds the three into one Limit.
//   - windows: window functions (the registry's window-only functions and
//     every aggregate) computed by a Window node right after the filters,
//     or after the Aggregate in aggregate queries; each adds a column that
//     columns, expressions and order_by may use. See WindowSpec.
//   - top_n_per_group: a TopNPerGroup node after the windows, keeping the
//     first n rows per group (group_by without aggs, or partition_by).
//
// # Aggregate output names and types
//
// fn_col by default (count_all for count(*); quantile_<q>_col for quantile,
// e.g. quantile_0.9_price; for an expression input, fn_<normalized text>),
// overridable with as. count and count_distinct are int64; sum is int64 for
// integer inputs and float64 otherwise; avg, median, quantile and stddev
// are float64; min, max, first and last keep the input type (decoded for
// dictionary-encoded strings).
//
// # Expressions
//
// See ParseExpr for the grammar and Expr for typing (BindExpr types calls
// through the registry's argument classes and inserts implicit Casts).
// Integer overflow is a run-time invalid_argument error; division by zero
// yields null (AddInt, DivFloat, ... and the registry's kernels define the
// semantics that constant folding and the engine share). FoldExpr never
// folds a subexpression whose evaluation fails.
//
// # Filter operands
//
// Build coerces each filter operand to the column type (coerce). Operands
// of integer columns are read exactly by ParseIntOperand, never through
// float64: an int64 when they fit, otherwise a Number (beyond the int64
// range, up to 2^64-1 for uint64 columns, or with a fraction), which the
// engine compares through its floor and ceiling.
//
// # Dictionary-encoded strings
//
// A dictionary<integer, utf8 | large_utf8> column is a string column
// everywhere (IsDictString): filters, keys, sorts, aggregates and
// expressions' type checks treat it as string; get_schema shows "string".
// Pass-through operators keep the encoding; Aggregate outputs (keys and
// results) are decoded (Decoded).
//
// # Plan nodes
//
// A node type implements Node: Schema, Children (its inputs, a fresh slice
// each call), WithChildren (a copy with other inputs that shares no
// mutable state with the receiver and never modifies it; a wrong number of
// children is an error wrapping ErrChildren, see CheckChildren) and
// Describe (its line in the printed plan). Optionally it declares:
//
//   - ColumnUser: which columns it reads from each input, given what its
//     consumer reads (projection pushdown). Without it, every column.
//   - IndexResolver: how to recompute its input column positions from
//     names after schemas change (Resolve). Without it, nothing to resolve.
//   - RowPreserver: that it emits exactly one row per input row, in order,
//     so a Limit can move below it (limit pushdown). Without it, no.
//
// Generic code reaches nodes only through these: Transform rewrites a plan
// bottom-up and reports whether anything changed (unchanged subtrees are
// shared, the input is never modified); Inspect visits it top-down; Clone,
// ScanOf, Resolve and String are built on them. Optimizer rules (Rules,
// one file each: rule_fold_constants.go, rule_push_filters.go,
// rule_push_limit.go, rule_push_projection.go, rule_zone_filters.go,
// the join rules rule_join_cross.go, rule_join_residual.go,
// rule_expr_preds.go, rule_join_ors.go, rule_join_filters.go,
// rule_join_semi_reduce.go, rule_join_order.go (row estimates for them:
// estimate_rows.go);
// push_limit_union lives with its node in setop.go) are
// pure functions over Transform or Children/WithChildren that name only
// the node types they rewrite. So adding a node type touches the node (type, Schema, Children,
// WithChildren, Describe, the optional interfaces), the rules about it, and
// its operator in the engine, nothing else.
//
// # Errors
//
// Validation errors are *qerr.Error values with codes invalid_column,
// invalid_filter, invalid_aggregate and invalid_argument; each carries a
// "field" diagnostic naming the offending spec field (e.g.
// "filters[1].any[0].col", "aggs[2].q") and, for unknown names, up to three
// "suggestions".
package planner
