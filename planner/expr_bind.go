package planner

import (
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/quarrydb/quarry/internal/funcs"
)

// argTypeError reports an operand or argument of the wrong type, or a
// function's rejection of its constant arguments (a bad pattern).
type argTypeError struct{ msg string }

func (e *argTypeError) Error() string { return e.msg }

func argErr(format string, args ...any) error { return &argTypeError{fmt.Sprintf(format, args...)} }

// display is how messages name a call: "lower" or the operator "LIKE".
func display(fn string) string {
	if d, ok := funcs.LookupScalar(fn); ok && d.Operator {
		return "operator " + d.Signature
	}
	return fn
}

func isNum(t arrow.DataType) bool { return t.ID() == arrow.INT64 || t.ID() == arrow.FLOAT64 }

func bind(e Expr, s *arrow.Schema, bare bool) error {
	i64, f64 := arrow.PrimitiveTypes.Int64, arrow.PrimitiveTypes.Float64
	// numeric types an operand of arithmetic; the null literal counts as int64.
	numeric := func(x Expr, what string) (arrow.DataType, error) {
		t := x.Type()
		if t.ID() == arrow.NULL {
			typeNull(x, i64)
			return i64, nil
		}
		if !isNum(t) {
			return nil, argErr("%s needs numbers, got %s %s", what, funcs.TypeName(t), x.String())
		}
		return t, nil
	}
	switch x := e.(type) {
	case *ColRef:
		idx := s.FieldIndices(x.Name)
		if len(idx) == 0 {
			return &unknownColError{x.Name}
		}
		x.Index, x.Typ = idx[0], s.Field(idx[0]).Type
		if bare {
			return nil
		}
		t, ok := funcs.ExprType(x.Typ)
		if !ok {
			return &exprTypeError{x.Name, x.Typ}
		}
		x.Typ = t
	case *Const:
	case *Neg:
		if err := bind(x.X, s, false); err != nil {
			return err
		}
		t, err := numeric(x.X, "unary -")
		if err != nil {
			return err
		}
		x.Typ = t
	case *Binary:
		if err := bind(x.L, s, false); err != nil {
			return err
		}
		if err := bind(x.R, s, false); err != nil {
			return err
		}
		if ok, err := bindTemporal(x); ok || err != nil {
			return err
		}
		what := fmt.Sprintf("operator %c", x.Op)
		lt, err := numeric(x.L, what)
		if err != nil {
			return err
		}
		rt, err := numeric(x.R, what)
		if err != nil {
			return err
		}
		if x.Op == '/' || lt.ID() == arrow.FLOAT64 || rt.ID() == arrow.FLOAT64 {
			x.Typ = f64
		} else {
			x.Typ = i64
		}
	case *Cast:
		if err := bind(x.X, s, false); err != nil {
			return err
		}
		if !funcs.CanCast(x.X.Type(), x.To) {
			return argErr("cannot cast %s %s to %s", funcs.TypeName(x.X.Type()), x.X.String(), castTypeName(x.To))
		}
		if c, ok := x.X.(*Const); ok && c.Typ.ID() == arrow.NULL {
			c.Typ = x.To
		}
	case *Call:
		for _, a := range x.Args {
			if err := bind(a, s, false); err != nil {
				return err
			}
		}
		d, ok := funcs.LookupScalar(x.Fn)
		if !ok {
			return argErr("unknown function %q", x.Fn)
		}
		if !d.General() {
			t, err := numeric(x.Args[0], x.Fn)
			if err != nil {
				return err
			}
			x.Typ = t
			if d.FloatResult {
				x.Typ = f64
			}
			return nil
		}
		return bindGeneral(x, d)
	}
	return nil
}

// bindGeneral types a call of a general function: checks every argument
// against its class, casts it to the class's type (ArgSame arguments to
// their common type), validates the constant arguments with Prepare and
// sets the result type.
func bindGeneral(x *Call, d *funcs.ScalarDecl) error {
	n := len(x.Args)
	var same []arrow.DataType
	for i, a := range x.Args {
		cls := d.Param(i, n)
		t := a.Type()
		if !cls.Accepts(t) {
			return argErr("%s: argument %d (%s) is %s; it takes %s", display(x.Fn), i+1, a.String(), funcs.TypeName(t), cls.Doc())
		}
		if cls == funcs.ArgSame {
			same = append(same, t)
		}
	}
	common, ok := funcs.CommonType(same)
	if !ok {
		names := make([]string, len(same))
		for i, t := range same {
			names[i] = funcs.TypeName(t)
		}
		return argErr("%s: the operands' types do not mix (%s); use CAST", display(x.Fn), funcs.JoinWords(names, "and"))
	}
	types := make([]arrow.DataType, n)
	consts := make([]*funcs.Value, n)
	for i, a := range x.Args {
		cls := d.Param(i, n)
		to := cls.Target(a.Type())
		if cls == funcs.ArgSame {
			to = common
		}
		x.Args[i] = castTo(a, to)
		types[i] = to
		if cls == funcs.ArgText || cls == funcs.ArgIntLit {
			x.Args[i] = FoldExpr(x.Args[i])
		}
		if c, ok := x.Args[i].(*Const); ok {
			consts[i] = c.value()
		} else if cls == funcs.ArgText || cls == funcs.ArgIntLit {
			return argErr("%s: argument %d (%s) must be a literal", display(x.Fn), i+1, a.String())
		}
	}
	res, err := d.Result(types)
	if err != nil {
		return argErr("%s: %v", display(x.Fn), err)
	}
	x.Typ = res
	if _, err := d.Prepare(&funcs.CallInfo{Types: types, Consts: consts, Result: res}); err != nil {
		return argErr("%s: %v", display(x.Fn), err)
	}
	return nil
}

// castTo returns e converted to t: e itself when it has type t, a retyped
// null constant, or an implicit Cast.
func castTo(e Expr, t arrow.DataType) Expr {
	if arrow.TypeEqual(e.Type(), t) {
		return e
	}
	if c, ok := e.(*Const); ok && c.Null {
		c.Typ = t
		return c
	}
	return &Cast{X: e, To: t, Implicit: true}
}

// IsNumberType reports the number types of expressions (int64, float64):
// the engine evaluates them as vectors, everything else as Arrow arrays.
func IsNumberType(t arrow.DataType) bool { return isNum(t) }

// ConstValue is a constant as the registry's funcs.Value.
func ConstValue(c *Const) *funcs.Value { return c.value() }

// typeNull gives an expression of the null type (the literal NULL, or a
// call whose values are all NULL literals) the type t.
func typeNull(e Expr, t arrow.DataType) {
	switch x := e.(type) {
	case *Const:
		x.Typ = t
	case *Call:
		x.Typ = t
	}
}
