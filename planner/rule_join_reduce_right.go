package planner

import (
	"slices"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
)

// JoinReduceRight lets a join of a left-deep chain that removes rows
// (a semi join, or an inner join whose right input is filtered) act on the
// right input of the earlier inner join that provides its keys, before that
// input is joined, when every one of its keys it uses comes from there:
//
//   - a semi join moves there (no copy): TPC-H Q18's IN subquery on
//     o_orderkey keeps the 58 orders it names before they are joined to
//     customer, instead of after a join of all 1.5M orders;
//
//   - an inner join with a filtered right input stays where it is (its
//     columns are needed above) and a semi join with a copy of that
//     input, on the keys from there, is added: TPC-H Q11's
//     partsupp ⋈ supplier ⋈ nation[GERMANY] joins partsupp with the 400
//     German suppliers rather than all 10,000.
//
//     Join(nation n_name = 'GERMANY' ON supplier.s_nationkey) ← Join(supplier ON ps_suppkey) ← partsupp
//     => Join(nation ...) ← Join(supplier ON ps_suppkey, right: Join(semi, supplier, nation n_name = 'GERMANY')) ← partsupp
//
// Why the result is the same: the rows the semi join removes from the
// earlier join's right input have a key value no row of the later join's
// right input has; they reach the later join unchanged (the earlier join is
// an inner join, and the joins between them keep or drop rows without
// changing the key columns) and would be dropped there. The later joins are
// processed first, so a reduction cascades down the chain (Q5's region
// filters nation, whose reduced copy filters supplier). A copy runs twice,
// so it is made only when it reads at most a tenth of the rows the input it
// reduces is estimated to have (or reduceCopyRows), that input is not a
// fact table (reduceMaxRows) and it computes no aggregate; joins with a
// residual condition, and right and full joins (which end a chain), are
// left alone.
func JoinReduceRight(n Node, _ OptimizeOptions) (Node, error) {
	out, _, err := Transform(n, func(n Node) (Node, bool, error) {
		top, ok := n.(*Join)
		if !ok || !chainJoin(top) {
			return n, false, nil
		}
		chain, base := joinChain(top)
		rights := make([]Node, len(chain))
		for i, j := range chain {
			rights[i] = j.Right
		}
		keep := make([]bool, len(chain))
		changed := false
		for k := len(chain) - 1; k >= 0; k-- {
			keep[k] = true
			j := chain[k]
			if j.Residual != nil || j.NullAware || len(j.LeftKeys) == 0 {
				continue
			}
			semi := j.Type == JoinSemi
			if !semi && (j.Type != JoinInner || !reducesRows(rights[k])) {
				continue
			}
			i, left, right := keysFromRight(chain[:k], rights, j)
			if i < 0 || semi && len(left) < len(j.LeftKeys) {
				continue
			}
			var r Node
			if semi {
				r = &Join{Left: rights[i], Right: rights[k], Type: JoinSemi, Dataset: j.Dataset, Alias: j.Alias,
					LeftKeys: left, RightKeys: right, RightCols: []string{}}
				keep[k] = false
			} else {
				if r = reducedCopy(rights[i], rights[k], left, right); r == nil {
					continue
				}
			}
			rights[i], changed = r, true
		}
		if !changed {
			return n, false, nil
		}
		node := base
		for i, j := range chain {
			if !keep[i] {
				continue
			}
			var err error
			if node, err = j.WithChildren(node, rights[i]); err != nil {
				return nil, false, err
			}
		}
		return node, true, nil
	})
	return out, err
}

// reduceRightAlias names the semi joins with a copy the rule adds.
const reduceRightAlias = "__rj"

// reduceCopyRows is the rows a copy may read whatever the size of the
// input it reduces (a region or nation table).
const reduceCopyRows = 1000

// reduceMaxRows is the largest input a copy reduces: over a fact table a
// semi join gathers every row it keeps, as the join above does anyway, and
// keeps a share like a dimension's filter (TPC-H Q5's lines of one region's
// suppliers: 1.2M of 6M) at about the cost it saves.
const reduceMaxRows = 1 << 20

// reducesRows reports whether n keeps fewer rows than it is drawn from.
func reducesRows(n Node) bool {
	est, base := estimateRows(n)
	return est < base
}

// keysFromRight finds the inner join of chain (below j) whose right input
// (rights: the inputs as rewritten so far) provides j's left keys: its
// index, and the pairs (that input's column, j's right key) for the keys
// from there (-1 when none come from an inner join's right input, or they
// come from several).
func keysFromRight(chain []*Join, rights []Node, j *Join) (int, []string, []string) {
	at := -1
	var left, right []string
	for n, key := range j.LeftKeys {
		for i, e := range chain {
			col, ok := strings.CutPrefix(key, e.Alias+".")
			if !ok || e.Type != JoinInner || !slices.Contains(e.RightCols, col) || len(rights[i].Schema().FieldIndices(col)) != 1 {
				continue
			}
			if at >= 0 && at != i {
				return -1, nil, nil
			}
			at = i
			left, right = append(left, col), append(right, j.RightKeys[n])
		}
	}
	return at, left, right
}

// reducedCopy is in semi joined, on its columns left, to a copy of f's
// columns right; nil when the copy would cost too much or in already has
// that semi join.
func reducedCopy(in, f Node, left, right []string) Node {
	if s, ok := in.(*Join); ok && s.Type == JoinSemi && s.Alias == reduceRightAlias && slices.Equal(s.LeftKeys, left) {
		return nil // by an earlier run of the rule
	}
	est := EstimateRows(in)
	if aggregates(f) || scannedRows(f) > max(est/10, reduceCopyRows) || est > reduceMaxRows {
		return nil
	}
	c, err := clone(f)
	if err != nil {
		return nil
	}
	fs := c.Schema()
	var fields []arrow.Field
	for _, k := range right {
		idx := fs.FieldIndices(k)
		if len(idx) != 1 {
			return nil
		}
		fields = append(fields, fs.Field(idx[0]))
	}
	p := reorderedAs(c, arrow.NewSchema(fields, nil))
	if p == nil {
		return nil
	}
	dataset := reduceRightAlias
	if s := ScanOf(c); s != nil {
		dataset = s.Dataset
	}
	return &Join{Left: in, Right: p, Type: JoinSemi, Dataset: dataset, Alias: reduceRightAlias,
		LeftKeys: left, RightKeys: right, RightCols: []string{}}
}
