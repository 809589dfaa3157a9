package funcs

import (
	"fmt"
	"math"

	"github.com/apache/arrow-go/v18/arrow"
)

// ScalarDecl declares one scalar function of expressions, e.g. round(x, 2).
// It has one of two forms.
//
// The numeric form (Prepare nil): the first argument x is a number; integer
// columns widen to int64 and float columns to float64 before the call
// (implicit casts). The result is int64 for an int64 x and float64 for a
// float64 x, unless FloatResult (then an int64 x is cast to float64
// first). A null x gives null; NaN and ±Inf go through Float. Its kernels
// (Int, Float) work on whole slices: the engine's fast path.
//
// The general form (Prepare set): Params declare each argument's type class
// (and so its implicit cast), Result the result type, Nulls the null
// semantics, and Prepare builds a vectorized Kernel over Arrow arrays once
// per query (compiling a pattern, checking a unit).
type ScalarDecl struct {
	Name string
	// MinArgs and MaxArgs bound the number of arguments (at least 1).
	MinArgs, MaxArgs int
	// Digits: the second argument (when given) is an integer literal in
	// [-MaxDigits, MaxDigits], passed to the kernels as digits (0 when absent).
	Digits bool
	// FloatResult: the result is float64 also for an int64 x.
	FloatResult bool
	// Int computes dst[i] = f(src[i]) for an int64 x, skipping rows with
	// valid[i] false (valid nil: no nulls); false reports an int64 overflow.
	// Nil: the identity (the function does not change integers).
	Int func(dst, src []int64, valid []bool, digits int64) bool
	// Float computes dst[i] = f(src[i]) for a float64 x (null rows hold
	// arbitrary values and may be computed too).
	Float func(dst, src []float64, digits int64)
	// Signature is the call form shown in the documentation.
	Signature string
	// Doc is the one-line semantics.
	Doc string

	// Params are the argument classes of the general form: argument i has
	// Params[i], or the last one past the end (variadic functions).
	Params []Arg
	// ParamAt, when set, replaces Params: the class of argument i of n.
	ParamAt func(i, n int) Arg
	// Result is the result type for the argument types (after implicit casts).
	Result func(types []arrow.DataType) (arrow.DataType, error)
	// Prepare builds the kernel of one call (once per query).
	Prepare func(c *CallInfo) (Kernel, error)
	// Nulls is the null semantics of the general form; empty: a null
	// argument gives null.
	Nulls string
	// ResultDoc is the result type in words (general form).
	ResultDoc string
	// Operator: the declaration is the meaning of an operator or a special
	// form (its Signature shows the syntax); it cannot be called by name.
	Operator bool
	// ArgsDoc, when set, replaces the argument classes in the documentation
	// (for operators whose classes say less than their operands' types).
	ArgsDoc string
}

// General reports the general form (see ScalarDecl).
func (d *ScalarDecl) General() bool { return d.Prepare != nil }

// Param is the class of argument i of a call with n arguments.
func (d *ScalarDecl) Param(i, n int) Arg {
	if d.ParamAt != nil {
		return d.ParamAt(i, n)
	}
	if len(d.Params) == 0 {
		return ArgAny
	}
	return d.Params[min(i, len(d.Params)-1)]
}

// MaxDigits bounds the digits argument of functions with Digits.
const MaxDigits = 18

// Arity is the accepted argument count in words: "1" or "1 or 2".
func (d *ScalarDecl) Arity() string {
	switch {
	case d.MaxArgs < 0:
		return fmt.Sprintf("%d or more", d.MinArgs)
	case d.MinArgs == d.MaxArgs:
		return fmt.Sprint(d.MinArgs)
	case d.MaxArgs == d.MinArgs+1:
		return fmt.Sprintf("%d or %d", d.MinArgs, d.MaxArgs)
	}
	return fmt.Sprintf("%d to %d", d.MinArgs, d.MaxArgs)
}

