package engine

import (
	"bufio"
	"cmp"
	"errors"
	"fmt"
	"math"
	"math/big"
	"math/rand/v2"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/quarrydb/quarry/internal/qerr"
	"github.com/quarrydb/quarry/planner"
)

// A row-at-a-time reference evaluator over [][]any rows (values in the cell
// convention), used to check the engine on random plans and data: filters
// (every op, case-insensitive variants, OR groups), computed expressions,
// aggregates (every function), distinct, deduplicate, sort and limit, over
// columns of every supported type including dictionary-encoded strings.
//
// Each iteration draws from its own generator seeded with (diffSeed, iter),
// so a failure is replayed by its seed pair alone; failing pairs are kept
// in testdata/diff_seeds.txt and always run first.

var (
	tDict8  = &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int8, ValueType: arrow.BinaryTypes.String}
	tDict16 = &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int16, ValueType: arrow.BinaryTypes.String} // the CSV column cache's type
	tTsUs   = &arrow.TimestampType{Unit: arrow.Microsecond}
)

var diffTypes = []arrow.DataType{
	tInt64, tInt32, tInt8, tUint8, tUint64, tF64, tF32, tStr, tLStr, tBool, tDate, tTsUs, tDict, tDict8, tStr, tDict16,
}

var diffStrings = []string{"", "a", "ab", "b", "ba", "abc", "B", "bab", "A", "É", "é", "straße", "STRASSE", "ſ", "S", "s", "日本", "\u212a", "k", "AbC"}

var diffPatterns = []string{"^a", "b$", "a.b", "^$", "(?:ab)+", "[A-Z]", "é", `^\p{L}+$`, "ß|ss", "^.{2}$", "k", "S"}

func randValue(r *rand.Rand, dt arrow.DataType) any {
	if r.IntN(7) == 0 {
		return nil
	}
	if isDictStr(dt) {
		return diffStrings[r.IntN(len(diffStrings))]
	}
	switch dt.ID() {
	case arrow.INT64:
		if r.IntN(60) == 0 {
			return []int64{math.MaxInt64, math.MinInt64, math.MaxInt64 - 1}[r.IntN(3)]
		}
		return int64(r.IntN(21) - 10)
	case arrow.INT32, arrow.INT8:
		return int64(r.IntN(11) - 5)
	case arrow.UINT8:
		return int64(r.IntN(8))
	case arrow.UINT64:
		return uint64(r.IntN(8))
	case arrow.FLOAT64:
		return []float64{-1.5, 0, math.Copysign(0, -1), 2.25, 3, math.NaN(), 7, -8, 1e300, math.Inf(1), 0.1}[r.IntN(11)]
	case arrow.FLOAT32:
		return []float64{-1.5, 0, 0.25, 3, math.NaN(), 100}[r.IntN(6)]
	case arrow.STRING, arrow.LARGE_STRING:
		return diffStrings[r.IntN(len(diffStrings))]
	case arrow.BOOL:
		return r.IntN(2) == 0
	case arrow.DATE32:
		return int32(r.IntN(7) - 3)
	case arrow.TIMESTAMP:
		return int64(r.IntN(6))
	}
	panic(dt)
}

// randLiteral returns a literal value (planner convention) for dt.
func randLiteral(r *rand.Rand, dt arrow.DataType) any {
	for {
		v := randValue(r, dt)
		if v == nil {
			continue
		}
		switch x := v.(type) {
		case uint64:
			return int64(x)
		case float64:
			if math.IsNaN(x) {
				continue
			}
		}
		if dt.ID() == arrow.INT8 && r.IntN(10) == 0 {
			return int64(300) // out of range for int8
		}
		if arrow.IsInteger(dt.ID()) && r.IntN(8) == 0 {
			// beyond int64, near the uint64 bounds, or with a fraction
			n, err := planner.ParseIntOperand(diffIntOperands[r.IntN(len(diffIntOperands))])
			if err != nil {
				panic(err)
			}
			return n
		}
		return v
	}
}

// diffIntOperands are integer-column operands no int64 holds, or just
// inside its bounds, compared exactly (planner.Number).
var diffIntOperands = []string{
	"9223372036854775807", "9223372036854775808", "9223372036854775809", "-9223372036854775808", "-9223372036854775809",
	"-9223372036854775813", "18446744073709551615", "18446744073709551616", "18446744073709551614.5", "1e30", "-1e30", "1e400",
	"9223372036854775807.5", "-9223372036854775808.5", "2.5", "-2.5", "0.5", "-0.5", "4.5", "7.5", "127.5", "-128.5", "255.5", "300.25",
}

// ---- reference semantics ----

