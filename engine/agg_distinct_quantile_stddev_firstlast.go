// The aggregate states beyond count, sum, avg, min and max (aggregate.go):
// count_distinct, median and quantile, first and last (stddev: agg_stats.go).

package engine

import (
	"math"
	"runtime"
	"slices"
	"strings"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/quarrydb/quarry/internal/qerr"
)

// ---- count_distinct ----

// distinctState is count_distinct over any supported type: the column's
// values are numbered query-wide (valueIDs: dictionary strings resolved
// once per dictionary entry, plain strings and fixed-width values hashed
// once per row) and the distinct (group, value id) pairs are kept as one
// bit each while groups x ids is small (distinctBits), then in one
// open-addressing set. Values compare as group keys do (strings bytewise,
// every NaN equal, -0 == +0); nulls are not counted.
type distinctState struct {
	ids    *valueIDs
	dense  *distinctBits // while groups x ids is small; then nil and set
	set    *u64Set
	counts []int64
	acct   *acct
}

func newDistinct(dt arrow.DataType, a *acct) *distinctState {
	return &distinctState{ids: newValueIDs(dt, false, a), dense: &distinctBits{acct: a}, acct: a}
}

func (s *distinctState) grow(n int)        { s.counts = growTo(s.counts, n) }
func (s *distinctState) groupBytes() int64 { return 8 }

func (s *distinctState) update(col arrow.Array, gids []int32) error {
	ids := s.ids.assign(col)[:len(gids)]
	counts := s.counts
	if s.dense != nil && !s.dense.fit(len(counts), s.ids.n) {
		s.set = newU64Set(s.acct)
		s.dense.each(func(g int, id uint64) { s.set.add(uint64(g)<<32 | id) })
		s.dense.release()
		s.dense = nil
	}
	if d := s.dense; d != nil {
		words, shift := d.words, d.shift
		for i, g := range gids {
			id := ids[i]
			if id < 0 {
				continue
			}
			bit := uint64(g)<<shift | uint64(id)
			w, m := &words[bit>>6], uint64(1)<<(bit&63)
			if *w&m == 0 {
				*w |= m
				counts[g]++
			}
		}
		return nil
	}
	set := s.set
	for i, g := range gids {
		id := ids[i]
		if id < 0 {
			continue
		}
		if set.add(uint64(uint32(g))<<32 | uint64(uint32(id))) {
			counts[g]++
		}
	}
	return nil
}

func (s *distinctState) build(mem memory.Allocator, lo, hi int) arrow.Array {
	return buildFixed(mem, arrow.PrimitiveTypes.Int64, s.counts[lo:hi], nil)
}

// ---- median / quantile ----

// collector keeps every non-null, non-NaN value of one input column (as
// float64) for the exact order statistics median and quantile. Aggregates
// over the same column share one collector; it answers all of their
// quantiles of a group at once.
//
// While the input streams in, each value is appended to its group's chain
// of off-heap blocks (valueChain, blockStore): 8 bytes per value, or 4 in
// compact blocks where that is exactly reversible, outside the Go heap.
// When the results are built (groups in order, a range of groups at a
// time), each group's values are taken out of their blocks (in place for a
// group of one float64 block, else decoded into a scratch buffer the size
// of the largest such group), every quantile asked for is an exact selection
// (selectKth, not a sort), and the group's blocks are given back right away:
// the collector's memory shrinks while the results are built and is gone
// when the last group is done.
type collector struct {
	load   func(arrow.Array, []float64) []float64
	alias  bool // load aliases Arrow memory (float64 input): never keep its result
	buf    []float64
	qs     []float64 // the quantiles asked for, one per quantState
	chains []valueChain
	nan    []bool // a NaN was seen (the result when no other value is)
	store  *blockStore
	sealed bool

	// results of groups [resLo, resHi): quantile k of group resLo+i at
	// res[k*(resHi-resLo)+i]; taken is the first group not yet taken out
	// of its blocks
	resLo, resHi int
	res          []float64
	resOK        []bool
	taken        int

	acct *acct
}

