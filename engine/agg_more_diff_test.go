package engine

import (
	"fmt"
	"math"
	"math/big"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/quarrydb/quarry/planner"
)

// Differential tests of the aggregates of internal/funcs/aggs_more.go and
// of per-aggregate filters and second arguments: random data (nulls, NaN,
// ±Inf, duplicates, skewed keys, empty and single-row groups, batches with
// differing dictionaries) against a row-at-a-time reference.

// moreAggDiffTypes are the types of the random extra column.
var moreAggDiffTypes = []arrow.DataType{tInt64, tInt8, tUint8, tF64, tF32, tStr, tLStr, tBool, tDate, tTsUs, tDict, tDict16}

// moreAggData is: k (skewed int64 keys), s (strings, dictionary-encoded or
// not), x (float64), y (a random integer type), b (bool) and e (a random type).
func moreAggData(r *rand.Rand, nrows int) []tcol {
	sType := []arrow.DataType{tStr, tDict, tDict8}[r.IntN(3)]
	yType := []arrow.DataType{tInt64, tInt32, tInt8, tUint8, tUint64}[r.IntN(5)]
	eType := moreAggDiffTypes[r.IntN(len(moreAggDiffTypes))]
	cols := []tcol{{name: "k", typ: tInt64}, {name: "s", typ: sType}, {name: "x", typ: tF64}, {name: "y", typ: yType}, {name: "b", typ: tBool}, {name: "e", typ: eType}}
	nk := 1 + r.IntN(6)
	for c := range cols {
		vs := make([]any, nrows)
		for i := range vs {
			switch cols[c].name {
			case "k":
				if r.IntN(10) == 0 {
					vs[i] = nil
				} else {
					vs[i] = int64(r.IntN(1 + r.IntN(nk))) // skewed towards small keys
				}
			case "x":
				v := randValue(r, tF64)
				if f, ok := v.(float64); ok && f == 1e300 {
					v = 5.0 // keep sums of squares finite
				}
				if r.IntN(3) == 0 && v != nil {
					v = float64(r.IntN(1000)) / 7
				}
				vs[i] = v
			default:
				v := randValue(r, cols[c].typ)
				if x, ok := v.(int64); ok && (x > 1e15 || x < -1e15) {
					v = int64(r.IntN(100)) // extremes lose all precision in float64 statistics
				}
				vs[i] = v
			}
		}
		cols[c].vals = vs
	}
	return cols
}

// moreAggFns draws the aggregates: fn, col, arg.
var moreAggFns = []string{"var_samp", "var_pop", "stddev_samp", "stddev_pop", "covar_samp", "covar_pop", "corr", "regr_slope",
	"regr_intercept", "regr_r2", "mode", "arg_min", "arg_max", "bool_and", "bool_or", "count_if", "string_agg", "list", "array_agg",
	"approx_count_distinct", "approx_quantile", "count", "sum", "avg"}

func randMoreAgg(r *rand.Rand, s *arrow.Schema, j int) planner.AggExpr {
	fn := planner.AggFn(moreAggFns[r.IntN(len(moreAggFns))])
	numeric := []string{"x", "y", "k"}
	if isNumericType(s.Field(5).Type) {
		numeric = append(numeric, "e")
	}
	pick := func(cs ...string) string { return cs[r.IntN(len(cs))] }
	e := planner.AggExpr{Fn: fn, Index: -1, ArgIndex: -1}
	switch fn {
	case "var_samp", "var_pop", "stddev_samp", "stddev_pop", "approx_quantile", "sum", "avg":
		e.Col = pick(numeric...)
		e.Q = []float64{0, 0.25, 0.5, 0.9, 1}[r.IntN(5)]
	case "covar_samp", "covar_pop", "corr", "regr_slope", "regr_intercept", "regr_r2":
		e.Col, e.Arg = pick(numeric...), pick(numeric...)
	case "arg_min", "arg_max":
		e.Col, e.Arg = pick("k", "s", "x", "y", "b", "e"), pick("k", "s", "x", "y", "b", "e")
	case "bool_and", "bool_or", "count_if":
		e.Col = "b"
	case "string_agg":
		e.Col, e.Arg = "s", pick(",", "", " | ")
	case "count":
		e.Col = pick("*", "x", "s")
	default:
		e.Col = pick("k", "s", "x", "y", "b", "e")
	}
	if e.Col != "*" {
		e.Index = s.FieldIndices(e.Col)[0]
	}
	d, _ := fn.Lookup()
	if d.Arg != nil && d.Arg.Input != nil {
		e.ArgIndex = s.FieldIndices(e.Arg)[0]
	}
	if e.Col == "*" {
		e.Type = arrow.PrimitiveTypes.Int64
	} else {
		e.Type = d.Result(s.Field(e.Index).Type)
	}
	if r.IntN(3) == 0 {
		for range 1 + r.IntN(2) {
			e.Filter = append(e.Filter, randPred(r, s))
		}
	}
	e.Name = fmt.Sprintf("a%d_%s", j, fn)
	return e
}