// refRat is an integer value or literal as an exact rational.
func refRat(v any) *big.Rat {
	switch x := v.(type) {
	case int64:
		return new(big.Rat).SetInt64(x)
	case int32:
		return new(big.Rat).SetInt64(int64(x))
	case uint64:
		return new(big.Rat).SetUint64(x)
	case planner.Number:
		r, ok := new(big.Rat).SetString(x.String())
		if !ok {
			panic(x.String())
		}
		return r
	}
	panic(fmt.Sprintf("refRat %T", v))
}

// refCmp compares a value with a literal; unordered is set for NaN.
func refCmp(x, l any) (c int, unordered bool) {
	if _, ok := l.(planner.Number); ok {
		return refRat(x).Cmp(refRat(l)), false
	}
	switch x := x.(type) {
	case int64:
		return cmp.Compare(x, l.(int64)), false
	case uint64:
		li := l.(int64)
		if li < 0 {
			return 1, false
		}
		return cmp.Compare(x, uint64(li)), false
	case int32:
		return cmp.Compare(x, l.(int32)), false
	case float64:
		lf := l.(float64)
		if math.IsNaN(x) || math.IsNaN(lf) {
			return 0, true
		}
		return cmp.Compare(x, lf), false
	case string:
		return strings.Compare(x, l.(string)), false
	case bool:
		return cmp.Compare(b2i(x), b2i(l.(bool))), false
	}
	panic(fmt.Sprintf("refCmp %T", x))
}

func refOp(op string, x, l any) bool {
	c, un := refCmp(x, l)
	switch op {
	case "eq":
		return !un && c == 0
	case "neq":
		return un || c != 0
	case "lt":
		return !un && c < 0
	case "lte":
		return !un && c <= 0
	case "gt":
		return !un && c > 0
	case "gte":
		return !un && c >= 0
	}
	panic(op)
}

// runeSubstrings calls f with every substring of s made of n whole runes
// and reports whether f returned true for one of them.
func runeSubstrings(s string, n int, f func(start, end int, sub string) bool) bool {
	var starts []int
	for i := range s {
		starts = append(starts, i)
	}
	starts = append(starts, len(s))
	for i := 0; i+n < len(starts); i++ {
		if f(starts[i], starts[i+n], s[starts[i]:starts[i+n]]) {
			return true
		}
	}
	return false
}

// refStringOp evaluates the string-only ops (and the case-insensitive
// eq/neq/in/not_in) with strings.EqualFold over rune-aligned substrings:
// an implementation independent of the engine's folding.
func refStringOp(p planner.Predicate, x string) bool {
	lit := func() string { return p.Value.Value.(string) }
	eq := func(a, b string) bool {
		if p.CaseInsensitive {
			return strings.EqualFold(a, b)
		}
		return a == b
	}
	n := func(s string) int { return utf8.RuneCountInString(s) }
	switch p.Op {
	case "eq":
		return eq(x, lit())
	case "neq":
		return !eq(x, lit())
	case "in", "not_in":
		hit := false
		for _, l := range p.Values {
			hit = hit || eq(x, l.Value.(string))
		}
		return hit == (p.Op == "in")
	case "contains":
		return runeSubstrings(x, n(lit()), func(_, _ int, sub string) bool { return eq(sub, lit()) })
	case "starts_with":
		return runeSubstrings(x, n(lit()), func(start, _ int, sub string) bool { return start == 0 && eq(sub, lit()) })
	case "ends_with":
		return runeSubstrings(x, n(lit()), func(_, end int, sub string) bool { return end == len(x) && eq(sub, lit()) })
	case "regex":
		pat := lit()
		if p.CaseInsensitive {
			pat = "(?i)" + pat
		}
		return regexp.MustCompile(pat).MatchString(x)
	}
	panic(p.Op)
}

func refPred(p planner.Predicate, row []any) bool {
	if p.Op == planner.OpAny {
		for _, m := range p.Any {
			if refPred(m, row) {
				return true
			}
		}
		return false
	}
	x := row[p.Index]
	switch p.Op {
	case "is_null":
		return x == nil
	case "is_not_null":
		return x != nil
	}
	if x == nil {
		return false
	}
	if s, ok := x.(string); ok && (p.CaseInsensitive || stringOnly(string(p.Op))) {
		return refStringOp(p, s)
	}
	switch p.Op {
	case "in", "not_in":
		hit := false
		for _, l := range p.Values {
			hit = hit || refOp("eq", x, l.Value)
		}
		return hit == (p.Op == "in")
	case "range":
		if p.Min != nil && !refOp("gte", x, p.Min.Value) {
			return false
		}
		return p.Max == nil || refOp("lte", x, p.Max.Value)
	}
	return refOp(string(p.Op), x, p.Value.Value)
}

func stringOnly(op string) bool {
	return op == "contains" || op == "starts_with" || op == "ends_with" || op == "regex"
}

