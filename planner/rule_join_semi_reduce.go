package planner

import (
	"slices"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
)

// SemiJoinReduce restricts an aggregate that a join reads on its group
// keys to the groups the join's other side can match: the aggregate's
// input is semi joined, on those keys, to a copy of the smallest filtered
// part of the other side that provides the key values (sideways
// information passing, "magic sets"). TPC-H Q17's correlated average,
// decorrelated into an aggregate of all of lineitem grouped by l_partkey,
// then aggregates only the lines of the parts the query keeps:
//
//	Join(left, Join(lineitem, Filter(p_brand = 'Brand#23') ← part ON l_partkey = p_partkey),
//	     Aggregate(avg(l_quantity) BY l_partkey) ← lineitem ON p_partkey = __s0.__k0)
//	=> Join(left, ..., Aggregate(avg(l_quantity) BY l_partkey)
//	     ← Join(semi, lineitem, Project(p_partkey) ← Filter(p_brand = 'Brand#23') ← part ON l_partkey = p_partkey))
//
// Why the result is the same: a group of the aggregate is kept or dropped
// whole (the semi join tests its key), so every kept group has the same
// value; and the join only ever matches groups whose key equals a key
// value of its left rows, which all come from the copied part (a column's
// values pass unchanged through filters, projections and joins, or become
// null, which matches nothing). So it holds for inner, left, semi and
// anti joins (not for right and full joins, which output unmatched
// groups, nor a null-aware anti join, which reads the right side's
// nulls).
//
// Which part of the left side is copied: the nodes a left key's values
// pass through, down to where they are read; the one with the smallest
// EstimateRows that is filtered (below its base: an unfiltered copy
// restricts nothing), smaller than the aggregate's input, reading no more
// rows from its scans than the aggregate's input does and computing no
// aggregate of its own (it runs twice); of nodes estimated alike, the
// lowest (the fewest nodes copied). Rule join_filtering_first then
// moves the semi join down the aggregate input's join chain to the join
// that provides the key.
func SemiJoinReduce(n Node, _ OptimizeOptions) (Node, error) {
	out, _, err := Transform(n, func(n Node) (Node, bool, error) {
		j, ok := n.(*Join)
		if !ok || len(j.LeftKeys) == 0 || j.NullAware {
			return n, false, nil
		}
		switch j.Type {
		case JoinInner, JoinLeft, JoinSemi, JoinAnti:
		default:
			return n, false, nil
		}
		r, ok := reduceAggregate(j.Right, j.RightKeys, func(a *Aggregate, in []string) (Node, bool) {
			return semiReduced(j, a, in)
		})
		if !ok {
			return n, false, nil
		}
		nj, err := j.WithChildren(j.Left, r)
		return nj, err == nil, err
	})
	return out, err
}

// reduceSemiAlias names the semi joins the rule adds.
const reduceSemiAlias = "__sj"

// reduceAggregate finds the Aggregate below n that outputs the columns
// cols of n as its group keys (through projections, filters and computed
// copies), and rebuilds n with fn's replacement of it; in are the
// aggregate's input columns of cols ("" where a column is not a plain
// group key).
func reduceAggregate(n Node, cols []string, fn func(a *Aggregate, in []string) (Node, bool)) (Node, bool) {
	if a, ok := n.(*Aggregate); ok {
		if len(a.GroupBy) == 0 {
			return nil, false
		}
		keys := make([]string, len(cols))
		for i, c := range cols {
			if k := a.Out.FieldIndices(c); c != "" && len(k) == 1 && k[0] < len(a.GroupBy) {
				keys[i] = a.GroupBy[k[0]]
			}
		}
		return fn(a, keys)
	}
	in, inCols := rowwiseInput(n, cols)
	if in == nil {
		return nil, false
	}
	r, ok := reduceAggregate(in, inCols, fn)
	if !ok {
		return nil, false
	}
	out, err := n.WithChildren(r)
	return out, err == nil
}

// rowwiseInput is the input of n when n is a filter, a projection or a
// computed-columns node, and the names there of n's columns cols ("" for
// a column computed from others, and where cols has "").
func rowwiseInput(n Node, cols []string) (Node, []string) {
	switch x := n.(type) {
	case *Filter:
		return x.Input, cols
	case *Project:
		in := make([]string, len(cols))
		for i, c := range cols {
			if k := x.Out.FieldIndices(c); c != "" && len(k) == 1 {
				in[i] = x.Columns[k[0]]
			}
		}
		return x.Input, in
	case *Compute:
		in := make([]string, len(cols))
		for i, c := range cols {
			in[i] = computedSource(x, c)
		}
		return x.Input, in
	}
	return nil, nil
}

// computedSource is the input column whose values column c of x has: c
// itself when it passes through, the column a computed copy (c AS d)
// reads, or "" when c is computed otherwise.
func computedSource(x *Compute, c string) string {
	for _, e := range x.Exprs {
		if e.Name == c {
			if r, ok := e.Expr.(*ColRef); ok {
				return r.Name
			}
			return ""
		}
	}
	if c != "" && len(x.Input.Schema().FieldIndices(c)) == 1 {
		return c
	}
	return ""
}

// valueOrigin is a node whose column col holds every value (but null) of
// the key column being traced.
type valueOrigin struct {
	node Node
	col  string
}

