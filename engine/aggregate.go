package engine

import (
	"cmp"
	"math"
	"math/bits"
	"strings"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/quarrydb/quarry/internal/funcs"
	"github.com/quarrydb/quarry/internal/qerr"
	"github.com/quarrydb/quarry/planner"
)

// aggState is the per-group state of one aggregate. Group ids are dense.
type aggState interface {
	// grow makes room for n groups (new groups start empty).
	grow(n int)
	// update folds the rows of col (nil for count(*)) into their groups gids[i].
	update(col arrow.Array, gids []int32) error
	// build returns the results of groups [lo, hi).
	build(mem memory.Allocator, lo, hi int) arrow.Array
	// groupBytes is the Go memory one group's state takes.
	groupBytes() int64
}

// finishingState is an aggState with work to do once the input has ended
// (before the first build).
type finishingState interface {
	aggState
	finish() error
}

// releasingState is an aggState holding memory the garbage collector does
// not manage; release gives it back (the operator calls it when it closes).
type releasingState interface {
	aggState
	release()
}

// ordered is the fixed-width types min/max compare natively.
type ordered interface{ integer | float }

// newAggState validates e against the input type and returns its state and
// output type. colls holds the value collectors of median/quantile, shared
// per input column.
func newAggState(e planner.AggExpr, in *arrow.Schema, a *acct, colls map[int]*collector) (aggState, arrow.DataType, error) {
	if e.Fn == planner.AggCount && e.Col == "*" {
		return &countState{star: true}, arrow.PrimitiveTypes.Int64, nil
	}
	if e.Index < 0 || e.Index >= in.NumFields() {
		return nil, nil, qerr.Internal(nil, "aggregate %s(%s): column index %d out of range for %d input columns", e.Fn, e.Col, e.Index, in.NumFields())
	}
	dt := in.Field(e.Index).Type
	decl, ok := e.Fn.Lookup()
	if !ok {
		return nil, nil, qerr.Invalid(qerr.CodeInvalidAggregate, "unknown aggregate function %q", e.Fn).
			WithHint("use one of %s", strings.Join(funcs.AggNames(), ", "))
	}
	if decl.Kernel != nil {
		return newKernelState(decl, e, dt)
	}
	if s, out, ok, err := newMoreAggState(e, decl, dt, in, a); ok {
		return s, out, err
	}
	unsupported := func() (aggState, arrow.DataType, error) {
		return nil, nil, qerr.Unsupported(qerr.CodeInvalidAggregate, "%s is not supported on column %q of type %s", e.Fn, e.Col, dt).
			WithHint("sum, avg, median, quantile and stddev need numeric columns; min, max, first, last, count_distinct and count work on numbers, strings, booleans, dates and timestamps")
	}
	id := dt.ID()
	if isDictStr(dt) {
		id = arrow.STRING // read through the codes; outputs are plain strings
	}
	out := planner.Decoded(dt)
	switch e.Fn {
	case planner.AggCount:
		return &countState{}, arrow.PrimitiveTypes.Int64, nil
	case planner.AggCountDistinct:
		if !supportedCompute(dt) {
			return unsupported()
		}
		return newDistinct(dt, a), arrow.PrimitiveTypes.Int64, nil
	case planner.AggMedian, planner.AggQuantile:
		if !arrow.IsInteger(id) && id != arrow.FLOAT32 && id != arrow.FLOAT64 {
			return unsupported()
		}
		q := 0.5
		if e.Fn == planner.AggQuantile {
			q = e.Q
		}
		if !(q >= 0 && q <= 1) {
			return nil, nil, qerr.Invalid(qerr.CodeInvalidAggregate, "quantile(%s): q must be in [0, 1], got %v", e.Col, q)
		}
		c, ok := colls[e.Index]
		if len(e.Filter) > 0 { // a filtered aggregate sees other rows: its own collector
			c, ok = newCollector(dt, a), false
		} else if !ok {
			c = newCollector(dt, a)
			colls[e.Index] = c
		}
		return &quantState{c: c, k: c.addQuantile(q), owner: !ok}, arrow.PrimitiveTypes.Float64, nil
	case planner.AggStddev:
		if s := newVarState(e.Fn, dt); s != nil {
			return s, arrow.PrimitiveTypes.Float64, nil
		}
		return unsupported()
	case planner.AggFirst, planner.AggLast:
		last := e.Fn == planner.AggLast
		if s := newFirstLastState(id, dt, out, last, a); s != nil {
			return s, out, nil
		}
		return unsupported()
	case planner.AggSum:
		if s, typ := newSumState(id, e.Col); s != nil {
			return s, typ, nil
		}
		return unsupported()
	case planner.AggAvg:
		if s := newAvgState(id); s != nil {
			return s, arrow.PrimitiveTypes.Float64, nil
		}
		return unsupported()
	case planner.AggMin, planner.AggMax:
		if s := newMinMaxState(id, dt, out, e.Fn == planner.AggMax, a); s != nil {
			return s, out, nil
		}
		return unsupported()
	}
	return nil, nil, qerr.Internal(nil, "aggregate function %q is registered without a kernel", e.Fn)
}

