package planner

import (
	"strings"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/quarrydb/quarry/internal/qerr"
)

// Non-equi join conditions (Join.Residual, the knob's join[].where). The
// residual is applied to the candidate pairs of the hash join (the pairs
// with equal keys, or every pair when the join has no keys) inside the
// join, so outer, semi and anti joins keep SQL semantics: a row whose only
// key matches fail the residual is unmatched (null-extended in an outer
// join, kept by anti, dropped by semi). A null residual is not true.

// PairSchema is the schema a join's Residual is bound over: every column
// of Left, then every column of Right named alias.col (JoinedName),
// whatever the join type keeps in its output.
func (j *Join) PairSchema() *arrow.Schema {
	fields := append([]arrow.Field(nil), j.Left.Schema().Fields()...)
	for _, f := range j.Right.Schema().Fields() {
		f.Name = JoinedName(j.Alias, f.Name)
		fields = append(fields, f)
	}
	return arrow.NewSchema(fields, nil)
}

// SetResidual binds e (an expression as ParseExpr returns it: left
// columns by their names, right columns as alias.col) over PairSchema,
// checks that it is boolean, folds its constants and sets it as
// j.Residual. Errors are *qerr.Error with code invalid_filter (an unknown
// column carries "column" and "suggestions" diagnostics). The join may
// have no keys (a pure inequality join: every pair is tested).
func (j *Join) SetResidual(e Expr) error {
	ps := j.PairSchema()
	e = CloneExpr(e)
	if err := BindExpr(e, ps); err != nil {
		ee := qerr.Invalid(qerr.CodeInvalidFilter, "join condition %s: %v", e.String(), err)
		if uc, ok := err.(*unknownColError); ok {
			names := make([]string, ps.NumFields())
			for i, f := range ps.Fields() {
				names[i] = f.Name
			}
			ee.With("column", uc.col).With("suggestions", qerr.Suggest(uc.col, names, 3))
		}
		return ee.WithHint("a join condition uses the left columns by name and the joined columns as %s.col", j.Alias)
	}
	if t := e.Type(); t.ID() != arrow.BOOL {
		return qerr.Invalid(qerr.CodeInvalidFilter, "join condition %s is a %s, not a boolean", e.String(), typeName(t)).
			WithHint("compare columns, e.g. %q", "ts >= "+j.Alias+".start")
	}
	j.Residual = FoldExpr(e)
	return nil
}

// residualColumns adds the columns the residual reads to the left and
// right input column sets (projection pushdown).
func (j *Join) residualColumns(left, right ColumnSet) (ColumnSet, ColumnSet) {
	if j.Residual == nil {
		return left, right
	}
	ls, rs := j.Left.Schema(), j.Right.Schema()
	for _, c := range ExprColumns(j.Residual) {
		if len(ls.FieldIndices(c)) > 0 {
			left = left.With(c)
		} else if rc, ok := strings.CutPrefix(c, j.Alias+"."); ok && len(rs.FieldIndices(rc)) > 0 {
			right = right.With(rc)
		}
	}
	return left, right
}

// resolveResidual recomputes the residual's column positions in PairSchema.
func (j *Join) resolveResidual() error {
	if j.Residual == nil {
		return nil
	}
	ps := j.PairSchema()
	var err error
	WalkExpr(j.Residual, func(x Expr) {
		if ref, ok := x.(*ColRef); ok && err == nil {
			ref.Index, err = colIndex(ps, ref.Name)
		}
	})
	return err
}

// joinWhere validates js.Where into j.Residual (field names the join in errors).
func (b *builder) joinWhere(j *Join, js JoinSpec, field string) error {
	if js.Where == "" {
		return nil
	}
	fld := field + ".where"
	ps := j.PairSchema()
	name, ne, err := b.item(ps, js.Where, fld, qerr.CodeInvalidFilter, false)
	if err != nil {
		return err
	}
	var e Expr
	if ne == nil { // a boolean column
		e = &ColRef{Name: name}
	} else {
		e = ne.Expr
	}
	if err := j.SetResidual(e); err != nil {
		return qerr.As(err).With("field", fld)
	}
	return nil
}