func newCollector(dt arrow.DataType, a *acct) *collector {
	c := &collector{acct: a, store: newBlockStore(a)}
	c.load = floatLoader(dt)
	if c.load == nil {
		return nil
	}
	c.alias = dt.ID() == arrow.FLOAT64
	// Backstop for a query that is never closed: its mappings would
	// outlive it. (The cleanup holds only the store, which does not point
	// back to the collector.)
	runtime.AddCleanup(c, freeUnclosed, c.store)
	return c
}

// freeUnclosed frees the store of a collector that became unreachable
// without being released (its query's budget is gone: nothing is uncharged).
var freeUnclosed = func(s *blockStore) {
	s.acct = nil
	s.free()
}

// addQuantile registers quantile q and returns its index for results.
func (c *collector) addQuantile(q float64) int {
	c.qs = append(c.qs, q)
	return len(c.qs) - 1
}

// loadFloats reads a numeric column of type T as float64s into buf.
func loadFloats[T integer | float](arr arrow.Array, buf []float64) []float64 {
	return loadAs[float64, T](arr, buf)
}

// loadAs reads a numeric column of type S into buf (grown as needed),
// each value converted to D.
func loadAs[D int64 | float64, S integer | float](arr arrow.Array, buf []D) []D {
	vs := values[S](arr)
	if cap(buf) < len(vs) {
		buf = make([]D, len(vs))
	}
	buf = buf[:len(vs)]
	for i, v := range vs {
		buf[i] = D(v)
	}
	return buf
}

// collectorGroupBytes is the Go memory a collector holds per group (its
// value chain and NaN flag).
const collectorGroupBytes = valueChainBytes + 1

func (c *collector) grow(n int) {
	if n > len(c.chains) {
		c.acct.charge(int64(n-len(c.chains)) * collectorGroupBytes)
		c.chains = growTo(c.chains, n)
	}
	c.nan = growTo(c.nan, n)
}

func (c *collector) update(col arrow.Array, gids []int32) error {
	n := len(gids)
	if n == 0 {
		return nil
	}
	vs := c.load(col, c.buf)
	if !c.alias {
		c.buf = vs
	}
	vs = vs[:n]
	v := validityOf(col)
	chains, store := c.chains, c.store
	for i, x := range vs {
		if v.bits != nil && !v.ok(i) {
			continue
		}
		g := gids[i]
		if x != x {
			c.nan[g] = true
			continue
		}
		ch := &chains[g]
		if ch.room != 0 { // ch.push, inlined by hand
			if f := ch.tail.form(); f == formFloat {
				ch.pushFloat(x)
				continue
			} else if k, ok := fitScale(x, int(f-formScale0)); ok {
				ch.pushInt(k)
				continue
			}
		}
		if err := store.add(ch, x); err != nil {
			return err
		}
	}
	return nil
}

// finish ends the input: no more values are added, and the scratch buffer
// for selecting within multi-block groups is mapped.
func (c *collector) finish() error {
	if c.sealed {
		return nil
	}
	c.sealed = true
	var most int64
	for i := range c.chains {
		most = max(most, c.store.scratchNeed(&c.chains[i]))
	}
	return c.store.seal(most)
}

