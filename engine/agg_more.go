// The dispatch of the aggregates declared in internal/funcs/aggs_more.go,
// and the per-aggregate inputs beyond one column: a second column
// (funcs.AggDecl.Arg) and a filter (planner.AggExpr.Filter).

package engine

import (
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/quarrydb/quarry/internal/funcs"
	"github.com/quarrydb/quarry/internal/qerr"
	"github.com/quarrydb/quarry/planner"
)

// pairState is the state of an aggregate over two columns (col and its
// column arg): update2 replaces update.
type pairState interface {
	aggState
	update2(col, arg arrow.Array, gids []int32) error
}

// newMoreAggState builds the states of the aggregates of aggs_more.go; ok
// is false for any other function. dt is the type of e's input column; in
// the aggregate's input schema.
func newMoreAggState(e planner.AggExpr, decl *funcs.AggDecl, dt arrow.DataType, in *arrow.Schema, a *acct) (s aggState, out arrow.DataType, ok bool, err error) {
	var argType arrow.DataType
	if decl.Arg != nil && decl.Arg.Input != nil {
		if e.ArgIndex < 0 || e.ArgIndex >= in.NumFields() {
			return nil, nil, true, qerr.Internal(nil, "aggregate %s(%s): arg index %d out of range for %d input columns", e.Fn, e.Col, e.ArgIndex, in.NumFields())
		}
		argType = in.Field(e.ArgIndex).Type
		if !decl.Arg.Input.Accepts(argType) {
			return nil, nil, true, qerr.Unsupported(qerr.CodeInvalidAggregate, "%s's arg %q has type %s", e.Fn, e.Arg, argType).
				WithHint("%s takes %s", e.Fn, decl.Arg.Input.Doc)
		}
	}
	if !decl.Input.Accepts(dt) {
		return nil, nil, true, qerr.Unsupported(qerr.CodeInvalidAggregate, "%s is not supported on column %q of type %s", e.Fn, e.Col, dt).
			WithHint("%s takes %s", e.Fn, decl.Input.Doc)
	}
	out = decl.Result(dt)
	switch e.Fn {
	case funcs.AggStddevSamp, funcs.AggStddevPop, funcs.AggVarSamp, funcs.AggVarPop:
		s = newVarState(e.Fn, dt)
	case funcs.AggCovarSamp, funcs.AggCovarPop, funcs.AggCorr, funcs.AggRegrSlope, funcs.AggRegrIntercept, funcs.AggRegrR2:
		s = newCovState(e.Fn, dt, argType, a)
	case funcs.AggMode:
		s = newModeState(dt, a)
	case funcs.AggArgMin, funcs.AggArgMax:
		s = newArgBest(dt, argType, e.Fn == funcs.AggArgMax, a)
	case funcs.AggBoolAnd, funcs.AggBoolOr:
		s = &minMaxBool{max: e.Fn == funcs.AggBoolOr} // false < true: and is min, or is max
	case funcs.AggCountIf:
		s = &countIf{}
	case funcs.AggStringAgg:
		s = &stringAgg{dt: out, sep: e.Arg, col: e.Col, acct: a}
	case funcs.AggList, funcs.AggArrayAgg:
		s = newListAgg(dt, out, e.Col, a)
	case funcs.AggApproxCountDistinct:
		s = newHLLState(dt, a)
	case funcs.AggApproxQuantile:
		if !(e.Q >= 0 && e.Q <= 1) {
			return nil, nil, true, qerr.Invalid(qerr.CodeInvalidAggregate, "approx_quantile(%s): q must be in [0, 1], got %v", e.Col, e.Q)
		}
		s = newDigestState(dt, e.Q, a)
	default:
		return nil, nil, false, nil
	}
	if s == nil {
		return nil, nil, true, qerr.Unsupported(qerr.CodeInvalidAggregate, "%s is not supported on column %q of type %s", e.Fn, e.Col, dt)
	}
	return s, out, true, nil
}

// floatLoader returns a function that reads a numeric column as float64s
// (into buf, or aliasing Arrow memory for float64 input: never keep its
// result), or nil for another type.
func floatLoader(dt arrow.DataType) func(arrow.Array, []float64) []float64 {
	switch dt.ID() {
	case arrow.INT8:
		return loadFloats[int8]
	case arrow.INT16:
		return loadFloats[int16]
	case arrow.INT32:
		return loadFloats[int32]
	case arrow.INT64:
		return loadFloats[int64]
	case arrow.UINT8:
		return loadFloats[uint8]
	case arrow.UINT16:
		return loadFloats[uint16]
	case arrow.UINT32:
		return loadFloats[uint32]
	case arrow.UINT64:
		return loadFloats[uint64]
	case arrow.FLOAT32:
		return loadFloats[float32]
	case arrow.FLOAT64:
		return func(arr arrow.Array, _ []float64) []float64 { return values[float64](arr) }
	}
	return nil
}

// aggInput feeds one aggregate whose input is more than one column: a
// second column (pairState) and/or a filter, whose rows that fail are
// dropped (with their group ids) before the state sees them.
type aggInput struct {
	col, arg int           // input positions; -1: none (count(*), no column arg)
	filter   *filterOp     // evaluates the filter (evalMask); nil: none
	sub      *arrow.Schema // the columns gathered for filtered rows: col, then arg
	sel      []int32
	gids     []int32
	refs     []rowRef
}

// newAggInput returns the input of e, or nil when the aggregate reads its
// one column (or no column) unfiltered.
func newAggInput(e planner.AggExpr, decl *funcs.AggDecl, col int, in *arrow.Schema) (*aggInput, error) {
	x := &aggInput{col: col, arg: -1}
	if decl != nil && decl.Arg != nil && decl.Arg.Input != nil {
		x.arg = e.ArgIndex
	}
	if len(e.Filter) == 0 && x.arg < 0 {
		return nil, nil
	}
	if len(e.Filter) > 0 {
		preds, err := compilePreds(e.Filter, in)
		if err != nil {
			return nil, err
		}
		x.filter = &filterOp{preds: preds}
		var fs []arrow.Field
		for _, c := range []int{x.col, x.arg} {
			if c >= 0 {
				fs = append(fs, in.Field(c))
			}
		}
		x.sub = arrow.NewSchema(fs, nil)
	}
	return x, nil
}

// fold updates s with the rows of b that pass the filter.
func (x *aggInput) fold(ex *exec, s aggState, b arrow.RecordBatch, gids []int32) error {
	var cols []arrow.Array
	for _, c := range []int{x.col, x.arg} {
		if c >= 0 {
			cols = append(cols, b.Column(c))
		}
	}
	if x.filter != nil {
		mask := x.filter.evalMask(b)
		x.sel = selectRows(mask, x.sel)
		switch len(x.sel) {
		case 0:
			return nil
		case len(mask):
		default:
			x.gids = x.gids[:0]
			x.refs = x.refs[:0]
			for _, r := range x.sel {
				x.gids = append(x.gids, gids[r])
				x.refs = append(x.refs, rowRef{0, r})
			}
			gids = x.gids
			if len(cols) > 0 {
				sub := array.NewRecordBatch(x.sub, cols, b.NumRows())
				kept, err := gatherBatch(ex.alloc, ex.soft, x.sub, sub, x.refs)
				sub.Release()
				if err != nil {
					return err
				}
				defer kept.Release()
				cols = kept.Columns()
			}
		}
	}
	var col arrow.Array
	if x.col >= 0 {
		col = cols[0]
	}
	if x.arg >= 0 {
		return s.(pairState).update2(col, cols[len(cols)-1], gids)
	}
	return s.update(col, gids)
}
