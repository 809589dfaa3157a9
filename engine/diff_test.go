package engine

import (
	"cmp"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/quarrydb/quarry/planner"
)

// A row-at-a-time reference evaluator over [][]any rows (values in the cell
// convention), used to check the engine on random plans and data.

var diffTypes = []arrow.DataType{
	tInt64, tInt32, tInt8, tUint8, tUint64, tF64, tF32, tStr, tLStr, tBool, tDate,
	&arrow.TimestampType{Unit: arrow.Microsecond},
}

func randValue(r *rand.Rand, dt arrow.DataType) any {
	if r.IntN(7) == 0 {
		return nil
	}
	switch dt.ID() {
	case arrow.INT64:
		return int64(r.IntN(21) - 10)
	case arrow.INT32, arrow.INT8:
		return int64(r.IntN(11) - 5)
	case arrow.UINT8:
		return int64(r.IntN(8))
	case arrow.UINT64:
		return uint64(r.IntN(8))
	case arrow.FLOAT64:
		return []float64{-1.5, 0, math.Copysign(0, -1), 2.25, 3, math.NaN(), 7, -8}[r.IntN(8)]
	case arrow.FLOAT32:
		return []float64{-1.5, 0, 0.25, 3, math.NaN(), 100}[r.IntN(6)]
	case arrow.STRING, arrow.LARGE_STRING:
		return []string{"", "a", "ab", "b", "ba", "abc", "B", "bab"}[r.IntN(8)]
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
		return v
	}
}

// ---- reference semantics ----

