package engine

import (
	"cmp"
	"errors"
	"math"

	"github.com/quarrydb/quarry/internal/funcs"
)

// Merging aggregate states: the partial states of one aggregate, built by
// different workers over disjoint parts of the input (agg_parallel.go),
// combine into the state of the whole input. Each mergeable state type
// declares its merge here, next to nothing else: a state without one keeps
// its aggregate on the one-table path.
//
// merge folds src (a state of the same aggregate and input type, built by
// the same constructor) into s: src's group g goes into s's group dst[g]
// (len(dst) is src's group count; s has grown to cover every dst[g]). src
// is not used afterwards (s may take over its memory).
//
// What merging preserves: counts, integer sums, min/max, count_if,
// count_distinct and HyperLogLog sketches merge exactly (the result is the
// one of the whole input); float sums, averages and the moment-based
// statistics (variance, covariance, correlation, regression) combine with
// the parallel formulas of Chan, Golub and LeVeque, so they equal the
// whole-input result up to floating-point rounding (the order of additions
// differs); median and quantile merge exactly, without group keys only
// (agg_quant_merge.go), and so do first and last (agg_firstlast_merge.go).
// Aggregates whose result depends on the input order (string_agg, list;
// first and last with keys) or that keep every value (mode,
// approx_quantile, arg_min/arg_max) have no merge yet.
type mergingState interface {
	aggState
	merge(src aggState, dst []int32) error
}

// kernelState merges when its registered kernel does (funcs.AggMerger).
func (k kernelState) merge(src aggState, dst []int32) error {
	m, ok := k.s.(funcs.AggMerger)
	if !ok {
		return errNoMerge
	}
	return m.Merge(src.(kernelState).s, dst)
}

// mergeable reports whether s has a merge.
func mergeable(s aggState) bool {
	if k, ok := s.(kernelState); ok {
		_, ok := k.s.(funcs.AggMerger)
		return ok
	}
	_, ok := s.(mergingState)
	return ok
}

func (s *countState) merge(src aggState, dst []int32) error {
	for g, c := range src.(*countState).counts[:len(dst)] {
		s.counts[dst[g]] += c
	}
	return nil
}

func (s *sumInt[T]) merge(src aggState, dst []int32) error {
	o := src.(*sumInt[T])
	for g, d := range dst {
		if !o.seen[g] {
			continue
		}
		acc, x := s.sums[d], o.sums[g]
		r := acc + x
		if (x > 0 && r < acc) || (x < 0 && r > acc) {
			return s.overflow()
		}
		s.sums[d], s.seen[d] = r, true
	}
	return nil
}

func (s *sumFloat[T]) merge(src aggState, dst []int32) error {
	o := src.(*sumFloat[T])
	addSeen(s.sums, s.seen, o.sums, o.seen, dst)
	return nil
}

// addSeen adds the partial values of the groups src saw into dst's
// groups (the merge of sum-like states with a seen flag).
func addSeen[T int64 | float64](sums []T, seen []bool, osums []T, oseen []bool, dst []int32) {
	for g, d := range dst {
		if oseen[g] {
			sums[d] += osums[g]
			seen[d] = true
		}
	}
}

func (s *avgState[T]) merge(src aggState, dst []int32) error {
	o := src.(*avgState[T])
	for g, d := range dst {
		s.sums[d] += o.sums[g]
		s.counts[d] += o.counts[g]
	}
	if s.lead { // (the partial aggregate shares as this one: newAggOp)
		for g, d := range dst {
			s.rows.n[d] += o.rows.n[g]
		}
	}
	return nil
}

func (s *countIf) merge(src aggState, dst []int32) error {
	o := src.(*countIf)
	addSeen(s.counts, s.seen, o.counts, o.seen, dst)
	return nil
}

func (s *minMax[T]) merge(src aggState, dst []int32) error {
	o := src.(*minMax[T])
	for g, d := range dst {
		if !o.seen[g] {
			continue
		}
		x := o.cur[g]
		if !s.seen[d] {
			s.cur[d], s.seen[d] = x, true
			continue
		}
		if x != x { // NaN: never replaces a number
			continue
		}
		c := s.cur[d]
		if c != c || (s.max && x > c) || (!s.max && x < c) {
			s.cur[d] = x
		}
	}
	return nil
}

func (s *minMaxBool) merge(src aggState, dst []int32) error {
	o := src.(*minMaxBool)
	for g, d := range dst {
		if !o.seen[g] {
			continue
		}
		if x := o.cur[g]; !s.seen[d] {
			s.cur[d], s.seen[d] = x, true
		} else if x == s.max {
			s.cur[d] = x
		}
	}
	return nil
}

func (s *minMaxStr) merge(src aggState, dst []int32) error {
	o := src.(*minMaxStr)
	var delta int64
	for g, d := range dst {
		if !o.seen[g] {
			continue
		}
		x := o.cur[g] // src's own copy: taken over, not copied again
		if s.seen[d] {
			c := cmp.Compare(x, s.cur[d])
			if c == 0 || (c > 0) != s.max {
				continue
			}
		}
		delta += int64(len(x) - len(s.cur[d]))
		s.cur[d], s.seen[d] = x, true
	}
	s.acct.charge(delta)
	return nil
}

