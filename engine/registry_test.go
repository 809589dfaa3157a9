package engine

import (
	"testing"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/quarrydb/quarry/internal/funcs"
	"github.com/quarrydb/quarry/planner"
)

// Every registered aggregate has a kernel in the engine (its own, or one of
// the built-in per-type dispatches) for every input type its declaration
// accepts, with the declared result type; and every registered filter op
// compiles on a column type it accepts.
func TestRegistryHasKernels(t *testing.T) {
	types := []arrow.DataType{
		arrow.PrimitiveTypes.Int8, arrow.PrimitiveTypes.Int64, arrow.PrimitiveTypes.Uint32, arrow.PrimitiveTypes.Float32,
		arrow.PrimitiveTypes.Float64, arrow.BinaryTypes.String, arrow.BinaryTypes.LargeString, arrow.FixedWidthTypes.Boolean,
		arrow.FixedWidthTypes.Date32, arrow.FixedWidthTypes.Timestamp_us,
		&arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int32, ValueType: arrow.BinaryTypes.String},
		arrow.FixedWidthTypes.Float16,
	}
	for _, d := range funcs.Aggs() {
		for _, dt := range types {
			in := arrow.NewSchema([]arrow.Field{{Name: "x", Type: dt, Nullable: true}}, nil)
			e := planner.AggExpr{Fn: d.Fn, Col: "x", Index: 0, Q: 0.5}
			s, out, err := newAggState(e, in, &acct{b: &budget{}}, map[int]*collector{})
			switch {
			case d.Input.Accepts(dt) && err != nil:
				t.Errorf("%s(%s): declared, but the engine has no kernel: %v", d.Fn, dt, err)
			case d.Input.Accepts(dt) && !arrow.TypeEqual(out, d.Result(dt)):
				t.Errorf("%s(%s): the engine outputs %s, the registry declares %s", d.Fn, dt, out, d.Result(dt))
			case !d.Input.Accepts(dt) && d.Fn != funcs.AggCount && err == nil:
				t.Errorf("%s(%s): not declared, but the engine accepts it", d.Fn, dt)
			}
			if r, ok := s.(releasingState); ok {
				r.release()
			}
		}
	}
	str := arrow.NewSchema([]arrow.Field{{Name: "s", Type: arrow.BinaryTypes.String, Nullable: true}}, nil)
	lit := &planner.Literal{Type: arrow.BinaryTypes.String, Value: "a"}
	for _, d := range funcs.Ops() {
		p := planner.Predicate{Col: "s", Index: 0, Op: d.Op, Value: lit, Values: []planner.Literal{*lit}, Min: lit, Max: lit}
		if _, err := compilePred(p, str); err != nil {
			t.Errorf("filter op %s on a string column: %v", d.Op, err)
		}
	}
}
