package planner

import (
	"cmp"
	"math"
	"slices"

	"github.com/apache/arrow-go/v18/arrow"
)

// OrColumnPreds gives an expression filter's OR the plain predicates it
// implies on single columns: when every branch of the OR has a condition
// on column c that is a comparison with constants, the OR implies the OR
// of those conditions, a predicate group on c (one IN list when they are
// all equalities). TPC-H Q19's per-table ORs (rule derive_join_ors)
//
//	p_brand = 'Brand#12' AND p_container IN (...) AND p_size BETWEEN 1 AND 5 OR p_brand = 'Brand#23' AND ...
//	implies p_brand IN ('Brand#12', 'Brand#23', 'Brand#34'), p_container IN (...), p_size in [1, 5] or [1, 10] or ...
//
// Plain predicates run on the fast filter path (and in scans and zone
// maps) before the expression, which then sees only the rows they keep.
// When the predicate group says exactly what the OR says (each branch one
// condition on c, or a >= and a <= on it: l_quantity >= 1 AND l_quantity
// <= 11 OR ...) the OR is replaced; otherwise it stays. Conditions convert
// as in rule expr_filter_preds (integer, date and timestamp columns), and
// also = and IN of string constants on string columns, where the
// predicate and the expression agree on every value.
func OrColumnPreds(n Node, _ OptimizeOptions) (Node, error) {
	out, _, err := Transform(n, func(n Node) (Node, bool, error) {
		x, exprs, ok := matchExprFilter(n)
		if !ok {
			return n, false, nil
		}
		s := x.Schema()
		var c conds
		have := map[string]bool{}
		if f, ok := x.(*Filter); ok { // implied earlier (the rule runs on its own output unchanged)
			for _, p := range f.Preds {
				have[p.String()] = true
			}
		}
		changed := false
		for _, e := range exprs {
			preds, exact := orColumnPreds(e, s)
			for _, p := range preds {
				if !have[p.String()] {
					have[p.String()] = true
					c.preds = append(c.preds, p)
					changed = true
				}
			}
			if exact {
				changed = true
			} else {
				c.exprs = append(c.exprs, e)
			}
		}
		if !changed {
			return n, false, nil
		}
		return applyConds(x, c), true, nil
	})
	return out, err
}

// orColumnPreds returns the single-column predicates the OR e implies (see
// OrColumnPreds) and whether one of them is exactly e.
func orColumnPreds(e Expr, s *arrow.Schema) ([]Predicate, bool) {
	branches := disjuncts(e)
	if len(branches) < 2 {
		return nil, false
	}
	// per branch: its convertible conditions by column, and whether the
	// branch has any other condition
	type branch struct {
		byCol map[string][]Predicate
		other bool
	}
	bs := make([]branch, len(branches))
	var cols []string
	for i, b := range branches {
		bs[i].byCol = map[string][]Predicate{}
		for _, c := range conjuncts(b) {
			p, ok := columnPred(c, s)
			if !ok {
				bs[i].other = true
				continue
			}
			if i == 0 && !slices.Contains(cols, p.Col) {
				cols = append(cols, p.Col)
			}
			bs[i].byCol[p.Col] = append(bs[i].byCol[p.Col], p)
		}
	}
	var out []Predicate
	exact := false
	for _, col := range cols {
		var members []Predicate
		one := true // every branch is exactly its condition on col
		for _, b := range bs {
			ps := b.byCol[col]
			if len(ps) == 0 {
				members = nil
				break
			}
			p, whole := branchPred(ps)
			members = append(members, p)
			one = one && whole && !b.other && len(b.byCol) == 1
		}
		if members == nil {
			continue
		}
		out = append(out, anyOf(col, members))
		exact = exact || one
	}
	return out, exact
}

// branchPred is one predicate implied by the conditions ps of a branch on
// one column: a >= and a <= together as a range, else the first; whole
// reports that it is exactly ps.
func branchPred(ps []Predicate) (Predicate, bool) {
	if len(ps) == 2 {
		lo, hi := ps[0], ps[1]
		if lo.Op == OpLte && hi.Op == OpGte {
			lo, hi = hi, lo
		}
		if lo.Op == OpGte && hi.Op == OpLte {
			return Predicate{Col: lo.Col, Index: -1, Op: OpRange, Min: lo.Value, Max: hi.Value}, true
		}
	}
	return ps[0], len(ps) == 1
}

