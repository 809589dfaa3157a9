package planner

import (
	"github.com/apache/arrow-go/v18/arrow"

	"github.com/quarrydb/quarry/internal/funcs"
)

// FoldExpr folds the constant subexpressions of a bound expression,
// bottom-up, with the runtime semantics (division by zero gives the null
// constant, which propagates through the enclosing constant operations;
// calls and casts run the registry's kernels, the engine's own). A
// subexpression whose evaluation fails (integer overflow, a failed CAST, an
// over-long string) is left as is, so the error is reported at run time
// exactly as without folding. e may be modified in place; use the result.
func FoldExpr(e Expr) Expr {
	e, _ = foldExpr(e)
	return e
}

// foldExpr is FoldExpr that also reports whether anything was folded.
func foldExpr(e Expr) (Expr, bool) {
	changed := false
	fold := func(e Expr) Expr {
		r, ch := foldExpr(e)
		changed = changed || ch
		return r
	}
	switch x := e.(type) {
	case *Neg:
		x.X = fold(x.X)
		if c, ok := x.X.(*Const); ok {
			if r, ok := foldNeg(c, x.Typ); ok {
				return r, true
			}
		}
	case *Binary:
		x.L, x.R = fold(x.L), fold(x.R)
		l, lok := x.L.(*Const)
		r, rok := x.R.(*Const)
		if lok && rok && x.Fn != "" {
			if c, ok := foldCall(x.Call()); ok {
				return c, true
			}
		} else if lok && rok {
			if c, ok := foldBinary(x.Op, l, r, x.Typ); ok {
				return c, true
			}
		}
	case *Cast:
		x.X = fold(x.X)
		if c, ok := x.X.(*Const); ok {
			if v, err := funcs.Eval(funcs.CastKernel(c.Typ, x.To, x.Try), []arrow.DataType{c.Typ}, []*funcs.Value{c.value()}); err == nil {
				return constOf(v), true
			}
		}
	case *Call:
		all := true
		for i := range x.Args {
			x.Args[i] = fold(x.Args[i])
			_, ok := x.Args[i].(*Const)
			all = all && ok
		}
		if all {
			if c, ok := foldCall(x); ok {
				return c, true
			}
		}
	}
	return e, changed
}

func nullConst(t arrow.DataType) *Const { return &Const{Typ: t, Null: true} }

func isIntType(t arrow.DataType) bool { return t != nil && t.ID() == arrow.INT64 }

func constFloat(c *Const) float64 {
	if isIntType(c.Typ) {
		return float64(c.Int)
	}
	return c.Float
}

func foldNeg(c *Const, t arrow.DataType) (*Const, bool) {
	if c.Null {
		return nullConst(t), true
	}
	if isIntType(t) {
		v, ok := funcs.NegInt(c.Int)
		return &Const{Typ: t, Int: v}, ok
	}
	return &Const{Typ: t, Float: -constFloat(c)}, true
}

func foldBinary(op byte, l, r *Const, t arrow.DataType) (*Const, bool) {
	if l.Null || r.Null {
		return nullConst(t), true
	}
	if isIntType(t) {
		var v int64
		var ok bool
		switch op {
		case '%':
			var null bool
			v, null = funcs.ModInt(l.Int, r.Int)
			if null {
				return nullConst(t), true
			}
			ok = true
		case '+':
			v, ok = funcs.AddInt(l.Int, r.Int)
		case '-':
			v, ok = funcs.SubInt(l.Int, r.Int)
		case '*':
			v, ok = funcs.MulInt(l.Int, r.Int)
		}
		return &Const{Typ: t, Int: v}, ok
	}
	a, b := constFloat(l), constFloat(r)
	var v float64
	switch op {
	case '+':
		v = a + b
	case '-':
		v = a - b
	case '*':
		v = a * b
	case '/', '%':
		div := funcs.DivFloat
		if op == '%' {
			div = funcs.ModFloat
		}
		q, null := div(a, b)
		if null {
			return nullConst(t), true
		}
		v = q
	}
	return &Const{Typ: t, Float: v}, true
}

// foldCall evaluates a call of constants with the function's registered
// kernels (the engine's evaluator runs the same ones).
func foldCall(c *Call) (*Const, bool) {
	d, ok := funcs.LookupScalar(c.Fn)
	if !ok {
		return nil, false
	}
	if d.General() {
		return foldGeneral(c, d)
	}
	a := c.Args[0].(*Const)
	if a.Null {
		return nullConst(c.Typ), true
	}
	digits := int64(0)
	if len(c.Args) == 2 {
		digits = c.Args[1].(*Const).Int
	}
	if isIntType(c.Typ) {
		v := []int64{a.Int}
		if d.Int != nil && !d.Int(v, v, nil, digits) {
			return &Const{Typ: c.Typ, Int: v[0]}, false
		}
		return &Const{Typ: c.Typ, Int: v[0]}, true
	}
	v := []float64{constFloat(a)}
	d.Float(v, v, digits)
	return &Const{Typ: c.Typ, Float: v[0]}, true
}

// foldGeneral runs a general function's kernel on its constant arguments.
func foldGeneral(c *Call, d *funcs.ScalarDecl) (*Const, bool) {
	types := make([]arrow.DataType, len(c.Args))
	vals := make([]*funcs.Value, len(c.Args))
	for i, a := range c.Args {
		types[i], vals[i] = a.Type(), a.(*Const).value()
	}
	k, err := d.Prepare(&funcs.CallInfo{Types: types, Consts: vals, Result: c.Typ})
	if err != nil {
		return nil, false
	}
	v, err := funcs.Eval(k, types, vals)
	if err != nil {
		return nil, false
	}
	v.Type = c.Typ
	return constOf(v), true
}