func refFilter(rows [][]any, preds []planner.Predicate) [][]any {
	var out [][]any
next:
	for _, r := range rows {
		for _, p := range preds {
			if !refPred(p, r) {
				continue next
			}
		}
		out = append(out, r)
	}
	return out
}

// keyOf encodes values for grouping: NaNs equal, -0 == +0, nil distinct.
func keyOf(vs ...any) string {
	var b strings.Builder
	for _, v := range vs {
		switch x := v.(type) {
		case nil:
			b.WriteString("null|")
		case float64:
			if math.IsNaN(x) {
				b.WriteString("f:NaN|")
			} else {
				fmt.Fprintf(&b, "f:%v|", x+0) // -0+0 == +0
			}
		default:
			fmt.Fprintf(&b, "%T:%q|", x, fmt.Sprint(x))
		}
	}
	return b.String()
}

// refDedup keeps the first row of every distinct tuple of the key columns (all when keys is nil).
func refDedup(rows [][]any, keys []int) [][]any {
	seen := map[string]bool{}
	var out [][]any
	for _, r := range rows {
		k := keyOf(r...)
		if keys != nil {
			var vs []any
			for _, i := range keys {
				vs = append(vs, r[i])
			}
			k = keyOf(vs...)
		}
		if !seen[k] {
			seen[k] = true
			out = append(out, r)
		}
	}
	return out
}

func refProject(rows [][]any, idx []int) [][]any {
	out := make([][]any, len(rows))
	for i, r := range rows {
		o := make([]any, len(idx))
		for j, k := range idx {
			o[j] = r[k]
		}
		out[i] = o
	}
	return out
}

// refCompareVals orders two non-null, non-NaN values.
func refCompareVals(a, b any) int {
	switch a := a.(type) {
	case int64:
		return cmp.Compare(a, b.(int64))
	case uint64:
		return cmp.Compare(a, b.(uint64))
	case int32:
		return cmp.Compare(a, b.(int32))
	case float64:
		return cmp.Compare(a, b.(float64))
	case string:
		return strings.Compare(a, b.(string))
	case bool:
		return cmp.Compare(b2i(a), b2i(b.(bool)))
	}
	panic(fmt.Sprintf("%T", a))
}

func isNaN(v any) bool {
	f, ok := v.(float64)
	return ok && math.IsNaN(f)
}

func refSort(rows [][]any, keys []planner.SortKey) [][]any {
	out := slices.Clone(rows)
	slices.SortStableFunc(out, func(a, b []any) int { return refRowCmp(a, b, keys) })
	return out
}

// refRowCmp compares two rows on keys: nulls last, NaN after numbers, then Desc.
func refRowCmp(a, b []any, keys []planner.SortKey) int {
	for _, k := range keys {
		x, y := a[k.Index], b[k.Index]
		var c int
		switch {
		case x == nil && y == nil:
			c = 0
		case x == nil:
			c = 1
		case y == nil:
			c = -1
		case isNaN(x) && isNaN(y):
			c = 0
		case isNaN(x):
			c = 1
		case isNaN(y):
			c = -1
		default:
			c = refCompareVals(x, y)
			if k.Desc {
				c = -c
			}
		}
		if c != 0 {
			return c
		}
	}
	return 0
}

func refLimit(rows [][]any, offset, count int64) [][]any {
	lo := min(offset, int64(len(rows)))
	hi := int64(len(rows))
	if count >= 0 {
		hi = min(hi, lo+count)
	}
	return rows[lo:hi]
}

// refState collects the error the reference run would end with ("" if none).
type refState struct {
	err string // expected qerr code
}

func (s *refState) fail(code string) {
	if s.err == "" {
		s.err = code
	}
}

func refAgg(st *refState, rows [][]any, a *planner.Aggregate) [][]any {
	type group struct {
		key  []any
		rows [][]any
	}
	var groups []*group
	index := map[string]*group{}
	if len(a.GroupIdx) == 0 {
		groups = append(groups, &group{})
	}
	for _, r := range rows {
		if len(a.GroupIdx) == 0 {
			groups[0].rows = append(groups[0].rows, r)
			continue
		}
		key := make([]any, len(a.GroupIdx))
		for i, k := range a.GroupIdx {
			key[i] = r[k]
		}
		ks := keyOf(key...)
		g := index[ks]
		if g == nil {
			g = &group{key: key}
			index[ks] = g
			groups = append(groups, g)
		}
		g.rows = append(g.rows, r)
	}
	var out [][]any
	for _, g := range groups {
		row := slices.Clone(g.key)
		for _, e := range a.Aggs {
			row = append(row, refAggOne(st, e, g.rows))
		}
		out = append(out, row)
	}
	return out
}

func asFloat(v any) float64 {
	switch x := v.(type) {
	case int64:
		return float64(x)
	case uint64:
		return float64(x)
	case float64:
		return x
	}
	panic(fmt.Sprintf("asFloat %T", v))
}