// results returns every registered quantile of groups [lo, hi) (see
// quantile for the rules): value and validity of quantile k of group lo+i
// are at index k*(hi-lo)+i. Ranges must come in order, each starting where
// the previous ended (a range may be asked for again while it is the last
// one); each group's values are dropped once its quantiles are known.
func (c *collector) results(lo, hi int) ([]float64, []bool) {
	if lo == c.resLo && hi == c.resHi && c.res != nil {
		return c.res, c.resOK
	}
	if !c.sealed {
		if err := c.finish(); err != nil {
			panic(err) // unreachable in the engine: aggOp finishes every state before building
		}
	}
	if lo != c.taken || hi > len(c.chains) || lo > hi {
		panic(qerr.Internal(nil, "median/quantile: groups [%d, %d) requested after group %d was taken", lo, hi, c.taken))
	}
	n, nq := hi-lo, len(c.qs)
	old := int64(cap(c.res))*8 + int64(cap(c.resOK))
	c.res, c.resOK = growTo(c.res[:0], n*nq)[:n*nq], growTo(c.resOK[:0], n*nq)[:n*nq]
	c.acct.charge(int64(cap(c.res))*8 + int64(cap(c.resOK)) - old)
	for i := range n {
		g := lo + i
		vals, done := c.store.take(&c.chains[g])
		for k, q := range c.qs {
			c.res[k*n+i], c.resOK[k*n+i] = c.quantile(vals, c.nan[g], q)
		}
		done()
	}
	c.resLo, c.resHi, c.taken = lo, hi, hi
	if c.taken == len(c.chains) {
		c.store.freeScratch()
	}
	return c.res, c.resOK
}

// quantile returns the q-quantile of one group's values vs (reordering
// them) with linear interpolation between the closest ranks (numpy's
// default "linear" method): with the n values sorted, position q*(n-1)
// between ranks lo and lo+1 gives v[lo] + (v[lo+1]-v[lo])*frac.
// Interpolating toward an infinite value gives that infinity (between -Inf
// and +Inf: NaN). ok is false for a group without values (null result); a
// group whose only values are NaN (nan) gives NaN.
func (c *collector) quantile(vs []float64, nan bool, q float64) (float64, bool) {
	if len(vs) == 0 {
		if nan {
			return math.NaN(), true
		}
		return 0, false
	}
	return quantileSelect(vs, q), true
}

// release unmaps the collector's blocks and scratch buffer and drops its
// state; the results can no longer be built.
func (c *collector) release() {
	c.store.free()
	c.chains, c.nan, c.res, c.resOK, c.buf = nil, nil, nil, nil, nil
	c.sealed, c.taken = true, 0
	c.resLo, c.resHi = 0, 0
}

// quantileSelect is the interpolated q-quantile of NaN-free, non-empty
// values (see collector.quantile). It reorders vs.
func quantileSelect(vs []float64, q float64) float64 {
	pos := q * float64(len(vs)-1)
	lo := int(math.Floor(pos))
	if lo >= len(vs)-1 {
		return slices.Max(vs)
	}
	frac := pos - float64(lo)
	a := selectKth(vs, lo)
	if frac == 0 {
		return a
	}
	// After selection every value right of lo is >= a: the next rank is
	// their minimum.
	return interpolate(a, slices.Min(vs[lo+1:]), frac)
}

// interpolate is a + (b-a)*frac for neighbouring ranks a <= b, with the
// documented infinity rules.
func interpolate(a, b, frac float64) float64 {
	switch {
	case frac == 0 || a == b:
		return a
	case math.IsInf(a, -1) && math.IsInf(b, 1):
		return math.NaN() // between -Inf and +Inf
	case math.IsInf(a, -1):
		return a
	case math.IsInf(b, 1):
		return b
	}
	return a + (b-a)*frac
}

// quantState is median (q = 0.5) or quantile over a shared collector; only
// the owner (the first aggregate on the column) feeds and releases it.
type quantState struct {
	c     *collector
	k     int // index of this quantile among the collector's
	owner bool
}

func (s *quantState) grow(n int) {
	if s.owner {
		s.c.grow(n)
	}
}

func (s *quantState) groupBytes() int64 { return 0 } // charged by the collector

func (s *quantState) update(col arrow.Array, gids []int32) error {
	if s.owner {
		return s.c.update(col, gids)
	}
	return nil
}

func (s *quantState) finish() error {
	if s.owner {
		return s.c.finish()
	}
	return nil
}

func (s *quantState) release() {
	if s.owner {
		s.c.release()
	}
}

