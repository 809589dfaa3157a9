package engine

import (
	"fmt"
	"math"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/quarrydb/quarry/internal/funcs"
	"github.com/quarrydb/quarry/internal/qerr"
	"github.com/quarrydb/quarry/planner"
)

// evalAgg computes an aggregate over every row's frame.
func (w *windowOp) evalAgg(l *winLayout, e planner.WindowExpr) (winResult, error) {
	switch funcs.AggFn(e.Fn) {
	case funcs.AggCount, funcs.AggSum, funcs.AggAvg:
		return w.slideSum(l, e)
	case funcs.AggMin, funcs.AggMax:
		return w.slideMinMax(l, e)
	}
	return w.frameAgg(l, e)
}

// numCol is a numeric column in global row order.
type numCol struct {
	ints   []int64
	floats []float64
	valid  []bool // nil: no nulls
}

func (c *numCol) ok(g int) bool { return c.valid == nil || c.valid[g] }

func (w *windowOp) loadNum(idx int, asFloat bool) (*numCol, error) {
	ev := &evaluator{pool: vecPool{acct: &w.acct}, name: w.n.Input.Schema().Field(idx).Name}
	c := &numCol{}
	if err := w.acct.reserve(int64(8 * w.total)); err != nil {
		return nil, err
	}
	if asFloat {
		c.floats = make([]float64, w.total)
	} else {
		c.ints = make([]int64, w.total)
	}
	for i, ch := range w.chunks {
		ev.pool.reset()
		arr := ch.Column(idx)
		v, err := ev.load(arr, arr.Len())
		if err != nil {
			return nil, err
		}
		if asFloat {
			v = ev.toFloat(v)
			copy(c.floats[w.offs[i]:], v.floats)
		} else {
			copy(c.ints[w.offs[i]:], v.ints)
		}
		if v.valid != nil {
			if c.valid == nil {
				if err := w.acct.reserve(int64(w.total)); err != nil {
					return nil, err
				}
				c.valid = make([]bool, w.total)
				for j := range c.valid[:w.offs[i]] {
					c.valid[j] = true
				}
			}
			copy(c.valid[w.offs[i]:], v.valid)
		} else if c.valid != nil {
			for j := range arr.Len() {
				c.valid[w.offs[i]+j] = true
			}
		}
	}
	return c, nil
}

// slider holds the running count and sum of a frame.
type slider struct {
	cnt             int64
	isum            int64
	fsum            float64
	nan, pinf, ninf int64
	overflow        bool
}

func (s *slider) add(c *numCol, g int, sign int64) {
	if c == nil {
		s.cnt += sign
		return
	}
	if !c.ok(g) {
		return
	}
	s.cnt += sign
	if c.ints != nil {
		var o bool
		if sign > 0 {
			s.isum, o = addOverflow(s.isum, c.ints[g])
		} else {
			s.isum, o = subOverflow(s.isum, c.ints[g])
		}
		s.overflow = s.overflow || o
		return
	}
	switch x := c.floats[g]; {
	case x != x:
		s.nan += sign
	case math.IsInf(x, 1):
		s.pinf += sign
	case math.IsInf(x, -1):
		s.ninf += sign
	case sign > 0:
		s.fsum += x
	default:
		s.fsum -= x
	}
}

func (s *slider) float() float64 {
	r := s.fsum
	if s.pinf > 0 {
		r += math.Inf(1)
	}
	if s.ninf > 0 {
		r += math.Inf(-1)
	}
	if s.nan > 0 {
		r = math.NaN()
	}
	return r
}

func subOverflow(a, b int64) (int64, bool) {
	d := a - b
	return d, (a >= 0) != (b >= 0) && (d >= 0) != (a >= 0)
}