// refQuantile: numpy's "linear" method, a + (b-a)*frac between the two
// closest ranks (the documented formula, so that sorts on quantiles see
// identical values); infinite neighbours give that infinity, -Inf and +Inf
// together give NaN.
func refQuantile(vs []float64, q float64) float64 {
	slices.Sort(vs)
	pos := q * float64(len(vs)-1)
	lo := math.Floor(pos)
	hi := math.Ceil(pos)
	a, b := vs[int(lo)], vs[int(hi)]
	w := pos - lo
	switch {
	case w == 0 || a == b:
		return a
	case math.IsInf(a, -1) && math.IsInf(b, 1):
		return math.NaN()
	case math.IsInf(a, 0):
		return a
	case math.IsInf(b, 0):
		return b
	}
	return a + (b-a)*w
}

func refAggOne(st *refState, e planner.AggExpr, rows [][]any) any {
	if e.Col == "*" {
		return int64(len(rows))
	}
	var vs []any
	for _, r := range rows {
		if r[e.Index] != nil {
			vs = append(vs, r[e.Index])
		}
	}
	switch e.Fn {
	case "count":
		return int64(len(vs))
	case "count_distinct":
		seen := map[string]bool{}
		for _, v := range vs {
			seen[keyOf(v)] = true
		}
		return int64(len(seen))
	case "first":
		if len(vs) == 0 {
			return nil
		}
		return vs[0]
	case "last":
		if len(vs) == 0 {
			return nil
		}
		return vs[len(vs)-1]
	case "median", "quantile":
		q := e.Q
		if e.Fn == "median" {
			q = 0.5
		}
		var fs []float64
		sawNaN := false
		for _, v := range vs {
			f := asFloat(v)
			if math.IsNaN(f) {
				sawNaN = true
				continue
			}
			fs = append(fs, f)
		}
		if len(fs) == 0 {
			if sawNaN {
				return math.NaN()
			}
			return nil
		}
		return refQuantile(fs, q)
	case "stddev":
		if len(vs) < 2 {
			return nil
		}
		// Two-pass in 256-bit floats (independent of the engine's Welford
		// updates); any NaN or infinity makes the result NaN.
		const prec = 256
		mean := new(big.Float).SetPrec(prec)
		for _, v := range vs {
			f := asFloat(v)
			if math.IsNaN(f) || math.IsInf(f, 0) {
				return math.NaN()
			}
			mean.Add(mean, new(big.Float).SetPrec(prec).SetFloat64(f))
		}
		mean.Quo(mean, new(big.Float).SetPrec(prec).SetInt64(int64(len(vs))))
		ss := new(big.Float).SetPrec(prec)
		for _, v := range vs {
			d := new(big.Float).SetPrec(prec).SetFloat64(asFloat(v))
			d.Sub(d, mean)
			ss.Add(ss, d.Mul(d, d))
		}
		ss.Quo(ss, new(big.Float).SetPrec(prec).SetInt64(int64(len(vs)-1)))
		f, _ := ss.Sqrt(ss).Float64()
		return f
	case "sum", "avg":
		if len(vs) == 0 {
			return nil
		}
		var si int64
		var sf float64
		isFloat := false
		for _, v := range vs {
			switch x := v.(type) {
			case int64:
				r, ok := refAdd(si, x)
				if !ok && e.Fn == "sum" {
					st.fail(qerr.CodeInvalidAggregate)
				}
				si = r
				sf += float64(x)
			case uint64:
				if x > math.MaxInt64 && e.Fn == "sum" {
					st.fail(qerr.CodeInvalidAggregate)
				}
				r, ok := refAdd(si, int64(x))
				if !ok && e.Fn == "sum" {
					st.fail(qerr.CodeInvalidAggregate)
				}
				si = r
				sf += float64(x)
			case float64:
				isFloat = true
				sf += x
			}
		}
		if e.Fn == "avg" {
			return sf / float64(len(vs))
		}
		if isFloat {
			return sf
		}
		return si
	case "min", "max":
		var best any
		for _, v := range vs {
			switch {
			case best == nil:
				best = v
			case isNaN(v):
			case isNaN(best):
				best = v
			default:
				c := refCompareVals(v, best)
				if (e.Fn == "max" && c > 0) || (e.Fn == "min" && c < 0) {
					best = v
				}
			}
		}
		return best
	}
	panic(e.Fn)
}

// refAdd adds with big integers and reports whether the result fits int64.
func refAdd(a, b int64) (int64, bool) {
	r := new(big.Int).Add(big.NewInt(a), big.NewInt(b))
	return r.Int64(), r.IsInt64()
}

func refFits(r *big.Int) (int64, bool) { return r.Int64(), r.IsInt64() }

