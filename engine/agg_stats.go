// Variance, standard deviation, covariance, correlation and linear
// regression aggregates: one float64 kernel each (integer inputs are
// converted per batch), with Welford-style online updates per group.

package engine

import (
	"math"
	"math/bits"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/quarrydb/quarry/internal/funcs"
)

// varState is var_samp, var_pop, stddev (= stddev_samp) and stddev_pop:
// Welford's online mean and sum of squared deviations per group. Sample
// statistics of fewer than two values are null, population ones of none;
// any NaN or infinite value gives NaN.
type varState struct {
	pop, sqrt bool
	load      func(arrow.Array, []float64) []float64
	buf       []float64
	n         []int64
	mean, m2  []float64
}

func newVarState(fn funcs.AggFn, dt arrow.DataType) aggState {
	load := floatLoader(dt)
	if load == nil {
		return nil
	}
	return &varState{
		pop:  fn == funcs.AggVarPop || fn == funcs.AggStddevPop,
		sqrt: fn != funcs.AggVarPop && fn != funcs.AggVarSamp,
		load: load,
	}
}

func (s *varState) grow(n int) {
	s.n, s.mean, s.m2 = growTo(s.n, n), growTo(s.mean, n), growTo(s.m2, n)
}
func (s *varState) groupBytes() int64 { return 24 }

func (s *varState) update(col arrow.Array, gids []int32) error {
	vals := s.load(col, s.buf)
	if col.DataType().ID() != arrow.FLOAT64 { // float64 input aliases the batch
		s.buf = vals
	}
	v := validityOf(col)
	ns, mean, m2 := s.n, s.mean, s.m2
	for i, g := range gids {
		if !v.ok(i) {
			continue
		}
		x := vals[i]
		ns[g]++
		d := x - mean[g]
		mean[g] += d / float64(ns[g])
		m2[g] += d * (x - mean[g])
	}
	return nil
}

func (s *varState) build(mem memory.Allocator, lo, hi int) arrow.Array {
	out := make([]float64, hi-lo)
	valid := make([]bool, hi-lo)
	minN := int64(2)
	if s.pop {
		minN = 1
	}
	for i := range out {
		g := lo + i
		n := s.n[g]
		if n < minN {
			continue
		}
		m2 := nonNeg(s.m2[g])
		if !finite(s.mean[g]) { // a NaN or infinite value
			m2 = math.NaN()
		}
		den := float64(n - 1)
		if s.pop {
			den = float64(n)
		}
		r := m2 / den
		if s.sqrt {
			r = math.Sqrt(r)
		}
		out[i], valid[i] = r, true
	}
	return buildFixed(mem, arrow.PrimitiveTypes.Float64, out, valid)
}

// covState is covar_samp, covar_pop, corr, regr_slope, regr_intercept and
// regr_r2 over the rows where both y (col) and x (arg) are non-null: the
// count, both means, both sums of squared deviations and the co-moment
// Σ(x-x̄)(y-ȳ), updated online per row (Welford), or, while both columns
// are integers small enough, exact integer sums (covExact) from which the
// same moments are computed at the end.
type covState struct {
	fn            funcs.AggFn
	loadY, loadX  func(arrow.Array, []float64) []float64
	bufY, bufX    []float64
	n             []int64
	mx, my        []float64
	m2x, m2y, cxy []float64
	ex            *covExact // non-nil: the exact sums hold every group (n and the rest unused)
	acct          *acct
}

func newCovState(fn funcs.AggFn, yt, xt arrow.DataType, a *acct) aggState {
	ly, lx := floatLoader(yt), floatLoader(xt)
	if ly == nil || lx == nil {
		return nil
	}
	s := &covState{fn: fn, loadY: ly, loadX: lx, acct: a}
	if iy, ix := intLoader(yt), intLoader(xt); iy != nil && ix != nil {
		s.ex = &covExact{loadY: iy, loadX: ix}
	}
	return s
}

func (s *covState) grow(n int) {
	if s.ex != nil {
		s.ex.sums = growTo(s.ex.sums, n)
		return
	}
	s.n = growTo(s.n, n)
	s.mx, s.my = growTo(s.mx, n), growTo(s.my, n)
	s.m2x, s.m2y, s.cxy = growTo(s.m2x, n), growTo(s.m2y, n), growTo(s.cxy, n)
}

// groupBytes is the same exact (six int64) and online (an int64, five
// float64).
func (s *covState) groupBytes() int64 { return covGroupBytes }

const covGroupBytes = 48

func (s *covState) update(arrow.Array, []int32) error { panic("covState needs two columns") }

