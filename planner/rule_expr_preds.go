package planner

import (
	"github.com/apache/arrow-go/v18/arrow"
)

// ExprFilterPreds turns expression filters that compare a column with a
// constant (col < CAST('1995-03-15' AS date), col BETWEEN 3 AND 5, 7 = col)
// into plain predicates, which scans, zone maps and the join filter rule
// take:
//
//	Project ← Filter(h = true) ← Compute(o_orderdate < DATE '1995-03-15' AS h) ← x
//	=> Filter: o_orderdate < '1995-03-15' ← x
//
// SQL writes typed literals as casts, which the SQL front-end leaves as
// expressions. Only integer, date and timestamp columns compared with a
// constant of the same kind convert (a null or non-constant operand
// does not), where the predicate and the expression agree on every value.
func ExprFilterPreds(n Node, _ OptimizeOptions) (Node, error) {
	out, _, err := Transform(n, func(n Node) (Node, bool, error) {
		x, exprs, ok := matchExprFilter(n)
		if !ok {
			return n, false, nil
		}
		var c conds
		for _, ex := range exprs {
			for _, e := range conjuncts(ex) {
				if p, ok := exprPred(e, x.Schema()); ok {
					c.preds = append(c.preds, p)
				} else {
					c.exprs = append(c.exprs, e)
				}
			}
		}
		if len(c.preds) == 0 {
			return n, false, nil
		}
		return applyConds(x, c), true, nil
	})
	return out, err
}

// cmpOpPreds maps a comparison call to its predicate op, and to the op
// with the operands swapped (3 < col is col > 3).
var cmpOpPreds = map[string][2]Op{
	"=": {OpEq, OpEq}, "!=": {OpNeq, OpNeq}, "<": {OpLt, OpGt}, "<=": {OpLte, OpGte}, ">": {OpGt, OpLt}, ">=": {OpGte, OpLte},
}

// exprPred is the predicate equal to e (over columns of s), when there is
// one (see ExprFilterPreds).
func exprPred(e Expr, s *arrow.Schema) (Predicate, bool) {
	c, ok := e.(*Call)
	if !ok {
		return Predicate{}, false
	}
	if ops, ok := cmpOpPreds[c.Fn]; ok && len(c.Args) == 2 {
		for side := 0; side < 2; side++ {
			ref, ok := predColumn(c.Args[side], s)
			if !ok {
				continue
			}
			lit, ok := predLiteral(ref.Typ, c.Args[1-side])
			if !ok {
				return Predicate{}, false
			}
			return Predicate{Col: ref.Name, Index: -1, Op: ops[side], Value: &lit}, true
		}
		return Predicate{}, false
	}
	if c.Fn == "between" && len(c.Args) == 3 {
		ref, ok := predColumn(c.Args[0], s)
		if !ok {
			return Predicate{}, false
		}
		lo, ok1 := predLiteral(ref.Typ, c.Args[1])
		hi, ok2 := predLiteral(ref.Typ, c.Args[2])
		if !ok1 || !ok2 {
			return Predicate{}, false
		}
		return Predicate{Col: ref.Name, Index: -1, Op: OpRange, Min: &lo, Max: &hi}, true
	}
	return Predicate{}, false
}

// predColumn is the column e reads when e is a bare column reference of a
// kind exprPred converts (an integer, a date or a timestamp) that
// expressions read with the column's own type in s.
func predColumn(e Expr, s *arrow.Schema) (*ColRef, bool) {
	ref, ok := e.(*ColRef)
	if !ok || ref.Typ == nil {
		return nil, false
	}
	if idx := s.FieldIndices(ref.Name); len(idx) != 1 || !arrow.TypeEqual(s.Field(idx[0]).Type, ref.Typ) {
		return nil, false
	}
	switch id := ref.Typ.ID(); {
	case isInteger(ref.Typ) && id != arrow.UINT64, id == arrow.DATE32, id == arrow.TIMESTAMP:
		return ref, true
	}
	return nil, false
}

// predLiteral is the constant e as a Literal of column type typ: an int64
// constant for an integer column; a constant of the column's own type for
// a date or timestamp column.
func predLiteral(typ arrow.DataType, e Expr) (Literal, bool) {
	k, ok := e.(*Const)
	if !ok || k.Null || k.Interval || k.Typ == nil {
		return Literal{}, false
	}
	switch {
	case isInteger(typ):
		if k.Typ.ID() != arrow.INT64 {
			return Literal{}, false
		}
		return Literal{Type: typ, Value: k.Int}, true
	case typ.ID() == arrow.DATE32 && k.Typ.ID() == arrow.DATE32:
		return Literal{Type: typ, Value: int32(k.Int)}, true
	case typ.ID() == arrow.TIMESTAMP && arrow.TypeEqual(typ, k.Typ):
		return Literal{Type: typ, Value: k.Int}, true
	}
	return Literal{}, false
}