// intMap applies f to the valid rows of src.
func intMap(f func(v, digits int64) (int64, bool)) func(dst, src []int64, valid []bool, digits int64) bool {
	return func(dst, src []int64, valid []bool, digits int64) bool {
		for i, v := range src {
			if valid != nil && !valid[i] {
				dst[i] = 0
				continue
			}
			r, ok := f(v, digits)
			if !ok {
				return false
			}
			dst[i] = r
		}
		return true
	}
}

// floatMap applies f to every row of src.
func floatMap(f func(float64) float64) func(dst, src []float64, digits int64) {
	return func(dst, src []float64, _ int64) {
		for i, v := range src {
			dst[i] = f(v)
		}
	}
}

var builtinScalars = []*ScalarDecl{
	{Name: "abs", MinArgs: 1, MaxArgs: 1, Signature: "abs(x)", Doc: "absolute value; abs of the smallest int64 overflows",
		Int:   intMap(func(v, _ int64) (int64, bool) { return AbsInt(v) }),
		Float: floatMap(math.Abs)},
	{Name: "ceil", MinArgs: 1, MaxArgs: 1, Signature: "ceil(x)", Doc: "smallest integer value ≥ x (integers unchanged)",
		Float: floatMap(math.Ceil)},
	{Name: "floor", MinArgs: 1, MaxArgs: 1, Signature: "floor(x)", Doc: "largest integer value ≤ x (integers unchanged)",
		Float: floatMap(math.Floor)},
	{Name: "round", MinArgs: 1, MaxArgs: 2, Digits: true, Signature: "round(x[, digits])",
		Doc: "rounds half away from zero (`round(2.5)` = 3, `round(-2.5)` = -3) to digits decimals (default 0): `round(x, 2)` to two decimals, `round(1234, -2)` = 1200",
		Int: func(dst, src []int64, valid []bool, digits int64) bool {
			if digits >= 0 {
				copy(dst, src)
				return true
			}
			return intMap(RoundInt)(dst, src, valid, digits)
		},
		Float: func(dst, src []float64, digits int64) {
			for i, v := range src {
				dst[i] = RoundFloat(v, digits)
			}
		}},
}

var scalars = newTable("scalar function", func(d *ScalarDecl) string { return d.Name })

func init() {
	for _, list := range [][]*ScalarDecl{builtinScalars, mathScalars, logicScalars, stringScalars, timeScalars, intervalScalars} {
		for _, d := range list {
			scalars.add(d)
		}
	}
}

// RegisterScalar adds a scalar function to the registry (at package
// initialization only; see the package documentation). It panics on a
// duplicate name, bad argument bounds (more than one argument needs
// Digits) or a missing Float kernel.
func RegisterScalar(d ScalarDecl) {
	switch {
	case d.General():
		if d.Result == nil || d.MinArgs < 0 || (d.MaxArgs >= 0 && d.MaxArgs < d.MinArgs) {
			panic(fmt.Sprintf("funcs: scalar function %q: bad arguments or no Result", d.Name))
		}
	case d.MinArgs < 1 || d.MaxArgs < d.MinArgs || d.Float == nil || (d.MaxArgs > 1 && !d.Digits):
		panic(fmt.Sprintf("funcs: scalar function %q: bad arguments or no Float kernel", d.Name))
	}
	scalars.add(&d)
}

// LookupScalar returns the declaration of the function name (lower case);
// false for an unknown function. Operators are found by their internal
// names too (see ScalarDecl.Operator).
func LookupScalar(name string) (*ScalarDecl, bool) { return scalars.lookup(name) }

// LookupFunction is LookupScalar without operators: the functions callable by name.
func LookupFunction(name string) (*ScalarDecl, bool) {
	d, ok := scalars.lookup(name)
	if !ok || d.Operator {
		return nil, false
	}
	return d, true
}

// Scalars returns the declarations of every scalar function, in documentation order.
func Scalars() []*ScalarDecl { return scalars.decls }

// ScalarNames returns the names of every scalar function callable by name, in documentation order.
func ScalarNames() []string { return scalars.names(func(d *ScalarDecl) bool { return !d.Operator }) }