// growTo returns s grown to n elements (the new ones zero), with the
// capacity groupCap(n) when it must move: so every per-group slice grown
// to n groups has the same capacity, whatever steps it grew by, and its
// bytes are known (aggOp.setGroups charges them).
func growTo[T any](s []T, n int) []T {
	if n <= len(s) {
		return s
	}
	if n > cap(s) {
		t := make([]T, n, groupCap(n))
		copy(t, s)
		return t
	}
	old := len(s)
	s = s[:n]
	clear(s[old:])
	return s
}

// groupCap is the capacity growTo gives n elements: n rounded up to a
// multiple of a quarter of the power of two below it (4, 5, 6 or 7
// quarters), so at most 25% more than n, as append's growth, but a
// function of n alone (groupCap(groupCap(n)) == groupCap(n), monotone).
func groupCap(n int) int {
	step := 1 << max(bits.Len(uint(n))-3, 0)
	return (n + step - 1) / step * step
}

// countState is count(*) (star) or count(col) (non-null values).
type countState struct {
	star   bool
	counts []int64
}

func (s *countState) grow(n int)        { s.counts = growTo(s.counts, n) }
func (s *countState) groupBytes() int64 { return 8 }

func (s *countState) update(col arrow.Array, gids []int32) error {
	var v validity
	if !s.star {
		v = validityOf(col)
	}
	if v.bits == nil {
		for _, g := range gids {
			s.counts[g]++
		}
		return nil
	}
	for i, g := range gids {
		if v.ok(i) {
			s.counts[g]++
		}
	}
	return nil
}

func (s *countState) build(mem memory.Allocator, lo, hi int) arrow.Array {
	return buildFixed(mem, arrow.PrimitiveTypes.Int64, s.counts[lo:hi], nil)
}

// sumInt sums integers exactly into int64 and fails on overflow.
type sumInt[T integer] struct {
	col  string
	sums []int64
	seen []bool
}

func (s *sumInt[T]) grow(n int)        { s.sums, s.seen = growTo(s.sums, n), growTo(s.seen, n) }
func (s *sumInt[T]) groupBytes() int64 { return 9 }

func (s *sumInt[T]) overflow() error {
	return qerr.Invalid(qerr.CodeInvalidAggregate, "sum(%s) overflows a 64-bit integer", s.col).
		WithHint("filter to fewer rows, group by more columns, or use avg")
}

func (s *sumInt[T]) update(col arrow.Array, gids []int32) error {
	vals := values[T](col)
	v := validityOf(col)
	var z T
	unsigned := ^z > 0
	sums, seen := s.sums, s.seen
	for i, g := range gids {
		if !v.ok(i) {
			continue
		}
		x := vals[i]
		if unsigned && uint64(x) > math.MaxInt64 {
			return s.overflow()
		}
		xi, acc := int64(x), sums[g]
		r := acc + xi
		if (xi > 0 && r < acc) || (xi < 0 && r > acc) {
			return s.overflow()
		}
		sums[g], seen[g] = r, true
	}
	return nil
}

func (s *sumInt[T]) build(mem memory.Allocator, lo, hi int) arrow.Array {
	return buildFixed(mem, arrow.PrimitiveTypes.Int64, s.sums[lo:hi], s.seen[lo:hi])
}

// sumFloat sums floats in float64, in input order (IEEE: NaN/Inf propagate).
type sumFloat[T float] struct {
	sums []float64
	seen []bool
}

func (s *sumFloat[T]) grow(n int)        { s.sums, s.seen = growTo(s.sums, n), growTo(s.seen, n) }
func (s *sumFloat[T]) groupBytes() int64 { return 9 }