// slideSum computes count, sum and avg by sliding the frame forward.
func (w *windowOp) slideSum(l *winLayout, e planner.WindowExpr) (winResult, error) {
	fn := funcs.AggFn(e.Fn)
	var col *numCol
	scale := -1 // a float sum's or avg's input made exact (window_decimal.go)
	if e.Col != "*" {
		var err error
		intSum := fn == funcs.AggSum && funcs.IsInteger(w.n.Input.Schema().Field(e.Index).Type)
		if fn != funcs.AggCount {
			if col, err = w.loadNum(e.Index, !intSum); err != nil {
				return nil, err
			}
			if !intSum {
				if scale, err = w.decWindowInput(col, w.n.Input.Schema().Field(e.Index).Type); err != nil {
					return nil, err
				}
			}
		} else {
			if err := w.acct.reserve(int64(w.total)); err != nil {
				return nil, err
			}
			col = &numCol{valid: make([]bool, w.total)}
			for i, ch := range w.chunks {
				v := validityOf(ch.Column(e.Index))
				for r := range int(ch.NumRows()) {
					col.valid[w.offs[i]+r] = v.ok(r)
				}
			}
			col.ints = []int64{} // count reads validity only
		}
	}
	n := w.total
	if err := w.acct.reserve(int64(9 * n)); err != nil {
		return nil, err
	}
	var ir *intResult
	var fr *floatResult
	isInt := fn == funcs.AggCount || arrow.TypeEqual(e.Type, arrow.PrimitiveTypes.Int64)
	if isInt {
		ir = &intResult{vals: make([]int64, n)}
		if fn != funcs.AggCount {
			ir.valid = make([]bool, n)
		}
	} else {
		fr = &floatResult{vals: make([]float64, n), valid: make([]bool, n)}
	}
	gOf := func(pos int) int { return int(l.gidx[pos]) }
	for p := 0; p+1 < len(l.segs); p++ {
		lo, hi := int(l.segs[p]), int(l.segs[p+1])
		var st slider
		ws, we := lo, lo
		for i := lo; i < hi; i++ {
			s, t := l.frame(e.Frame, lo, hi, i)
			g := gOf(i)
			if s >= t {
				continue // empty frame: count 0, sum and avg null
			}
			if s >= we {
				st, ws, we = slider{}, s, s
			}
			for ; we < t; we++ {
				if fn == funcs.AggCount && col != nil {
					if col.valid[gOf(we)] {
						st.cnt++
					}
					continue
				}
				st.add(col, gOf(we), 1)
			}
			for ; ws < s; ws++ {
				if fn == funcs.AggCount && col != nil {
					if col.valid[gOf(ws)] {
						st.cnt--
					}
					continue
				}
				st.add(col, gOf(ws), -1)
			}
			if st.overflow {
				return nil, qerr.Invalid(qerr.CodeInvalidAggregate, "sum(%s) over a window overflows int64", e.Col).
					WithHint("sum a float column (an expression such as %s * 1.0) instead", e.Col)
			}
			switch {
			case fn == funcs.AggCount:
				ir.vals[g] = st.cnt
			case st.cnt == 0:
			case isInt:
				ir.vals[g], ir.valid[g] = st.isum, true
			case scale >= 0 && fn == funcs.AggSum:
				fr.vals[g], fr.valid[g] = decQuo(st.isum, 1, scale), true
			case scale >= 0:
				fr.vals[g], fr.valid[g] = decQuo(st.isum, st.cnt, scale), true
			case fn == funcs.AggSum:
				fr.vals[g], fr.valid[g] = st.float(), true
			default:
				fr.vals[g], fr.valid[g] = st.float()/float64(st.cnt), true
			}
		}
	}
	if isInt {
		return ir, nil
	}
	return fr, nil
}

// slideMinMax computes min and max with a monotonic deque of frame positions.
func (w *windowOp) slideMinMax(l *winLayout, e planner.WindowExpr) (winResult, error) {
	dt := w.n.Input.Schema().Field(e.Index).Type
	key := newSortKey(dt, false)
	if key == nil {
		return nil, qerr.Unsupported(qerr.CodeInvalidAggregate, "%s is not supported on column %q of type %s", e.Fn, e.Col, dt)
	}
	if err := w.acct.reserve(key.bytes(w.total)); err != nil {
		return nil, err
	}
	for _, ch := range w.chunks {
		key.add(ch.Column(e.Index))
	}
	defer key.reset()
	valid := make([]validity, len(w.chunks))
	nans := make([]func(int) bool, len(w.chunks))
	for i, ch := range w.chunks {
		a := ch.Column(e.Index)
		valid[i] = validityOf(a)
		switch dt.ID() {
		case arrow.FLOAT64:
			vs := values[float64](a)
			nans[i] = func(r int) bool { return vs[r] != vs[r] }
		case arrow.FLOAT32:
			vs := values[float32](a)
			nans[i] = func(r int) bool { return vs[r] != vs[r] }
		}
	}
	isMax := funcs.AggFn(e.Fn) == funcs.AggMax
	out, err := w.newRefResult(e)
	if err != nil {
		return nil, err
	}
	dq := make([]int, 0, 64)
	for p := 0; p+1 < len(l.segs); p++ {
		lo, hi := int(l.segs[p]), int(l.segs[p+1])
		dq = dq[:0]
		head, nanCnt, lastNaN := 0, 0, -1
		ws, we := lo, lo
		isNaN := func(pos int) bool {
			r := l.perm[pos]
			return nans[r.b] != nil && nans[r.b](int(r.r))
		}
		for i := lo; i < hi; i++ {
			s, t := l.frame(e.Frame, lo, hi, i)
			if s >= t {
				continue
			}
			if s >= we {
				dq, head, nanCnt, ws, we = dq[:0], 0, 0, s, s
			}
			for ; we < t; we++ {
				r := l.perm[we]
				if !valid[r.b].ok(int(r.r)) {
					continue
				}
				if isNaN(we) {
					nanCnt++
					lastNaN = we
					continue
				}
				for len(dq) > head {
					c := key.compare(l.perm[dq[len(dq)-1]], r)
					if isMax {
						c = -c
					}
					if c <= 0 {
						break
					}
					dq = dq[:len(dq)-1]
				}
				dq = append(dq, we)
			}
			for ; ws < s; ws++ {
				r := l.perm[ws]
				if valid[r.b].ok(int(r.r)) && isNaN(ws) {
					nanCnt--
				}
			}
			for head < len(dq) && dq[head] < s {
				head++
			}
			if head > 1024 && head > len(dq)/2 {
				dq = append(dq[:0], dq[head:]...)
				head = 0
			}
			g := int(l.gidx[i])
			switch {
			case head < len(dq):
				out.refs[g] = l.perm[dq[head]]
			case nanCnt > 0:
				out.refs[g] = l.perm[lastNaN]
			}
		}
	}
	return out, nil
}

