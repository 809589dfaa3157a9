package planner

import (
	"math"

	"github.com/apache/arrow-go/v18/arrow"
)

// Scalar semantics of expressions, shared by constant folding and the
// engine's vectorized evaluator so that both always agree.

// AddInt returns a+b and false on int64 overflow.
func AddInt(a, b int64) (int64, bool) {
	r := a + b
	return r, (b >= 0) == (r >= a)
}

// SubInt returns a-b and false on int64 overflow.
func SubInt(a, b int64) (int64, bool) {
	r := a - b
	return r, (b >= 0) == (r <= a)
}

// MulInt returns a*b and false on int64 overflow.
func MulInt(a, b int64) (int64, bool) {
	if a == 0 || b == 0 {
		return 0, true
	}
	r := a * b
	if (a == -1 && b == math.MinInt64) || (b == -1 && a == math.MinInt64) || r/b != a {
		return r, false
	}
	return r, true
}

// NegInt returns -a and false on overflow (a == MinInt64).
func NegInt(a int64) (int64, bool) { return -a, a != math.MinInt64 }

// AbsInt returns |a| and false on overflow (a == MinInt64).
func AbsInt(a int64) (int64, bool) {
	if a < 0 {
		return NegInt(a)
	}
	return a, true
}

// DivFloat returns a/b; null is true when b == 0 (division by zero yields
// null, whatever a is).
func DivFloat(a, b float64) (q float64, null bool) {
	if b == 0 {
		return 0, true
	}
	return a / b, false
}

// RoundFloat rounds x half away from zero to digits decimal places
// (negative digits round to tens, hundreds, ...). NaN and ±Inf are
// returned unchanged, and so is x when scaling it would overflow.
func RoundFloat(x float64, digits int64) float64 {
	switch {
	case digits == 0:
		return math.Round(x)
	case digits > 0:
		p := math.Pow10(int(digits))
		s := x * p
		if math.IsInf(s, 0) {
			return x
		}
		return math.Round(s) / p
	}
	p := math.Pow10(int(-digits))
	return math.Round(x/p) * p
}

// RoundInt rounds x half away from zero to a multiple of 10^-digits
// (digits >= 0 leaves x unchanged); false on overflow.
func RoundInt(x, digits int64) (int64, bool) {
	if digits >= 0 {
		return x, true
	}
	p := int64(1)
	for range -digits {
		p *= 10
	}
	q, rem := x/p, x%p
	if rem < 0 {
		rem = -rem
	}
	if 2*rem >= p {
		if x < 0 {
			q--
		} else {
			q++
		}
	}
	return MulInt(q, p)
}

// FoldExpr folds the number-only subexpressions of a bound expression,
// bottom-up, with the runtime semantics (division by zero gives the null
// constant, which propagates through the enclosing constant operations). A
// subexpression whose integer arithmetic overflows is left as is, so the
// overflow is reported at run time exactly as without folding. e may be
// modified in place; use the result.
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
		if lok && rok {
			if c, ok := foldBinary(x.Op, l, r, x.Typ); ok {
				return c, true
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
		v, ok := NegInt(c.Int)
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
		case '+':
			v, ok = AddInt(l.Int, r.Int)
		case '-':
			v, ok = SubInt(l.Int, r.Int)
		case '*':
			v, ok = MulInt(l.Int, r.Int)
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
	case '/':
		q, null := DivFloat(a, b)
		if null {
			return nullConst(t), true
		}
		v = q
	}
	return &Const{Typ: t, Float: v}, true
}

func foldCall(c *Call) (*Const, bool) {
	a := c.Args[0].(*Const)
	if a.Null {
		return nullConst(c.Typ), true
	}
	if isIntType(c.Typ) {
		switch c.Fn {
		case "abs":
			v, ok := AbsInt(a.Int)
			return &Const{Typ: c.Typ, Int: v}, ok
		case "round":
			d := int64(0)
			if len(c.Args) == 2 {
				d = c.Args[1].(*Const).Int
			}
			v, ok := RoundInt(a.Int, d)
			return &Const{Typ: c.Typ, Int: v}, ok
		}
		return &Const{Typ: c.Typ, Int: a.Int}, true // floor, ceil
	}
	f := constFloat(a)
	switch c.Fn {
	case "abs":
		f = math.Abs(f)
	case "floor":
		f = math.Floor(f)
	case "ceil":
		f = math.Ceil(f)
	case "round":
		d := int64(0)
		if len(c.Args) == 2 {
			d = c.Args[1].(*Const).Int
		}
		f = RoundFloat(f, d)
	}
	return &Const{Typ: c.Typ, Float: f}, true
}