func (s *covState) update2(ycol, xcol arrow.Array, gids []int32) error {
	if s.ex != nil {
		if s.ex.add(ycol, xcol, gids) {
			return nil
		}
		s.online()
	}
	ys := s.loadY(ycol, s.bufY)
	xs := s.loadX(xcol, s.bufX)
	if ycol.DataType().ID() != arrow.FLOAT64 {
		s.bufY = ys
	}
	if xcol.DataType().ID() != arrow.FLOAT64 {
		s.bufX = xs
	}
	vy, vx := validityOf(ycol), validityOf(xcol)
	ns, mx, my, m2x, m2y, cxy := s.n, s.mx, s.my, s.m2x, s.m2y, s.cxy
	for i, g := range gids {
		if !vy.ok(i) || !vx.ok(i) {
			continue
		}
		x, y := xs[i], ys[i]
		ns[g]++
		n := float64(ns[g])
		dx := x - mx[g]
		dy := y - my[g]
		mx[g] += dx / n
		my[g] += dy / n
		m2x[g] += dx * (x - mx[g])
		m2y[g] += dy * (y - my[g])
		cxy[g] += dx * (y - my[g])
	}
	return nil
}

// online turns the exact sums into the online moments (every group), for
// the rows to come (or a merge) that the sums cannot take. The online
// arrays are taken from the acct before they are allocated, the sums given
// back after.
func (s *covState) online() {
	ex := s.ex
	n, c := len(ex.sums), int64(cap(ex.sums))
	s.acct.take(c * covGroupBytes)
	s.ex = nil
	s.grow(n)
	for g := range ex.sums {
		m := ex.sums[g].moments()
		s.n[g], s.mx[g], s.my[g], s.m2x[g], s.m2y[g], s.cxy[g] = m.n, m.mx, m.my, m.m2x, m.m2y, m.cxy
	}
	s.acct.charge(-c * covGroupBytes)
}

// covMoments are one group's count, means, sums of squared deviations and
// co-moment.
type covMoments struct {
	n                     int64
	mx, my, m2x, m2y, cxy float64
}

// moments returns group g's moments.
func (s *covState) moments(g int) covMoments {
	if s.ex != nil {
		return s.ex.sums[g].moments()
	}
	return covMoments{s.n[g], s.mx[g], s.my[g], s.m2x[g], s.m2y[g], s.cxy[g]}
}

func (s *covState) build(mem memory.Allocator, lo, hi int) arrow.Array {
	out := make([]float64, hi-lo)
	valid := make([]bool, hi-lo)
	for i := range out {
		out[i], valid[i] = s.result(lo + i)
	}
	return buildFixed(mem, arrow.PrimitiveTypes.Float64, out, valid)
}

// result is group g's value and whether it is non-null (see the
// registry's docs for each function).
func (s *covState) result(g int) (float64, bool) {
	m := s.moments(g)
	n := float64(m.n)
	if n == 0 {
		return 0, false
	}
	cxy := m.cxy
	varX, varY := nonNeg(m.m2x)/n, nonNeg(m.m2y)/n
	// A NaN or infinite value makes its mean so; Welford's updates alone
	// may then leave an infinity (or even a finite value) behind.
	if !finite(m.mx) {
		varX, cxy = math.NaN(), math.NaN()
	}
	if !finite(m.my) {
		varY, cxy = math.NaN(), math.NaN()
	}
	cov := cxy / n
	switch s.fn {
	case funcs.AggCovarPop:
		return cov, true
	case funcs.AggCovarSamp:
		if n < 2 {
			return 0, false
		}
		return cxy / (n - 1), true
	case funcs.AggCorr:
		return cov / (math.Sqrt(varX) * math.Sqrt(varY)), true
	case funcs.AggRegrSlope:
		return cov / varX, true
	case funcs.AggRegrIntercept:
		slope := cov / varX
		if math.IsNaN(slope) || math.IsInf(slope, 0) {
			return 0, false
		}
		return m.my - slope*m.mx, true
	case funcs.AggRegrR2:
		switch {
		case varX == 0:
			return 0, false
		case varY == 0:
			return 1, true
		}
		return cov * cov / (varX * varY), true
	}
	return 0, false
}

// covExact is covState over two integer columns while every sum provably
// fits an int64: per group the count and Σx, Σy, Σx², Σy², Σxy, added
// exactly, with no division per row (Welford's online update divides
// twice). A batch is taken only when rows·m² < 2^62, rows the rows added so
// far and m the largest magnitude of any value added (so |Σx²| ≤ n·m² for
// every group, and two states within the bound add without overflow);
// otherwise the state turns online (covState.online) before it. The moments
// come from the sums in 128-bit integers, n·Σxy − Σx·Σy and so on, exact up
// to the one rounding to float64: more exact than the online update, which
// rounds per row.
type covExact struct {
	loadY, loadX func(arrow.Array, []int64) []int64
	bufY, bufX   []int64
	sums         []covSums
	rows         int64  // rows added (at least every group's n)
	m            uint64 // the largest |value| added
}

// covSums are one group's exact sums (one cache line's worth: the row
// touches one place, not six).
type covSums struct{ n, sx, sy, sxx, syy, sxy int64 }

// covExactBound is 2^62 (see covExact).
const covExactBound = 1 << 62