// refBig is x as a 256-bit float.
func refBig(x float64) *big.Float { return new(big.Float).SetPrec(256).SetFloat64(x) }

// refMoments returns n, the means and the sums of squares and products of
// the pairs, computed in two passes in 256-bit floats. A variable with a
// NaN or infinite value has a NaN mean and sum of squares (and the sum of
// products is NaN).
func refMoments(xs, ys []float64) (n, mx, my, sxx, syy, sxy float64) {
	if len(xs) == 0 {
		return
	}
	bad := func(vs []float64) bool {
		return slices.ContainsFunc(vs, func(v float64) bool { return math.IsNaN(v) || math.IsInf(v, 0) })
	}
	badX, badY := bad(xs), bad(ys)
	f := func(b *big.Float) float64 { v, _ := b.Float64(); return v }
	bn := refBig(float64(len(xs)))
	moments := func(vs []float64) (*big.Float, []*big.Float) {
		m := refBig(0)
		for _, v := range vs {
			m.Add(m, refBig(v))
		}
		m.Quo(m, bn)
		ds := make([]*big.Float, len(vs))
		for i, v := range vs {
			ds[i] = refBig(v)
			ds[i].Sub(ds[i], m)
		}
		return m, ds
	}
	sumProd := func(a, b []*big.Float) float64 {
		acc := refBig(0)
		for i := range a {
			acc.Add(acc, new(big.Float).SetPrec(256).Mul(a[i], b[i]))
		}
		return f(acc)
	}
	n = float64(len(xs))
	mx, my, sxx, syy, sxy = math.NaN(), math.NaN(), math.NaN(), math.NaN(), math.NaN()
	var dxs, dys []*big.Float
	if !badX {
		var m *big.Float
		m, dxs = moments(xs)
		mx, sxx = f(m), sumProd(dxs, dxs)
	}
	if !badY {
		var m *big.Float
		m, dys = moments(ys)
		my, syy = f(m), sumProd(dys, dys)
	}
	if !badX && !badY {
		sxy = sumProd(dxs, dys)
	}
	return n, mx, my, sxx, syy, sxy
}

// refMoreAgg is the reference of one aggregate over the rows of a group.
func refMoreAgg(e planner.AggExpr, rows [][]any) any {
	rows = refFilter(rows, e.Filter)
	var vs []any // non-null values of col
	for _, r := range rows {
		if e.Col != "*" && r[e.Index] != nil {
			vs = append(vs, r[e.Index])
		}
	}
	switch e.Fn {
	case "count":
		if e.Col == "*" {
			return int64(len(rows))
		}
		return int64(len(vs))
	case "sum", "avg":
		return refAggOne(&refState{}, planner.AggExpr{Fn: e.Fn, Col: e.Col, Index: e.Index}, rows)
	case "var_samp", "var_pop", "stddev_samp", "stddev_pop":
		pop := strings.HasSuffix(string(e.Fn), "_pop")
		if len(vs) == 0 || (!pop && len(vs) < 2) {
			return nil
		}
		xs := make([]float64, len(vs))
		for i, v := range vs {
			xs[i] = asFloat(v)
		}
		n, _, _, sxx, _, _ := refMoments(xs, xs)
		den := n - 1
		if pop {
			den = n
		}
		r := sxx / den
		if strings.HasPrefix(string(e.Fn), "stddev") {
			r = math.Sqrt(r)
		}
		return r
	case "covar_samp", "covar_pop", "corr", "regr_slope", "regr_intercept", "regr_r2":
		var xs, ys []float64
		for _, r := range rows {
			if r[e.Index] != nil && r[e.ArgIndex] != nil {
				ys = append(ys, asFloat(r[e.Index]))
				xs = append(xs, asFloat(r[e.ArgIndex]))
			}
		}
		n, mx, my, sxx, syy, sxy := refMoments(xs, ys)
		if n == 0 {
			return nil
		}
		cov, vx, vy := sxy/n, sxx/n, syy/n
		switch e.Fn {
		case "covar_pop":
			return cov
		case "covar_samp":
			if n < 2 {
				return nil
			}
			return sxy / (n - 1)
		case "corr":
			return cov / (math.Sqrt(vx) * math.Sqrt(vy))
		case "regr_slope":
			return cov / vx
		case "regr_intercept":
			slope := cov / vx
			if math.IsNaN(slope) || math.IsInf(slope, 0) {
				return nil
			}
			return my - slope*mx
		case "regr_r2":
			switch {
			case vx == 0:
				return nil
			case vy == 0:
				return 1.0
			}
			return cov * cov / (vx * vy)
		}
	case "mode":
		counts := map[string]int{}
		var best any
		bestKey := ""
		var order []string
		first := map[string]any{}
		for _, v := range vs {
			k := keyOf(v)
			if _, ok := first[k]; !ok {
				first[k] = v
				order = append(order, k)
			}
			counts[k]++
		}
		for _, k := range order {
			if best == nil || counts[k] > counts[bestKey] {
				best, bestKey = first[k], k
			}
		}
		return best
	case "arg_min", "arg_max":
		var best, at any
		for _, r := range rows {
			v, a := r[e.ArgIndex], r[e.Index]
			if v == nil || a == nil {
				continue
			}
			switch {
			case best == nil:
			case isNaN(v):
				continue
			case isNaN(best):
			default:
				c := refCompareVals(v, best)
				if (e.Fn == "arg_max" && c <= 0) || (e.Fn == "arg_min" && c >= 0) {
					continue
				}
			}
			best, at = v, a
		}
		return at
	case "bool_and", "bool_or":
		if len(vs) == 0 {
			return nil
		}
		and := e.Fn == "bool_and"
		for _, v := range vs {
			if v.(bool) != and {
				return !and
			}
		}
		return and
	case "count_if":
		if len(vs) == 0 {
			return nil
		}
		n := int64(0)
		for _, v := range vs {
			if v.(bool) {
				n++
			}
		}
		return n
	case "string_agg":
		if len(vs) == 0 {
			return nil
		}
		parts := make([]string, len(vs))
		for i, v := range vs {
			parts[i] = v.(string)
		}
		return strings.Join(parts, e.Arg)
	case "list", "array_agg":
		if len(rows) == 0 {
			return nil
		}
		items := make([]any, len(rows))
		for i, r := range rows {
			items[i] = r[e.Index]
		}
		return fmt.Sprint(items)
	case "approx_count_distinct":
		seen := map[string]bool{}
		for _, v := range vs {
			seen[keyOf(v)] = true
		}
		return int64(len(seen))
	case "approx_quantile":
		var fs []float64
		for _, v := range vs {
			if f := asFloat(v); !math.IsNaN(f) {
				fs = append(fs, f)
			}
		}
		if len(fs) == 0 {
			return nil
		}
		slices.Sort(fs)
		return fs
	}
	panic(e.Fn)
}