func (s *sumFloat[T]) update(col arrow.Array, gids []int32) error {
	vals := values[T](col)
	v := validityOf(col)
	sums, seen := s.sums, s.seen
	for i, g := range gids {
		if v.ok(i) {
			sums[g] += float64(vals[i])
			seen[g] = true
		}
	}
	return nil
}

func (s *sumFloat[T]) build(mem memory.Allocator, lo, hi int) arrow.Array {
	return buildFixed(mem, arrow.PrimitiveTypes.Float64, s.sums[lo:hi], s.seen[lo:hi])
}

// avgState averages in float64: the sum of float64(value) in input order
// divided by the non-null count. The avg states of one aggregate may share
// one row count per group (shareAvgRows): then counts holds the nulls per
// group and the non-null count is rows - counts.
type avgState[T integer | float] struct {
	sums   []float64
	counts []int64    // the non-null counts; with rows, the null counts
	rows   *groupRows // nil: not shared
	lead   bool       // counts the rows into rows (one state per group of sharers)
}

// groupRows is the row count per group shared by avg states that see the
// same rows (shareAvgRows), and the int64 columns without nulls of the
// current batch that the others left for the leader to add.
type groupRows struct {
	n    []int64
	pend []pendSum
}

// rowSharer is a state that can take its count from a shared groupRows.
type rowSharer interface{ shareRows(r *groupRows, lead bool) }

func (s *avgState[T]) shareRows(r *groupRows, lead bool) { s.rows, s.lead = r, lead }

func (s *avgState[T]) grow(n int) {
	s.sums, s.counts = growTo(s.sums, n), growTo(s.counts, n)
	if s.lead {
		s.rows.n = growTo(s.rows.n, n)
	}
}

func (s *avgState[T]) groupBytes() int64 {
	if s.lead {
		return 24
	}
	return 16
}

func (s *avgState[T]) update(col arrow.Array, gids []int32) error {
	vals := values[T](col)
	v := validityOf(col)
	sums, counts := s.sums, s.counts
	switch {
	case s.rows == nil && v.bits == nil:
		avgAdd(vals, gids, sums, counts)
	case s.rows == nil:
		for i, g := range gids {
			if v.ok(i) {
				sums[g] += float64(vals[i])
				counts[g]++
			}
		}
	case s.lead:
		s.leadUpdate(vals, v, gids)
	case v.bits == nil:
		if iv, ok := any(vals).([]int64); ok { // the leader adds it with its own (leadUpdate)
			s.rows.pend = append(s.rows.pend, pendSum{iv, sums})
			return nil
		}
		avgSum(vals, gids, sums)
	default: // with nulls: count the nulls
		for i, g := range gids {
			if v.ok(i) {
				sums[g] += float64(vals[i])
			} else {
				counts[g]++
			}
		}
	}
	return nil
}

// leadUpdate is the leading sharer's update: it counts the rows and adds
// its values and those the others left pending, the first pending column
// in the same loop as its own when both are int64 without nulls.
func (s *avgState[T]) leadUpdate(vals []T, v validity, gids []int32) {
	sums, counts, rows := s.sums, s.counts, s.rows.n
	all := s.rows.pend
	defer func() {
		clear(all) // (no views into the batch kept)
		s.rows.pend = all[:0]
	}()
	pend := all
	iv, ok := any(vals).([]int64)
	switch {
	case ok && v.bits == nil && len(pend) > 0:
		avgAdd2(iv, pend[0].vals, gids, sums, pend[0].sums, rows)
		pend = pend[1:]
	case v.bits == nil:
		avgAdd(vals, gids, sums, rows)
	default:
		for i, g := range gids {
			rows[g]++
			if v.ok(i) {
				sums[g] += float64(vals[i])
			} else {
				counts[g]++
			}
		}
	}
	for _, p := range pend {
		avgSum(p.vals, gids, p.sums)
	}
}

// pendSum is an int64 column without nulls left for the leading sharer to
// add to sums.
type pendSum struct {
	vals []int64
	sums []float64
}

// avgAdd2 is avgAdd over two columns in one loop.
func avgAdd2(a, b []int64, gids []int32, sa, sb []float64, counts []int64) {
	a, b = a[:len(gids)], b[:len(gids)]
	for i, g := range gids {
		sa[g] += float64(a[i])
		sb[g] += float64(b[i])
		counts[g]++
	}
}

// avgAdd is avgState's update over a column without nulls (a leaf loop).
func avgAdd[T integer | float](vals []T, gids []int32, sums []float64, counts []int64) {
	vals = vals[:len(gids)]
	for i, g := range gids {
		sums[g] += float64(vals[i])
		counts[g]++
	}
}

