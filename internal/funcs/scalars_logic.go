package funcs

import (
	"cmp"
	"fmt"
	"math"
	"regexp"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// Comparisons, boolean logic, conditionals and null handling. Operators are
// declared here as functions with internal names ("=", "and", "like",
// "case", ...): the parser turns the syntax into calls of them.

func boolResult([]arrow.DataType) (arrow.DataType, error) { return arrow.FixedWidthTypes.Boolean, nil }

// resultOf returns a Result giving the type of argument i (after casts);
// the null type when all the values are the literal NULL (BindExpr types
// such an expression int64 when nothing else gives it a type).
func resultOf(i int) func([]arrow.DataType) (arrow.DataType, error) {
	return func(ts []arrow.DataType) (arrow.DataType, error) { return ts[min(i, len(ts)-1)], nil }
}

func fixed(t arrow.DataType) func([]arrow.DataType) (arrow.DataType, error) {
	return func([]arrow.DataType) (arrow.DataType, error) { return t, nil }
}

// Compare orders rows a[i] and b[j] of one common type: -1, 0 or 1, and
// false when they are unordered (a NaN).
func Compare(t arrow.DataType) func(a Col, i int, b Col, j int) (int, bool) {
	switch t.ID() {
	case arrow.FLOAT64:
		return func(a Col, i int, b Col, j int) (int, bool) {
			x, y := a.Float(i), b.Float(j)
			if math.IsNaN(x) || math.IsNaN(y) {
				return 0, false
			}
			return cmp.Compare(x, y), true
		}
	case arrow.STRING, arrow.LARGE_STRING:
		return func(a Col, i int, b Col, j int) (int, bool) { return strings.Compare(a.Str(i), b.Str(j)), true }
	case arrow.BOOL:
		return func(a Col, i int, b Col, j int) (int, bool) { return cmp.Compare(b2f(a.Bool(i)), b2f(b.Bool(j))), true }
	}
	return func(a Col, i int, b Col, j int) (int, bool) { return cmp.Compare(a.Int(i), b.Int(j)), true }
}

// totalOrder is Compare with NaN greater than every number and equal to NaN.
func totalOrder(t arrow.DataType) func(a Col, i int, b Col, j int) int {
	c := Compare(t)
	return func(a Col, i int, b Col, j int) int {
		if r, ok := c(a, i, b, j); ok {
			return r
		}
		return cmp.Compare(b2f(math.IsNaN(a.Float(i))), b2f(math.IsNaN(b.Float(j))))
	}
}

func comparison(name, sym, doc string, holds func(c int) bool, nanHolds bool) *ScalarDecl {
	return &ScalarDecl{Name: name, Operator: true, MinArgs: 2, MaxArgs: 2, Params: []Arg{ArgSame},
		Signature: "a " + sym + " b", Doc: doc, ResultDoc: "boolean",
		Nulls:  fmt.Sprintf("null if either side is null; NaN: %v", nanHolds),
		Result: boolResult,
		Prepare: func(c *CallInfo) (Kernel, error) {
			cmpf := Compare(c.Types[0])
			return Rows(c.Result, true, func(a []Col, i int, o *Out) error {
				r, ok := cmpf(a[0], i, a[1], i)
				o.Bool(ok && holds(r) || !ok && nanHolds)
				return nil
			}), nil
		}}
}

// and3 / or3 are SQL's three-valued AND and OR over (value, known) pairs.
func logic(name, sym string, isAnd bool) *ScalarDecl {
	doc := "true when both are true, false when either is false"
	nulls := "null when neither side is false and one is null"
	if !isAnd {
		doc, nulls = "true when either is true, false when both are false", "null when neither side is true and one is null"
	}
	return &ScalarDecl{Name: name, Operator: true, MinArgs: 2, MaxArgs: 2, Params: []Arg{ArgBool},
		Signature: "a " + sym + " b", Doc: doc, Nulls: nulls, ResultDoc: "boolean", Result: boolResult,
		Prepare: func(c *CallInfo) (Kernel, error) {
			return Rows(c.Result, false, func(a []Col, i int, o *Out) error {
				ln, rn := a[0].Null(i), a[1].Null(i)
				l, r := !ln && a[0].Bool(i), !rn && a[1].Bool(i)
				switch {
				case isAnd && (!ln && !l || !rn && !r):
					o.Bool(false)
				case !isAnd && (l || r):
					o.Bool(true)
				case ln || rn:
					o.Null()
				default:
					o.Bool(isAnd)
				}
				return nil
			}), nil
		}}
}

// LikeRegexp translates a LIKE pattern (% any run, _ any one character,
// backslash escapes the next character) to an anchored RE2 pattern.
func LikeRegexp(pattern string, fold bool) string {
	var b strings.Builder
	b.WriteString("^(?s")
	if fold {
		b.WriteString("i")
	}
	b.WriteString(")")
	esc := false
	for _, r := range pattern {
		switch {
		case esc:
			b.WriteString(regexp.QuoteMeta(string(r)))
			esc = false
		case r == '\\':
			esc = true
		case r == '%':
			b.WriteString(".*")
		case r == '_':
			b.WriteString(".")
		default:
			b.WriteString(regexp.QuoteMeta(string(r)))
		}
	}
	if esc {
		b.WriteString(`\\`)
	}
	b.WriteString("$")
	return b.String()
}

func like(name, sym string, fold bool) *ScalarDecl {
	doc := "SQL pattern match of the whole string: `%` any run of characters, `_` any one character, `\\` escapes"
	if fold {
		doc += "; ignores case (Unicode simple folding)"
	}
	return &ScalarDecl{Name: name, Operator: true, MinArgs: 2, MaxArgs: 2, Params: []Arg{ArgString, ArgText},
		Signature: "x " + sym + " 'pattern'", Doc: doc + "; `NOT " + sym + "` negates", ResultDoc: "boolean", Result: boolResult,
		Prepare: func(c *CallInfo) (Kernel, error) {
			m, err := LikeMatcher(c.Consts[1], fold)
			if err != nil || m == nil {
				return nullKernel(c.Result), err
			}
			return Rows(c.Result, true, func(a []Col, i int, o *Out) error {
				o.Bool(m(a[0].Str(i)))
				return nil
			}), nil
		}}
}

// LikeMatcher returns the test of LIKE (ILIKE with fold) against the
// constant pattern v: a substring search for patterns of literals and %
// without fold, else the pattern's regular expression; nil for a null
// pattern (every row is null). The kernel of like and ilike, and the
// engine's vectorized form of them, use it.
func LikeMatcher(v *Value, fold bool) (func(string) bool, error) {
	re, err := compilePattern(v, func(p string) string { return LikeRegexp(p, fold) })
	if err != nil || re == nil {
		return nil, err
	}
	if m := likeLiteralMatcher(v.Str); m != nil && !fold {
		return m, nil
	}
	return re.MatchString, nil
}

// compilePattern compiles the constant pattern v (through translate when
// not nil); nil for a null pattern. Patterns are capped at MaxPatternLen.
func compilePattern(v *Value, translate func(string) string) (*regexp.Regexp, error) {
	if v == nil {
		return nil, fmt.Errorf("the pattern must be a string literal")
	}
	if v.Null {
		return nil, nil
	}
	if len(v.Str) > MaxPatternLen {
		return nil, fmt.Errorf("pattern longer than %d bytes", MaxPatternLen)
	}
	p := v.Str
	if translate != nil {
		p = translate(p)
	}
	re, err := regexp.Compile(p)
	if err != nil {
		return nil, fmt.Errorf("invalid pattern %q: %v", v.Str, err)
	}
	return re, nil
}

// nullKernel returns all nulls of type t.
func nullKernel(t arrow.DataType) Kernel {
	return func(mem memory.Allocator, args []arrow.Array) (arrow.Array, error) {
		n := 0
		if len(args) > 0 {
			n = args[0].Len()
		}
		return Broadcast(mem, &Value{Null: true}, t, n), nil
	}
}

var logicScalars = []*ScalarDecl{
	comparison("=", "=", "equal (`-0` equals `+0`)", func(c int) bool { return c == 0 }, false),
	comparison("!=", "!= b` or `a <>", "not equal", func(c int) bool { return c != 0 }, true),
	comparison("<", "<", "less than", func(c int) bool { return c < 0 }, false),
	comparison("<=", "<=", "less than or equal", func(c int) bool { return c <= 0 }, false),
	comparison(">", ">", "greater than", func(c int) bool { return c > 0 }, false),
	comparison(">=", ">=", "greater than or equal", func(c int) bool { return c >= 0 }, false),
	logic("and", "AND", true),
	logic("or", "OR", false),
	{Name: "not", Operator: true, MinArgs: 1, MaxArgs: 1, Params: []Arg{ArgBool}, Signature: "NOT a", Doc: "negation",
		ResultDoc: "boolean", Result: boolResult,
		Prepare: func(c *CallInfo) (Kernel, error) {
			return Rows(c.Result, true, func(a []Col, i int, o *Out) error { o.Bool(!a[0].Bool(i)); return nil }), nil
		}},
	{Name: "is_null", Operator: true, MinArgs: 1, MaxArgs: 1, Signature: "x IS NULL", Doc: "x is null (NaN is not null)",
		Nulls: "never null", ResultDoc: "boolean", Result: boolResult,
		Prepare: func(c *CallInfo) (Kernel, error) {
			return Rows(c.Result, false, func(a []Col, i int, o *Out) error { o.Bool(a[0].Null(i)); return nil }), nil
		}},
	{Name: "is_not_null", Operator: true, MinArgs: 1, MaxArgs: 1, Signature: "x IS NOT NULL", Doc: "x is not null",
		Nulls: "never null", ResultDoc: "boolean", Result: boolResult,
		Prepare: func(c *CallInfo) (Kernel, error) {
			return Rows(c.Result, false, func(a []Col, i int, o *Out) error { o.Bool(!a[0].Null(i)); return nil }), nil
		}},
	like("like", "LIKE", false),
	like("ilike", "ILIKE", true),
	{Name: "in", Operator: true, MinArgs: 2, MaxArgs: -1, Params: []Arg{ArgSame}, Signature: "x IN (a, b, ...)",
		Doc: "x equals one of the values; `NOT IN` negates", ResultDoc: "boolean",
		Nulls: "null when x is null, or when nothing matches and a value is null; NaN matches nothing", Result: boolResult,
		Prepare: func(c *CallInfo) (Kernel, error) {
			cmpf := Compare(c.Types[0])
			return Rows(c.Result, false, func(a []Col, i int, o *Out) error {
				if a[0].Null(i) {
					o.Null()
					return nil
				}
				sawNull := false
				for _, v := range a[1:] {
					if v.Null(i) {
						sawNull = true
						continue
					}
					if r, ok := cmpf(a[0], i, v, i); ok && r == 0 {
						o.Bool(true)
						return nil
					}
				}
				if sawNull {
					o.Null()
				} else {
					o.Bool(false)
				}
				return nil
			}), nil
		}},
	{Name: "between", Operator: true, MinArgs: 3, MaxArgs: 3, Params: []Arg{ArgSame}, Signature: "x BETWEEN lo AND hi",
		Doc: "`lo ≤ x ≤ hi` (inclusive); `NOT BETWEEN` negates", ResultDoc: "boolean",
		Nulls: "as `x >= lo AND x <= hi`", Result: boolResult,
		Prepare: func(c *CallInfo) (Kernel, error) {
			cmpf := Compare(c.Types[0])
			return Rows(c.Result, false, func(a []Col, i int, o *Out) error {
				// each side: 1 true, 0 false, -1 null
				side := func(b Col, ge bool) int {
					if a[0].Null(i) || b.Null(i) {
						return -1
					}
					r, ok := cmpf(a[0], i, b, i)
					if ok && (ge && r >= 0 || !ge && r <= 0) {
						return 1
					}
					return 0
				}
				lo, hi := side(a[1], true), side(a[2], false)
				switch {
				case lo == 0 || hi == 0:
					o.Bool(false)
				case lo < 0 || hi < 0:
					o.Null()
				default:
					o.Bool(true)
				}
				return nil
			}), nil
		}},
	{Name: "case", Operator: true, MinArgs: 2, MaxArgs: -1, Signature: "CASE WHEN c THEN v [WHEN ...] [ELSE e] END",
		ParamAt: func(i, n int) Arg {
			if i%2 == 0 && i != n-1 || n%2 == 0 && i%2 == 0 {
				return ArgBool
			}
			return ArgSame
		},
		Doc:       "the v of the first c that is true, else e; also `CASE x WHEN a THEN v ... END` (compares x = a)",
		Nulls:     "a null condition counts as false; no ELSE: null",
		ResultDoc: "common type of the values", Result: resultOf(1),
		Prepare: func(c *CallInfo) (Kernel, error) {
			return Rows(c.Result, false, func(a []Col, i int, o *Out) error {
				k := 0
				for ; k+1 < len(a); k += 2 {
					if !a[k].Null(i) && a[k].Bool(i) {
						o.Copy(a[k+1], i)
						return nil
					}
				}
				if k < len(a) {
					o.Copy(a[k], i)
				} else {
					o.Null()
				}
				return nil
			}), nil
		}},
	{Name: "coalesce", MinArgs: 1, MaxArgs: -1, Params: []Arg{ArgSame}, Signature: "coalesce(a, b, ...)",
		Doc: "the first argument that is not null", Nulls: "null when all are null (NaN is not null)",
		ResultDoc: "common type", Result: resultOf(0),
		Prepare: func(c *CallInfo) (Kernel, error) {
			return Rows(c.Result, false, func(a []Col, i int, o *Out) error {
				for _, v := range a {
					if !v.Null(i) {
						o.Copy(v, i)
						return nil
					}
				}
				o.Null()
				return nil
			}), nil
		}},
	{Name: "nullif", MinArgs: 2, MaxArgs: 2, Params: []Arg{ArgSame}, Signature: "nullif(a, b)",
		Doc: "null when a = b, else a", Nulls: "a null a gives null; a null b gives a", ResultDoc: "common type", Result: resultOf(0),
		Prepare: func(c *CallInfo) (Kernel, error) {
			cmpf := Compare(c.Types[0])
			return Rows(c.Result, false, func(a []Col, i int, o *Out) error {
				if !a[0].Null(i) && !a[1].Null(i) {
					if r, ok := cmpf(a[0], i, a[1], i); ok && r == 0 {
						o.Null()
						return nil
					}
				}
				o.Copy(a[0], i)
				return nil
			}), nil
		}},
	ifDecl("if"), ifDecl("iff"),
	{Name: "is_nan", MinArgs: 1, MaxArgs: 1, Params: []Arg{ArgFloat}, Signature: "is_nan(x)",
		Doc: "x is NaN (false for integers)", ResultDoc: "boolean", Result: boolResult,
		Prepare: func(c *CallInfo) (Kernel, error) {
			return Rows(c.Result, true, func(a []Col, i int, o *Out) error { o.Bool(math.IsNaN(a[0].Float(i))); return nil }), nil
		}},
	extremum("least", -1), extremum("greatest", 1),
}

func ifDecl(name string) *ScalarDecl {
	return &ScalarDecl{Name: name, MinArgs: 3, MaxArgs: 3, Params: []Arg{ArgBool, ArgSame, ArgSame},
		Signature: name + "(cond, a, b)", Doc: "a when cond is true, else b (`CASE WHEN cond THEN a ELSE b END`)",
		Nulls: "a null cond gives b", ResultDoc: "common type of a and b", Result: resultOf(1),
		Prepare: func(c *CallInfo) (Kernel, error) {
			return Rows(c.Result, false, func(a []Col, i int, o *Out) error {
				if !a[0].Null(i) && a[0].Bool(i) {
					o.Copy(a[1], i)
				} else {
					o.Copy(a[2], i)
				}
				return nil
			}), nil
		}}
}

func extremum(name string, sign int) *ScalarDecl {
	what := "smallest"
	if sign > 0 {
		what = "largest"
	}
	return &ScalarDecl{Name: name, MinArgs: 1, MaxArgs: -1, Params: []Arg{ArgSame}, Signature: name + "(a, b, ...)",
		Doc: "the " + what + " argument", Nulls: "nulls are skipped (null when all are); NaN is larger than every number",
		ResultDoc: "common type", Result: resultOf(0),
		Prepare: func(c *CallInfo) (Kernel, error) {
			order := totalOrder(c.Types[0])
			return Rows(c.Result, false, func(a []Col, i int, o *Out) error {
				best := -1
				for k, v := range a {
					if !v.Null(i) && (best < 0 || order(v, i, a[best], i)*sign > 0) {
						best = k
					}
				}
				if best < 0 {
					o.Null()
				} else {
					o.Copy(a[best], i)
				}
				return nil
			}), nil
		}}
}
