// Package engine executes logical plans (package planner) as streaming Arrow
// record-batch pipelines.
//
// Execute turns each plan node into an operator (an iterator that pulls
// batches from its input): Scan reads a catalog.Source and applies the
// filters pushed into it; Filter evaluates its predicates vectorized into a
// row mask and copies the passing rows; Compute evaluates expression
// columns vectorized (one typed loop per operator over whole arrays) and
// appends them; Project re-labels columns without copying; Aggregate is a
// hash group-by; Distinct and Deduplicate keep the first occurrence of each
// distinct row (all columns, or the key columns) in input order; Sort is a
// stable multi-key sort (a top-k when a Limit sits directly above it);
// Window computes window functions per partition and appends them to its
// input batches (see windowOp); TopNPerGroup keeps the first n rows of every
// group with a bounded buffer per group (see topNGroupOp; past 256K rows
// holding 65,536 groups partitioned by group over the cores, with the
// serial output: topk_group_radix.go);
// Limit applies offset/count and stops reading its input as soon as it is
// satisfied.
//
// # Reader contract
//
// Execute returns an array.RecordReader. The caller must Release it (which
// closes the pipeline and releases every buffer it holds, also mid-stream).
// A batch returned by RecordBatch is valid until the next call to Next;
// Retain it to keep it longer. Execution errors end the stream and are
// reported by Err: cancelling the context stops the pipeline at the next
// batch with ctx.Err(); exceeding Options.MemoryLimit fails with a
// qerr.ErrLimitExceeded error of code qerr.CodeResourceExhausted. The reader
// is not safe for concurrent use. Options.Pool adds a server-wide cap shared
// by concurrent queries (pool.go): each reserves from it as it grows; when
// it is full the oldest running query preempts the youngest ones, a younger
// one waits briefly for memory, and a query that cannot get it fails
// (diagnostics scope "server"), Options.Admission saying whether running it
// again, after the queries ahead of it, may succeed.
//
// # Filters
//
//   - Nulls fail every filter operator except is_null (OR groups included:
//     a null member is simply false). Comparisons of integer columns with
//     their operands are exact (no float round trip): operands outside the
//     column type's range, beyond int64 or with a fraction
//     (planner.Number) compare as the real numbers they are, through their
//     floor and ceiling (x > 2.5 is x >= 3), and below/above every value
//     when outside the range.
//   - Floats follow IEEE 754: NaN matches no eq, lt, lte, gt, gte, in or
//     range, and matches neq and not_in. -0 equals +0.
//   - in/not_in: not_in is the negation of in for non-null values.
//   - contains, starts_with, ends_with compare bytes of valid UTF-8 strings;
//     regex uses Go's RE2 (compiled once per query, unanchored: use ^ and $),
//     evaluated per value.
//   - case_insensitive (string ops): Unicode simple case folding, as
//     strings.EqualFold and RE2's (?i): both sides are mapped rune by rune to
//     a canonical member of the rune's folding orbit. "ß" does not match
//     "ss" (that is full folding); "ſ" matches "s" and the Kelvin sign "k".
//     Invalid UTF-8 bytes match only themselves.
//   - An OR group evaluates its members only on rows no earlier member
//     accepted.
//   - An AND chain runs its predicates cheapest first (null tests,
//     fixed-width comparisons, dictionary strings, plain strings,
//     substring searches, case folding, regex) and stops on a batch as soon
//     as no row is left; later predicates see only the rows still passing.
//     Predicates have no side effects, so the order changes only the work.
//   - Dictionary-encoded strings compare codes: the predicate runs once per
//     dictionary entry and each row takes its entry's outcome (a code
//     compare when a single entry passes). Case-sensitive contains,
//     starts_with and ends_with on plain strings read the offsets and data
//     buffers directly; contains over many remaining rows searches the
//     whole data buffer once and maps matches to rows.
//   - Only passing rows are copied, and only the columns the plan reads
//     after the filter (a Project above it is fused in). An Aggregate
//     without group keys whose aggregates are all count(*) / count(col)
//     counts the mask (and validity) bits without copying rows; under a
//     lone is_null / is_not_null filter, count(*) comes from null counts.
//     A top-k Sort (k up to one batch) takes the filter's batches with
//     their passing rows and copies only the winners.
//
// # Expressions
//
// Column values widen to int64 (integers) or float64 (floats). +, -, *
// and unary minus of integers are exact int64 and fail the query with
// qerr.CodeInvalidArgument on overflow (also for uint64 values above
// MaxInt64); compute in float64 (multiply by 1.0) to avoid it. / is float64
// and a zero divisor gives null. Null operands give null; NaN and Inf
// propagate. round is half away from zero. Only rows that reach the Compute
// are evaluated: a Limit pushed below it may skip failing rows.
//
// # Aggregates
//
//   - Group keys and distinct rows treat null as a value of its own, all
//     NaNs as equal and -0 as equal to +0. Groups come out in first-seen
//     order. Each key column's values are numbered query-wide (value ids);
//     up to three columns combine their ids pairwise, wider keys pack them
//     into 64-bit words hashed into one open-addressing table (fields widen
//     as a column's ids grow). With more than one core the aggregate states
//     fold batch i on a worker goroutine while batch i+1 is read and its
//     group ids assigned (same per-state order, same results). Without group keys there is exactly one output row (count 0,
//     count_distinct 0 and null for everything else on empty input).
//   - count(*) counts rows, count(col) non-null values; count_distinct(col)
//     counts distinct non-null values exactly (values are numbered
//     query-wide, dictionary entries once per dictionary, and the distinct
//     (group, value) pairs kept in a hash set; NaNs count once, -0 and +0
//     are one value).
//   - sum of integers is an exact int64 and fails with
//     qerr.CodeInvalidAggregate on overflow (also for uint64 values above
//     MaxInt64); sum of floats and avg are float64 sums in input order (NaN
//     and Inf propagate).
//   - min and max ignore nulls and NaN; a group whose non-null values are
//     all NaN yields NaN. Strings compare bytewise, false < true.
//   - median and quantile(q) are exact: every non-null, non-NaN value of
//     the group is kept (as float64) and the two closest ranks are found by
//     selection (the result is the one sorting would give); the result
//     interpolates linearly between them, like numpy's default ("linear"):
//     with v the sorted values, position q*(n-1),
//     v[lo] + (v[lo+1]-v[lo])*frac.
//     Interpolating toward ±Inf gives that infinity (between -Inf and +Inf:
//     NaN). NaN values are ignored (a group of only NaNs yields NaN).
//     Aggregates on the same column share one copy of the values.
//   - stddev (= stddev_samp) is the sample standard deviation (n-1
//     denominator) with Welford's online algorithm, the variance kernel of
//     agg_stats.go; fewer than two values give null; any NaN or infinite
//     value gives NaN.
//   - first / last are the first / last non-null value in the order rows
//     reach the aggregate (the dataset's order after filters); NaN is a
//     value.
//   - A group with no non-null value yields null for sum, avg, min, max,
//     median, quantile, stddev, first and last.
//   - The aggregates of internal/funcs/aggs_more.go (variance, covariance,
//     correlation and regression, mode, arg_min/arg_max, bool_and/bool_or,
//     count_if, string_agg, list, approx_count_distinct, approx_quantile)
//     have their semantics in the registry's docs (docs/QUERY.md); their
//     states live in agg_stats.go, agg_mode_argminmax.go,
//     agg_bool_text_list.go and agg_approx.go, dispatched from agg_more.go.
//     An aggregate's second column (funcs.AggDecl.Arg) and its own filter
//     (planner.AggExpr.Filter) reach its state through aggInput: filtered
//     rows are dropped, with their group ids, before the state sees them.
//
// # Sort
//
// Sort is stable; nulls sort last and NaN after every number but before
// nulls, in both directions. Strings compare bytewise, false < true.
//
// # Dictionary-encoded strings
//
// Columns of type dictionary<intN, utf8 | large_utf8> are accepted wherever
// a string column is. Predicates run once per dictionary entry (cached
// while consecutive batches share the dictionary) and rows take their
// entry's outcome through the codes; single-column group keys hash each
// dictionary entry once; sorts, aggregates and copies read values through
// the codes. Filter, Project, Sort, Limit, Distinct and Deduplicate keep the
// encoding (rows gathered from batches with different dictionaries are
// re-encoded into one new dictionary); Aggregate outputs (keys, min, max,
// first, last) are plain strings. The scan folds nulls inside a dictionary
// into the index validity, and converts between plain and dictionary
// encoding when a source's batches differ from the plan's type.
//
// # Memory
//
// Every Arrow buffer of the query is allocated through Options.Alloc wrapped
// in an accounting allocator; operators also charge their Go-side state
// (hash tables, count_distinct sets, collected median/quantile values,
// copied strings, sort permutations, expression vectors). Allocations made
// by the engine itself fail (before taking memory) once the limit would be
// exceeded; allocations made by the source are counted and checked at the
// next batch boundary, so the overshoot is bounded by about one batch.
// Median/quantile values (8 bytes each; 4 when a value is exactly k/10^d
// for an int32 k and d <= 4, decoded back bit for bit) live outside the Go heap in
// per-group chains of mapped blocks (mmap on Linux, the Go heap elsewhere),
// charged to the budget like the rest and unmapped group by group as the
// results are built, and on close, cancellation or error: the process's
// memory shrinks as soon as a query no longer needs it, without waiting
// for the garbage collector.
//
// # Explain and profiles
//
// Explain returns the operator tree Execute would build (fused nodes as one
// Operator listing all of them, physical choices as notes) without opening
// the source; Options.Profile collects the same tree with each operator's
// rows in and out, batches, own wall time and peak budget bytes. Both wrap
// every operator generically at build time, keyed by its plan node, so new
// operators are covered without code of their own.
package engine