// chan combines two (count, mean, sum of squared deviations) triples
// (Chan, Golub and LeVeque): the statistics of the union of both parts.
func chanMerge(na, nb int64, ma, mb, m2a, m2b float64) (mean, m2, d, w float64) {
	n := float64(na + nb)
	d = mb - ma
	w = float64(na) * float64(nb) / n
	return ma + d*float64(nb)/n, m2a + m2b + d*d*w, d, w
}

func (s *varState) merge(src aggState, dst []int32) error {
	o := src.(*varState)
	for g, d := range dst {
		nb := o.n[g]
		if nb == 0 {
			continue
		}
		na := s.n[d]
		if na == 0 {
			s.n[d], s.mean[d], s.m2[d] = nb, o.mean[g], o.m2[g]
			continue
		}
		s.mean[d], s.m2[d], _, _ = chanMerge(na, nb, s.mean[d], o.mean[g], s.m2[d], o.m2[g])
		s.n[d] = na + nb
	}
	return nil
}

func (s *covState) merge(src aggState, dst []int32) error {
	o := src.(*covState)
	if s.ex != nil && o.ex != nil && covFits(s.ex.rows+o.ex.rows, max(s.ex.m, o.ex.m)) {
		for g, d := range dst {
			a, b := &s.ex.sums[d], o.ex.sums[g]
			a.n, a.sx, a.sy = a.n+b.n, a.sx+b.sx, a.sy+b.sy
			a.sxx, a.syy, a.sxy = a.sxx+b.sxx, a.syy+b.syy, a.sxy+b.sxy
		}
		s.ex.rows, s.ex.m = s.ex.rows+o.ex.rows, max(s.ex.m, o.ex.m)
		return nil
	}
	if s.ex != nil {
		s.online()
	}
	for g, d := range dst {
		b := o.moments(g)
		if b.n == 0 {
			continue
		}
		na := s.n[d]
		if na == 0 {
			s.n[d], s.mx[d], s.my[d] = b.n, b.mx, b.my
			s.m2x[d], s.m2y[d], s.cxy[d] = b.m2x, b.m2y, b.cxy
			continue
		}
		var dx, dy, w float64
		s.mx[d], s.m2x[d], dx, w = chanMerge(na, b.n, s.mx[d], b.mx, s.m2x[d], b.m2x)
		s.my[d], s.m2y[d], dy, _ = chanMerge(na, b.n, s.my[d], b.my, s.m2y[d], b.m2y)
		s.cxy[d] += b.cxy + dx*dy*w
		s.n[d] = na + b.n
	}
	return nil
}

func (s *hllState) merge(src aggState, dst []int32) error {
	o := src.(*hllState)
	for g, d := range dst {
		sk := o.sketches[g]
		if sk == nil {
			continue
		}
		if s.sketches[d] == nil {
			s.sketches[d], s.inserted[d] = sk, o.inserted[g]
			continue
		}
		if err := s.sketches[d].Merge(sk); err != nil {
			return err
		}
		s.inserted[d] = min(s.inserted[d]+o.inserted[g], hllMaxInserts)
	}
	return nil
}

// merge of count_distinct: src's value ids are renumbered into s's (by
// value), then src's distinct (group, value) pairs are added to s's set.
func (s *distinctState) merge(src aggState, dst []int32) error {
	o := src.(*distinctState)
	ids := make([]uint64, o.ids.n)
	if o.ids.str {
		for id, v := range o.ids.strs {
			ids[id] = uint64(s.ids.strID(v))
		}
	} else {
		o.ids.eachFixed(func(k uint64, id int32) { ids[id] = uint64(s.ids.bitsID(k)) })
	}
	if s.dense != nil && !s.dense.fit(len(s.counts), s.ids.n) {
		s.set = newU64Set(s.acct)
		s.dense.each(func(g int, id uint64) { s.set.add(uint64(g)<<32 | id) })
		s.dense.release()
		s.dense = nil
	}
	add := func(g int, id uint64) {
		dg, v := dst[g], ids[id]
		if d := s.dense; d != nil {
			bit := uint64(dg)<<d.shift | v
			w, m := &d.words[bit>>6], uint64(1)<<(bit&63)
			if *w&m == 0 {
				*w |= m
				s.counts[dg]++
			}
			return
		}
		if s.set.add(uint64(uint32(dg))<<32 | v) {
			s.counts[dg]++
		}
	}
	if o.dense != nil {
		o.dense.each(add)
		return nil
	}
	for _, k := range o.set.keys { // group ids are below 2^31: no key is emptyKey
		if k != emptyKey {
			add(int(k>>32), k&math.MaxUint32)
		}
	}
	return nil
}

// errNoMerge is the error of merging a state that has no merge (the
// parallel path only runs aggregates whose states all merge).
var errNoMerge = errors.New("aggregate state has no merge")
