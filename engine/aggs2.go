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

// distinctFixed is count_distinct over fixed-width values: a hash set of
// (group, normalized bits) pairs. Floats compare by value with every NaN
// equal and -0 == +0, as group keys do; nulls are not counted.
type distinctFixed struct {
	set    map[distinctKey]struct{}
	counts []int64
	bits   []uint64
	acct   *acct
}

type distinctKey struct {
	g int32
	v uint64
}

func newDistinctFixed(a *acct) *distinctFixed {
	return &distinctFixed{set: map[distinctKey]struct{}{}, acct: a}
}

func (s *distinctFixed) grow(n int)        { s.counts = growTo(s.counts, n) }
func (s *distinctFixed) groupBytes() int64 { return 8 }

func (s *distinctFixed) update(col arrow.Array, gids []int32) error {
	n := len(gids)
	if cap(s.bits) < n {
		s.bits = make([]uint64, n)
	}
	bits := s.bits[:n]
	rawBits(col, bits, true)
	v := validityOf(col)
	added := 0
	for i, g := range gids {
		if !v.ok(i) {
			continue
		}
		k := distinctKey{g, bits[i]}
		if _, ok := s.set[k]; !ok {
			s.set[k] = struct{}{}
			s.counts[g]++
			added++
		}
	}
	s.acct.charge(int64(added) * 40)
	return nil
}

func (s *distinctFixed) build(mem memory.Allocator, lo, hi int) arrow.Array {
	return buildFixed(mem, arrow.PrimitiveTypes.Int64, s.counts[lo:hi], nil)
}

// distinctStr is count_distinct over strings (plain or dictionary-encoded),
// compared bytewise. It keeps a copy of every distinct value per group.
type distinctStr struct {
	set    map[distinctStrKey]struct{}
	counts []int64
	buf    []string
	cbuf   []int32
	acct   *acct
}

type distinctStrKey struct {
	g int32
	s string
}

func newDistinctStr(a *acct) *distinctStr {
	return &distinctStr{set: map[distinctStrKey]struct{}{}, acct: a}
}

func (s *distinctStr) grow(n int)        { s.counts = growTo(s.counts, n) }
func (s *distinctStr) groupBytes() int64 { return 8 }

func (s *distinctStr) update(col arrow.Array, gids []int32) error {
	s.buf = strViewsAny(col, s.buf, &s.cbuf)
	v := validityOf(col)
	var added int64
	for i, g := range gids {
		if !v.ok(i) {
			continue
		}
		if _, ok := s.set[distinctStrKey{g, s.buf[i]}]; !ok {
			x := strings.Clone(s.buf[i])
			s.set[distinctStrKey{g, x}] = struct{}{}
			s.counts[g]++
			added += int64(56 + len(x))
		}
	}
	clear(s.buf) // drop views into the batch
	s.acct.charge(added)
	return nil
}

func (s *distinctStr) build(mem memory.Allocator, lo, hi int) arrow.Array {
	return buildFixed(mem, arrow.PrimitiveTypes.Int64, s.counts[lo:hi], nil)
}

// ---- median / quantile ----

// collector keeps every non-null, non-NaN value of one input column per
// group (as float64) for the exact order statistics median and quantile.
// Aggregates over the same column share one collector.
type collector struct {
	vals   [][]float64
	nan    []bool // a NaN was seen (the result when no other value is)
	sorted []bool
	load   func(arrow.Array, []float64) []float64
	alias  bool // load aliases Arrow memory (float64 input): never keep its result
	buf    []float64
	acct   *acct
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

func (c *collector) grow(n int) {
	if n > len(c.vals) {
		c.acct.charge(int64(n-len(c.vals)) * 26)
	}
	c.vals, c.nan, c.sorted = growTo(c.vals, n), growTo(c.nan, n), growTo(c.sorted, n)
}

func (c *collector) update(col arrow.Array, gids []int32) {
	vs := c.load(col, c.buf)
	if !c.alias {
		c.buf = vs
	}
	v := validityOf(col)
	var added int64
	for i, g := range gids {
		if !v.ok(i) {
			continue
		}
		x := vs[i]
		if x != x {
			c.nan[g] = true
			continue
		}
		c.vals[g] = append(c.vals[g], x)
		c.sorted[g] = false
		added++
	}
	c.acct.charge(added * 8)
}

// quantile returns the q-quantile of group g with linear interpolation
// between the closest ranks (numpy's default "linear" method): with the n
// values sorted, position q*(n-1) between ranks lo and lo+1 gives
// v[lo] + (v[lo+1]-v[lo])*frac. Interpolating toward an infinite value gives
// that infinity (between -Inf and +Inf: NaN). ok is false for a group without values (null result);
// a group whose only values are NaN gives NaN.
func (c *collector) quantile(g int, q float64) (float64, bool) {
	vs := c.vals[g]
	if len(vs) == 0 {
		if c.nan[g] {
			return math.NaN(), true
		}
		return 0, false
	}
	if !c.sorted[g] {
		slices.Sort(vs)
		c.sorted[g] = true
	}
	return quantileSorted(vs, q), true
}

// quantileSorted is the interpolated q-quantile of sorted, NaN-free,
// non-empty values (see collector.quantile).
func quantileSorted(vs []float64, q float64) float64 {
	pos := q * float64(len(vs)-1)
	lo := int(math.Floor(pos))
	if lo >= len(vs)-1 {
		return vs[len(vs)-1]
	}
	frac := pos - float64(lo)
	a, b := vs[lo], vs[lo+1]
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