// wholePartition reports a frame that is every row of the partition.
func wholePartition(e planner.WindowExpr) bool {
	f := e.Frame
	return f.Start.Kind == planner.UnboundedPreceding &&
		(f.End.Kind == planner.UnboundedFollowing || (f.Range && f.End.Kind == planner.CurrentRow && len(e.OrderBy) == 0))
}

// colGatherer gathers rows of columns of the input chunks (an aggregate's
// input and, for a two-column aggregate, its arg: see aggInputs).
func (w *windowOp) colGatherer(idx ...int) (*gatherer, func()) {
	in := w.n.Input.Schema()
	fields := make([]arrow.Field, len(idx))
	for j, k := range idx {
		fields[j] = arrow.Field{Name: fmt.Sprint("v", j), Type: in.Field(k).Type, Nullable: true}
	}
	schema := arrow.NewSchema(fields, nil)
	batches := make([]arrow.RecordBatch, len(w.chunks))
	for i, ch := range w.chunks {
		cols := make([]arrow.Array, len(idx))
		for j, k := range idx {
			cols[j] = ch.Column(k)
		}
		batches[i] = array.NewRecordBatch(schema, cols, ch.NumRows())
	}
	return newGatherer(schema, batches), func() {
		for _, b := range batches {
			b.Release()
		}
	}
}

// frameAgg runs an aggregate's group kernel: once per partition for a
// whole-partition frame, else once per row over the row's frame.
func (w *windowOp) frameAgg(l *winLayout, e planner.WindowExpr) (res winResult, err error) {
	defer catchBudget(&err)
	in := w.n.Input.Schema()
	ae := planner.AggExpr{Fn: planner.AggFn(e.Fn), Q: e.Q, Col: e.Col, Index: e.Index, Arg: e.ArgCol + e.ArgText, ArgIndex: e.ArgIndex, Name: e.Name, Type: e.Type}
	newState := func() (aggState, error) {
		s, dt, err := newAggState(ae, in, &w.acct, map[int]*collector{})
		if err == nil && !arrow.TypeEqual(dt, e.Type) {
			err = qerr.Internal(nil, "window %s produces %s but the plan says %s", e.Name, dt, e.Type)
		}
		return s, err
	}
	finish := func(s aggState, n int, mem memory.Allocator) (arrow.Array, error) {
		if f, ok := s.(finishingState); ok {
			if err := f.finish(); err != nil {
				return nil, err
			}
		}
		a := s.build(mem, 0, n)
		if r, ok := s.(releasingState); ok {
			r.release()
		}
		return a, nil
	}
	if err := w.acct.reserve(int64(8 * w.total)); err != nil {
		return nil, err
	}
	out := &refResult{dt: e.Type, refs: make([]rowRef, w.total), owned: true}
	defer func() {
		if err != nil {
			out.release()
		}
	}()
	nparts := len(l.segs) - 1
	if wholePartition(e) {
		return w.partitionAgg(l, e, out, newState, finish)
	}
	// Frame by frame: blocks of output positions, each a batch of groups.
	var work int64
	for p := range nparts {
		lo, hi := int(l.segs[p]), int(l.segs[p+1])
		for i := lo; i < hi; i++ {
			if s, t := l.frame(e.Frame, lo, hi, i); t > s {
				work += int64(t - s)
			}
		}
	}
	if work > maxFrameWork {
		return nil, qerr.Limit(qerr.CodeResourceExhausted, "%s over these frames reads %d rows in total; the limit is %d", e.Fn, work, maxFrameWork).
			WithHint("use a whole-partition frame, smaller rows frames, or sum/avg/count/min/max (computed incrementally)")
	}
	g, done := w.colGatherer(aggInputs(e)...)
	defer done()
	var refs []rowRef
	var gids []int32
	flush := func(outPos []int) error {
		s, err := newState()
		if err != nil {
			return err
		}
		s.grow(len(outPos))
		for rest, rg := refs, gids; len(rest) > 0; {
			b, err := g.gather(w.ex.alloc, w.ex.soft, rest)
			if err != nil {
				return err
			}
			k := int(b.NumRows())
			err = updateAgg(s, b.Columns(), rg[:k])
			b.Release()
			if err != nil {
				return err
			}
			rest, rg = rest[k:], rg[k:]
		}
		a, err := finish(s, len(outPos), w.ex.soft)
		if err != nil {
			return err
		}
		c := int32(len(out.srcs))
		out.srcs = append(out.srcs, a)
		for j, pos := range outPos {
			out.refs[int(l.gidx[pos])] = rowRef{c, int32(j)}
		}
		return nil
	}
	var outPos []int
	for p := range nparts {
		lo, hi := int(l.segs[p]), int(l.segs[p+1])
		for i := lo; i < hi; i++ {
			s, t := l.frame(e.Frame, lo, hi, i)
			for j := s; j < t; j++ {
				refs = append(refs, l.perm[j])
				gids = append(gids, int32(len(outPos)))
			}
			outPos = append(outPos, i)
			if len(refs) >= 1<<20 || len(outPos) >= w.ex.batchSize {
				if err := flush(outPos); err != nil {
					return nil, err
				}
				refs, gids, outPos = refs[:0], gids[:0], outPos[:0]
			}
		}
	}
	if len(outPos) > 0 {
		if err := flush(outPos); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// partitionAgg runs the aggregate once per partition (a whole-partition
// frame) and points every row at its partition's result.
func (w *windowOp) partitionAgg(l *winLayout, e planner.WindowExpr, out *refResult, newState func() (aggState, error),
	finish func(aggState, int, memory.Allocator) (arrow.Array, error)) (winResult, error) {
	nparts := len(l.segs) - 1
	s, err := newState()
	if err != nil {
		return nil, err
	}
	if err := w.acct.reserve(int64(nparts)*s.groupBytes() + int64(4*w.total)); err != nil {
		return nil, err
	}
	s.grow(nparts)
	pids := make([]int32, w.total)
	for p := range nparts {
		for _, r := range l.perm[l.segs[p]:l.segs[p+1]] {
			g := w.global(r)
			pids[g] = int32(p)
			out.refs[g] = rowRef{0, int32(p)}
		}
	}
	if len(l.keys) == 0 { // input order is partition order
		for i, ch := range w.chunks {
			var cols []arrow.Array
			for _, k := range aggInputs(e) {
				cols = append(cols, ch.Column(k))
			}
			if err := updateAgg(s, cols, pids[w.offs[i]:w.offs[i]+int(ch.NumRows())]); err != nil {
				return nil, err
			}
		}
	} else { // feed the rows in partition order (first, last, float sums depend on it)
		g, done := w.colGatherer(aggInputs(e)...)
		defer done()
		gids := make([]int32, 0, w.ex.batchSize)
		for rest := l.perm; len(rest) > 0; {
			b, err := g.gather(w.ex.alloc, w.ex.soft, rest[:min(len(rest), w.ex.batchSize)])
			if err != nil {
				return nil, err
			}
			k := int(b.NumRows())
			gids = gids[:0]
			for _, r := range rest[:k] {
				gids = append(gids, pids[w.global(r)])
			}
			err = updateAgg(s, b.Columns(), gids)
			b.Release()
			if err != nil {
				return nil, err
			}
			rest = rest[k:]
		}
	}
	a, err := finish(s, nparts, w.ex.soft)
	if err != nil {
		return nil, err
	}
	out.srcs = append(out.srcs, a)
	return out, nil
}

// aggInputs are the input columns of a window aggregate: its column and,
// for corr, covar_*, regr_* and arg_min/arg_max, its arg column.
func aggInputs(e planner.WindowExpr) []int {
	if e.ArgIndex >= 0 {
		return []int{e.Index, e.ArgIndex}
	}
	return []int{e.Index}
}

// updateAgg folds rows of an aggregate's input columns (aggInputs) into s.
func updateAgg(s aggState, cols []arrow.Array, gids []int32) error {
	if len(cols) == 2 {
		return s.(pairState).update2(cols[0], cols[1], gids)
	}
	return s.update(cols[0], gids)
}