// refExpr evaluates a bound expression on one row: the value (int64 or
// float64, nil for null). Overflow is recorded in st.
func refExpr(st *refState, e planner.Expr, row []any) any {
	switch x := e.(type) {
	case *planner.ColRef:
		v := row[x.Index]
		if x.Typ.ID() == arrow.DATE32 {
			return v
		}
		switch y := v.(type) {
		case nil:
			return nil
		case uint64:
			if y > math.MaxInt64 {
				st.fail(qerr.CodeInvalidArgument)
				return int64(0)
			}
			return int64(y)
		case int32:
			return int64(y)
		}
		return v
	case *planner.Const:
		switch {
		case x.Null:
			return nil
		case x.Typ.ID() == arrow.INT64:
			return x.Int
		case x.Typ.ID() == arrow.DATE32:
			return int32(x.Int)
		case x.Typ.ID() == arrow.STRING:
			return x.Str
		case x.Typ.ID() == arrow.BOOL:
			return x.Bool
		}
		return x.Float
	case *planner.Neg:
		v := refExpr(st, x.X, row)
		switch y := v.(type) {
		case int64:
			r, ok := refFits(new(big.Int).Neg(big.NewInt(y)))
			if !ok {
				st.fail(qerr.CodeInvalidArgument)
			}
			return r
		case float64:
			return -y
		}
		return nil
	case *planner.Cast:
		return refTyped(st, x, row)
	case *planner.Binary:
		if x.Op == '%' {
			return refTyped(st, x, row)
		}
		l, r := refExpr(st, x.L, row), refExpr(st, x.R, row)
		if l == nil || r == nil {
			return nil
		}
		if x.Typ.ID() == arrow.INT64 {
			a, b := big.NewInt(l.(int64)), big.NewInt(r.(int64))
			var res *big.Int
			switch x.Op {
			case '+':
				res = a.Add(a, b)
			case '-':
				res = a.Sub(a, b)
			case '*':
				res = a.Mul(a, b)
			}
			v, ok := refFits(res)
			if !ok {
				st.fail(qerr.CodeInvalidArgument)
			}
			return v
		}
		a, b := asFloat(l), asFloat(r)
		switch x.Op {
		case '+':
			return a + b
		case '-':
			return a - b
		case '*':
			return a * b
		}
		if b == 0 {
			return nil
		}
		return a / b
	case *planner.Call:
		if generalCall(x.Fn) {
			return refTyped(st, x, row)
		}
		v := refExpr(st, x.Args[0], row)
		if v == nil {
			return nil
		}
		digits := int64(0)
		if len(x.Args) == 2 {
			digits = x.Args[1].(*planner.Const).Int
		}
		if i, ok := v.(int64); ok {
			switch x.Fn {
			case "abs":
				r, ok := refFits(new(big.Int).Abs(big.NewInt(i)))
				if !ok {
					st.fail(qerr.CodeInvalidArgument)
				}
				return r
			case "round":
				if digits >= 0 {
					return i
				}
				p := new(big.Int).Exp(big.NewInt(10), big.NewInt(-digits), nil)
				// round half away from zero: (|i| + p/2) / p * p, with i's sign
				a := new(big.Int).Abs(big.NewInt(i))
				a.Add(a, new(big.Int).Quo(p, big.NewInt(2)))
				a.Quo(a, p).Mul(a, p)
				if i < 0 {
					a.Neg(a)
				}
				r, ok := refFits(a)
				if !ok {
					st.fail(qerr.CodeInvalidArgument)
				}
				return r
			}
			return i
		}
		f := v.(float64)
		switch x.Fn {
		case "abs":
			return math.Abs(f)
		case "floor":
			return math.Floor(f)
		case "ceil":
			return math.Ceil(f)
		}
		switch {
		case digits == 0:
			return math.Round(f)
		case digits > 0:
			p := math.Pow10(int(digits))
			if math.IsInf(f*p, 0) {
				return f
			}
			return math.Round(f*p) / p
		}
		p := math.Pow10(int(-digits))
		return math.Round(f/p) * p
	}
	panic(fmt.Sprintf("refExpr %T", e))
}

// ---- random plans ----

var caseOps = map[string]bool{"eq": true, "neq": true, "in": true, "not_in": true, "contains": true, "starts_with": true, "ends_with": true, "regex": true}

