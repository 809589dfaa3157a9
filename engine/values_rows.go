package engine

import (
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/quarrydb/quarry/internal/funcs"
	"github.com/quarrydb/quarry/internal/qerr"
	"github.com/quarrydb/quarry/planner"
)

// valuesOp emits the constant rows of a planner.Values leaf, at most a
// batch size at a time. It reads no source.
type valuesOp struct {
	ex  *exec
	n   *planner.Values
	pos int // next row to emit
}

func newValuesOp(ex *exec, n *planner.Values) (*valuesOp, error) {
	if n.Out == nil {
		return nil, qerr.Internal(nil, "values: no schema")
	}
	for r, row := range n.Rows {
		if len(row) != n.Out.NumFields() {
			return nil, qerr.Internal(nil, "values: row %d has %d values, the schema %d columns", r, len(row), n.Out.NumFields())
		}
		for k, c := range row {
			t := n.Out.Field(k).Type
			if c == nil || !c.Null && !arrow.TypeEqual(c.Typ, t) {
				return nil, qerr.Internal(nil, "values: row %d column %d is not a constant of type %s", r, k, t)
			}
			if _, ok := funcs.ExprType(t); !ok {
				return nil, qerr.Unsupported(qerr.CodeUnsupportedType, "values: column %q of type %s", n.Out.Field(k).Name, t)
			}
		}
	}
	return &valuesOp{ex: ex, n: n}, nil
}

func (v *valuesOp) next() (out arrow.RecordBatch, err error) {
	if err := v.ex.ctx.Err(); err != nil {
		return nil, err
	}
	lo := v.pos
	hi := min(len(v.n.Rows), lo+v.ex.batchSize)
	if lo >= hi {
		return nil, nil
	}
	defer catchBudget(&err)
	cols := make([]arrow.Array, v.n.Out.NumFields())
	var o *funcs.Out
	defer func() {
		if o != nil { // a budget failure mid-column
			o.Release()
		}
		for _, c := range cols {
			if c != nil {
				c.Release()
			}
		}
	}()
	for k, f := range v.n.Out.Fields() {
		if f.Type.ID() == arrow.NULL {
			cols[k] = array.MakeArrayOfNull(v.ex.alloc, f.Type, hi-lo)
			continue
		}
		o = funcs.NewOut(v.ex.alloc, f.Type, hi-lo)
		for _, row := range v.n.Rows[lo:hi] {
			if row[k].Null {
				o.Null()
			} else {
				o.Value(planner.ConstValue(row[k]))
			}
		}
		cols[k], o = o.Finish(), nil
	}
	v.pos = hi
	return array.NewRecordBatch(v.n.Out, cols, int64(hi-lo)), nil
}

func (v *valuesOp) describe() (string, []string) { return "values", nil }

func (v *valuesOp) close() {}
