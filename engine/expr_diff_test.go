package engine

import (
	"cmp"
	"fmt"
	"math"
	"math/big"
	"math/rand/v2"
	"regexp"
	"strings"
	"unicode"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/quarrydb/quarry/internal/funcs"
	"github.com/quarrydb/quarry/internal/qerr"
	"github.com/quarrydb/quarry/planner"
)

// The row-at-a-time reference of typed expressions (operators, conditionals,
// strings, numbers, casts, dates) for the differential suite, written
// independently of the registry's kernels (LIKE by a backtracking matcher,
// string functions over []rune, ...), and a generator of random typed
// expressions over the columns of every type.

// exprKinds of generated expressions.
const (
	kNum = iota
	kBool
	kStr
	kDate
)

func kindOf(t arrow.DataType) int {
	switch {
	case isNumericType(t):
		return kNum
	case t.ID() == arrow.BOOL:
		return kBool
	case t.ID() == arrow.DATE32:
		return kDate
	case isStringLike(t):
		return kStr
	}
	return -1
}

var diffLikePatterns = []string{"a%", "%b", "_", "%", "a_b%", "", "%É%", `a\%`, "A%", "s"}

// randTyped builds a random expression of kind k over schema (nil when no
// column or literal of that kind can be made at depth 0).
func randTyped(r *rand.Rand, schema *arrow.Schema, depth, k int) planner.Expr {
	leaf := func() planner.Expr {
		var cols []string
		for _, f := range schema.Fields() {
			if kindOf(f.Type) == k {
				cols = append(cols, f.Name)
			}
		}
		if len(cols) > 0 && r.IntN(10) < 7 {
			return &planner.ColRef{Name: cols[r.IntN(len(cols))], Index: -1}
		}
		switch k {
		case kNum:
			if r.IntN(2) == 0 {
				return &planner.Const{Typ: arrow.PrimitiveTypes.Int64, Int: int64(r.IntN(11) - 5)}
			}
			return &planner.Const{Typ: arrow.PrimitiveTypes.Float64, Float: []float64{0, 0.5, -2.25, 3}[r.IntN(4)]}
		case kBool:
			if r.IntN(5) == 0 {
				return &planner.Const{Typ: arrow.Null, Null: true}
			}
			return &planner.Const{Typ: arrow.FixedWidthTypes.Boolean, Bool: r.IntN(2) == 0}
		case kStr:
			return &planner.Const{Typ: arrow.BinaryTypes.String, Str: diffStrings[r.IntN(len(diffStrings))]}
		}
		return &planner.Const{Typ: arrow.FixedWidthTypes.Date32, Int: int64(r.IntN(7) - 3)}
	}
	if depth == 0 || r.IntN(4) == 0 {
		return leaf()
	}
	sub := func(k int) planner.Expr { return randTyped(r, schema, depth-1, k) }
	call := func(fn string, args ...planner.Expr) planner.Expr { return &planner.Call{Fn: fn, Args: args} }
	lit := func(s string) planner.Expr { return &planner.Const{Typ: arrow.BinaryTypes.String, Str: s} }
	num := func(n int64) planner.Expr { return &planner.Const{Typ: arrow.PrimitiveTypes.Int64, Int: n} }
	same := func() (planner.Expr, planner.Expr) {
		kk := []int{kNum, kStr, kBool, kDate}[r.IntN(4)]
		return sub(kk), sub(kk)
	}
	switch k {
	case kBool:
		switch r.IntN(12) {
		case 0, 1:
			a, b := same()
			return call([]string{"=", "!=", "<", "<=", ">", ">="}[r.IntN(6)], a, b)
		case 2:
			return call([]string{"and", "or"}[r.IntN(2)], sub(kBool), sub(kBool))
		case 3:
			return call("not", sub(kBool))
		case 4:
			a, _ := same()
			return call([]string{"is_null", "is_not_null"}[r.IntN(2)], a)
		case 5:
			return call([]string{"like", "ilike"}[r.IntN(2)], sub(kStr), lit(diffLikePatterns[r.IntN(len(diffLikePatterns))]))
		case 6:
			a, b := same()
			return call("in", a, b, planner.CloneExpr(b))
		case 7:
			a, b := same()
			return call("between", a, b, planner.CloneExpr(a))
		case 8:
			return call("is_nan", sub(kNum))
		case 9:
			return call([]string{"starts_with", "ends_with", "contains"}[r.IntN(3)], sub(kStr), sub(kStr))
		case 10:
			return call("regexp_matches", sub(kStr), lit(diffPatterns[r.IntN(len(diffPatterns))]))
		}
		return call("case", sub(kBool), sub(kBool), sub(kBool))
	case kStr:
		switch r.IntN(12) {
		case 0:
			return call("||", sub(kStr), sub([]int{kStr, kNum}[r.IntN(2)]))
		case 1:
			return call("concat", sub(kStr), sub(kNum), sub(kStr))
		case 2:
			return call([]string{"lower", "upper", "reverse", "trim"}[r.IntN(4)], sub(kStr))
		case 3:
			return call("substr", sub(kStr), num(int64(r.IntN(7)-3)), num(int64(r.IntN(4))))
		case 4:
			return call([]string{"left", "right"}[r.IntN(2)], sub(kStr), num(int64(r.IntN(7)-3)))
		case 5:
			return call("replace", sub(kStr), lit([]string{"a", "", "b"}[r.IntN(3)]), lit("xy"))
		case 6:
			return call("coalesce", sub(kStr), sub(kStr))
		case 7:
			return call("case", sub(kBool), sub(kStr), sub(kStr))
		case 8:
			return &planner.Cast{X: sub([]int{kNum, kBool, kDate}[r.IntN(3)]), To: arrow.BinaryTypes.String}
		case 9:
			return call([]string{"lpad", "rpad"}[r.IntN(2)], sub(kStr), num(int64(r.IntN(5))), lit("é"))
		case 10:
			return call([]string{"least", "greatest"}[r.IntN(2)], sub(kStr), sub(kStr))
		}
		return call("nullif", sub(kStr), sub(kStr))
	case kDate:
		return call("case", sub(kBool), sub(kDate), sub(kDate))
	}
	switch r.IntN(14) {
	case 0:
		return &planner.Binary{Op: '%', L: sub(kNum), R: sub(kNum)}
	case 1:
		if r.IntN(2) == 0 {
			return call("length", sub(kStr))
		}
		return call("strpos", sub(kStr), sub(kStr))
	case 2:
		return call([]string{"sign", "trunc", "sqrt", "cbrt", "ln", "log10", "log2", "exp"}[r.IntN(8)], sub(kNum))
	case 3:
		return call("power", sub(kNum), num(int64(r.IntN(4)-1)))
	case 4:
		return call("width_bucket", sub(kNum), num(-2), num(5), num(int64(r.IntN(4))))
	case 5:
		return call("bin", sub(kNum), sub(kNum))
	case 6:
		return call("coalesce", sub(kNum), sub(kNum))
	case 7:
		return call("case", sub(kBool), sub(kNum), sub(kNum))
	case 8:
		return call([]string{"least", "greatest"}[r.IntN(2)], sub(kNum), sub(kNum), sub(kNum))
	case 9:
		return call("nullif", sub(kNum), sub(kNum))
	case 10:
		return &planner.Cast{X: sub([]int{kNum, kBool}[r.IntN(2)]), To: []arrow.DataType{arrow.PrimitiveTypes.Int64, arrow.PrimitiveTypes.Float64}[r.IntN(2)], Try: r.IntN(2) == 0}
	case 11:
		return call([]string{"year", "month", "day", "day_of_week", "day_of_year", "week", "quarter"}[r.IntN(7)], sub(kDate))
	case 12:
		return call("if", sub(kBool), sub(kNum), sub(kNum))
	}
	return &planner.Binary{Op: "+-*/"[r.IntN(4)], L: sub(kNum), R: sub(kNum)}
}

