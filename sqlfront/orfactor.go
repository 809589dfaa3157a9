package sqlfront

import (
	"errors"
	"slices"

	pg "github.com/pganalyze/pg_query_go/v6"
)

// factorOr lifts the conjuncts common to every branch of an OR out of it:
// (A AND B) OR (A AND C) becomes A AND (B OR C), which holds in SQL's
// three-valued logic too. A join key written inside each branch (TPC-H
// Q19: p_partkey = l_partkey in all three) thus becomes a top-level
// equality that promoteKeys turns into a hash-join key, instead of a cross
// join filtered afterwards. Conjuncts are compared by their rendered text;
// an OR with a subquery in it is left alone.
func (b *block) factorOr(conds []*pg.Node) []*pg.Node {
	var out []*pg.Node
	for _, q := range conds {
		lifted, rest, ok := b.splitOr(q)
		if !ok {
			out = append(out, q)
			continue
		}
		out = append(out, lifted...)
		if rest != nil {
			out = append(out, rest)
		}
	}
	return out
}

// splitOr returns the conjuncts common to all branches of the OR q and
// what remains of q (nil when a branch is left empty: the OR is then
// implied by the lifted conjuncts); ok is false when nothing is common.
func (b *block) splitOr(q *pg.Node) (lifted []*pg.Node, rest *pg.Node, ok bool) {
	be := q.GetBoolExpr()
	if be == nil || be.Boolop != pg.BoolExprType_OR_EXPR || len(be.Args) < 2 {
		return nil, nil, false
	}
	// render without lowering subqueries: a branch holding one is not factored
	r := *b.pre
	r.sub = func(*pg.SubLink) (string, error) { return "", errNoSubquery }
	branches := make([][]*pg.Node, len(be.Args))
	texts := make([][]string, len(be.Args))
	for i, a := range be.Args {
		branches[i] = conjuncts(a)
		for _, c := range branches[i] {
			t, err := r.expr(c)
			if err != nil {
				return nil, nil, false
			}
			texts[i] = append(texts[i], t)
		}
	}
	var common []string
	for k, t := range texts[0] {
		inAll := !slices.Contains(common, t)
		for _, other := range texts[1:] {
			inAll = inAll && slices.Contains(other, t)
		}
		if inAll {
			common = append(common, t)
			lifted = append(lifted, branches[0][k])
		}
	}
	if len(common) == 0 {
		return nil, nil, false
	}
	args := make([]*pg.Node, 0, len(branches))
	for i, br := range branches {
		var keep []*pg.Node
		for k, c := range br {
			if !slices.Contains(common, texts[i][k]) {
				keep = append(keep, c)
			}
		}
		switch len(keep) {
		case 0:
			return lifted, nil, true
		case 1:
			args = append(args, keep[0])
		default:
			args = append(args, pg.MakeBoolExprNode(pg.BoolExprType_AND_EXPR, keep, be.Args[i].GetBoolExpr().GetLocation()))
		}
	}
	return lifted, pg.MakeBoolExprNode(pg.BoolExprType_OR_EXPR, args, be.Location), true
}

var errNoSubquery = errors.New("subquery")