// avgSum is avgAdd without the count (another state counts the rows).
func avgSum[T integer | float](vals []T, gids []int32, sums []float64) {
	vals = vals[:len(gids)]
	for i, g := range gids {
		sums[g] += float64(vals[i])
	}
}

// count is group g's non-null count.
func (s *avgState[T]) count(g int) int64 {
	if s.rows != nil {
		return s.rows.n[g] - s.counts[g]
	}
	return s.counts[g]
}

func (s *avgState[T]) build(mem memory.Allocator, lo, hi int) arrow.Array {
	n := hi - lo
	out := make([]float64, n)
	valid := make([]bool, n)
	for i := range n {
		if c := s.count(lo + i); c > 0 {
			out[i] = s.sums[lo+i] / float64(c)
			valid[i] = true
		}
	}
	return buildFixed(mem, arrow.PrimitiveTypes.Float64, out, valid)
}

// shareAvgRows has the avg states that fold their own column (no second
// column or filter: every state sees every row of the batch, with the same
// group ids) share one row count per group when there are two or more: the
// last (updated after the others, aggOp.update) counts the rows, every one
// counts only its nulls. It returns how many states share.
func shareAvgRows(states []aggState, inputs []*aggInput) int {
	var idx []int
	for j, s := range states {
		if _, ok := s.(rowSharer); ok && inputs[j] == nil {
			idx = append(idx, j)
		}
	}
	if len(idx) < 2 {
		return 0
	}
	r := &groupRows{}
	for k, j := range idx {
		states[j].(rowSharer).shareRows(r, k == len(idx)-1)
	}
	return len(idx)
}

// minMax is min/max over numbers, dates and timestamps. NaN never replaces
// a number: the result is NaN only when every non-null value is NaN.
type minMax[T ordered] struct {
	dt   arrow.DataType
	max  bool
	cur  []T
	seen []bool
}

func (s *minMax[T]) grow(n int) { s.cur, s.seen = growTo(s.cur, n), growTo(s.seen, n) }
func (s *minMax[T]) groupBytes() int64 {
	var z T
	return int64(unsafe.Sizeof(z)) + 1
}

func (s *minMax[T]) update(col arrow.Array, gids []int32) error {
	vals := values[T](col)
	v := validityOf(col)
	cur, seen := s.cur, s.seen
	for i, g := range gids {
		if !v.ok(i) {
			continue
		}
		x := vals[i]
		if !seen[g] {
			cur[g], seen[g] = x, true
			continue
		}
		if x != x { // NaN
			continue
		}
		c := cur[g]
		if c != c || (s.max && x > c) || (!s.max && x < c) {
			cur[g] = x
		}
	}
	return nil
}

func (s *minMax[T]) build(mem memory.Allocator, lo, hi int) arrow.Array {
	return buildFixed(mem, s.dt, s.cur[lo:hi], s.seen[lo:hi])
}

// minMaxBool is min/max over booleans (false < true).
type minMaxBool struct {
	max  bool
	cur  []bool
	seen []bool
	buf  []uint8
}

func (s *minMaxBool) grow(n int)        { s.cur, s.seen = growTo(s.cur, n), growTo(s.seen, n) }
func (s *minMaxBool) groupBytes() int64 { return 2 }

func (s *minMaxBool) update(col arrow.Array, gids []int32) error {
	s.buf = boolBytes(col, s.buf)
	v := validityOf(col)
	for i, g := range gids {
		if !v.ok(i) {
			continue
		}
		x := s.buf[i] != 0
		if !s.seen[g] {
			s.cur[g], s.seen[g] = x, true
		} else if x == s.max {
			s.cur[g] = x
		}
	}
	return nil
}

func (s *minMaxBool) build(mem memory.Allocator, lo, hi int) arrow.Array {
	return buildBools(mem, s.cur[lo:hi], s.seen[lo:hi])
}

// minMaxStr is min/max over strings, compared bytewise. It keeps copies of
// the current values (charged to the query's budget).
type minMaxStr struct {
	dt   arrow.DataType
	max  bool
	cur  []string
	seen []bool
	buf  []string
	cbuf []int32
	acct *acct
}

func (s *minMaxStr) grow(n int)        { s.cur, s.seen = growTo(s.cur, n), growTo(s.seen, n) }
func (s *minMaxStr) groupBytes() int64 { return 17 }

