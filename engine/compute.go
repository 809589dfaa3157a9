package engine

import (
	"errors"
	"math"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/quarrydb/quarry/internal/funcs"
	"github.com/quarrydb/quarry/internal/qerr"
	"github.com/quarrydb/quarry/planner"
)

// Expression evaluation is vectorized: every node of an expression tree is
// evaluated over the whole batch. Numbers go into typed vectors ([]int64 or
// []float64 plus an optional []bool validity), with one tight loop per
// operator and type (the fast path of arithmetic and the numeric-form
// functions); booleans, strings, dates and timestamps are Arrow arrays that
// the registry's general kernels (and casts) compute on. Null propagates;
// integer overflow is an error; division by zero gives null (see
// funcs.AddInt, funcs.DivFloat, ...; scalar functions run their registered
// kernels, the same ones constant folding runs).

// vec is one evaluated expression over a batch of n rows: a number vector,
// or (arr != nil) an Arrow array of any expression type.
type vec struct {
	isInt  bool
	ints   []int64
	floats []float64
	valid  []bool // nil: no nulls
	arr    arrow.Array
}

func (v vec) ok(i int) bool { return v.valid == nil || v.valid[i] }

// vecPool recycles the vectors of one operator across batches.
type vecPool struct {
	ints   [][]int64
	floats [][]float64
	bools  [][]bool
	ni     int
	nf     int
	nb     int
	acct   *acct
	strs   [][]string // string views (compute_cmp.go)
	ns     int
	lend   *lender // computeOp: where lent vectors come back (compute_lend.go); nil: none are lent
}

func (p *vecPool) reset() { p.ni, p.nf, p.nb, p.ns = 0, 0, 0, 0 }

func (p *vecPool) int64s(n int) []int64 { return pooled(&p.ints, &p.ni, n, 8, p.acct, p.lend) }

func (p *vecPool) float64s(n int) []float64 { return pooled(&p.floats, &p.nf, n, 8, p.acct, p.lend) }

func (p *vecPool) boolsN(n int) []bool { return pooled(&p.bools, &p.nb, n, 1, p.acct, nil) }

// pooled returns the next slice of *bufs (*next counts those handed out
// since the last reset) with length n, growing it when needed and charging
// the growth (size bytes an element) to a. A slot emptied by lending its
// vector out (compute_lend.go) first takes one lent earlier and released
// since (charged when it was made).
func pooled[T any](bufs *[][]T, next *int, n, size int, a *acct, l *lender) []T {
	if *next == len(*bufs) {
		*bufs = append(*bufs, nil)
	}
	s := (*bufs)[*next]
	if s == nil {
		if r := fromLender[T](l, n, size); r != nil {
			s = r
			(*bufs)[*next] = s
		}
	}
	if cap(s) < n {
		a.charge(int64(size * (n - cap(s))))
		s = make([]T, n)
		(*bufs)[*next] = s
	}
	*next++
	return s[:n]
}

// evaluator evaluates bound expressions over batches.
type evaluator struct {
	pool vecPool
	name string // the expression being evaluated, for errors
	mem  memory.Allocator
	// made holds the arrays built while evaluating the current expression
	// (released by reset); kernels the prepared kernels of general calls
	// and casts, once per query.
	made    []arrow.Array
	kernels map[planner.Expr]funcs.Kernel
	lowered map[*planner.Binary]*planner.Call   // date/timestamp arithmetic as calls (compute_temporal.go)
	noFast  bool                                // tests: comparisons and AND/OR/NOT by the general kernels (compute_cmp.go)
	likes   map[*planner.Call]func(string) bool // the pattern tests of LIKE / ILIKE calls (compute_like.go)
}

// reset releases the arrays of the previous evaluation and recycles the vectors.
func (ev *evaluator) reset() {
	for _, a := range ev.made {
		a.Release()
	}
	ev.made = ev.made[:0]
	ev.pool.reset()
}

// keep records an array built during the evaluation.
func (ev *evaluator) keep(a arrow.Array) arrow.Array {
	ev.made = append(ev.made, a)
	return a
}