// ---- reference ----

// refTyped evaluates the typed nodes refExpr delegates: casts, general
// calls and %. Values: int64, float64, string, bool, int32 (date32), nil.
func refTyped(st *refState, e planner.Expr, row []any) any {
	switch x := e.(type) {
	case *planner.Cast:
		return refCast(st, refExpr(st, x.X, row), x.X.Type(), x.To, x.Try)
	case *planner.Binary: // %
		l, r := refExpr(st, x.L, row), refExpr(st, x.R, row)
		if l == nil || r == nil {
			return nil
		}
		if x.Typ.ID() == arrow.INT64 {
			a, b := l.(int64), r.(int64)
			if b == 0 {
				return nil
			}
			if b == -1 {
				return int64(0)
			}
			return a - (a/b)*b
		}
		a, b := asFloat(l), asFloat(r)
		if b == 0 {
			return nil
		}
		return math.Mod(a, b)
	case *planner.Call:
		args := make([]any, len(x.Args))
		for i, a := range x.Args {
			args[i] = refExpr(st, a, row)
		}
		return refCall(st, x, args)
	}
	panic(fmt.Sprintf("refTyped %T", e))
}

// refOrder compares two non-null values of one kind: -2 when unordered (NaN).
func refOrder(a, b any) int {
	switch x := a.(type) {
	case string:
		return strings.Compare(x, b.(string))
	case bool:
		y := b.(bool)
		switch {
		case x == y:
			return 0
		case !x:
			return -1
		}
		return 1
	case int32:
		return cmp.Compare(x, b.(int32))
	case int64:
		if y, ok := b.(int64); ok {
			return cmp.Compare(x, y)
		}
	}
	fa, fb := asFloat(a), asFloat(b)
	if math.IsNaN(fa) || math.IsNaN(fb) {
		return -2
	}
	return cmp.Compare(fa, fb)
}