func randLeafPred(r *rand.Rand, schema *arrow.Schema) planner.Predicate {
	i := r.IntN(schema.NumFields())
	f := schema.Field(i)
	ops := []string{"eq", "neq", "lt", "lte", "gt", "gte", "in", "not_in", "range", "is_null", "is_not_null"}
	str := isStringLike(f.Type)
	if str {
		ops = append(ops, "contains", "starts_with", "ends_with", "regex", "contains", "eq", "in")
	}
	op := ops[r.IntN(len(ops))]
	p := planner.Predicate{Col: f.Name, Index: i, Op: planner.Op(op)}
	l := func() *planner.Literal {
		if str && r.IntN(4) == 0 {
			return lit(f.Type, []string{"A", "É", "SS", "ſ", "B", "AB", "K", "本"}[r.IntN(8)])
		}
		return lit(f.Type, randLiteral(r, f.Type))
	}
	switch op {
	case "is_null", "is_not_null":
	case "in", "not_in":
		for range 1 + r.IntN(11) {
			p.Values = append(p.Values, *l())
		}
	case "range":
		if r.IntN(4) != 0 {
			p.Min = l()
		}
		if r.IntN(4) != 0 {
			p.Max = l()
		}
	case "regex":
		p.Value = lit(f.Type, diffPatterns[r.IntN(len(diffPatterns))])
	default:
		p.Value = l()
	}
	if str && caseOps[op] && r.IntN(2) == 0 {
		p.CaseInsensitive = true
	}
	return p
}

func randPred(r *rand.Rand, schema *arrow.Schema) planner.Predicate {
	if r.IntN(6) != 0 {
		return randLeafPred(r, schema)
	}
	p := planner.Predicate{Op: planner.OpAny, Index: -1}
	for range 1 + r.IntN(3) {
		p.Any = append(p.Any, randLeafPred(r, schema))
	}
	return p
}

func isNumericType(dt arrow.DataType) bool {
	return arrow.IsInteger(dt.ID()) || dt.ID() == arrow.FLOAT32 || dt.ID() == arrow.FLOAT64
}

// randExpr builds a random arithmetic expression over the numeric columns
// of schema (at least one must exist).
func randExpr(r *rand.Rand, schema *arrow.Schema, depth int) planner.Expr {
	var nums []int
	for i, f := range schema.Fields() {
		if isNumericType(f.Type) {
			nums = append(nums, i)
		}
	}
	if depth == 0 || r.IntN(4) == 0 {
		if r.IntN(10) < 7 {
			return &planner.ColRef{Name: schema.Field(nums[r.IntN(len(nums))]).Name, Index: -1}
		}
		if r.IntN(2) == 0 {
			return &planner.Const{Typ: arrow.PrimitiveTypes.Int64, Int: int64(r.IntN(11) - 5)}
		}
		return &planner.Const{Typ: arrow.PrimitiveTypes.Float64, Float: []float64{0, 0.5, -2.25, 3, 1e308}[r.IntN(5)]}
	}
	switch k := r.IntN(20); {
	case k < 12:
		return &planner.Binary{Op: "+-*/"[r.IntN(4)], L: randExpr(r, schema, depth-1), R: randExpr(r, schema, depth-1)}
	case k < 15:
		return &planner.Neg{X: randExpr(r, schema, depth-1)}
	default:
		c := &planner.Call{Fn: []string{"abs", "round", "floor", "ceil", "round"}[r.IntN(5)], Args: []planner.Expr{randExpr(r, schema, depth-1)}}
		if c.Fn == "round" && r.IntN(2) == 0 {
			c.Args = append(c.Args, &planner.Const{Typ: arrow.PrimitiveTypes.Int64, Int: int64(r.IntN(4) - 1)})
		}
		return c
	}
}

// randCompute appends up to two computed columns to node.
func randCompute(r *rand.Rand, node planner.Node, rows [][]any, st *refState) (planner.Node, [][]any) {
	schema := node.Schema()
	if !slices.ContainsFunc(schema.Fields(), func(f arrow.Field) bool { return isNumericType(f.Type) }) {
		return node, rows
	}
	c := &planner.Compute{Input: node}
	for j := range 1 + r.IntN(2) {
		e := randExpr(r, schema, 1+r.IntN(3))
		if _, bare := e.(*planner.ColRef); bare {
			e = &planner.Neg{X: e}
		}
		if r.IntN(2) == 0 {
			e = randTypedCompute(r, schema)
		}
		if err := planner.BindExpr(e, schema); err != nil {
			panic(err)
		}
		c.Exprs = append(c.Exprs, planner.NamedExpr{Name: fmt.Sprintf("x%d", j), Expr: e})
	}
	out := make([][]any, len(rows))
	for i, row := range rows {
		o := slices.Clone(row)
		for _, e := range c.Exprs {
			o = append(o, refExpr(st, e.Expr, row))
		}
		out[i] = o
	}
	return c, out
}

var diffAggFns = []string{"count", "sum", "avg", "min", "max", "count_distinct", "median", "quantile", "stddev", "first", "last"}