// toArray returns v as an array: number vectors are copied into int64 or
// float64 arrays (released with the evaluation).
func (ev *evaluator) toArray(v vec) arrow.Array {
	switch {
	case v.arr != nil:
		return v.arr
	case v.isInt:
		return ev.keep(buildFixed(ev.mem, arrow.PrimitiveTypes.Int64, v.ints, v.valid))
	}
	return ev.keep(buildFixed(ev.mem, arrow.PrimitiveTypes.Float64, v.floats, v.valid))
}

// fromArray wraps a kernel's result: int64 and float64 arrays become number vectors.
func (ev *evaluator) fromArray(a arrow.Array, n int) (vec, error) {
	switch a.DataType().ID() {
	case arrow.INT64, arrow.FLOAT64:
		return ev.load(a, n)
	}
	return vec{arr: a}, nil
}

// kernelErr is a kernel's failure on a row, for the model.
func kernelErr(name string, err error) error {
	if errors.Is(err, funcs.ErrOverflow) {
		return overflowErr(name)
	}
	e := qerr.Invalid(qerr.CodeInvalidArgument, "evaluating %q: %v", name, err)
	if errors.Is(err, funcs.ErrCast) {
		return e.WithHint("use TRY_CAST to get null for values that do not convert, or filter them out")
	}
	return e
}

func overflowErr(name string) error {
	return qerr.Invalid(qerr.CodeInvalidArgument, "integer overflow evaluating %q: the result does not fit a 64-bit integer", name).
		WithHint("compute in float64 instead, e.g. multiply by 1.0 first (\"qty * 1.0 * price\"), or filter out the extreme rows")
}

// validOf returns an array's validity as []bool, or nil without nulls.
func (ev *evaluator) validOf(arr arrow.Array) []bool {
	if arr.NullN() == 0 {
		return nil
	}
	v := validityOf(arr)
	out := ev.pool.boolsN(arr.Len())
	for i := range out {
		out[i] = v.ok(i)
	}
	return out
}

// and combines two validities.
func (ev *evaluator) and(a, b []bool) []bool {
	switch {
	case a == nil:
		return b
	case b == nil:
		return a
	}
	out := ev.pool.boolsN(len(a))
	for i := range out {
		out[i] = a[i] && b[i]
	}
	return out
}

func widenInts[T integer](vs []T, out []int64) {
	for i, v := range vs {
		out[i] = int64(v)
	}
}

// load reads a numeric column as int64 or float64, and any other column
// as an array (dictionary-encoded strings decoded).
func (ev *evaluator) load(arr arrow.Array, n int) (vec, error) {
	id := arr.DataType().ID()
	switch id {
	case arrow.BOOL, arrow.STRING, arrow.LARGE_STRING, arrow.DATE32, arrow.TIMESTAMP:
		return vec{arr: arr}, nil
	case arrow.DICTIONARY:
		if !isDictStr(arr.DataType()) {
			break
		}
		d, err := decodeDict(ev.mem, arr, funcs.Decoded(arr.DataType()))
		if err != nil {
			return vec{}, err
		}
		return vec{arr: ev.keep(d)}, nil
	}
	v := vec{valid: ev.validOf(arr)}
	switch id {
	case arrow.FLOAT64:
		v.floats = values[float64](arr)
		if v.floats == nil {
			v.floats = ev.pool.float64s(n)
		}
		return v, nil
	case arrow.FLOAT32:
		v.floats = ev.pool.float64s(n)
		for i, x := range values[float32](arr) {
			v.floats[i] = float64(x)
		}
		return v, nil
	case arrow.INT64:
		v.isInt = true
		v.ints = values[int64](arr)
		if v.ints == nil {
			v.ints = ev.pool.int64s(n)
		}
		return v, nil
	}
	v.isInt = true
	v.ints = ev.pool.int64s(n)
	switch id {
	case arrow.INT8:
		widenInts(values[int8](arr), v.ints)
	case arrow.INT16:
		widenInts(values[int16](arr), v.ints)
	case arrow.INT32:
		widenInts(values[int32](arr), v.ints)
	case arrow.UINT8:
		widenInts(values[uint8](arr), v.ints)
	case arrow.UINT16:
		widenInts(values[uint16](arr), v.ints)
	case arrow.UINT32:
		widenInts(values[uint32](arr), v.ints)
	case arrow.UINT64:
		for i, x := range values[uint64](arr) {
			if x > math.MaxInt64 && v.ok(i) {
				return v, overflowErr(ev.name)
			}
			v.ints[i] = int64(x)
		}
	default:
		return v, qerr.Unsupported(qerr.CodeInvalidArgument, "expression %q: column of type %s is not numeric", ev.name, arr.DataType())
	}
	return v, nil
}

