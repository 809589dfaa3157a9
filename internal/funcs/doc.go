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
// Scalar functions carry their kernels directly (ScalarDecl.Int and
// ScalarDecl.Float work on whole int64/float64 slices); constant folding in
// the planner and the engine's vectorized evaluator both call them, so the
// two cannot disagree.
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
