// Package funcs is Quarry's one registry of filter operators, aggregate
// functions and scalar (expression) functions. Each is declared once, here
// or by a Register call: its name, the argument types it accepts (and the
// implicit casts applied to them), its result type, its null/NaN semantics,
// its kernel and a one-line doc. Everything else reads the registry:
//
//   - the planner validates and types filters, aggregates and expression
//     calls from it (unknown names, suggestions, accepted column types,
//     result types, default output names);
//   - the engine builds kernels from it (see below);
//   - the MCP tool schemas take their "op" and "fn" enums from it (Op and
//     AggFn implement EnumValues, which mcpapi's schema generator applies to
//     every field of those types);
//   - the function tables in docs/QUERY.md are generated from it by
//     Markdown (a test in this package fails when the document drifts;
//     regenerate with go test ./internal/funcs -update).
//
// The package sits below both planner and engine and imports neither (only
// Arrow), so both can use it without an import cycle. Type classes
// (IsInteger, IsFloat, IsNumeric, IsString, Comparable, ...) live here too,
// so the planner and the engine agree on which column types each function
// accepts: FLOAT16 is not numeric for either.
//
// # Kernels
//
// Scalar functions carry their kernels directly, in one of two forms. The
// numeric form (ScalarDecl.Int and ScalarDecl.Float) works on whole
// int64/float64 slices: the engine's fast path for abs, round, sqrt, ... The
// general form declares argument classes (Arg: implicit casts such as
// int → float and date → timestamp, a common type for comparisons and
// conditionals, literal-only patterns and units), a result type and null
// semantics, and a Prepare that builds a vectorized Kernel over Arrow
// arrays once per query (compiling a pattern, parsing a unit) with the
// allocator passed in. Operators (=, AND, LIKE, IN, CASE, ||, ...) are
// general-form declarations too (Operator: true), and so are casts
// (CastKernel). Constant folding in the planner (Eval on one-row arrays)
// and the engine's vectorized evaluator both call the same kernels, so the
// two cannot disagree. Expression value types and the common type of mixed
// arguments are ExprType and CommonType.
//
// Aggregates carry an optional AggKernel: a constructor of per-group state
// (AggState) that depends only on Arrow. The built-in aggregates leave it nil:
// their kernels are the engine's per-Arrow-type hot loops, picked by a
// dispatch in package engine that is keyed by the AggFn values declared here
// (an engine test checks that every registered aggregate has a kernel).
// An aggregate registered with a Kernel (an extension, or a test) runs
// through the engine without any engine change.
//
// Filter operators have no kernel field: the engine compiles each Op into a
// per-column-type predicate (numeric, string, dictionary and boolean loops),
// and the registry declares which ops exist, the operand each takes, and the
// column types each accepts.
//
// Registration happens at package initialization (built-ins in this
// package's variable initializers, extensions in init functions); the
// registry is read-only afterwards and safe for concurrent readers.
package funcs
