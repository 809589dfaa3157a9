package engine

import (
	"github.com/apache/arrow-go/v18/arrow"

	"github.com/quarrydb/quarry/internal/funcs"
	"github.com/quarrydb/quarry/internal/qerr"
	"github.com/quarrydb/quarry/planner"
)

// The general part of expression evaluation: calls of the registry's
// general-form functions (operators, strings, conditionals, ...) and casts,
// computed on Arrow arrays by the registry's kernels.

// exprInput reports the column types expressions read (funcs.ExprType).
func exprInput(t arrow.DataType) bool {
	_, ok := funcs.ExprType(t)
	return ok && t.ID() != arrow.NULL
}

// prepared returns the kernel of a general call or cast, preparing it on
// first use (once per query: patterns compile once).
func (ev *evaluator) prepared(e planner.Expr, prep func() (funcs.Kernel, error)) (funcs.Kernel, error) {
	if k, ok := ev.kernels[e]; ok {
		return k, nil
	}
	k, err := prep()
	if err != nil {
		return nil, qerr.Invalid(qerr.CodeInvalidArgument, "expression %q: %v", ev.name, err)
	}
	if ev.kernels == nil {
		ev.kernels = map[planner.Expr]funcs.Kernel{}
	}
	ev.kernels[e] = k
	return k, nil
}

// args evaluates the arguments of a call as arrays.
func (ev *evaluator) args(es []planner.Expr, cols []arrow.Array, n int) ([]arrow.Array, error) {
	out := make([]arrow.Array, len(es))
	for i, a := range es {
		v, err := ev.eval(a, cols, n)
		if err != nil {
			return nil, err
		}
		out[i] = ev.toArray(v)
	}
	return out, nil
}

func (ev *evaluator) general(c *planner.Call, d *funcs.ScalarDecl, cols []arrow.Array, n int) (vec, error) {
	k, err := ev.prepared(c, func() (funcs.Kernel, error) {
		info := &funcs.CallInfo{Types: make([]arrow.DataType, len(c.Args)), Consts: make([]*funcs.Value, len(c.Args)), Result: c.Typ}
		for i, a := range c.Args {
			info.Types[i] = a.Type()
			if k, ok := a.(*planner.Const); ok {
				info.Consts[i] = planner.ConstValue(k)
			}
		}
		return d.Prepare(info)
	})
	if err != nil {
		return vec{}, err
	}
	args, err := ev.args(c.Args, cols, n)
	if err != nil {
		return vec{}, err
	}
	out, err := k(ev.mem, args)
	if err != nil {
		return vec{}, kernelErr(ev.name, err)
	}
	if len(args) == 0 { // now(), current_date: one row, broadcast
		v := funcs.ValueAt(out, 0)
		out.Release()
		out = funcs.Broadcast(ev.mem, v, c.Typ, n)
	}
	return ev.fromArray(ev.keep(out), n)
}

func (ev *evaluator) cast(c *planner.Cast, cols []arrow.Array, n int) (vec, error) {
	v, err := ev.eval(c.X, cols, n)
	if err != nil {
		return v, err
	}
	from := c.X.Type()
	if from.ID() == arrow.INT64 && c.To.ID() == arrow.FLOAT64 && v.arr == nil { // the fast path of int → float
		return ev.toFloat(v), nil
	}
	if arrow.TypeEqual(from, c.To) {
		return v, nil
	}
	k, err := ev.prepared(c, func() (funcs.Kernel, error) { return funcs.CastKernel(from, c.To, c.Try), nil })
	if err != nil {
		return vec{}, err
	}
	out, err := k(ev.mem, []arrow.Array{ev.toArray(v)})
	if err != nil {
		return vec{}, kernelErr(ev.name, err)
	}
	return ev.fromArray(ev.keep(out), n)
}

// intMod is a % b over int64 vectors (the sign of a); b == 0 gives null.
func (ev *evaluator) intMod(a, b []int64, valid []bool) vec {
	out := ev.pool.int64s(len(a))
	var nv []bool
	for i := range out {
		r, null := funcs.ModInt(a[i], b[i])
		if null && (valid == nil || valid[i]) {
			nv = ev.nullAt(nv, valid, len(out), i)
		}
		out[i] = r
	}
	if nv != nil {
		valid = nv
	}
	return vec{isInt: true, ints: out, valid: valid}
}