// moreCellOK compares an engine cell with the reference: approximations
// within their documented error, the rest as cellClose.
func moreCellOK(e planner.AggExpr, got, want any) bool {
	switch e.Fn {
	case "approx_count_distinct":
		// Small groups: the sparse sketch is exact.
		return got == want
	case "approx_quantile":
		if want == nil || got == nil {
			return want == nil && got == nil
		}
		fs, g := want.([]float64), got.(float64)
		if len(fs) <= 500 { // documented: exact
			return cellClose(g, refQuantile(fs, e.Q))
		}
		// Within the values of the neighbouring ranks.
		return g >= fs[0] && g <= fs[len(fs)-1] || math.IsInf(fs[0], 0) || math.IsInf(fs[len(fs)-1], 0)
	}
	return cellClose(got, want)
}

func TestMoreAggregatesDifferential(t *testing.T) {
	for iter := range uint64(400) {
		r := rand.New(rand.NewPCG(1313, iter))
		nrows := r.IntN(300)
		switch iter % 10 {
		case 0:
			nrows = r.IntN(3) // empty and single-row inputs
		case 1:
			nrows = 1000 + r.IntN(2000)
		}
		data := moreAggData(r, nrows)
		rows := make([][]any, nrows)
		for i := range rows {
			rows[i] = make([]any, len(data))
			for c := range data {
				rows[i][c] = data[c].vals[i]
			}
		}
		scan := &planner.Scan{Dataset: "t", Out: schemaOf(data)}
		s := scan.Out
		var keys []string
		for _, k := range []string{"k", "s", "b", "e"} {
			if r.IntN(3) == 0 {
				keys = append(keys, k)
			}
		}
		a := aggOf(scan, keys)
		fs := slices.Clone(a.Out.Fields())
		for j := range 1 + r.IntN(5) {
			e := randMoreAgg(r, s, j)
			a.Aggs = append(a.Aggs, e)
			fs = append(fs, arrow.Field{Name: e.Name, Type: e.Type, Nullable: true})
		}
		a.Out = arrow.NewSchema(fs, nil)
		// Reference: groups in first-seen order.
		want := refAgg(&refState{}, rows, &planner.Aggregate{GroupIdx: a.GroupIdx})
		groups := refGroupRows(rows, a.GroupIdx)
		for gi := range want {
			for _, e := range a.Aggs {
				want[gi] = append(want[gi], refMoreAgg(e, groups[gi]))
			}
		}
		alloc := newAlloc()
		src := aggDiffSource(r, alloc, data)
		bs := []int{1 << 16, 1 + r.IntN(50)}[r.IntN(2)]
		got, err := run(t, a, src, Options{Alloc: alloc, BatchSize: bs})
		src.release()
		alloc.AssertSize(t, 0)
		label := fmt.Sprintf("iter %d (batch size %d) plan:\n%s", iter, bs, planner.String(a))
		if err != nil {
			t.Fatalf("%s: %v", label, err)
		}
		if len(got) != len(want) {
			t.Fatalf("%s: %d groups, want %d\ngot\n%swant\n%s", label, len(got), len(want), fmtRows(got), fmtRows(want))
		}
		nk := len(keys)
		for gi := range got {
			for c := range got[gi] {
				var e planner.AggExpr
				if c >= nk {
					e = a.Aggs[c-nk]
				}
				if !moreCellOK(e, got[gi][c], want[gi][c]) {
					t.Fatalf("%s\ngroup %d column %d (%s): got %v, want %v\ngot\n%swant\n%s", label, gi, c, a.Out.Field(c).Name, got[gi][c], want[gi][c], fmtRows(got), fmtRows(want))
				}
			}
		}
	}
}