// refLike matches s against a LIKE pattern by backtracking over runes.
func refLike(s, p []rune) bool {
	if len(p) == 0 {
		return len(s) == 0
	}
	switch p[0] {
	case '%':
		for i := 0; i <= len(s); i++ {
			if refLike(s[i:], p[1:]) {
				return true
			}
		}
		return false
	case '_':
		return len(s) > 0 && refLike(s[1:], p[1:])
	case '\\':
		if len(p) > 1 {
			p = p[1:]
		}
	}
	return len(s) > 0 && s[0] == p[0] && refLike(s[1:], p[1:])
}

func refDate(v any) (y, m, d int, days int64) {
	days = int64(v.(int32))
	t := arrow.Date32(v.(int32)).ToTime()
	return t.Year(), int(t.Month()), t.Day(), days
}

func refCall(st *refState, c *planner.Call, a []any) any {
	anyNull := false
	for _, v := range a {
		anyNull = anyNull || v == nil
	}
	b2 := func(f func(x, y any) bool) any {
		if anyNull {
			return nil
		}
		return f(a[0], a[1])
	}
	tri := func(v any) int { // 1 true, 0 false, -1 null
		if v == nil {
			return -1
		}
		if v.(bool) {
			return 1
		}
		return 0
	}
	str := func(i int) string { return a[i].(string) }
	runes := func(i int) []rune { return []rune(str(i)) }
	if c.Fn == "||" || c.Fn == "concat" {
		for i, v := range a {
			if v != nil {
				a[i] = refCast(st, v, nil, arrow.BinaryTypes.String, false)
			}
		}
	}
	switch c.Fn {
	case "=", "!=", "<", "<=", ">", ">=":
		return b2(func(x, y any) bool {
			r := refOrder(x, y)
			if r == -2 {
				return c.Fn == "!="
			}
			return map[string]bool{"=": r == 0, "!=": r != 0, "<": r < 0, "<=": r <= 0, ">": r > 0, ">=": r >= 0}[c.Fn]
		})
	case "and", "or":
		l, r := tri(a[0]), tri(a[1])
		stop := 0
		if c.Fn == "or" {
			stop = 1
		}
		switch {
		case l == stop || r == stop:
			return stop == 1
		case l < 0 || r < 0:
			return nil
		}
		return stop == 0
	case "not":
		if anyNull {
			return nil
		}
		return !a[0].(bool)
	case "is_null":
		return a[0] == nil
	case "is_not_null":
		return a[0] != nil
	case "like", "ilike":
		if anyNull {
			return nil
		}
		s, p := str(0), str(1)
		if c.Fn == "ilike" {
			return refLike([]rune(foldRef(s)), []rune(foldRef(p)))
		}
		return refLike([]rune(s), []rune(p))
	case "in":
		if a[0] == nil {
			return nil
		}
		null := false
		for _, v := range a[1:] {
			if v == nil {
				null = true
			} else if refOrder(a[0], v) == 0 {
				return true
			}
		}
		if null {
			return nil
		}
		return false
	case "between":
		ge := refCall(st, &planner.Call{Fn: ">="}, []any{a[0], a[1]})
		le := refCall(st, &planner.Call{Fn: "<="}, []any{a[0], a[2]})
		return refCall(st, &planner.Call{Fn: "and"}, []any{ge, le})
	case "case":
		k := 0
		for ; k+1 < len(a); k += 2 {
			if a[k] == true {
				return a[k+1]
			}
		}
		if k < len(a) {
			return a[k]
		}
		return nil
	case "if":
		if a[0] == true {
			return a[1]
		}
		return a[2]
	case "coalesce":
		for _, v := range a {
			if v != nil {
				return v
			}
		}
		return nil
	case "nullif":
		if a[0] != nil && a[1] != nil && refOrder(a[0], a[1]) == 0 {
			return nil
		}
		return a[0]
	case "least", "greatest":
		var best any
		for _, v := range a {
			if v == nil {
				continue
			}
			if best == nil {
				best = v
				continue
			}
			r := refOrder(v, best)
			if r == -2 { // NaN is the largest
				vn := math.IsNaN(asFloat(v))
				if vn && !math.IsNaN(asFloat(best)) {
					r = 1
				} else if !vn {
					r = -1
				} else {
					r = 0
				}
			}
			if c.Fn == "least" && r < 0 || c.Fn == "greatest" && r > 0 {
				best = v
			}
		}
		return best
	case "is_nan":
		if anyNull {
			return nil
		}
		return math.IsNaN(asFloat(a[0]))
	case "concat":
		var b strings.Builder
		for _, v := range a {
			if v != nil {
				b.WriteString(v.(string))
			}
		}
		return b.String()
	}
	if anyNull {
		return nil
	}
	switch c.Fn {
	case "||":
		return str(0) + str(1)
	case "lower":
		return strings.ToLower(str(0))
	case "upper":
		return strings.ToUpper(str(0))
	case "trim":
		return strings.Trim(str(0), " ")
	case "reverse":
		r := runes(0)
		out := make([]rune, len(r))
		for i, x := range r {
			out[len(r)-1-i] = x
		}
		return string(out)
	case "length":
		return int64(len(runes(0)))
	case "strpos":
		r, t := runes(0), runes(1)
		for i := 0; i+len(t) <= len(r); i++ {
			if string(r[i:i+len(t)]) == string(t) {
				return int64(i + 1)
			}
		}
		return int64(0)
	case "substr":
		r := runes(0)
		start, n := a[1].(int64), a[2].(int64)
		if start < 0 {
			start += int64(len(r)) + 1
		}
		var out []rune
		for i := start; i < start+n; i++ {
			if i >= 1 && i <= int64(len(r)) {
				out = append(out, r[i-1])
			}
		}
		return string(out)
	case "left", "right":
		r, n := runes(0), a[1].(int64)
		if n < 0 {
			n = max(0, int64(len(r))+n)
		}
		n = min(n, int64(len(r)))
		if c.Fn == "left" {
			return string(r[:n])
		}
		return string(r[int64(len(r))-n:])
	case "replace":
		if str(1) == "" {
			return str(0)
		}
		return strings.Join(strings.Split(str(0), str(1)), str(2))
	case "starts_with":
		return strings.HasPrefix(str(0), str(1))
	case "ends_with":
		return strings.HasSuffix(str(0), str(1))
	case "contains":
		return strings.Contains(str(0), str(1))
	case "regexp_matches":
		return regexp.MustCompile(str(1)).MatchString(str(0))
	case "lpad", "rpad":
		r, n, fill := runes(0), a[1].(int64), []rune(str(2))
		if n <= int64(len(r)) {
			return string(r[:max(n, 0)])
		}
		var p []rune
		for int64(len(p)) < n-int64(len(r)) {
			p = append(p, fill...)
		}
		p = p[:n-int64(len(r))]
		if c.Fn == "lpad" {
			return string(p) + string(r)
		}
		return string(r) + string(p)
	case "sign":
		if x, ok := a[0].(int64); ok {
			return int64(cmp.Compare(x, 0))
		}
		f := a[0].(float64)
		if f == 0 || math.IsNaN(f) {
			return f
		}
		return math.Copysign(1, f)
	case "trunc":
		if x, ok := a[0].(int64); ok {
			return x
		}
		return math.Trunc(a[0].(float64))
	case "sqrt", "cbrt", "ln", "log10", "log2", "exp":
		f := asFloat(a[0])
		return map[string]func(float64) float64{"sqrt": math.Sqrt, "cbrt": math.Cbrt, "ln": math.Log, "log10": math.Log10, "log2": math.Log2, "exp": math.Exp}[c.Fn](f)
	case "power":
		return math.Pow(asFloat(a[0]), asFloat(a[1]))
	case "width_bucket":
		x, lo, hi, n := asFloat(a[0]), asFloat(a[1]), asFloat(a[2]), a[3].(int64)
		switch {
		case n <= 0 || math.IsNaN(x):
			return nil
		case x < lo:
			return int64(0)
		case x >= hi:
			return n + 1
		}
		return min(int64((x-lo)*float64(n)/(hi-lo))+1, n)
	case "bin":
		if x, ok := a[0].(int64); ok {
			if w, ok := a[1].(int64); ok {
				if w == 0 {
					return nil
				}
				q := x / w
				if x%w != 0 && (x < 0) != (w < 0) {
					q--
				}
				r, ok := refFits(bigMul(q, w))
				if !ok {
					st.fail(qerr.CodeInvalidArgument)
				}
				return r
			}
		}
		x, w := asFloat(a[0]), asFloat(a[1])
		if w == 0 {
			return nil
		}
		return math.Floor(x/w) * w
	case "year", "month", "day", "quarter", "day_of_year", "day_of_week", "week":
		y, m, d, days := refDate(a[0])
		t := arrow.Date32(int32(days)).ToTime()
		_, wk := t.ISOWeek()
		return map[string]int64{"year": int64(y), "month": int64(m), "day": int64(d), "quarter": int64((m-1)/3 + 1),
			"day_of_year": int64(t.YearDay()), "day_of_week": int64(((days % 7) + 7 + 4) % 7), "week": int64(wk)}[c.Fn]
	}
	panic("refCall " + c.Fn)
}

