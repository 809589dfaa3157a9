package sqlgen

import (
	"strings"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/quarrydb/quarry/planner"
)

// residual prints a join's residual condition (bound over
// j.PairSchema()) with its columns as "l"."col" and "r"."col", when the
// remote evaluates it as the engine does: comparisons of columns and
// literals of the types joinKey admits (integers of any widths, dates,
// booleans, case-sensitive strings), IS [NOT] NULL, boolean columns, and
// AND, OR, NOT of those (SQL's three-valued logic, as the engine's; a
// null condition matches nothing in both). Arithmetic, functions, floats
// (NaN) and other literals are not printed.
func (d Dialect) residual(e planner.Expr, j *planner.Join) (string, error) {
	ls, rs := j.Left.Schema(), j.Right.Schema()
	var walk func(planner.Expr) (string, error)
	// operand prints a comparison operand: a column or a literal of a
	// comparable type.
	operand := func(e planner.Expr) (string, error) {
		if c, ok := e.(*planner.Cast); ok && c.Implicit && isInteger(c.To) && isInteger(c.X.Type()) {
			e = c.X // an integer widened for the comparison: the remote widens too
		}
		if !d.joinKey(e.Type()) {
			return "", unsupported("a join condition on a %s", e.Type())
		}
		return walk(e)
	}
	walk = func(e planner.Expr) (string, error) {
		switch x := e.(type) {
		case *planner.ColRef:
			if len(ls.FieldIndices(x.Name)) == 1 {
				return d.Ident("l") + "." + d.Ident(x.Name), nil
			}
			if c, ok := strings.CutPrefix(x.Name, j.Alias+"."); ok && len(rs.FieldIndices(c)) == 1 {
				return d.Ident("r") + "." + d.Ident(c), nil
			}
			return "", unsupported("join condition column %q", x.Name)
		case *planner.Const:
			return d.constant(x)
		case *planner.Call:
			return d.residualCall(x, walk, operand)
		}
		return "", unsupported("join condition %s", e.String())
	}
	if e.Type().ID() != arrow.BOOL {
		return "", unsupported("join condition %s", e.String())
	}
	return walk(e)
}

// residualCall prints the logical, comparison and null-test calls of a
// join condition.
func (d Dialect) residualCall(x *planner.Call, walk, operand func(planner.Expr) (string, error)) (string, error) {
	args := make([]string, len(x.Args))
	print := walk
	if _, cmp := residualCmp[x.Fn]; cmp || x.Fn == "is_null" || x.Fn == "is_not_null" {
		print = operand
	}
	for i, a := range x.Args {
		s, err := print(a)
		if err != nil {
			return "", err
		}
		args[i] = s
	}
	switch {
	case (x.Fn == "and" || x.Fn == "or") && len(args) >= 2:
		return "(" + strings.Join(args, " "+strings.ToUpper(x.Fn)+" ") + ")", nil
	case x.Fn == "not" && len(args) == 1:
		return "(NOT " + args[0] + ")", nil
	case x.Fn == "is_null" && len(args) == 1:
		return "(" + args[0] + " IS NULL)", nil
	case x.Fn == "is_not_null" && len(args) == 1:
		return "(" + args[0] + " IS NOT NULL)", nil
	case len(args) == 2 && residualCmp[x.Fn] != "":
		return "(" + args[0] + " " + residualCmp[x.Fn] + " " + args[1] + ")", nil
	}
	return "", unsupported("join condition %s", x.String())
}

// residualCmp spells the comparison calls of a join condition.
var residualCmp = map[string]string{"=": "=", "!=": "<>", "<": "<", "<=": "<=", ">": ">", ">=": ">="}

// constant prints a non-null literal of a join condition: integers,
// strings, booleans and dates (as Printable's literals).
func (d Dialect) constant(c *planner.Const) (string, error) {
	if c.Null || c.Interval || c.Typ == nil {
		return "", unsupported("a null or interval literal")
	}
	switch {
	case isInteger(c.Typ):
		return d.literal(planner.Literal{Type: c.Typ, Value: c.Int})
	case c.Typ.ID() == arrow.DATE32:
		return d.literal(planner.Literal{Type: c.Typ, Value: int32(c.Int)})
	case c.Typ.ID() == arrow.STRING || c.Typ.ID() == arrow.LARGE_STRING:
		return d.literal(planner.Literal{Type: c.Typ, Value: c.Str})
	case c.Typ.ID() == arrow.BOOL:
		return d.literal(planner.Literal{Type: c.Typ, Value: c.Bool})
	}
	return "", unsupported("a %s literal", c.Typ)
}

// isInteger reports whether t is an integer type.
func isInteger(t arrow.DataType) bool {
	switch t.ID() {
	case arrow.INT8, arrow.INT16, arrow.INT32, arrow.INT64, arrow.UINT8, arrow.UINT16, arrow.UINT32, arrow.UINT64:
		return true
	}
	return false
}
