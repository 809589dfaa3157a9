package funcs

import (
	"fmt"
	"slices"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// AggFn is an aggregate function, e.g. AggSum. Spec aggregates bind it from
// the tool arguments' "fn"; Lookup validates it against the registry.
type AggFn string

// The built-in aggregate functions (declared in builtinAggs).
const (
	AggCount         AggFn = "count"
	AggCountDistinct AggFn = "count_distinct"
	AggSum           AggFn = "sum"
	AggAvg           AggFn = "avg"
	AggMin           AggFn = "min"
	AggMax           AggFn = "max"
	AggMedian        AggFn = "median"
	AggStddev        AggFn = "stddev"
	AggQuantile      AggFn = "quantile"
	AggFirst         AggFn = "first"
	AggLast          AggFn = "last"
)

// Input is an argument type rule: which column types a function accepts,
// and how the documentation names them.
type Input struct {
	// Accepts reports an accepted input column type.
	Accepts func(arrow.DataType) bool
	// Doc names the accepted types in the documentation.
	Doc string
}

// Argument type rules.
var (
	// AnyInput accepts every queryable column.
	AnyInput = Input{Accepts: func(arrow.DataType) bool { return true }, Doc: "any column"}
	// NumericInput accepts integer and float columns (IsNumeric).
	NumericInput = Input{Accepts: IsNumeric, Doc: "number"}
	// ComparableInput accepts the types the engine compares (Comparable).
	ComparableInput = Input{Accepts: Comparable, Doc: "number, string, bool, date, timestamp"}
)

// AggState is the per-group state of one aggregate kernel. Group ids are
// dense, starting at 0.
type AggState interface {
	// Grow makes room for n groups (new groups start empty).
	Grow(n int)
	// Update folds the rows of col into their groups gids[i]; a null row
	// is the kernel's to skip (or count).
	Update(col arrow.Array, gids []int32) error
	// Build returns the results of groups [lo, hi), of the declared result type.
	Build(mem memory.Allocator, lo, hi int) arrow.Array
	// GroupBytes is the memory one group's state takes (for the query's budget).
	GroupBytes() int64
}

// AggKernel constructs the state of one aggregate over an input column of
// type in; q is the aggregate's parameter (AggDecl.Param), else 0.
type AggKernel func(in arrow.DataType, q float64) (AggState, error)

// AggDecl declares one aggregate function.
type AggDecl struct {
	Fn AggFn
	// Star: the function also accepts "*" (all rows) as its input.
	Star bool
	// Param: the function takes the parameter q in [0, 1] (required), and
	// its default output name is fn_<q>_col.
	Param bool
	// Input is the argument type rule.
	Input Input
	// Reject describes an input type Input does not accept: the message
	// (after "aggs[i]: ") and the hint. Nil: "<fn> is not supported on
	// values of type <typ>" / "use count on this column".
	Reject func(col, typ string) (msg, hint string)
	// Result is the output type for an accepted input type (for "*", nil).
	Result func(in arrow.DataType) arrow.DataType
	// ResultDoc names the output type in the documentation.
	ResultDoc string
	// Doc is the one-line semantics, null and NaN handling included.
	Doc string
	// Kernel constructs the state; nil for the built-ins, whose kernels the
	// engine provides (see the package documentation).
	Kernel AggKernel
	// Arg declares the second argument (an aggregate's "arg"); nil: the
	// function takes none and rejects one.
	Arg *AggArg
	// Window: the function is also a window function (the engine's window
	// operator evaluates it over frames, checked against the differential
	// reference). The built-ins of builtinAggs are, and the aggregates of
	// moreAggs but lists and the approximations; the others are refused in
	// windows.
	Window bool
}

// AggArg declares the second argument of an aggregate (AggSpec.Arg in the
// planner): a column (or expression) whose type Input accepts, or, with
// Input nil, a text literal.
type AggArg struct {
	// Name is the argument's name in the documentation ("x", "by", "separator").
	Name string
	// Input is the type rule of a column argument; nil: a text literal.
	Input *Input
	// Default is the value of an omitted literal argument; nil: required.
	Default *string
	// Doc says what the argument is, in a few words.
	Doc string
}

// Result type rules.
var (
	int64Result   = func(arrow.DataType) arrow.DataType { return arrow.PrimitiveTypes.Int64 }
	float64Result = func(arrow.DataType) arrow.DataType { return arrow.PrimitiveTypes.Float64 }
	// sameResult: the input type (dictionary-encoded strings decoded).
	sameResult = func(t arrow.DataType) arrow.DataType { return Decoded(t) }
)

// sumResult is int64 for integer input, float64 otherwise.
func sumResult(t arrow.DataType) arrow.DataType {
	if IsInteger(t) {
		return arrow.PrimitiveTypes.Int64
	}
	return arrow.PrimitiveTypes.Float64
}

// NumericReject is the Reject of aggregates over numbers.
func NumericReject(fn AggFn) func(col, typ string) (string, string) {
	return func(col, typ string) (string, string) {
		other := AggNamesWhere(func(d *AggDecl) bool { return d.Input.Doc != NumericInput.Doc })
		return fmt.Sprintf("%s needs a numeric column; %q is %s", fn, col, typ),
			"use " + JoinWords(other, "or") + " on non-numeric columns"
	}
}

func builtinAggs() []*AggDecl {
	return []*AggDecl{
		{Fn: AggCount, Star: true, Input: AnyInput, Result: int64Result, ResultDoc: "int64",
			Doc: "`*`: rows; column: non-null values"},
		{Fn: AggCountDistinct, Input: ComparableInput, Result: int64Result, ResultDoc: "int64",
			Reject: func(_, typ string) (string, string) {
				return "count_distinct cannot compare values of type " + typ, "count_distinct works on numbers, strings, booleans, dates and timestamps"
			},
			Doc: "exact number of distinct non-null values (NaNs count once, -0 = +0)"},
		{Fn: AggSum, Input: NumericInput, Reject: NumericReject(AggSum), Result: sumResult, ResultDoc: "int64 for integers, float64 for floats",
			Doc: "integers: exact; overflowing int64 fails the query (`invalid_aggregate`); floats: exact on decimal data ([Exact sums and averages](#exact-sums-and-averages-round)), else summed in input order (NaN, Inf propagate)"},
		{Fn: AggAvg, Input: NumericInput, Reject: NumericReject(AggAvg), Result: float64Result, ResultDoc: "float64",
			Doc: "floats: exact on decimal data (as `sum`), else float64 sum in input order / non-null count; integers: float64 sum / count"},
		{Fn: AggMin, Input: ComparableInput, Result: sameResult, ResultDoc: "input type",
			Doc: "smallest value; nulls and NaN ignored (all-NaN group: NaN)"},
		{Fn: AggMax, Input: ComparableInput, Result: sameResult, ResultDoc: "input type",
			Doc: "largest value; nulls and NaN ignored (all-NaN group: NaN)"},
		{Fn: AggMedian, Input: NumericInput, Reject: NumericReject(AggMedian), Result: float64Result, ResultDoc: "float64",
			Doc: "`quantile` with q = 0.5"},
		{Fn: AggStddev, Input: NumericInput, Reject: NumericReject(AggStddev), Result: float64Result, ResultDoc: "float64",
			Doc: "sample standard deviation (n-1 denominator, like pandas' `std()` / numpy's `std(ddof=1)`), computed with Welford's algorithm; fewer than 2 values: null; any NaN or ±Inf: NaN"},
		{Fn: AggQuantile, Param: true, Input: NumericInput, Reject: NumericReject(AggQuantile), Result: float64Result, ResultDoc: "float64",
			Doc: "exact: the group's non-null, non-NaN values sorted; linear interpolation between the closest ranks like numpy's default: position `q*(n-1)`, `v[lo] + (v[lo+1]-v[lo])*frac`. Interpolating toward ±Inf gives that infinity (between -Inf and +Inf: NaN). Values are converted to float64 (int64 beyond 2^53 loses precision). A group of only NaNs gives NaN."},
		{Fn: AggFirst, Input: ComparableInput, Result: sameResult, ResultDoc: "input type",
			Doc: "first non-null value in the order rows reach the aggregate — the dataset's order after filters (NaN counts as a value)"},
		{Fn: AggLast, Input: ComparableInput, Result: sameResult, ResultDoc: "input type",
			Doc: "last non-null value in the order rows reach the aggregate — the dataset's order after filters (NaN counts as a value)"},
	}
}

// aggs is filled in init: NumericReject reads it.
var aggs = newTable("aggregate", func(d *AggDecl) AggFn { return d.Fn })

func init() {
	for _, d := range builtinAggs() {
		d.Window = true
		aggs.add(d)
	}
	for _, d := range moreAggs() {
		// every frame is recomputed (engine frameAgg); lists (no list
		// window results) and the estimates (use the exact ones) are not
		// window functions
		d.Window = !slices.Contains([]AggFn{AggList, AggArrayAgg, AggApproxCountDistinct, AggApproxQuantile}, d.Fn)
		aggs.add(d)
	}
}

// RegisterAgg adds an aggregate function to the registry (at package
// initialization only; see the package documentation). It panics on a
// duplicate name, on a missing Input, Result or Kernel (an extension brings
// its own kernel), and on Star (only count takes *).
func RegisterAgg(d AggDecl) {
	if d.Input.Accepts == nil || d.Result == nil || d.Kernel == nil || d.Star {
		panic(fmt.Sprintf("funcs: aggregate %q needs Input, Result and Kernel (and cannot take *)", d.Fn))
	}
	aggs.add(&d)
}

// Lookup returns the declaration of f; false for an unknown function.
func (f AggFn) Lookup() (*AggDecl, bool) { return aggs.lookup(f) }

// Aggs returns the declarations of every aggregate function, in documentation order.
func Aggs() []*AggDecl { return aggs.decls }

// AggNames returns the names of every aggregate function, in documentation order.
func AggNames() []string { return aggs.names(nil) }

// AggNamesWhere returns the names of the aggregate functions for which keep
// holds, in documentation order.
func AggNamesWhere(keep func(*AggDecl) bool) []string { return aggs.names(keep) }

// EnumValues implements the schema generator's enum hook: the valid values
// of an aggregate's "fn" argument.
func (AggFn) EnumValues() []string { return AggNames() }
