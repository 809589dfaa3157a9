// Variance, standard deviation, covariance, correlation and linear
// regression aggregates: one float64 kernel each (integer inputs are
// converted per batch), with Welford-style online updates per group.

package engine

import (
	"math"

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
// Σ(x-x̄)(y-ȳ), updated online per row.
type covState struct {
	fn            funcs.AggFn
	loadY, loadX  func(arrow.Array, []float64) []float64
	bufY, bufX    []float64
	n             []int64
	mx, my        []float64
	m2x, m2y, cxy []float64
}

func newCovState(fn funcs.AggFn, yt, xt arrow.DataType) aggState {
	ly, lx := floatLoader(yt), floatLoader(xt)
	if ly == nil || lx == nil {
		return nil
	}
	return &covState{fn: fn, loadY: ly, loadX: lx}
}

func (s *covState) grow(n int) {
	s.n = growTo(s.n, n)
	s.mx, s.my = growTo(s.mx, n), growTo(s.my, n)
	s.m2x, s.m2y, s.cxy = growTo(s.m2x, n), growTo(s.m2y, n), growTo(s.cxy, n)
}
func (s *covState) groupBytes() int64 { return 48 }

func (s *covState) update(arrow.Array, []int32) error { panic("covState needs two columns") }

func (s *covState) update2(ycol, xcol arrow.Array, gids []int32) error {
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
	n := float64(s.n[g])
	if n == 0 {
		return 0, false
	}
	cxy := s.cxy[g]
	varX, varY := nonNeg(s.m2x[g])/n, nonNeg(s.m2y[g])/n
	// A NaN or infinite value makes its mean so; Welford's updates alone
	// may then leave an infinity (or even a finite value) behind.
	if !finite(s.mx[g]) {
		varX, cxy = math.NaN(), math.NaN()
	}
	if !finite(s.my[g]) {
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
		return s.my[g] - slope*s.mx[g], true
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

// nonNeg clamps a sum of squares that rounding made negative to 0 (NaN stays NaN).
func nonNeg(m2 float64) float64 {
	if m2 < 0 {
		return 0
	}
	return m2
}

func finite(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }
