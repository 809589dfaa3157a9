// Package engine executes logical plans (package planner) as streaming Arrow
// record-batch pipelines.
//
// Execute turns each plan node into an operator (an iterator that pulls
// batches from its input): Scan reads a catalog.Source and applies the
// filters pushed into it; Filter evaluates its predicates vectorized into a
// row mask and copies the passing rows; Project re-labels columns without
// copying; Aggregate is a hash group-by; Distinct keeps the first occurrence
// of each row; Sort is a stable multi-key sort (a top-k when a Limit sits
// directly above it); Limit applies offset/count and stops reading its
// input as soon as it is satisfied.
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
// is not safe for concurrent use.
//
// # Semantics
//
//   - Nulls fail every filter operator except is_null. Comparisons of integer
//     columns with integer literals are exact (no float round trip); literals
//     outside a column type's range compare as below/above every value.
//   - Filters on floats follow IEEE 754: NaN matches no eq, lt, lte, gt,
//     gte, in or range, and matches neq.
//   - Group keys and distinct rows treat null as a value of its own, all NaNs
//     as equal and -0 as equal to +0. Groups come out in first-seen order.
//   - count(*) counts rows, count(col) non-null values. sum of integers is an
//     exact int64 and fails with qerr.CodeInvalidAggregate on overflow (also
//     for uint64 values above MaxInt64); sum of floats and avg are float64
//     sums in input order (NaN and Inf propagate). min and max ignore nulls
//     and NaN; a group whose non-null values are all NaN yields NaN. A group
//     with no non-null value yields null for sum, avg, min and max. Without
//     group keys there is exactly one output row (count 0 on empty input).
//   - Sort is stable; nulls sort last and NaN after every number but before
//     nulls, in both directions. Strings compare bytewise, false < true.
//
// # Memory
//
// Every Arrow buffer of the query is allocated through Options.Alloc wrapped
// in an accounting allocator; operators also charge their Go-side state
// (hash tables, sort permutations, copied strings). Allocations made by the
// engine itself fail (before taking memory) once the limit would be
// exceeded; allocations made by the source are counted and checked at the
// next batch boundary, so the overshoot is bounded by about one batch.
package engine
