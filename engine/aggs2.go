package engine

import (
	"math"
	"slices"
	"strings"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"
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
// over the same column share one collector.
//
// While the input streams in, values are appended in row order to chunks
// (one per batch) together with their group ids; the first quantile asked
// for scatters them into one flat array ordered by group (a counting sort:
// count per group, then place), and each quantile is then an exact
// selection within its group's slice (selectKth), not a sort.
type collector struct {
	chunks  []valueChunk
	kept    int64  // values in chunks
	nan     []bool // a NaN was seen (the result when no other value is)
	ngroups int
	load    func(arrow.Array, []float64) []float64
	alias   bool // load aliases Arrow memory (float64 input): never keep its result
	buf     []float64

	// after finish: the values of group g are flat[offs[g]:offs[g+1]]
	done bool
	flat []float64
	offs []int64

	acct *acct
}

// valueChunk is the kept values of one batch and their groups.
type valueChunk struct {
	g []int32
	v []float64
}

func newCollector(dt arrow.DataType, a *acct) *collector {
	c := &collector{acct: a}
	switch dt.ID() {
	case arrow.INT8:
		c.load = loadFloats[int8]
	case arrow.INT16:
		c.load = loadFloats[int16]
	case arrow.INT32:
		c.load = loadFloats[int32]
	case arrow.INT64:
		c.load = loadFloats[int64]
	case arrow.UINT8:
		c.load = loadFloats[uint8]
	case arrow.UINT16:
		c.load = loadFloats[uint16]
	case arrow.UINT32:
		c.load = loadFloats[uint32]
	case arrow.UINT64:
		c.load = loadFloats[uint64]
	case arrow.FLOAT32:
		c.load = loadFloats[float32]
	case arrow.FLOAT64:
		c.load = func(arr arrow.Array, _ []float64) []float64 { return values[float64](arr) }
		c.alias = true
	default:
		return nil
	}
	return c
}

func loadFloats[T integer | float](arr arrow.Array, buf []float64) []float64 {
	vs := values[T](arr)
	if cap(buf) < len(vs) {
		buf = make([]float64, len(vs))
	}
	buf = buf[:len(vs)]
	for i, v := range vs {
		buf[i] = float64(v)
	}
	return buf
}

// collectorGroupBytes is the per-group state of a collector (NaN flag and
// the group's offset into the flat array).
const collectorGroupBytes = 9

func (c *collector) grow(n int) {
	if n > c.ngroups {
		c.acct.charge(int64(n-c.ngroups) * collectorGroupBytes)
		c.ngroups = n
	}
	c.nan = growTo(c.nan, n)
}

func (c *collector) update(col arrow.Array, gids []int32) {
	n := len(gids)
	if n == 0 {
		return
	}
	vs := c.load(col, c.buf)
	if !c.alias {
		c.buf = vs
	}
	vs = vs[:n]
	v := validityOf(col)
	ch := valueChunk{g: make([]int32, n), v: make([]float64, n)}
	k := 0
	if v.bits == nil {
		for i, x := range vs {
			if x != x {
				c.nan[gids[i]] = true
				continue
			}
			ch.g[k], ch.v[k] = gids[i], x
			k++
		}
	} else {
		for i, x := range vs {
			if !v.ok(i) {
				continue
			}
			if x != x {
				c.nan[gids[i]] = true
				continue
			}
			ch.g[k], ch.v[k] = gids[i], x
			k++
		}
	}
	if k == 0 {
		return
	}
	if k < n/2 { // mostly nulls/NaN: do not hold the slack
		ch.g, ch.v = append([]int32(nil), ch.g[:k]...), append([]float64(nil), ch.v[:k]...)
	} else {
		ch.g, ch.v = ch.g[:k], ch.v[:k]
	}
	c.chunks = append(c.chunks, ch)
	c.kept += int64(k)
	c.acct.charge(int64(cap(ch.g))*4 + int64(cap(ch.v))*8)
}

// finish scatters the chunks into flat, grouped (counting sort by group;
// within a group values keep their row order).
func (c *collector) finish() {
	if c.done {
		return
	}
	c.done = true
	offs := make([]int64, c.ngroups+1)
	for _, ch := range c.chunks {
		for _, g := range ch.g {
			offs[g+1]++
		}
	}
	for g := 1; g <= c.ngroups; g++ {
		offs[g] += offs[g-1]
	}
	c.acct.charge(int64(len(offs))*8 + c.kept*8)
	flat := make([]float64, c.kept)
	pos := make([]int64, c.ngroups)
	copy(pos, offs)
	var freed int64
	for i, ch := range c.chunks {
		vs := ch.v[:len(ch.g)]
		for j, g := range ch.g {
			flat[pos[g]] = vs[j]
			pos[g]++
		}
		freed += int64(cap(ch.g))*4 + int64(cap(ch.v))*8
		c.chunks[i] = valueChunk{}
	}
	c.chunks = nil
	c.acct.charge(-freed)
	c.flat, c.offs = flat, offs
}

// quantile returns the q-quantile of group g with linear interpolation
// between the closest ranks (numpy's default "linear" method): with the n
// values sorted, position q*(n-1) between ranks lo and lo+1 gives
// v[lo] + (v[lo+1]-v[lo])*frac. Interpolating toward an infinite value gives
// that infinity (between -Inf and +Inf: NaN). ok is false for a group
// without values (null result); a group whose only values are NaN gives NaN.
func (c *collector) quantile(g int, q float64) (float64, bool) {
	c.finish()
	vs := c.flat[c.offs[g]:c.offs[g+1]]
	if len(vs) == 0 {
		if c.nan[g] {
			return math.NaN(), true
		}
		return 0, false
	}
	return quantileSelect(vs, q), true
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
// the owner (the first aggregate on the column) feeds it.
type quantState struct {
	c     *collector
	q     float64
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
		s.c.update(col, gids)
	}
	return nil
}

func (s *quantState) build(mem memory.Allocator, lo, hi int) arrow.Array {
	out := make([]float64, hi-lo)
	valid := make([]bool, hi-lo)
	for i := range out {
		out[i], valid[i] = s.c.quantile(lo+i, s.q)
	}
	return buildFixed(mem, arrow.PrimitiveTypes.Float64, out, valid)
}

// ---- stddev ----

// stddevState is the sample standard deviation (n-1 denominator) with
// Welford's online algorithm. Fewer than two non-null values give null;
// any NaN or infinite value gives NaN.
type stddevState[T integer | float] struct {
	n    []int64
	mean []float64
	m2   []float64
}

func (s *stddevState[T]) grow(n int) {
	s.n, s.mean, s.m2 = growTo(s.n, n), growTo(s.mean, n), growTo(s.m2, n)
}
func (s *stddevState[T]) groupBytes() int64 { return 24 }

func (s *stddevState[T]) update(col arrow.Array, gids []int32) error {
	vals := values[T](col)
	v := validityOf(col)
	for i, g := range gids {
		if !v.ok(i) {
			continue
		}
		x := float64(vals[i])
		s.n[g]++
		d := x - s.mean[g]
		s.mean[g] += d / float64(s.n[g])
		s.m2[g] += d * (x - s.mean[g])
	}
	return nil
}

func (s *stddevState[T]) build(mem memory.Allocator, lo, hi int) arrow.Array {
	out := make([]float64, hi-lo)
	valid := make([]bool, hi-lo)
	for i := range out {
		g := lo + i
		if s.n[g] < 2 {
			continue
		}
		m2 := s.m2[g]
		if m2 < 0 { // rounding
			m2 = 0
		}
		out[i], valid[i] = math.Sqrt(m2/float64(s.n[g]-1)), true
	}
	return buildFixed(mem, arrow.PrimitiveTypes.Float64, out, valid)
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