func (s *minMaxStr) update(col arrow.Array, gids []int32) error {
	s.buf = strViewsAny(col, s.buf, &s.cbuf)
	v := validityOf(col)
	var delta int64
	for i, g := range gids {
		if !v.ok(i) {
			continue
		}
		x := s.buf[i]
		if s.seen[g] {
			c := cmp.Compare(x, s.cur[g])
			if c == 0 || (c > 0) != s.max {
				continue
			}
		}
		delta += int64(len(x) - len(s.cur[g]))
		s.cur[g], s.seen[g] = strings.Clone(x), true
	}
	s.acct.charge(delta)
	clear(s.buf) // drop views into the batch
	return nil
}

func (s *minMaxStr) build(mem memory.Allocator, lo, hi int) arrow.Array {
	return buildStrings(mem, s.dt, s.cur[lo:hi], s.seen[lo:hi])
}

// aggOp is the hash aggregate: it consumes its whole input on the first
// next, then emits one row per group (first-seen order) in batches.
type aggOp struct {
	ex       *exec
	in       op
	out      *arrow.Schema
	keyIdx   []int
	aggCols  []int
	states   []aggState
	inputs   []*aggInput // per aggregate: nil, or its second column / filter
	table    *groupTable // nil without keys
	ngroups  int
	gcap     int // groupCap of the most groups the states were grown to (see setGroups)
	perGroup int64
	consumed bool
	emitted  int
	acct     acct
	tacct    acct // the group table's (see agg_pipeline.go)
	keyArrs  []arrow.Array
	zeros    []int32
	gbuf     [2][]int32
	node     *planner.Aggregate // to build the parallel workers' partial aggregates
	radix    []*aggOp           // the partitions still to emit after a radix-partitioned consume (agg_radix.go)
}

func newAggOp(ex *exec, n *planner.Aggregate) (*aggOp, error) {
	in := n.Input.Schema()
	if n.Out == nil || n.Out.NumFields() != len(n.GroupIdx)+len(n.Aggs) {
		return nil, qerr.Internal(nil, "aggregate: output schema does not have %d key and %d aggregate columns", len(n.GroupIdx), len(n.Aggs))
	}
	a := &aggOp{ex: ex, out: n.Out, keyIdx: n.GroupIdx, acct: acct{b: ex.budget}, tacct: acct{b: ex.budget}, node: n}
	var keyTypes []arrow.DataType
	for i, k := range n.GroupIdx {
		if k < 0 || k >= in.NumFields() {
			return nil, qerr.Internal(nil, "aggregate: group key index %d out of range", k)
		}
		dt := in.Field(k).Type
		if !supportedCompute(dt) {
			return nil, qerr.Unsupported(qerr.CodeInvalidAggregate, "cannot group by column %q of type %s", in.Field(k).Name, dt).
				WithHint("group by numeric, string, boolean, date or timestamp columns")
		}
		if !arrow.TypeEqual(planner.Decoded(dt), n.Out.Field(i).Type) {
			return nil, qerr.Internal(nil, "aggregate: key %q has type %s but the output schema says %s", in.Field(k).Name, dt, n.Out.Field(i).Type)
		}
		keyTypes = append(keyTypes, dt)
	}
	colls := map[int]*collector{}
	for j, e := range n.Aggs {
		s, dt, err := newAggState(e, in, &a.acct, colls)
		if err != nil {
			return nil, err
		}
		if len(n.GroupIdx) == 0 && (e.Fn == planner.AggFirst || e.Fn == planner.AggLast) {
			s = wrapKeylessFirstLast(s, e.Fn == planner.AggLast) // (agg_firstlast_merge.go)
		}
		if want := n.Out.Field(len(n.GroupIdx) + j).Type; !arrow.TypeEqual(dt, want) {
			return nil, qerr.Internal(nil, "aggregate %s(%s) produces %s but the output schema says %s", e.Fn, e.Col, dt, want)
		}
		col := e.Index
		if e.Fn == planner.AggCount && e.Col == "*" {
			col = -1
		}
		decl, _ := e.Fn.Lookup()
		x, err := newAggInput(e, decl, col, in)
		if err != nil {
			return nil, err
		}
		a.states = append(a.states, s)
		a.aggCols = append(a.aggCols, col)
		a.inputs = append(a.inputs, x)
	}
	shareAvgRows(a.states, a.inputs)
	for _, s := range a.states {
		a.perGroup += s.groupBytes()
	}
	if len(keyTypes) > 0 {
		a.table = newGroupTable(keyTypes, true, &a.tacct)
		a.table.keysFromIDs()
		a.keyArrs = make([]arrow.Array, len(keyTypes))
	}
	return a, nil
}