func randAgg(r *rand.Rand, node planner.Node) *planner.Aggregate {
	schema := node.Schema()
	var keys []string
	for _, i := range r.Perm(schema.NumFields())[:r.IntN(min(3, schema.NumFields())+1)] {
		keys = append(keys, schema.Field(i).Name)
	}
	var aggs []string
	for range 1 + r.IntN(4) {
		fn := diffAggFns[r.IntN(len(diffAggFns))]
		f := schema.Field(r.IntN(schema.NumFields()))
		if fn == "count" && r.IntN(2) == 0 {
			aggs = append(aggs, "count:*")
			continue
		}
		switch fn {
		case "sum", "avg", "median", "quantile", "stddev":
			if !isNumericType(f.Type) {
				fn = []string{"min", "first", "count_distinct"}[r.IntN(3)]
			}
		}
		if fn == "quantile" {
			q := []float64{0, 0.1, 0.25, 0.5, 0.9, 1, r.Float64()}[r.IntN(7)]
			aggs = append(aggs, fmt.Sprintf("quantile:%s:%v", f.Name, q))
			continue
		}
		aggs = append(aggs, fn+":"+f.Name)
	}
	a := aggOf(node, keys, aggs...)
	// aggOf names aggregates fn_col; repeated ones get unique names.
	seen := map[string]int{}
	fields := slices.Clone(a.Out.Fields())
	for i := range a.Aggs {
		if n := seen[a.Aggs[i].Name]; n > 0 {
			a.Aggs[i].Name = fmt.Sprintf("%s_%d", a.Aggs[i].Name, n)
		}
		seen[a.Aggs[i].Name]++
		fields[len(keys)+i].Name = a.Aggs[i].Name
	}
	a.Out = arrow.NewSchema(fields, nil)
	return a
}

type randCase struct {
	plan  planner.Node
	want  [][]any
	err   string // expected error code ("" for none)
	limit bool   // the plan has a Limit (an early exit may skip a failing row)
}

func randPlan(r, x *rand.Rand, data []tcol) randCase {
	st := &refState{}
	full := schemaOf(data)
	// Scan with an optional projection and pushed filters.
	scan := &planner.Scan{Dataset: "t", Out: full}
	rows := make([][]any, len(data[0].vals))
	for i := range rows {
		rows[i] = make([]any, len(data))
		for c := range data {
			rows[i][c] = data[c].vals[i]
		}
	}
	if r.IntN(2) == 0 {
		perm := r.Perm(len(data))[:1+r.IntN(len(data))]
		var fs []arrow.Field
		for _, c := range perm {
			scan.Columns = append(scan.Columns, data[c].name)
			fs = append(fs, full.Field(c))
		}
		scan.Out = arrow.NewSchema(fs, nil)
		rows = refProject(rows, perm)
	}
	var node planner.Node = scan
	for range r.IntN(3) {
		scan.Filters = append(scan.Filters, randPred(r, scan.Out))
	}
	rows = refFilter(rows, scan.Filters)
	if r.IntN(2) == 0 {
		var preds []planner.Predicate
		for range 1 + r.IntN(3) {
			preds = append(preds, randPred(r, node.Schema()))
		}
		node = filterOf(node, preds...)
		rows = refFilter(rows, preds)
	}
	if r.IntN(3) == 0 {
		node, rows = randCompute(r, node, rows, st)
		if r.IntN(3) == 0 { // a filter on computed values (null_policy drop style)
			s := node.Schema()
			p := planner.Predicate{Col: s.Field(s.NumFields() - 1).Name, Index: s.NumFields() - 1, Op: planner.OpIsNotNull}
			node = filterOf(node, p)
			rows = refFilter(rows, []planner.Predicate{p})
		}
	}
	schema := node.Schema()
	switch r.IntN(5) {
	case 1: // aggregate (+ expression key, having, post-aggregation columns: diff_having_test.go)
		a := randExprKey(x, randAgg(r, node))
		rows = refAgg(st, rows, a)
		node, rows = randHaving(x, a, rows, st)
	case 2: // project (+ distinct)
		idx := r.Perm(schema.NumFields())[:1+r.IntN(schema.NumFields())]
		var names []string
		for _, i := range idx {
			names = append(names, schema.Field(i).Name)
		}
		node = projectOf(node, names...)
		rows = refProject(rows, idx)
		if r.IntN(2) == 0 {
			node = &planner.Distinct{Input: node}
			rows = refDedup(rows, nil)
		}
	case 3:
		node = &planner.Distinct{Input: node}
		rows = refDedup(rows, nil)
	case 4: // deduplicate on some columns
		d := &planner.Deduplicate{Input: node}
		for _, i := range r.Perm(schema.NumFields())[:1+r.IntN(schema.NumFields())] {
			d.Columns = append(d.Columns, schema.Field(i).Name)
			d.Indices = append(d.Indices, i)
		}
		node = d
		rows = refDedup(rows, d.Indices)
	}
	if r.IntN(2) == 0 {
		s := &planner.Sort{Input: node}
		out := node.Schema()
		for _, i := range r.Perm(out.NumFields())[:1+r.IntN(min(3, out.NumFields()))] {
			if strings.HasPrefix(out.Field(i).Name, "stddev_") {
				continue // computed differently (and so not bit-identically) by the reference
			}
			s.Keys = append(s.Keys, planner.SortKey{Col: out.Field(i).Name, Index: i, Desc: r.IntN(2) == 0})
		}
		if len(s.Keys) > 0 {
			node = s
			rows = refSort(rows, s.Keys)
		}
	}
	hasLimit := false
	if r.IntN(2) == 0 {
		off, cnt := int64(r.IntN(10)), int64(r.IntN(25)-3)
		if r.IntN(3) == 0 {
			off = 0
		}
		node = limitOf(node, off, cnt)
		rows = refLimit(rows, off, cnt)
		hasLimit = true
	}
	if rows == nil {
		rows = [][]any{}
	}
	return randCase{plan: node, want: rows, err: st.err, limit: hasLimit}
}