// covFits reports whether rows values of magnitude at most m keep every
// sum below covExactBound.
func covFits(rows int64, m uint64) bool {
	if m >= 1<<31 {
		return false
	}
	m2 := m * m
	return m2 == 0 || uint64(rows) < covExactBound/m2
}

// add adds the rows of gids where both columns are non-null; false (nothing
// added) when the batch could take a sum out of the bound.
func (e *covExact) add(ycol, xcol arrow.Array, gids []int32) bool {
	ys := e.loadY(ycol, e.bufY)
	xs := e.loadX(xcol, e.bufX)
	if ycol.DataType().ID() != arrow.INT64 {
		e.bufY = ys
	}
	if xcol.DataType().ID() != arrow.INT64 {
		e.bufX = xs
	}
	ys, xs = ys[:len(gids)], xs[:len(gids)]
	vy, vx := validityOf(ycol), validityOf(xcol)
	nulls := vy.bits != nil || vx.bits != nil
	m := e.m
	for i := range gids {
		if nulls && (!vy.ok(i) || !vx.ok(i)) {
			continue
		}
		m = max(m, absU64(ys[i]), absU64(xs[i]))
	}
	rows := e.rows + int64(len(gids))
	if !covFits(rows, m) {
		return false
	}
	e.rows, e.m = rows, m
	sums := e.sums
	for i, g := range gids {
		if nulls && (!vy.ok(i) || !vx.ok(i)) {
			continue
		}
		x, y := xs[i], ys[i]
		p := &sums[g]
		p.n++
		p.sx += x
		p.sy += y
		p.sxx += x * x
		p.syy += y * y
		p.sxy += x * y
	}
	return true
}

// absU64 is |x| (|MinInt64| = 2^63).
func absU64(x int64) uint64 {
	m := x >> 63
	return uint64((x ^ m) - m)
}

// moments are the group's moments from its sums: the means Σx/n and the
// sums of squared deviations and the co-moment (n·Σxy − Σx·Σy)/n, the
// numerators exact in 128 bits.
func (p covSums) moments() covMoments {
	if p.n == 0 {
		return covMoments{}
	}
	n := float64(p.n)
	dev := func(sab, sa, sb int64) float64 {
		return i128Float(i128Sub(i128Mul(p.n, sab), i128Mul(sa, sb))) / n
	}
	return covMoments{n: p.n, mx: float64(p.sx) / n, my: float64(p.sy) / n,
		m2x: dev(p.sxx, p.sx, p.sx), m2y: dev(p.syy, p.sy, p.sy), cxy: dev(p.sxy, p.sx, p.sy)}
}

// i128 is a signed 128-bit integer: hi·2^64 + lo.
type i128 struct {
	hi int64
	lo uint64
}

// i128Mul is a·b exactly.
func i128Mul(a, b int64) i128 {
	hi, lo := bits.Mul64(uint64(a), uint64(b))
	h := int64(hi)
	if a < 0 {
		h -= b
	}
	if b < 0 {
		h -= a
	}
	return i128{h, lo}
}

// i128Sub is a − b (no overflow for the products of covSums.moments).
func i128Sub(a, b i128) i128 {
	lo, borrow := bits.Sub64(a.lo, b.lo, 0)
	return i128{a.hi - b.hi - int64(borrow), lo}
}

// i128Float is x rounded to a float64 (within an ulp: the low word is
// rounded once more when the high word is not 0).
func i128Float(x i128) float64 {
	if x.hi == int64(x.lo)>>63 { // fits an int64
		return float64(int64(x.lo))
	}
	neg := x.hi < 0
	if neg {
		lo, borrow := bits.Sub64(0, x.lo, 0)
		x = i128{-x.hi - int64(borrow), lo}
	}
	f := float64(uint64(x.hi))*0x1p64 + float64(x.lo)
	if neg {
		return -f
	}
	return f
}

// intLoader returns the loader of a signed integer column, or an unsigned
// one narrower than 64 bits, as int64 (int64 columns alias the batch),
// or nil for any other type.
func intLoader(dt arrow.DataType) func(arrow.Array, []int64) []int64 {
	switch dt.ID() {
	case arrow.INT8:
		return loadInts[int8]
	case arrow.INT16:
		return loadInts[int16]
	case arrow.INT32:
		return loadInts[int32]
	case arrow.INT64:
		return func(arr arrow.Array, _ []int64) []int64 { return values[int64](arr) }
	case arrow.UINT8:
		return loadInts[uint8]
	case arrow.UINT16:
		return loadInts[uint16]
	case arrow.UINT32:
		return loadInts[uint32]
	}
	return nil
}

func loadInts[T int8 | int16 | int32 | uint8 | uint16 | uint32](arr arrow.Array, buf []int64) []int64 {
	return loadAs[int64, T](arr, buf)
}

// nonNeg clamps a sum of squares that rounding made negative to 0 (NaN stays NaN).
func nonNeg(m2 float64) float64 {
	if m2 < 0 {
		return 0
	}
	return m2
}

func finite(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }
