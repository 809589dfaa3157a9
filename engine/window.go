package engine

import (
	"fmt"
	"math"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/quarrydb/quarry/internal/funcs"
	"github.com/quarrydb/quarry/internal/qerr"
	"github.com/quarrydb/quarry/planner"
)

// windowOp evaluates the window functions of a planner.Window. It retains
// its whole input, then, per distinct (partition, order) layout of its
// expressions: hash-partitions the rows (group table, first-seen order),
// buckets them by partition (counting sort, input order kept), sorts each
// partition by the order keys (ties in input order) and computes every
// expression of that layout partition by partition. Results are written
// per input row, so the output is the input batches, unchanged and in
// input order, with one column appended per expression.
//
// Frames are evaluated incrementally: row counts, ranks and offsets in
// O(1) per row; count, sum and avg over any frame by sliding (frames only
// move forward); min and max with a monotonic deque; the other aggregates
// once per partition for a whole-partition frame, else over each row's
// frame (cost: the sum of the frame sizes, capped by maxFrameWork).
type windowOp struct {
	ex      *exec
	in      op
	n       *planner.Window
	out     *arrow.Schema
	chunks  []arrow.RecordBatch
	offs    []int // global row number of each chunk's first row
	total   int
	results []winResult
	acct    acct
	done    bool
	emitted int
	closed  bool
}

// maxFrameWork bounds the rows fed to a frame-by-frame aggregate.
const maxFrameWork = 50_000_000

// winResult is one expression's output for every input row (global row order).
type winResult interface {
	build(w *windowOp, lo, hi int) (arrow.Array, error)
	release()
}

func newWindowOp(ex *exec, n *planner.Window) (*windowOp, error) {
	in := n.Input.Schema()
	for _, e := range n.Exprs {
		for _, k := range e.PartIdx {
			if k < 0 || k >= in.NumFields() || !supportedCompute(in.Field(k).Type) {
				return nil, qerr.Internal(nil, "window %s: bad partition column index %d", e.Name, k)
			}
		}
		for _, k := range e.OrderBy {
			if k.Index < 0 || k.Index >= in.NumFields() || newSortKey(in.Field(k.Index).Type, k.Desc) == nil {
				return nil, qerr.Internal(nil, "window %s: bad order column %q", e.Name, k.Col)
			}
		}
		if e.Col != "" && e.Col != "*" && (e.Index < 0 || e.Index >= in.NumFields()) {
			return nil, qerr.Internal(nil, "window %s: column index %d out of range", e.Name, e.Index)
		}
	}
	return &windowOp{ex: ex, n: n, out: n.Schema(), acct: acct{b: ex.budget}}, nil
}

func (w *windowOp) consume() error {
	for {
		if err := w.ex.ctx.Err(); err != nil {
			return err
		}
		b, err := w.in.next()
		if err != nil {
			return err
		}
		if b == nil {
			break
		}
		w.offs = append(w.offs, w.total)
		w.chunks = append(w.chunks, b)
		w.total += int(b.NumRows())
		if w.total > math.MaxInt32 {
			return qerr.Limit(qerr.CodeResourceExhausted, "window functions over more than %d rows are not supported", math.MaxInt32).
				WithHint("filter the rows first")
		}
		if err := w.acct.check(); err != nil {
			return err
		}
	}
	w.in.close()
	layouts := map[string]*winLayout{}
	for _, e := range w.n.Exprs {
		key := fmt.Sprint(e.PartIdx, e.OrderBy)
		l, ok := layouts[key]
		if !ok {
			var err error
			if l, err = w.layout(e); err != nil {
				return err
			}
			layouts[key] = l
		}
		r, err := w.eval(l, e)
		if err != nil {
			return err
		}
		w.results = append(w.results, r)
		if err := w.acct.check(); err != nil {
			return err
		}
	}
	w.done = true
	return nil
}

// winLayout is the rows of the input in (partition, order) order.
type winLayout struct {
	perm  []rowRef
	gidx  []int32 // per perm position: the row's global number
	segs  []int32 // partition p is perm[segs[p]:segs[p+1]]
	keys  []sortKey
	peerS []int32    // per perm position: first position of its peer group (lazy)
	peerE []int32    // per perm position: end of its peer group (lazy)
	rk    *rangeKeys // the order key of range frames with offsets (lazy)
}

func (w *windowOp) global(r rowRef) int { return w.offs[r.b] + int(r.r) }

func (w *windowOp) layout(e planner.WindowExpr) (*winLayout, error) {
	in := w.n.Input.Schema()
	l := &winLayout{}
	n := w.total
	if err := w.acct.reserve(int64(8 * n)); err != nil {
		return nil, err
	}
	l.perm = make([]rowRef, n)
	if len(e.PartIdx) == 0 {
		l.segs = []int32{0, int32(n)}
		i := 0
		for c, ch := range w.chunks {
			for r := range int(ch.NumRows()) {
				l.perm[i] = rowRef{int32(c), int32(r)}
				i++
			}
		}
	} else {
		types := make([]arrow.DataType, len(e.PartIdx))
		for i, k := range e.PartIdx {
			types[i] = in.Field(k).Type
		}
		t := newGroupTable(types, false, &w.acct)
		defer t.reset()
		if err := w.acct.reserve(int64(4 * n)); err != nil {
			return nil, err
		}
		pids := make([]int32, n)
		cols := make([]arrow.Array, len(e.PartIdx))
		for c, ch := range w.chunks {
			for i, k := range e.PartIdx {
				cols[i] = ch.Column(k)
			}
			copy(pids[w.offs[c]:], t.assign(cols, int(ch.NumRows())))
		}
		if err := w.acct.reserve(8 * int64(t.n+1)); err != nil { // segs, next
			return nil, err
		}
		l.segs = make([]int32, t.n+1)
		for _, p := range pids {
			l.segs[p+1]++
		}
		for p := 1; p < len(l.segs); p++ {
			l.segs[p] += l.segs[p-1]
		}
		next := slices.Clone(l.segs[:t.n])
		for c, ch := range w.chunks {
			for r := range int(ch.NumRows()) {
				p := pids[w.offs[c]+r]
				l.perm[next[p]] = rowRef{int32(c), int32(r)}
				next[p]++
			}
		}
		w.acct.charge(-4*int64(n) - 4*int64(t.n)) // pids, next
	}
	for _, k := range e.OrderBy {
		sk := newSortKey(in.Field(k.Index).Type, k.Desc)
		if err := w.acct.reserve(sk.bytes(n)); err != nil {
			return nil, err
		}
		for _, ch := range w.chunks {
			sk.add(ch.Column(k.Index))
		}
		l.keys = append(l.keys, sk)
	}
	if len(l.keys) > 0 {
		if err := w.sortPartitions(l); err != nil {
			return nil, err
		}
	}
	if err := w.acct.reserve(int64(4 * n)); err != nil {
		return nil, err
	}
	l.gidx = make([]int32, n)
	for i, r := range l.perm {
		l.gidx[i] = int32(w.offs[r.b]) + r.r
	}
	return l, nil
}

// parallelSortRows is the rows per goroutine sorting partitions (a
// variable so that tests can exercise the parallel path on small inputs).
var parallelSortRows = 65536

// sortPartitions sorts every partition of l by the order keys, on up to
// GOMAXPROCS goroutines (at most 4) taking blocks of partitions in turn;
// the comparators only read the retained chunks.
func (w *windowOp) sortPartitions(l *winLayout) error {
	nparts := len(l.segs) - 1
	workers := min(runtime.GOMAXPROCS(0), 4, max(1, len(l.perm)/parallelSortRows))
	var next atomic.Int64
	const block = 64
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				p0 := int(next.Add(block)) - block
				if p0 >= nparts || w.ex.ctx.Err() != nil {
					return
				}
				for p := p0; p < min(p0+block, nparts); p++ {
					slices.SortFunc(l.perm[l.segs[p]:l.segs[p+1]], l.compare)
				}
			}
		}()
	}
	wg.Wait()
	return w.ex.ctx.Err()
}

// peerCmp compares two rows on the order keys only.
func (l *winLayout) peerCmp(a, b rowRef) int {
	for _, k := range l.keys {
		if c := k.compare(a, b); c != 0 {
			return c
		}
	}
	return 0
}

func (l *winLayout) compare(a, b rowRef) int { return compareRows(l.keys, a, b) }

// peers computes the peer groups (rows of a partition with equal order
// keys; without keys the whole partition).
func (l *winLayout) peers(a *acct) error {
	if l.peerS != nil {
		return nil
	}
	n := len(l.perm)
	if err := a.reserve(int64(8 * n)); err != nil {
		return err
	}
	l.peerS, l.peerE = make([]int32, n), make([]int32, n)
	for p := 0; p+1 < len(l.segs); p++ {
		lo, hi := int(l.segs[p]), int(l.segs[p+1])
		start := lo
		for i := lo; i < hi; i++ {
			if i > lo && len(l.keys) > 0 && l.peerCmp(l.perm[i-1], l.perm[i]) != 0 {
				start = i
			}
			l.peerS[i] = int32(start)
		}
		end := hi
		for i := hi - 1; i >= lo; i-- {
			l.peerE[i] = int32(end)
			if int(l.peerS[i]) == i {
				end = i
			}
		}
	}
	return nil
}

// frame returns the frame [s, e) of perm position i in the partition [lo, hi).
func (l *winLayout) frame(f planner.Frame, lo, hi, i int) (int, int) {
	bound := func(b planner.FrameBound, end bool) int {
		var x int
		if f.Range && (b.Kind == planner.Preceding || b.Kind == planner.Following) {
			return l.rk.bound(b, end, lo, hi, i, l.peerS, l.peerE)
		}
		switch b.Kind {
		case planner.UnboundedPreceding:
			return lo
		case planner.UnboundedFollowing:
			return hi
		case planner.CurrentRow:
			if f.Range {
				if end {
					return int(l.peerE[i])
				}
				return int(l.peerS[i])
			}
			x = i
		case planner.Preceding:
			x = i - int(min(b.N, int64(hi-lo)+1))
		case planner.Following:
			x = i + int(min(b.N, int64(hi-lo)+1))
		}
		if end {
			x++
		}
		return min(max(x, lo), hi)
	}
	return bound(f.Start, false), bound(f.End, true)
}

func (w *windowOp) eval(l *winLayout, e planner.WindowExpr) (winResult, error) {
	n := w.total
	needPeers := e.Frame.Range || e.Fn == funcs.WinRank || e.Fn == funcs.WinDenseRank ||
		e.Fn == funcs.WinPercentRank || e.Fn == funcs.WinCumeDist
	if needPeers {
		if err := l.peers(&w.acct); err != nil {
			return nil, err
		}
	}
	if f := e.Frame; f.Range && (f.Start.Kind == planner.Preceding || f.Start.Kind == planner.Following ||
		f.End.Kind == planner.Preceding || f.End.Kind == planner.Following) {
		if len(e.OrderBy) != 1 || !planner.RangeOffsetType(w.n.Input.Schema().Field(e.OrderBy[0].Index).Type) {
			return nil, qerr.Internal(nil, "window %s: a range frame with offsets needs one numeric, date or timestamp order key", e.Name)
		}
		if _, err := w.rangeKeys(l, e.OrderBy[0]); err != nil {
			return nil, err
		}
	}
	switch e.Fn {
	case funcs.WinRowNumber, funcs.WinRank, funcs.WinDenseRank, funcs.WinNtile:
		if err := w.acct.reserve(int64(8 * n)); err != nil {
			return nil, err
		}
		out := &intResult{vals: make([]int64, n)}
		for p := 0; p+1 < len(l.segs); p++ {
			lo, hi := int(l.segs[p]), int(l.segs[p+1])
			m := int64(hi - lo)
			dense := int64(0)
			for i := lo; i < hi; i++ {
				var v int64
				switch e.Fn {
				case funcs.WinRowNumber:
					v = int64(i-lo) + 1
				case funcs.WinRank:
					v = int64(int(l.peerS[i])-lo) + 1
				case funcs.WinDenseRank:
					if int(l.peerS[i]) == i {
						dense++
					}
					v = dense
				case funcs.WinNtile:
					v = ntile(int64(i-lo), m, e.Arg)
				}
				out.vals[int(l.gidx[i])] = v
			}
		}
		return out, nil
	case funcs.WinPercentRank, funcs.WinCumeDist:
		if err := w.acct.reserve(int64(8 * n)); err != nil {
			return nil, err
		}
		out := &floatResult{vals: make([]float64, n)}
		for p := 0; p+1 < len(l.segs); p++ {
			lo, hi := int(l.segs[p]), int(l.segs[p+1])
			m := float64(hi - lo)
			for i := lo; i < hi; i++ {
				var v float64
				if e.Fn == funcs.WinCumeDist {
					v = float64(int(l.peerE[i])-lo) / m
				} else if hi-lo > 1 {
					v = float64(int(l.peerS[i])-lo) / (m - 1)
				}
				out.vals[int(l.gidx[i])] = v
			}
		}
		return out, nil
	case funcs.WinLag, funcs.WinLead, funcs.WinFirstValue, funcs.WinLastValue, funcs.WinNthValue:
		out, err := w.newRefResult(e)
		if err != nil {
			return nil, err
		}
		for p := 0; p+1 < len(l.segs); p++ {
			lo, hi := int(l.segs[p]), int(l.segs[p+1])
			for i := lo; i < hi; i++ {
				src := -1
				switch e.Fn {
				case funcs.WinLag:
					if int64(i-lo) >= e.Arg {
						src = i - int(e.Arg)
					}
				case funcs.WinLead:
					if int64(hi-1-i) >= e.Arg {
						src = i + int(e.Arg)
					}
				default:
					s, t := l.frame(e.Frame, lo, hi, i)
					switch {
					case s >= t:
					case e.Fn == funcs.WinFirstValue:
						src = s
					case e.Fn == funcs.WinLastValue:
						src = t - 1
					case int64(t-s) >= e.Arg:
						src = s + int(e.Arg) - 1
					}
				}
				if src >= 0 {
					out.refs[int(l.gidx[i])] = l.perm[src]
				} else if e.Default != nil && (e.Fn == funcs.WinLag || e.Fn == funcs.WinLead) {
					out.refs[int(l.gidx[i])] = defaultRef
				}
			}
		}
		return out, nil
	}
	return w.evalAgg(l, e)
}

// ntile is the 1-based bucket of row i of m rows in k buckets (the first
// m%k buckets hold one row more).
func ntile(i, m, k int64) int64 {
	q, r := m/k, m%k
	if big := r * (q + 1); i < big {
		return i/(q+1) + 1
	} else if q > 0 {
		return (i-big)/q + r + 1
	}
	return i + 1
}

// intResult is an int64 column (nil valid: no nulls).
type intResult struct {
	vals  []int64
	valid []bool
}

func (r *intResult) build(w *windowOp, lo, hi int) (arrow.Array, error) {
	var valid []bool
	if r.valid != nil {
		valid = r.valid[lo:hi]
	}
	return buildFixed(w.ex.alloc, arrow.PrimitiveTypes.Int64, r.vals[lo:hi], valid), nil
}

func (r *intResult) release() {}

// floatResult is a float64 column (nil valid: no nulls).
type floatResult struct {
	vals  []float64
	valid []bool
}

func (r *floatResult) build(w *windowOp, lo, hi int) (arrow.Array, error) {
	var valid []bool
	if r.valid != nil {
		valid = r.valid[lo:hi]
	}
	return buildFixed(w.ex.alloc, arrow.PrimitiveTypes.Float64, r.vals[lo:hi], valid), nil
}

func (r *floatResult) release() {}

// refResult is a column of values copied from source rows: refs[g] is the
// row (of srcs) whose value row g takes, b < 0 for null.
type refResult struct {
	dt    arrow.DataType // output type
	refs  []rowRef
	srcs  []arrow.Array
	owned bool // srcs were built here and are released with the result
	g     *gatherer
	views [][]string // dictionary-encoded sources: the values as strings
	tmp   []rowRef
	def   *planner.Literal // the value of the rows referring to defaultRef (lag/lead default)
}

func (w *windowOp) newRefResult(e planner.WindowExpr) (*refResult, error) {
	if err := w.acct.reserve(int64(8 * w.total)); err != nil {
		return nil, err
	}
	r := &refResult{dt: e.Type, refs: make([]rowRef, w.total), def: e.Default}
	for i := range r.refs {
		r.refs[i] = rowRef{-1, -1}
	}
	for _, ch := range w.chunks {
		r.srcs = append(r.srcs, ch.Column(e.Index))
	}
	return r, nil
}

func (r *refResult) build(w *windowOp, lo, hi int) (out arrow.Array, err error) {
	defer catchBudget(&err)
	refs := r.refs[lo:hi]
	if len(r.srcs) > 0 && isDictStr(r.srcs[0].DataType()) {
		if r.views == nil {
			for _, a := range r.srcs {
				if err := w.acct.reserve(int64(16 * a.Len())); err != nil {
					return nil, err
				}
				r.views = append(r.views, dictRowViews(a, nil, nil))
			}
		}
		vals, valid := make([]string, len(refs)), make([]bool, len(refs))
		for i, ref := range refs {
			if ref.b >= 0 && r.srcs[ref.b].IsValid(int(ref.r)) {
				vals[i], valid[i] = r.views[ref.b][ref.r], true
			} else if ref == defaultRef {
				vals[i], valid[i] = r.def.Value.(string), true
			}
		}
		return buildStrings(w.ex.alloc, r.dt, vals, valid), nil
	}
	if r.g == nil {
		schema := arrow.NewSchema([]arrow.Field{{Name: "v", Type: r.dt, Nullable: true}}, nil)
		batches := make([]arrow.RecordBatch, 0, len(r.srcs)+1)
		for _, a := range r.srcs {
			batches = append(batches, array.NewRecordBatch(schema, []arrow.Array{a}, int64(a.Len())))
		}
		null := array.MakeArrayOfNull(w.ex.soft, r.dt, 1)
		if r.def != nil { // the default's one-row array replaces the null one
			null.Release()
			if null, err = literalArray(w.ex.soft, r.dt, r.def); err != nil {
				return nil, err
			}
		}
		batches = append(batches, array.NewRecordBatch(schema, []arrow.Array{null}, 1))
		null.Release()
		r.g = newGatherer(schema, batches)
		for _, b := range batches {
			defer b.Release() // the gatherer keeps the arrays (retained by srcs, and the null one below)
		}
		r.g.cols[0].arrs[len(batches)-1].Retain()
	}
	r.tmp = slices.Grow(r.tmp[:0], len(refs))
	nullChunk := int32(len(r.srcs))
	for _, ref := range refs {
		if ref.b < 0 { // with a default, only defaultRef rows point past the sources (to the default)
			ref = rowRef{nullChunk, 0}
		}
		r.tmp = append(r.tmp, ref)
	}
	b, err := r.g.gather(w.ex.alloc, w.ex.soft, r.tmp)
	if err != nil {
		return nil, err
	}
	defer b.Release()
	col := b.Column(0)
	col.Retain()
	return col, nil
}

func (r *refResult) release() {
	if r.g != nil {
		arrs := r.g.cols[0].arrs
		arrs[len(arrs)-1].Release()
		r.g = nil
	}
	if r.owned {
		for _, a := range r.srcs {
			a.Release()
		}
	}
	r.srcs = nil
}

func (w *windowOp) next() (arrow.RecordBatch, error) {
	if err := w.ex.ctx.Err(); err != nil {
		return nil, err
	}
	if w.closed {
		return nil, nil
	}
	if !w.done {
		if err := w.consume(); err != nil {
			return nil, err
		}
	}
	if w.emitted >= len(w.chunks) {
		w.close()
		return nil, nil
	}
	c := w.emitted
	ch := w.chunks[c]
	lo, hi := w.offs[c], w.offs[c]+int(ch.NumRows())
	cols := make([]arrow.Array, 0, w.out.NumFields())
	defer func() {
		for _, a := range cols {
			a.Release()
		}
	}()
	for _, a := range ch.Columns() {
		a.Retain()
		cols = append(cols, a)
	}
	for _, r := range w.results {
		a, err := r.build(w, lo, hi)
		if err != nil {
			return nil, err
		}
		cols = append(cols, a)
	}
	w.emitted++
	return array.NewRecordBatch(w.out, cols, int64(hi-lo)), nil
}

func (w *windowOp) close() {
	if w.closed {
		return
	}
	w.closed = true
	if w.in != nil {
		w.in.close()
	}
	for _, r := range w.results {
		r.release()
	}
	w.results = nil
	for _, c := range w.chunks {
		c.Release()
	}
	w.chunks = nil
	w.acct.release()
}

// addOverflow adds two int64s, reporting overflow.
func addOverflow(a, b int64) (int64, bool) {
	s := a + b
	return s, (a >= 0) == (b >= 0) && (s >= 0) != (a >= 0)
}

// describe implements describer (explain).
func (w *windowOp) describe() (string, []string) {
	return "window", []string{fmt.Sprintf("%d functions; hash partition, sort within partitions", len(w.n.Exprs))}
}