func foldRef(s string) string {
	var b strings.Builder
	for _, r := range s {
		b.WriteRune(refSimpleFold(r))
	}
	return b.String()
}

// refSimpleFold maps r to the smallest rune of its simple case-folding orbit.
func refSimpleFold(r rune) rune {
	m := r
	for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
		m = min(m, f)
	}
	return m
}

func refCast(st *refState, v any, from, to arrow.DataType, try bool) any {
	if v == nil {
		return nil
	}
	fail := func() any {
		if !try {
			st.fail(qerr.CodeInvalidArgument)
		}
		return nil
	}
	switch to.ID() {
	case arrow.STRING:
		switch x := v.(type) {
		case int64:
			return fmt.Sprint(x)
		case float64:
			return fmt.Sprint(x)
		case bool:
			return fmt.Sprint(x)
		case int32:
			return arrow.Date32(x).FormattedString()
		case string:
			return x
		}
	case arrow.FLOAT64:
		if b, ok := v.(bool); ok {
			if b {
				return 1.0
			}
			return 0.0
		}
		return asFloat(v)
	case arrow.INT64:
		switch x := v.(type) {
		case bool:
			if x {
				return int64(1)
			}
			return int64(0)
		case int64:
			return x
		case float64:
			rf := math.RoundToEven(x)
			if math.IsNaN(rf) || rf < -9.223372036854775808e18 || rf >= 9.223372036854775808e18 {
				return fail()
			}
			return int64(rf)
		}
	}
	panic(fmt.Sprintf("refCast %T to %s", v, to))
}

// bigMul is a*b as a big integer.
func bigMul(a, b int64) *big.Int { return new(big.Int).Mul(big.NewInt(a), big.NewInt(b)) }

// generalCall reports a call refTyped evaluates (everything but the
// numeric functions refExpr has always known).
func generalCall(fn string) bool {
	switch fn {
	case "abs", "round", "floor", "ceil":
		return false
	}
	_, ok := funcs.LookupScalar(fn)
	return ok
}

// randTypedCompute is randExpr's typed counterpart for randCompute: an
// expression of a random kind, never a bare column.
func randTypedCompute(r *rand.Rand, schema *arrow.Schema) planner.Expr {
	e := randTyped(r, schema, 1+r.IntN(3), []int{kNum, kBool, kStr, kDate}[r.IntN(4)])
	if _, bare := e.(*planner.ColRef); bare {
		e = &planner.Call{Fn: "coalesce", Args: []planner.Expr{e}}
	}
	return e
}