func (s *quantState) build(mem memory.Allocator, lo, hi int) arrow.Array {
	res, ok := s.c.results(lo, hi)
	n := hi - lo
	return buildFixed(mem, arrow.PrimitiveTypes.Float64, res[s.k*n:(s.k+1)*n], ok[s.k*n:(s.k+1)*n])
}

// ---- first / last ----

// firstLast is first/last over fixed-width values: the first (last)
// non-null value in the order rows reach the aggregate.
type firstLast[T arrow.FixedWidthType] struct {
	dt   arrow.DataType
	last bool
	cur  []T
	seen []bool
}

func (s *firstLast[T]) grow(n int) { s.cur, s.seen = growTo(s.cur, n), growTo(s.seen, n) }
func (s *firstLast[T]) groupBytes() int64 {
	var z T
	return int64(unsafe.Sizeof(z)) + 1
}

func (s *firstLast[T]) update(col arrow.Array, gids []int32) error {
	vals := values[T](col)
	v := validityOf(col)
	for i, g := range gids {
		if v.ok(i) && (s.last || !s.seen[g]) {
			s.cur[g], s.seen[g] = vals[i], true
		}
	}
	return nil
}

func (s *firstLast[T]) build(mem memory.Allocator, lo, hi int) arrow.Array {
	return buildFixed(mem, s.dt, s.cur[lo:hi], s.seen[lo:hi])
}

// firstLastBool is first/last over booleans.
type firstLastBool struct {
	last bool
	cur  []bool
	seen []bool
	buf  []uint8
}

func (s *firstLastBool) grow(n int)        { s.cur, s.seen = growTo(s.cur, n), growTo(s.seen, n) }
func (s *firstLastBool) groupBytes() int64 { return 2 }

func (s *firstLastBool) update(col arrow.Array, gids []int32) error {
	s.buf = boolBytes(col, s.buf)
	v := validityOf(col)
	for i, g := range gids {
		if v.ok(i) && (s.last || !s.seen[g]) {
			s.cur[g], s.seen[g] = s.buf[i] != 0, true
		}
	}
	return nil
}

func (s *firstLastBool) build(mem memory.Allocator, lo, hi int) arrow.Array {
	return buildBools(mem, s.cur[lo:hi], s.seen[lo:hi])
}

// firstLastStr is first/last over strings (plain or dictionary-encoded). It
// copies at most one value per group and batch: last walks each batch
// backwards and keeps the first value it meets per group.
type firstLastStr struct {
	dt    arrow.DataType
	last  bool
	cur   []string
	seen  []bool
	stamp []int32 // batch number that last set the group (last only)
	batch int32
	buf   []string
	cbuf  []int32
	acct  *acct
}

func (s *firstLastStr) grow(n int) {
	s.cur, s.seen, s.stamp = growTo(s.cur, n), growTo(s.seen, n), growTo(s.stamp, n)
}
func (s *firstLastStr) groupBytes() int64 { return 21 }

func (s *firstLastStr) update(col arrow.Array, gids []int32) error {
	s.buf = strViewsAny(col, s.buf, &s.cbuf)
	v := validityOf(col)
	var delta int64
	set := func(g int32, x string) {
		delta += int64(len(x) - len(s.cur[g]))
		s.cur[g], s.seen[g] = strings.Clone(x), true
	}
	if s.last {
		s.batch++
		for i := len(gids) - 1; i >= 0; i-- {
			g := gids[i]
			if v.ok(i) && s.stamp[g] != s.batch {
				s.stamp[g] = s.batch
				set(g, s.buf[i])
			}
		}
	} else {
		for i, g := range gids {
			if v.ok(i) && !s.seen[g] {
				set(g, s.buf[i])
			}
		}
	}
	clear(s.buf)
	s.acct.charge(delta)
	return nil
}

func (s *firstLastStr) build(mem memory.Allocator, lo, hi int) arrow.Array {
	return buildStrings(mem, s.dt, s.cur[lo:hi], s.seen[lo:hi])
}