// anyOf is the OR of members (predicates on col): one IN list (or
// equality) when they are all equalities and IN lists, else an OR group.
func anyOf(col string, members []Predicate) Predicate {
	var vals []Literal
	seen := map[any]bool{}
	for _, m := range members {
		switch m.Op {
		case OpEq:
			if !seen[m.Value.Value] {
				seen[m.Value.Value] = true
				vals = append(vals, *m.Value)
			}
		case OpIn:
			for _, v := range m.Values {
				if !seen[v.Value] {
					seen[v.Value] = true
					vals = append(vals, v)
				}
			}
		default:
			members = mergeRanges(members)
			if len(members) == 1 {
				return members[0]
			}
			return Predicate{Col: "", Index: -1, Op: OpAny, Any: clonePreds(members)}
		}
	}
	if len(vals) == 1 {
		return Predicate{Col: col, Index: -1, Op: OpEq, Value: &vals[0]}
	}
	return Predicate{Col: col, Index: -1, Op: OpIn, Values: vals}
}

// columnPred is the predicate equal to the condition e on one column:
// exprPred's comparisons, and = and IN of string constants on a string
// column.
func columnPred(e Expr, s *arrow.Schema) (Predicate, bool) {
	if p, ok := exprPred(e, s); ok {
		return p, true
	}
	c, ok := e.(*Call)
	if !ok || len(c.Args) < 2 || c.Fn != "=" && c.Fn != "in" {
		return Predicate{}, false
	}
	ref, ok := c.Args[0].(*ColRef)
	if !ok && c.Fn == "=" {
		ref, ok = c.Args[1].(*ColRef)
		c = &Call{Fn: "=", Args: []Expr{c.Args[1], c.Args[0]}}
	}
	if !ok || ref.Typ == nil || !isString(ref.Typ) {
		return Predicate{}, false
	}
	idx := s.FieldIndices(ref.Name)
	if len(idx) != 1 || !isString(s.Field(idx[0]).Type) { // a dictionary column may bind as its strings
		return Predicate{}, false
	}
	typ := s.Field(idx[0]).Type
	var vals []Literal
	for _, a := range c.Args[1:] {
		k, ok := a.(*Const)
		if !ok || k.Null || k.Interval || k.Typ == nil || k.Typ.ID() != arrow.STRING {
			return Predicate{}, false
		}
		vals = append(vals, Literal{Type: typ, Value: k.Str})
	}
	if c.Fn == "=" {
		return Predicate{Col: ref.Name, Index: -1, Op: OpEq, Value: &vals[0]}, true
	}
	return Predicate{Col: ref.Name, Index: -1, Op: OpIn, Values: vals}, true
}

// mergeRanges merges integer ranges (OpRange with both bounds) that
// overlap or touch ([1, 11], [10, 20], [20, 30] is [1, 30]); members of
// other kinds stay as they are.
func mergeRanges(members []Predicate) []Predicate {
	var rs, out []Predicate
	for _, m := range members {
		if _, ok := rangeInts(m); ok {
			rs = append(rs, m)
		} else {
			out = append(out, m)
		}
	}
	if len(rs) < 2 {
		return members
	}
	slices.SortStableFunc(rs, func(a, b Predicate) int {
		x, _ := rangeInts(a)
		y, _ := rangeInts(b)
		return cmp.Compare(x[0], y[0])
	})
	cur := rs[0]
	for _, r := range rs[1:] {
		c, _ := rangeInts(cur)
		b, _ := rangeInts(r)
		if b[0] > c[1]+1 { // c[1] < MaxInt64 (rangeInts)
			out = append(out, cur)
			cur = r
			continue
		}
		if b[1] > c[1] {
			hi := *r.Max
			cur.Max = &hi
		}
	}
	return append(out, cur)
}

// rangeInts is the [min, max] of an integer range predicate.
func rangeInts(p Predicate) ([2]int64, bool) {
	if p.Op != OpRange || p.Min == nil || p.Max == nil {
		return [2]int64{}, false
	}
	lo, ok1 := p.Min.Value.(int64)
	hi, ok2 := p.Max.Value.(int64)
	return [2]int64{lo, hi}, ok1 && ok2 && hi < math.MaxInt64
}
