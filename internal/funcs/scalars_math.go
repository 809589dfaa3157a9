package funcs

import (
	"math"

	"github.com/apache/arrow-go/v18/arrow"
)

// Number functions beyond abs/ceil/floor/round. One-argument functions use
// the numeric form's slice kernels (the engine's fast path).

func floatFn(name, doc string, f func(float64) float64) *ScalarDecl {
	return &ScalarDecl{Name: name, MinArgs: 1, MaxArgs: 1, FloatResult: true, Signature: name + "(x)", Doc: doc, Float: floatMap(f)}
}

func sign(v float64) float64 {
	switch {
	case v > 0:
		return 1
	case v < 0:
		return -1
	}
	return v // 0, -0 and NaN
}

var f64 = arrow.PrimitiveTypes.Float64

var mathScalars = []*ScalarDecl{
	{Name: "sign", MinArgs: 1, MaxArgs: 1, Signature: "sign(x)", Doc: "-1, 0 or 1 by the sign of x (NaN stays NaN)",
		Int: intMap(func(v, _ int64) (int64, bool) {
			switch {
			case v > 0:
				return 1, true
			case v < 0:
				return -1, true
			}
			return 0, true
		}),
		Float: floatMap(sign)},
	{Name: "trunc", MinArgs: 1, MaxArgs: 1, Signature: "trunc(x)", Doc: "x rounded toward zero (integers unchanged)",
		Float: floatMap(math.Trunc)},
	floatFn("sqrt", "square root (NaN for x < 0)", math.Sqrt),
	floatFn("cbrt", "cube root", math.Cbrt),
	floatFn("exp", "e to the power x", math.Exp),
	floatFn("ln", "natural logarithm (-Inf at 0, NaN for x < 0)", math.Log),
	floatFn("log10", "base-10 logarithm (-Inf at 0, NaN for x < 0)", math.Log10),
	floatFn("log2", "base-2 logarithm (-Inf at 0, NaN for x < 0)", math.Log2),
	{Name: "power", MinArgs: 2, MaxArgs: 2, Params: []Arg{ArgFloat}, Signature: "power(x, y)",
		Doc: "x to the power y (IEEE: `power(-8, 1.0/3)` is NaN)", ResultDoc: "float64", Result: fixed(f64),
		Prepare: func(c *CallInfo) (Kernel, error) {
			return Rows(c.Result, true, func(a []Col, i int, o *Out) error { o.Float(math.Pow(a[0].Float(i), a[1].Float(i))); return nil }), nil
		}},
	{Name: "width_bucket", MinArgs: 4, MaxArgs: 4, Params: []Arg{ArgFloat, ArgFloat, ArgFloat, ArgInt},
		Signature: "width_bucket(x, lo, hi, n)",
		Doc:       "histogram bucket of x among n equal-width buckets over [lo, hi): 1..n; 0 below lo, n+1 at or above hi",
		Nulls:     "null when any argument is null, x is NaN, n ≤ 0 or lo = hi", ResultDoc: "int64", Result: fixed(arrow.PrimitiveTypes.Int64),
		Prepare: func(c *CallInfo) (Kernel, error) {
			return Rows(c.Result, true, func(a []Col, i int, o *Out) error {
				x, lo, hi, n := a[0].Float(i), a[1].Float(i), a[2].Float(i), a[3].Int(i)
				if n <= 0 || lo == hi || math.IsNaN(x) || math.IsNaN(lo) || math.IsNaN(hi) {
					o.Null()
					return nil
				}
				o.Int(WidthBucket(x, lo, hi, n))
				return nil
			}), nil
		}},
	{Name: "bin", MinArgs: 2, MaxArgs: 2, Params: []Arg{ArgNumber}, Signature: "bin(x, width)",
		Doc:   "start of x's histogram bin of the given width: `floor(x / width) * width`",
		Nulls: "null when an argument is null or width is 0", ResultDoc: "int64 for two integers, else float64",
		Result: func(ts []arrow.DataType) (arrow.DataType, error) {
			if ts[0].ID() == arrow.INT64 && ts[1].ID() == arrow.INT64 {
				return ts[0], nil
			}
			return f64, nil
		},
		Prepare: func(c *CallInfo) (Kernel, error) {
			ints := c.Result.ID() == arrow.INT64
			return Rows(c.Result, true, func(a []Col, i int, o *Out) error {
				if ints {
					x, w := a[0].Int(i), a[1].Int(i)
					if w == 0 {
						o.Null()
						return nil
					}
					r, ok := MulInt(FloorDivInt(x, w), w)
					if !ok {
						return ErrOverflow
					}
					o.Int(r)
					return nil
				}
				x, w := a[0].Float(i), a[1].Float(i)
				if w == 0 {
					o.Null()
					return nil
				}
				o.Float(math.Floor(x/w) * w)
				return nil
			}), nil
		}},
}

// WidthBucket is width_bucket's value for valid arguments (n > 0, lo ≠ hi,
// x not NaN); hi < lo counts buckets downward.
func WidthBucket(x, lo, hi float64, n int64) int64 {
	if lo > hi {
		x, lo, hi = -x, -lo, -hi
	}
	switch {
	case x < lo:
		return 0
	case x >= hi:
		return n + 1
	}
	b := int64(math.Floor((x-lo)/(hi-lo)*float64(n))) + 1
	return min(max(b, 1), n)
}