// refCmp compares a value with a literal; unordered is set for NaN.
func refCmp(x, l any) (c int, unordered bool) {
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

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
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

func refPred(p planner.Predicate, row []any) bool {
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
	switch p.Op {
	case "in":
		for _, l := range p.Values {
			if refOp("eq", x, l.Value) {
				return true
			}
		}
		return false
	case "range":
		if p.Min != nil && !refOp("gte", x, p.Min.Value) {
			return false
		}
		return p.Max == nil || refOp("lte", x, p.Max.Value)
	case "contains":
		return strings.Contains(x.(string), p.Value.Value.(string))
	}
	return refOp(p.Op, x, p.Value.Value)
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

func refDistinct(rows [][]any) [][]any {
	seen := map[string]bool{}
	var out [][]any
	for _, r := range rows {
		k := keyOf(r...)
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

// refLess orders two non-null, non-NaN values.
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
	slices.SortStableFunc(out, func(a, b []any) int {
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
	})
	return out
}

func refLimit(rows [][]any, offset, count int64) [][]any {
	lo := min(offset, int64(len(rows)))
	hi := int64(len(rows))
	if count >= 0 {
		hi = min(hi, lo+count)
	}
	return rows[lo:hi]
}

func refAgg(rows [][]any, a *planner.Aggregate, inTypes []arrow.DataType) [][]any {
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
			row = append(row, refAggOne(e, g.rows, inTypes))
		}
		out = append(out, row)
	}
	return out
}

func refAggOne(e planner.AggExpr, rows [][]any, inTypes []arrow.DataType) any {
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
				si += x
				sf += float64(x)
			case uint64:
				si += int64(x)
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

// ---- random plans ----

func randPred(r *rand.Rand, schema *arrow.Schema) planner.Predicate {
	i := r.IntN(schema.NumFields())
	f := schema.Field(i)
	ops := []string{"eq", "neq", "lt", "lte", "gt", "gte", "in", "range", "is_null", "is_not_null"}
	if isStringType(f.Type.ID()) {
		ops = append(ops, "contains", "contains")
	}
	op := ops[r.IntN(len(ops))]
	p := planner.Predicate{Col: f.Name, Index: i, Op: op}
	l := func() *planner.Literal { return lit(f.Type, randLiteral(r, f.Type)) }
	switch op {
	case "is_null", "is_not_null":
	case "in":
		for range r.IntN(12) {
			p.Values = append(p.Values, *l())
		}
	case "range":
		if r.IntN(4) != 0 {
			p.Min = l()
		}
		if r.IntN(4) != 0 {
			p.Max = l()
		}
	default:
		p.Value = l()
	}
	return p
}

func numericOrComparable(dt arrow.DataType, fn string) bool {
	switch fn {
	case "sum", "avg":
		return arrow.IsInteger(dt.ID()) || arrow.IsFloating(dt.ID())
	}
	return true
}

type randCase struct {
	plan planner.Node
	want [][]any
}

func randPlan(r *rand.Rand, data []tcol) randCase {
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
	schema := node.Schema()
	types := func(s *arrow.Schema) []arrow.DataType {
		var out []arrow.DataType
		for _, f := range s.Fields() {
			out = append(out, f.Type)
		}
		return out
	}
	switch r.IntN(4) {
	case 1: // aggregate
		var keys []string
		for _, i := range r.Perm(schema.NumFields())[:r.IntN(min(3, schema.NumFields())+1)] {
			keys = append(keys, schema.Field(i).Name)
		}
		var aggs []string
		for range 1 + r.IntN(4) {
			fn := []string{"count", "sum", "avg", "min", "max"}[r.IntN(5)]
			f := schema.Field(r.IntN(schema.NumFields()))
			if fn == "count" && r.IntN(2) == 0 {
				aggs = append(aggs, "count:*")
				continue
			}
			if !numericOrComparable(f.Type, fn) {
				fn = "min"
			}
			aggs = append(aggs, fn+":"+f.Name)
		}
		a := aggOf(node, keys, aggs...)
		rows = refAgg(rows, a, types(schema))
		node = a
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
			rows = refDistinct(rows)
		}
	case 3:
		node = &planner.Distinct{Input: node}
		rows = refDistinct(rows)
	}
	if r.IntN(2) == 0 {
		s := &planner.Sort{Input: node}
		out := node.Schema()
		for _, i := range r.Perm(out.NumFields())[:1+r.IntN(min(3, out.NumFields()))] {
			s.Keys = append(s.Keys, planner.SortKey{Col: out.Field(i).Name, Index: i, Desc: r.IntN(2) == 0})
		}
		node = s
		rows = refSort(rows, s.Keys)
	}
	if r.IntN(2) == 0 {
		off, cnt := int64(r.IntN(10)), int64(r.IntN(25)-3)
		if r.IntN(3) == 0 {
			off = 0
		}
		node = limitOf(node, off, cnt)
		rows = refLimit(rows, off, cnt)
	}
	if rows == nil {
		rows = [][]any{}
	}
	return randCase{plan: node, want: rows}
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

func TestDifferential(t *testing.T) {
	r := rand.New(rand.NewPCG(diffSeed, 7))
	nonEmpty := 0
	for iter := range int(diffIters) {
		data := randData(r)
		rc := randPlan(r, data)
		bs := 1 + r.IntN(8)
		alloc := newAlloc()
		src := newSource(alloc, data)
		got, err := run(t, rc.plan, src, Options{Alloc: alloc, BatchSize: bs})
		src.release()
		alloc.AssertSize(t, 0)
		if err != nil {
			t.Fatalf("iter %d: %v\nplan:\n%s", iter, err, planner.String(rc.plan))
		}
		if got == nil {
			got = [][]any{}
		}
		if !rowsEq(got, rc.want) {
			t.Fatalf("iter %d (batch size %d): plan:\n%sgot\n%swant\n%s", iter, bs, planner.String(rc.plan), fmtRows(got), fmtRows(rc.want))
		}
		if len(got) > 0 {
			nonEmpty++
		}
	}
	t.Logf("%d of %d random plans returned rows", nonEmpty, diffIters)
}

var diffSeed, diffIters uint64 = 42, 1000