// toFloat returns v as float64.
func (ev *evaluator) toFloat(v vec) vec {
	if !v.isInt {
		return v
	}
	out := ev.pool.float64s(len(v.ints))
	for i, x := range v.ints {
		out[i] = float64(x)
	}
	return vec{floats: out, valid: v.valid}
}

// eval evaluates e over a batch of n rows with columns cols.
func (ev *evaluator) eval(e planner.Expr, cols []arrow.Array, n int) (vec, error) {
	switch x := e.(type) {
	case *planner.ColRef:
		if x.Index < 0 || x.Index >= len(cols) {
			return vec{}, qerr.Internal(nil, "expression %q: column %q index %d out of range", ev.name, x.Name, x.Index)
		}
		return ev.load(cols[x.Index], n)
	case *planner.Const:
		if !planner.IsNumberType(x.Typ) {
			return vec{arr: ev.keep(funcs.Broadcast(ev.mem, planner.ConstValue(x), x.Typ, n))}, nil
		}
		v := vec{isInt: x.Typ.ID() == arrow.INT64}
		if x.Null {
			v.valid = ev.pool.boolsN(n)
			clear(v.valid)
		}
		if v.isInt {
			v.ints = ev.pool.int64s(n)
			for i := range v.ints {
				v.ints[i] = x.Int
			}
		} else {
			v.floats = ev.pool.float64s(n)
			for i := range v.floats {
				v.floats[i] = x.Float
			}
		}
		return v, nil
	case *planner.Neg:
		a, err := ev.eval(x.X, cols, n)
		if err != nil {
			return a, err
		}
		if a.isInt {
			out := ev.pool.int64s(n)
			for i, v := range a.ints {
				if v == math.MinInt64 && a.ok(i) {
					return a, overflowErr(ev.name)
				}
				out[i] = -v
			}
			return vec{isInt: true, ints: out, valid: a.valid}, nil
		}
		out := ev.pool.float64s(n)
		for i, v := range a.floats {
			out[i] = -v
		}
		return vec{floats: out, valid: a.valid}, nil
	case *planner.Binary:
		if x.Fn != "" {
			return ev.temporal(x, cols, n)
		}
		l, err := ev.eval(x.L, cols, n)
		if err != nil {
			return l, err
		}
		r, err := ev.eval(x.R, cols, n)
		if err != nil {
			return r, err
		}
		valid := ev.and(l.valid, r.valid)
		if l.isInt && r.isInt && x.Op == '%' {
			return ev.intMod(l.ints, r.ints, valid), nil
		}
		if l.isInt && r.isInt && x.Op != '/' {
			return ev.intBinary(x.Op, l.ints, r.ints, valid)
		}
		return ev.floatBinary(x.Op, ev.toFloat(l).floats, ev.toFloat(r).floats, valid), nil
	case *planner.Call:
		return ev.call(x, cols, n)
	case *planner.Cast:
		return ev.cast(x, cols, n)
	}
	return vec{}, qerr.Internal(nil, "expression %q: unknown node %T", ev.name, e)
}