// valueOrigins lists, from n down, the nodes column col of n takes its
// values from.
func valueOrigins(n Node, col string) []valueOrigin {
	var out []valueOrigin
	for n != nil && col != "" {
		if len(n.Schema().FieldIndices(col)) != 1 {
			break
		}
		out = append(out, valueOrigin{n, col})
		if in, cols := rowwiseInput(n, []string{col}); in != nil {
			n, col = in, cols[0]
			continue
		}
		switch x := n.(type) {
		case *Join:
			if len(x.Left.Schema().FieldIndices(col)) == 1 {
				n = x.Left
			} else if r, ok := strings.CutPrefix(col, x.Alias+"."); ok && x.Type.KeepsRight() && slices.Contains(x.RightCols, r) {
				n, col = x.Right, r
			} else {
				n = nil
			}
		case *Sort, *Distinct, *Deduplicate:
			n = n.Children()[0]
		default:
			n = nil
		}
	}
	return out
}

// semiReduced is a's replacement for rule SemiJoinReduce under join j
// (in: a's input columns of j's right keys), or false when no part of j's
// left side restricts it usefully.
func semiReduced(j *Join, a *Aggregate, in []string) (Node, bool) {
	reduced := false
	Inspect(a.Input, func(n Node, _ int) bool {
		if s, ok := n.(*Join); ok && s.Type == JoinSemi && s.Alias == reduceSemiAlias {
			reduced = true
		}
		return n != nil && !reduced
	})
	if reduced {
		return nil, false // by an earlier run of the rule
	}
	inEst, _ := estimateRows(a.Input)
	inScan := scannedRows(a.Input)
	paths := make([][]valueOrigin, len(j.LeftKeys))
	for i, k := range j.LeftKeys {
		if in[i] != "" {
			paths[i] = valueOrigins(j.Left, k)
		}
	}
	var best valueOrigin
	var bestKeys []int
	bestEst := inEst
	for i := range paths {
		for _, o := range paths[i] {
			est, base := estimateRows(o.node)
			if est >= base || est > bestEst || est == inEst || scannedRows(o.node) > inScan || aggregates(o.node) {
				continue
			}
			var keys []int
			for k := range paths {
				if at := slices.IndexFunc(paths[k], func(p valueOrigin) bool { return p.node == o.node }); at >= 0 &&
					!slices.ContainsFunc(keys, func(x int) bool { return in[x] == in[k] }) {
					keys = append(keys, k)
				}
			}
			best, bestKeys, bestEst = o, keys, est
		}
	}
	if best.node == nil {
		return nil, false
	}
	ins, outs := a.Input.Schema(), best.node.Schema()
	var leftKeys, rightKeys []string
	var fields []arrow.Field
	for _, k := range bestKeys {
		col := originCol(paths[k], best.node)
		li, ri := ins.FieldIndices(in[k]), outs.FieldIndices(col)
		if len(li) != 1 || len(ri) != 1 || !JoinComparable(ins.Field(li[0]).Type, outs.Field(ri[0]).Type) ||
			slices.Contains(rightKeys, col) {
			continue
		}
		leftKeys, rightKeys = append(leftKeys, in[k]), append(rightKeys, col)
		fields = append(fields, outs.Field(ri[0]))
	}
	if len(leftKeys) == 0 {
		return nil, false
	}
	right, err := clone(best.node)
	if err != nil {
		return nil, false
	}
	proj := reorderedAs(right, arrow.NewSchema(fields, nil))
	if proj == nil {
		return nil, false
	}
	alias := reduceSemiAlias
	dataset := alias
	if s := ScanOf(right); s != nil {
		dataset = s.Dataset
	}
	input := aboveJoins(a.Input, leftKeys, func(n Node, keys []string) Node {
		return &Join{Left: n, Right: proj, Type: JoinSemi, Dataset: dataset, Alias: alias,
			LeftKeys: keys, RightKeys: rightKeys, RightCols: []string{}}
	})
	out, err := a.WithChildren(input)
	return out, err == nil
}

// aboveJoins is n with wrap applied to the join chain below n's
// projections, computed columns and filters, when there is one and the
// columns cols of n pass down to it unchanged (wrap gets their names
// there), else to n itself: rule join_filtering_first moves a semi join
// placed on a chain down to the join that provides its keys.
func aboveJoins(n Node, cols []string, wrap func(n Node, cols []string) Node) Node {
	in, inCols := rowwiseInput(n, cols)
	if in == nil || slices.Contains(inCols, "") || !chainBelow(in) {
		return wrap(n, cols)
	}
	out, err := n.WithChildren(aboveJoins(in, inCols, wrap))
	if err != nil {
		return wrap(n, cols)
	}
	return out
}

// chainBelow reports whether a Join is reached from n through filters,
// projections and computed columns.
func chainBelow(n Node) bool {
	for n != nil {
		if _, ok := n.(*Join); ok {
			return true
		}
		n, _ = rowwiseInput(n, nil)
	}
	return false
}

// originCol is the column of node in path.
func originCol(path []valueOrigin, node Node) string {
	for _, o := range path {
		if o.node == node {
			return o.col
		}
	}
	return ""
}

// scannedRows is the rows n's scans read (their catalog row counts).
func scannedRows(n Node) float64 {
	var rows float64
	Inspect(n, func(n Node, _ int) bool {
		if s, ok := n.(*Scan); ok {
			rows += float64(s.RowCount)
		}
		return n != nil
	})
	return rows
}

// aggregates reports whether n computes an aggregate.
func aggregates(n Node) bool {
	found := false
	Inspect(n, func(n Node, _ int) bool {
		if _, ok := n.(*Aggregate); ok {
			found = true
		}
		return n != nil && !found
	})
	return found
}