func randData(r *rand.Rand) []tcol {
	ncols := 1 + r.IntN(5)
	nrows := r.IntN(60)
	var cols []tcol
	for c := range ncols {
		dt := diffTypes[r.IntN(len(diffTypes))]
		vs := make([]any, nrows)
		for i := range vs {
			vs[i] = randValue(r, dt)
		}
		cols = append(cols, tcol{name: fmt.Sprintf("c%d", c), typ: dt, vals: vs})
	}
	return cols
}

// cellClose compares cells, floats within a relative 1e-9 (NaN equals NaN).
func cellClose(a, b any) bool { return cellWith(a, b, floatClose) }

func rowsClose(a, b [][]any) bool { return rowsWith(a, b, cellClose) }

type diffSeedPair struct{ seed, iter uint64 }

// keptSeeds reads testdata/diff_seeds.txt: "seed iter" per line, # comments.
func keptSeeds(t *testing.T) []diffSeedPair {
	f, err := os.Open("testdata/diff_seeds.txt")
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []diffSeedPair
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		var p diffSeedPair
		if _, err := fmt.Sscan(line, &p.seed, &p.iter); err != nil {
			t.Fatalf("diff_seeds.txt: bad line %q", line)
		}
		out = append(out, p)
	}
	return out
}

// diffOne runs one random case; it returns whether the plan produced rows.
func diffOne(t *testing.T, p diffSeedPair) bool {
	t.Helper()
	r := rand.New(rand.NewPCG(p.seed, p.iter))
	data := randData(r)
	rc := randPlan(r, rand.New(rand.NewPCG(p.seed, p.iter^0x9e3779b97f4a7c15)), data)
	bs := 1 + r.IntN(8)
	plan := rc.plan
	folded := false
	if r.IntN(2) == 0 { // the engine runs the constant-folded plan, the reference the original
		plan = planner.Clone(plan)
		if _, err := planner.FoldConstants(plan, planner.OptimizeOptions{}); err != nil {
			t.Fatal(err)
		}
		folded = true
	}
	alloc := newAlloc()
	src := newSource(alloc, data)
	src.noCopy = r.IntN(2) == 0
	got, err := run(t, plan, src, Options{Alloc: alloc, BatchSize: bs})
	src.release()
	alloc.AssertSize(t, 0)
	replay := fmt.Sprintf("seed %d iter %d (keep it: add \"%d %d\" to testdata/diff_seeds.txt)", p.seed, p.iter, p.seed, p.iter)
	if rc.err != "" {
		if err == nil && rc.limit {
			return false // an early exit skipped the failing rows
		}
		if qerr.Code(err) != rc.err {
			t.Fatalf("%s: err = %v, want code %s (batch size %d, folded %v)\nplan:\n%s", replay, err, rc.err, bs, folded, planner.String(plan))
		}
		return false
	}
	if err != nil {
		t.Fatalf("%s: %v (batch size %d, folded %v)\nplan:\n%s", replay, err, bs, folded, planner.String(plan))
	}
	if got == nil {
		got = [][]any{}
	}
	if !rowsClose(got, rc.want) {
		t.Fatalf("%s (batch size %d, folded %v): plan:\n%sgot\n%swant\n%s", replay, bs, folded, planner.String(plan), fmtRows(got), fmtRows(rc.want))
	}
	return len(got) > 0
}

func TestDifferential(t *testing.T) {
	for _, p := range keptSeeds(t) {
		diffOne(t, p)
	}
	nonEmpty := 0
	for iter := range diffIters {
		if diffOne(t, diffSeedPair{diffSeed, iter}) {
			nonEmpty++
		}
	}
	t.Logf("%d of %d random plans returned rows", nonEmpty, diffIters)
}

var diffSeed, diffIters uint64 = 42, 3000