// refGroupRows splits rows into groups by the key columns, in first-seen
// order (one group, possibly empty, without keys), as refAgg does.
func refGroupRows(rows [][]any, keyIdx []int) [][][]any {
	if len(keyIdx) == 0 {
		return [][][]any{rows}
	}
	index := map[string]int{}
	var out [][][]any
	for _, r := range rows {
		key := make([]any, len(keyIdx))
		for i, k := range keyIdx {
			key[i] = r[k]
		}
		ks := keyOf(key...)
		g, ok := index[ks]
		if !ok {
			g = len(out)
			index[ks] = g
			out = append(out, nil)
		}
		out[g] = append(out[g], r)
	}
	return out
}

// approx_quantile's documented error: on continuous data of more values
// than one buffer, every quantile's rank is within 0.5% of the exact one.
func TestDigestRankError(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for _, n := range []int{501, 5000, 200_000} {
		for name, gen := range map[string]func(i int) float64{
			"normal": func(int) float64 { return r.NormFloat64() },
			"exp":    func(int) float64 { return r.ExpFloat64() },
			"sorted": func(i int) float64 { return float64(i) },
		} {
			vs := make([]float64, n)
			d, sc := &mdigest{min: math.Inf(1), max: math.Inf(-1)}, &digestScratch{}
			for i := range vs {
				vs[i] = gen(i)
				d.add(vs[i], sc)
			}
			slices.Sort(vs)
			for _, q := range []float64{0, 0.001, 0.01, 0.1, 0.25, 0.5, 0.75, 0.9, 0.99, 0.999, 1} {
				est := d.quantile(q, sc)
				lo, _ := slices.BinarySearch(vs, est) // ranks of values < est
				hi := lo
				for hi < n && vs[hi] <= est {
					hi++
				}
				pos := q * float64(n-1)
				if pos < float64(lo)-1-0.005*float64(n) || pos > float64(hi)+0.005*float64(n) {
					t.Errorf("%s n=%d q=%v: estimate %v has ranks [%d, %d], want about %.1f", name, n, q, est, lo, hi, pos)
				}
			}
		}
	}
}

// approx_count_distinct's documented error (relative standard error about
// 0.8%): estimates of 10^3..3*10^5 distinct values, as integers and as
// strings, stay within 3 standard errors.
func TestHLLError(t *testing.T) {
	for _, n := range []int{1000, 50_000, 300_000} {
		for _, dt := range []arrow.DataType{tInt64, tStr} {
			s := newHLLState(dt, &acct{b: &budget{}})
			s.grow(1)
			vals := make([]any, 0, 1<<16)
			for lo := 0; lo < n; lo += 1 << 16 {
				vals = vals[:0]
				for i := lo; i < min(n, lo+1<<16); i++ {
					if dt == tStr {
						vals = append(vals, fmt.Sprintf("v%d", i))
					} else {
						vals = append(vals, int64(i)*7919)
					}
				}
				mem := newAlloc()
				b := makeBatch(mem, []tcol{{name: "v", typ: dt, vals: vals}})
				if err := s.update(b.Column(0), make([]int32, len(vals))); err != nil {
					t.Fatal(err)
				}
				b.Release()
				mem.AssertSize(t, 0)
			}
			mem := newAlloc()
			out := s.build(mem, 0, 1)
			est := cell(out, 0).(int64)
			out.Release()
			mem.AssertSize(t, 0)
			if rel := math.Abs(float64(est)-float64(n)) / float64(n); rel > 3*0.0081 {
				t.Errorf("%s n=%d: estimate %d (%.2f%% off)", dt, n, est, 100*rel)
			}
		}
	}
}