func (ev *evaluator) intBinary(op byte, a, b []int64, valid []bool) (vec, error) {
	out := ev.pool.int64s(len(a))
	var f func(x, y int64) (int64, bool)
	switch op {
	case '+':
		f = funcs.AddInt
	case '-':
		f = funcs.SubInt
	default:
		f = funcs.MulInt
	}
	if valid == nil {
		switch op { // hot loops without per-row validity checks
		case '+':
			for i := range out {
				r, ok := funcs.AddInt(a[i], b[i])
				if !ok {
					return vec{}, overflowErr(ev.name)
				}
				out[i] = r
			}
		case '-':
			for i := range out {
				r, ok := funcs.SubInt(a[i], b[i])
				if !ok {
					return vec{}, overflowErr(ev.name)
				}
				out[i] = r
			}
		default:
			for i := range out {
				r, ok := funcs.MulInt(a[i], b[i])
				if !ok {
					return vec{}, overflowErr(ev.name)
				}
				out[i] = r
			}
		}
		return vec{isInt: true, ints: out}, nil
	}
	for i := range out {
		if !valid[i] {
			out[i] = 0
			continue
		}
		r, ok := f(a[i], b[i])
		if !ok {
			return vec{}, overflowErr(ev.name)
		}
		out[i] = r
	}
	return vec{isInt: true, ints: out, valid: valid}, nil
}

func (ev *evaluator) floatBinary(op byte, a, b []float64, valid []bool) vec {
	out := ev.pool.float64s(len(a))
	switch op {
	case '+':
		for i := range out {
			out[i] = a[i] + b[i]
		}
	case '-':
		for i := range out {
			out[i] = a[i] - b[i]
		}
	case '*':
		for i := range out {
			out[i] = a[i] * b[i]
		}
	case '/':
		var nv []bool
		for i := range out {
			if b[i] == 0 {
				nv = ev.nullAt(nv, valid, len(out), i)
				out[i] = 0
				continue
			}
			out[i] = a[i] / b[i]
		}
		if nv != nil {
			valid = nv
		}
	case '%':
		var nv []bool
		for i := range out {
			if b[i] == 0 {
				nv = ev.nullAt(nv, valid, len(out), i)
				out[i] = 0
				continue
			}
			out[i] = math.Mod(a[i], b[i])
		}
		if nv != nil {
			valid = nv
		}
	}
	return vec{floats: out, valid: valid}
}

// nullAt marks row i of n null in nv, a copy of valid made on first use
// (division and remainder by zero give null).
func (ev *evaluator) nullAt(nv, valid []bool, n, i int) []bool {
	if nv == nil {
		nv = ev.pool.boolsN(n)
		if valid == nil {
			for j := range nv {
				nv[j] = true
			}
		} else {
			copy(nv, valid)
		}
	}
	nv[i] = false
	return nv
}

// call evaluates a registered scalar function with its kernels (the same
// ones constant folding runs).
func (ev *evaluator) call(c *planner.Call, cols []arrow.Array, n int) (vec, error) {
	if v, ok, err := ev.fastCall(c, cols, n); ok || err != nil {
		return v, err
	}
	d, ok := funcs.LookupScalar(c.Fn)
	if !ok {
		return vec{}, qerr.Invalid(qerr.CodeInvalidArgument, "expression %q: unknown function %q", ev.name, c.Fn)
	}
	if d.General() {
		return ev.general(c, d, cols, n)
	}
	a, err := ev.eval(c.Args[0], cols, n)
	if err != nil {
		return a, err
	}
	digits := int64(0)
	if len(c.Args) == 2 {
		d, ok := c.Args[1].(*planner.Const)
		if !ok || d.Null || d.Typ.ID() != arrow.INT64 {
			return a, qerr.Internal(nil, "expression %q: %s digits must be an integer constant", ev.name, c.Fn)
		}
		digits = d.Int
	}
	if a.isInt && d.FloatResult {
		a = ev.toFloat(a)
	}
	if a.isInt {
		if d.Int == nil {
			return a, nil
		}
		out := ev.pool.int64s(n)
		if !d.Int(out, a.ints, a.valid, digits) {
			return a, overflowErr(ev.name)
		}
		return vec{isInt: true, ints: out, valid: a.valid}, nil
	}
	out := ev.pool.float64s(n)
	d.Float(out, a.floats, digits)
	return vec{floats: out, valid: a.valid}, nil
}

