package planner

import (
	"slices"
	"strings"
)

// JoinCrossOrder defers a cross join that the next inner join connects:
//
//	Join(inner, Join(cross, A, B), C) ON a = c.x AND b.y = c.z
//	=> Project(A, B, C columns in their order) Join(inner, Join(inner, A, C) ON a = c.x, B) ON c.z = b.y
//
// A comma list (FROM part, supplier, lineitem WHERE ...) joins in the
// written order, so two tables that only meet through a later one become a
// cross product of both (TPC-H Q8, Q9: part × supplier, then lineitem on
// both keys). Joining C first keeps every intermediate result no larger
// than the inner joins make it. The Project on top restores the original
// column order (Optimize's later rules prune it). It applies only when both
// joins have no residual, the outer join has keys on both A and B, and C
// keeps nothing named like a column of A or B.
func JoinCrossOrder(n Node, _ OptimizeOptions) (Node, error) {
	out, _, err := Transform(n, func(n Node) (Node, bool, error) {
		j2, ok := n.(*Join)
		if !ok || j2.Type != JoinInner || j2.Residual != nil {
			return n, false, nil
		}
		j1, ok := j2.Left.(*Join)
		if !ok || j1.Type != JoinCross || j1.Residual != nil {
			return n, false, nil
		}
		aSchema := j1.Left.Schema()
		bPrefix := j1.Alias + "."
		var aL, aR, bL, bR []string
		for i, k := range j2.LeftKeys {
			if b, ok := strings.CutPrefix(k, bPrefix); ok && slices.Contains(j1.RightCols, b) && len(aSchema.FieldIndices(k)) == 0 {
				bL, bR = append(bL, JoinedName(j2.Alias, j2.RightKeys[i])), append(bR, b)
			} else if len(aSchema.FieldIndices(k)) > 0 {
				aL, aR = append(aL, k), append(aR, j2.RightKeys[i])
			} else {
				return n, false, nil
			}
		}
		if len(aL) == 0 || len(bL) == 0 {
			return n, false, nil
		}
		for _, c := range j2.RightCols {
			if len(j1.Schema().FieldIndices(JoinedName(j2.Alias, c))) > 0 {
				return n, false, nil
			}
		}
		inner := &Join{Left: j1.Left, Right: j2.Right, Type: JoinInner, Dataset: j2.Dataset, Alias: j2.Alias,
			LeftKeys: aL, RightKeys: aR, RightCols: slices.Clone(j2.RightCols)}
		outer := &Join{Left: inner, Right: j1.Right, Type: JoinInner, Dataset: j1.Dataset, Alias: j1.Alias,
			LeftKeys: bL, RightKeys: bR, RightCols: slices.Clone(j1.RightCols)}
		if p := reorderedAs(outer, j2.Schema()); p != nil {
			return p, true, nil
		}
		return n, false, nil
	})
	return out, err
}
