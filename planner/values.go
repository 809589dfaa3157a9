package planner

import (
	"fmt"
	"slices"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/quarrydb/quarry/internal/qerr"
)

// Values is a leaf of constant rows (SQL VALUES (...), (...), and the
// single row of a SELECT without FROM). Every Rows[i][k] is a Const of
// column k's type, or a null Const. A column whose values are all NULL
// literals has the null type (arrow.Null); a set operation or a CAST
// gives it a type.
type Values struct {
	Out  *arrow.Schema
	Rows [][]*Const
}

// NewValues builds a Values node with columns names from rows of
// constant expressions. Each cell may be any expression without column
// references (1, -2.5, 'a', NULL, CAST('2024-01-02' AS date), 1 + 2,
// lower('X')); it is bound (BindExpr over an empty schema) and folded to
// a constant. Each column's type is its cells' types unified by
// UnifyTypes (int64 and float64 give float64, ...), every cell converted to
// it. Errors are *qerr.Error with code invalid_argument and "row"/"column"
// diagnostics (1-based): no rows, a row of the wrong width, empty or
// duplicate names, a cell that references a column or does not fold to a
// constant (e.g. 1/0 is a null constant and fine, but a failing cast is
// not), or column types that do not mix.
func NewValues(names []string, rows [][]Expr) (*Values, error) {
	if len(names) == 0 {
		return nil, qerr.Invalid(qerr.CodeInvalidArgument, "VALUES needs at least one column")
	}
	for i, n := range names {
		if n == "" || slices.Contains(names[:i], n) {
			return nil, qerr.Invalid(qerr.CodeInvalidArgument, "VALUES column %d: name %q is empty or repeated", i+1, n).
				With("column", i+1).WithHint("give every column a distinct name")
		}
	}
	if len(rows) == 0 {
		return nil, qerr.Invalid(qerr.CodeInvalidArgument, "VALUES needs at least one row")
	}
	empty := arrow.NewSchema(nil, nil)
	consts := make([][]*Const, len(rows))
	types := make([]arrow.DataType, len(names))
	for i := range types {
		types[i] = arrow.Null
	}
	for r, row := range rows {
		if len(row) != len(names) {
			return nil, qerr.Invalid(qerr.CodeInvalidArgument, "VALUES row %d has %d values, want %d", r+1, len(row), len(names)).
				With("row", r+1).WithHint("give every row the same number of values")
		}
		consts[r] = make([]*Const, len(row))
		for k, e := range row {
			c, err := valueConst(e, empty, r, k)
			if err != nil {
				return nil, err
			}
			t, ok := UnifyTypes(types[k], c.Typ)
			if !ok {
				return nil, qerr.Invalid(qerr.CodeInvalidArgument, "VALUES column %d: %s (row %d) is %s, earlier rows are %s",
					k+1, c.String(), r+1, typeName(c.Typ), typeName(types[k])).
					With("row", r+1).With("column", k+1).WithHint("CAST the values of a column to one kind")
			}
			types[k], consts[r][k] = t, c
		}
	}
	fields := make([]arrow.Field, len(names))
	for k, n := range names {
		fields[k] = arrow.Field{Name: n, Type: types[k]}
		for r := range consts {
			c := consts[r][k]
			fields[k].Nullable = fields[k].Nullable || c.Null
			if arrow.TypeEqual(c.Typ, types[k]) {
				continue
			}
			f, ok := FoldExpr(castTo(c, types[k])).(*Const)
			if !ok || !arrow.TypeEqual(f.Typ, types[k]) {
				return nil, qerr.Invalid(qerr.CodeInvalidArgument, "VALUES row %d column %d: %s cannot be converted to %s", r+1, k+1, c.String(), typeName(types[k])).
					With("row", r+1).With("column", k+1).WithHint("CAST the values of a column to one kind")
			}
			consts[r][k] = f
		}
	}
	return &Values{Out: arrow.NewSchema(fields, nil), Rows: consts}, nil
}

// valueConst binds and folds cell e (row r, column k, 0-based) to a constant.
func valueConst(e Expr, empty *arrow.Schema, r, k int) (*Const, error) {
	if e == nil {
		return nil, qerr.Internal(nil, "planner: VALUES row %d column %d has no expression", r+1, k+1)
	}
	if c, ok := e.(*Const); ok && c.Null && (c.Typ == nil || c.Typ.ID() == arrow.NULL) {
		return &Const{Typ: arrow.Null, Null: true}, nil // an untyped NULL: the column's other values type it
	}
	e = CloneExpr(e)
	if err := BindExpr(e, empty); err != nil {
		return nil, qerr.Invalid(qerr.CodeInvalidArgument, "VALUES row %d column %d: %v", r+1, k+1, err).
			With("row", r+1).With("column", k+1).WithHint("VALUES holds constants: literals and expressions over literals, no column names")
	}
	c, ok := FoldExpr(e).(*Const)
	if !ok {
		return nil, qerr.Invalid(qerr.CodeInvalidArgument, "VALUES row %d column %d: %s is not a constant", r+1, k+1, e.String()).
			With("row", r+1).With("column", k+1).WithHint("VALUES holds constants: literals and expressions over literals that evaluate without error")
	}
	if c.Typ == nil {
		c.Typ = arrow.Null
	}
	return c, nil
}

// Schema implements Node.
func (v *Values) Schema() *arrow.Schema { return v.Out }

// Children implements Node: none.
func (v *Values) Children() []Node { return nil }

// WithChildren implements Node.
func (v *Values) WithChildren(children ...Node) (Node, error) {
	if err := CheckChildren(v, 0, children); err != nil {
		return nil, err
	}
	c := *v
	c.Rows = make([][]*Const, len(v.Rows))
	for i, row := range v.Rows {
		c.Rows[i] = make([]*Const, len(row))
		for k, x := range row {
			cx := *x
			c.Rows[i][k] = &cx
		}
	}
	return &c, nil
}

// Describe implements Node: the row count, and the rows when there are few.
func (v *Values) Describe() string {
	var b strings.Builder
	fmt.Fprintf(&b, "Values: %d row", len(v.Rows))
	if len(v.Rows) != 1 {
		b.WriteString("s")
	}
	names := make([]string, v.Out.NumFields())
	for i, f := range v.Out.Fields() {
		names[i] = quoteIdent(f.Name)
	}
	fmt.Fprintf(&b, " (%s)", strings.Join(names, ", "))
	if len(v.Rows) <= 3 {
		for _, row := range v.Rows {
			cells := make([]string, len(row))
			for k, c := range row {
				cells[k] = c.String()
			}
			fmt.Fprintf(&b, " (%s)", strings.Join(cells, ", "))
		}
	}
	return b.String()
}