// computeOp appends one computed column per expression to every batch.
type computeOp struct {
	ex    *exec
	in    op
	exprs []planner.NamedExpr
	out   *arrow.Schema
	ev    evaluator
	acct  acct
}

func newComputeOp(ex *exec, n *planner.Compute) (*computeOp, error) {
	in := n.Input.Schema()
	c := &computeOp{ex: ex, exprs: n.Exprs, out: n.Schema(), acct: acct{b: ex.budget}}
	c.ev.pool.acct = &c.acct
	c.ev.pool.lend = &lender{}
	c.ev.mem = ex.alloc
	for _, e := range n.Exprs {
		if e.Expr == nil {
			return nil, qerr.Internal(nil, "compute %q: no expression", e.Name)
		}
		var err error
		planner.WalkExpr(e.Expr, func(x planner.Expr) {
			ref, ok := x.(*planner.ColRef)
			if !ok || err != nil {
				return
			}
			if ref.Index < 0 || ref.Index >= in.NumFields() || in.Field(ref.Index).Name != ref.Name {
				err = qerr.Internal(nil, "compute %q: column %q is not at index %d of the input", e.Name, ref.Name, ref.Index)
				return
			}
			if _, bare := e.Expr.(*planner.ColRef); bare {
				return
			}
			if t := in.Field(ref.Index).Type; !exprInput(t) {
				err = qerr.Unsupported(qerr.CodeInvalidArgument, "expression %q: column %q of type %s cannot be computed on", e.Name, ref.Name, t).
					WithHint("expressions work on number, string, boolean, date and timestamp columns")
			}
		})
		if err != nil {
			return nil, err
		}
		if t := e.Expr.Type(); t == nil {
			return nil, qerr.Internal(nil, "compute %q: expression is not typed", e.Name)
		}
	}
	return c, nil
}

func (c *computeOp) next() (arrow.RecordBatch, error) {
	if err := c.ex.ctx.Err(); err != nil {
		return nil, err
	}
	b, err := c.in.next()
	if err != nil || b == nil {
		return nil, err
	}
	defer b.Release()
	out, err := c.apply(b)
	if err != nil {
		return nil, err
	}
	if err := c.acct.check(); err != nil {
		out.Release()
		return nil, err
	}
	return out, nil
}

func (c *computeOp) apply(b arrow.RecordBatch) (rec arrow.RecordBatch, err error) {
	defer catchBudget(&err)
	n := int(b.NumRows())
	in := b.Columns()
	cols := make([]arrow.Array, 0, len(in)+len(c.exprs))
	cols = append(cols, in...)
	var made []arrow.Array
	defer func() {
		for _, a := range made {
			a.Release()
		}
	}()
	defer c.ev.reset()
	for _, e := range c.exprs {
		if ref, ok := e.Expr.(*planner.ColRef); ok { // a renamed column passes through
			cols = append(cols, in[ref.Index])
			continue
		}
		c.ev.reset()
		c.ev.name = e.Name
		v, err := c.ev.eval(e.Expr, in, n)
		if err != nil {
			return nil, err
		}
		arr := c.ev.lendVector(v)
		if arr == nil {
			arr = ownedArray(c.ex.alloc, v)
		}
		made = append(made, arr)
		cols = append(cols, arr)
	}
	return array.NewRecordBatch(c.out, cols, int64(n)), nil
}

// ownedArray returns v as an array the caller owns (a retained Arrow
// array, or number vectors copied into an int64 or float64 array).
func ownedArray(mem memory.Allocator, v vec) arrow.Array {
	switch {
	case v.arr != nil:
		v.arr.Retain()
		return v.arr
	case v.isInt:
		return buildFixed(mem, arrow.PrimitiveTypes.Int64, v.ints, v.valid)
	}
	return buildFixed(mem, arrow.PrimitiveTypes.Float64, v.floats, v.valid)
}

func (c *computeOp) close() {
	if c.in != nil {
		c.in.close()
	}
	c.ev.reset()
	c.ev.pool = vecPool{acct: &c.acct}
	c.acct.release()
}