// setGroups grows the states to n groups. Their per-group slices (growTo)
// have the capacity groupCap(n), which is what is charged: when they move,
// the new capacity is taken before they are allocated and the old given
// back after (every state's old and new slices may live at once), a big
// step in turn with the query's others (acct.turn).
func (a *aggOp) setGroups(n int) {
	if n <= a.ngroups {
		return
	}
	if c := groupCap(n); c > a.gcap {
		defer a.acct.turn(int64(c) * a.perGroup)() // (runs last)
		a.acct.take(int64(c) * a.perGroup)
		defer a.acct.charge(-int64(a.gcap) * a.perGroup)
		defer func() { a.gcap = c }()
	}
	for _, s := range a.states {
		s.grow(n)
	}
	a.ngroups = n
}

func (a *aggOp) consume() error {
	if a.table == nil {
		a.setGroups(1)
	}
	done, err := a.consumeParallel()
	switch {
	case err != nil:
		return err
	case done: // consumed by the parallel workers (agg_parallel.go)
	case pipelined():
		if err := a.consumePipelined(); err != nil {
			return err
		}
	default:
		if err := a.consumeSerial(); err != nil {
			return err
		}
	}
	a.in.close()
	a.consumed = true
	if a.radix != nil { // the partitions ended their input (agg_radix.go)
		return nil
	}
	return a.endInput()
}

// endInput finishes the table and states once the input has ended.
func (a *aggOp) endInput() error {
	if a.table != nil {
		a.table.doneAssigning()
	}
	for _, s := range a.states {
		if f, ok := s.(finishingState); ok {
			if err := f.finish(); err != nil {
				return err
			}
		}
	}
	return a.acct.check()
}

// consumeSerial is consume's loop on one goroutine.
func (a *aggOp) consumeSerial() error {
	for {
		if err := a.ex.ctx.Err(); err != nil {
			return err
		}
		b, err := a.in.next()
		if err != nil {
			return err
		}
		if b == nil {
			break
		}
		err = a.fold(b)
		b.Release()
		if err != nil {
			return err
		}
		if err := a.acct.check(); err != nil {
			return err
		}
	}
	return nil
}

func (a *aggOp) fold(b arrow.RecordBatch) error {
	gids := a.assignBatch(b, int(b.NumRows()), -1)
	if a.table != nil {
		a.setGroups(a.table.n)
	}
	return a.update(b, gids)
}

func (a *aggOp) next() (arrow.RecordBatch, error) {
	if err := a.ex.ctx.Err(); err != nil {
		return nil, err
	}
	if !a.consumed {
		if err := a.consume(); err != nil {
			return nil, err
		}
	}
	if a.radix != nil {
		return a.nextRadix()
	}
	if a.emitted >= a.ngroups {
		a.close()
		return nil, nil
	}
	lo := a.emitted
	hi := min(lo+a.ex.batchSize, a.ngroups)
	rec, err := a.emit(lo, hi)
	if err != nil {
		return nil, err
	}
	a.emitted = hi
	return rec, nil
}

func (a *aggOp) emit(lo, hi int) (rec arrow.RecordBatch, err error) {
	defer catchBudget(&err)
	cols := make([]arrow.Array, 0, a.out.NumFields())
	defer func() {
		for _, c := range cols {
			c.Release()
		}
	}()
	if a.table != nil {
		for c := range a.table.cols {
			cols = append(cols, a.table.buildKey(a.ex.alloc, c, lo, hi))
		}
	}
	for _, s := range a.states {
		cols = append(cols, s.build(a.ex.alloc, lo, hi))
	}
	return array.NewRecordBatch(a.out, cols, int64(hi-lo)), nil
}

func (a *aggOp) close() {
	if a.in != nil {
		a.in.close()
	}
	for _, p := range a.radix {
		p.close()
	}
	a.radix = nil
	a.dropGroups()
	a.emitted = 0
	a.consumed = true
}

// dropGroups drops every group: the states, the table and their memory.
func (a *aggOp) dropGroups() {
	for _, s := range a.states {
		if r, ok := s.(releasingState); ok {
			r.release()
		}
	}
	a.states = nil
	if a.table != nil {
		a.table.reset()
	}
	a.ngroups, a.gcap = 0, 0
	a.acct.release()
	a.tacct.release()
}
