package planner

import (
	"slices"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
)

// JoinFilteringFirst reorders a left-deep chain of joins so that the joins
// that remove rows run as early as their keys allow: a semi join, and an
// inner join whose right input is filtered (EstimateRows below its
// unfiltered size: a dimension table cut by a condition) move down to just
// above the join that provides their last left key.
//
//	Join(nation n_name = 'X') ← Join(orders) ← Join(lineitem) ← supplier      (keys: s_nationkey, ...)
//	=> Project(original column order) ← Join(orders) ← Join(lineitem) ← Join(nation) ← supplier
//
// The comma joins of SQL run in the written order, so a selective
// dimension (TPC-H Q21's nation, Q7's nation pair) or an IN subquery
// (Q18) otherwise joins only after the largest intermediate result. A join
// may move below inner, left, semi, anti and cross joins (none of them
// reads its columns, since its keys come from below them); the chain stops
// at right and full joins. The chain's first input stays first (the
// engine reads the plan's first scan from the query's main source), and
// the Project on top keeps the output's column order.
func JoinFilteringFirst(n Node, _ OptimizeOptions) (Node, error) {
	out, _, err := joinFilteringFirst(n)
	return out, err
}

func joinFilteringFirst(n Node) (Node, bool, error) {
	top, ok := n.(*Join)
	if !ok || !chainJoin(top) {
		children := n.Children()
		changed := false
		for i, c := range children {
			nc, ch, err := joinFilteringFirst(c)
			if err != nil {
				return nil, false, err
			}
			if ch {
				children[i], changed = nc, true
			}
		}
		if !changed {
			return n, false, nil
		}
		nn, err := n.WithChildren(children...)
		return nn, err == nil, err
	}
	chain, base := joinChain(top)
	base, changed, err := joinFilteringFirst(base)
	if err != nil {
		return nil, false, err
	}
	rights := map[*Join]Node{}
	for _, j := range chain {
		r, ch, err := joinFilteringFirst(j.Right)
		if err != nil {
			return nil, false, err
		}
		rights[j], changed = r, changed || ch
	}
	order := filteringFirst(base.Schema(), chain)
	moved := !slices.Equal(order, chain)
	if !changed && !moved {
		return n, false, nil
	}
	node := base
	for _, j := range order {
		if node, err = j.WithChildren(node, rights[j]); err != nil {
			return nil, false, err
		}
	}
	if !moved {
		return node, true, nil
	}
	if p := reorderedAs(node, top.Schema()); p != nil {
		return p, true, nil
	}
	return n, false, nil
}

// reorderedAs projects node (joins reordered) back to the columns and
// order of want, the schema of the plan it replaces; nil when a column of
// want is missing or ambiguous in node.
func reorderedAs(node Node, want *arrow.Schema) *Project {
	got := node.Schema()
	p := &Project{Input: node}
	fields := make([]arrow.Field, 0, want.NumFields())
	for _, f := range want.Fields() {
		idx := got.FieldIndices(f.Name)
		if len(idx) != 1 {
			return nil
		}
		p.Columns = append(p.Columns, f.Name)
		p.Indices = append(p.Indices, idx[0])
		fields = append(fields, got.Field(idx[0]))
	}
	p.Out = arrow.NewSchema(fields, nil)
	return p
}

// chainJoin reports whether j can be part of a reordered chain.
func chainJoin(j *Join) bool { return j.Type != JoinRight && j.Type != JoinFull }

// joinChain returns the chain of joins that starts at top and follows
// left inputs while they are chainJoins (bottom first), and the input
// below the bottom one.
func joinChain(top *Join) (chain []*Join, base Node) {
	base = top
	for {
		j, ok := base.(*Join)
		if !ok || !chainJoin(j) {
			break
		}
		chain = append(chain, j)
		base = j.Left
	}
	slices.Reverse(chain)
	return chain, base
}

// filteringFirst is chain (bottom first, over base) with every filtering
// join moved down to the lowest place where the columns it reads from the
// left are available.
func filteringFirst(base *arrow.Schema, chain []*Join) []*Join {
	var out []*Join
	for _, j := range chain {
		if !filteringJoin(j) {
			out = append(out, j)
			continue
		}
		need := joinLeftColumns(j)
		avail := map[string]bool{}
		for _, f := range base.Fields() {
			avail[f.Name] = true
		}
		at := len(out)
		for p := 0; p <= len(out); p++ {
			if p > 0 {
				for _, c := range joinOutputs(out[p-1]) {
					avail[c] = true
				}
			}
			if !slices.ContainsFunc(need, func(c string) bool { return !avail[c] }) {
				at = p
				break
			}
		}
		out = slices.Insert(out, at, j)
	}
	return out
}

// filteringJoin reports whether j removes rows of its left input: a semi
// join, or an inner equi-join whose right input is filtered.
func filteringJoin(j *Join) bool {
	if len(j.LeftKeys) == 0 {
		return false
	}
	switch j.Type {
	case JoinSemi:
		return true
	case JoinInner:
		est, base := estimateRows(j.Right)
		return est < base
	}
	return false
}

// joinLeftColumns lists the left columns j reads: its left keys and the
// residual's left columns.
func joinLeftColumns(j *Join) []string {
	need := slices.Clone(j.LeftKeys)
	if j.Residual != nil {
		rs := j.Right.Schema()
		for _, c := range ExprColumns(j.Residual) {
			if r, ok := strings.CutPrefix(c, j.Alias+"."); ok && len(rs.FieldIndices(r)) > 0 && len(j.Left.Schema().FieldIndices(c)) == 0 {
				continue
			}
			need = append(need, c)
		}
	}
	return need
}

// joinOutputs lists the columns j adds to its left input's.
func joinOutputs(j *Join) []string {
	if !j.Type.KeepsRight() {
		return nil
	}
	out := make([]string, len(j.RightCols))
	for i, c := range j.RightCols {
		out[i] = JoinedName(j.Alias, c)
	}
	return out
}
