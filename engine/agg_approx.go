// approx_count_distinct (HyperLogLog++, github.com/axiomhq/hyperloglog) and
// approx_quantile (a merging t-digest of our own: the t-digest library on
// the proxy, caio/go-tdigest, costs O(centroids) per value, 1.7 µs/row
// measured): one sketch per group, created with the group's first value.

package engine

import (
	"math"
	"slices"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/axiomhq/hyperloglog"
	"github.com/zeebo/xxh3"
)

// hllState is approx_count_distinct. Each non-null value is hashed to 64
// bits (strings with xxh3, fixed-width values by their normalized bits
// through mix64, so values compare as in count_distinct) into its group's
// sketch (precision 14, sparse while small). The hashes are deterministic:
// the same input gives the same estimate.
type hllState struct {
	str      bool
	sketches []*hyperloglog.Sketch
	inserted []int32 // per group, capped: the memory charged so far / hllInsertBytes
	hashes   []uint64
	dictHash []uint64 // hash of each entry of the batch's dictionary
	strs     []string
	cbuf     []int32
	acct     *acct
}

// hllInsertBytes is the memory charged per inserted value up to
// hllMaxInserts per group: a sparse sketch grows with its distinct values
// up to the dense one (2^14 4-bit registers, 8 KiB). A new sketch holding a
// few values measured 183 bytes.
const (
	hllInsertBytes = 8
	hllMaxInserts  = 1024
	hllGroupBytes  = 8 + 4 + 184 // pointer, counter, sketch
)

func newHLLState(dt arrow.DataType, a *acct) aggState {
	if !supportedCompute(dt) {
		return nil
	}
	return &hllState{str: isDictStr(dt) || isStringType(dt.ID()), acct: a}
}

func (s *hllState) grow(n int) {
	s.sketches, s.inserted = growTo(s.sketches, n), growTo(s.inserted, n)
}
func (s *hllState) groupBytes() int64 { return hllGroupBytes }

func (s *hllState) update(col arrow.Array, gids []int32) error {
	n := len(gids)
	if cap(s.hashes) < n {
		s.hashes = make([]uint64, n)
	}
	hs := s.hashes[:n]
	if isDictStr(col.DataType()) && dictValues(col).Len() <= 2*n+4096 {
		s.hashDict(col, hs)
	} else if s.str {
		s.strs = strViewsAny(col, s.strs, &s.cbuf)
		for i := range hs {
			hs[i] = xxh3.HashString(s.strs[i])
		}
		clear(s.strs)
	} else {
		rawBits(col, hs, true)
		for i, k := range hs {
			hs[i] = mix64(k)
		}
	}
	v := validityOf(col)
	var charged int64
	for i, g := range gids {
		if !v.ok(i) {
			continue
		}
		sk := s.sketches[g]
		if sk == nil {
			sk = hyperloglog.New14()
			s.sketches[g] = sk
		}
		sk.InsertHash(hs[i])
		if s.inserted[g] < hllMaxInserts {
			s.inserted[g]++
			charged += hllInsertBytes
		}
	}
	s.acct.charge(charged)
	return nil
}

// hashDict hashes a dictionary-encoded batch once per dictionary entry
// (the caller checked that the dictionary is not much larger than the batch).
func (s *hllState) hashDict(col arrow.Array, hs []uint64) {
	src := strSrcOf(dictValues(col))
	s.dictHash = growTo(s.dictHash[:0], src.n)
	for j := range src.n {
		s.dictHash[j] = xxh3.HashString(src.at(j))
	}
	if x := dictIndices(col, &s.cbuf); x.i16 != nil {
		hashCodes(x.i16, s.dictHash, hs)
	} else {
		hashCodes(x.i32, s.dictHash, hs)
	}
}

// hashCodes sets hs[i] to the hash of code i's entry (of "" for a code
// outside the dictionary, as dictRowViews reads it).
func hashCodes[T codeType](codes []T, dictHash, hs []uint64) {
	for i := range hs {
		c := codes[i]
		if c < 0 || int(c) >= len(dictHash) {
			hs[i] = xxh3.HashString("")
			continue
		}
		hs[i] = dictHash[c]
	}
}

func (s *hllState) build(mem memory.Allocator, lo, hi int) arrow.Array {
	out := make([]int64, hi-lo)
	for i, sk := range s.sketches[lo:hi] {
		if sk != nil {
			out[i] = int64(sk.Estimate())
		}
	}
	return buildFixed(mem, arrow.PrimitiveTypes.Int64, out, nil)
}

// digestState is approx_quantile: a merging t-digest (Dunning's
// MergingDigest with the k1 scale function, compression 100) per group over
// the non-null, non-NaN values as float64. Values are buffered and merged
// into the centroids a sorted buffer at a time, so a value costs a buffer
// append plus its share of a sort and a linear merge. A group of at most
// digestBuffer values is never merged: its quantile is exact (quantile's
// numpy-style interpolation).
type digestState struct {
	q       float64
	load    func(arrow.Array, []float64) []float64
	buf     []float64
	digests []*mdigest
	sc      digestScratch
	acct    *acct
}

const (
	digestCompression = 100
	// digestBuffer values are buffered per group before a merge.
	digestBuffer = 5 * digestCompression
	// digestGroupBytes: the pointer and digest header, plus (charged as
	// values arrive, up to digestBuffer) 8 bytes per buffered value and
	// room for about 2*compression centroids.
	digestGroupBytes = 8 + 96
	digestValueBytes = 8 + 16*2*digestCompression/digestBuffer
)

func newDigestState(dt arrow.DataType, q float64, a *acct) aggState {
	load := floatLoader(dt)
	if load == nil {
		return nil
	}
	return &digestState{q: q, load: load, acct: a}
}

func (s *digestState) grow(n int)        { s.digests = growTo(s.digests, n) }
func (s *digestState) groupBytes() int64 { return digestGroupBytes }

func (s *digestState) update(col arrow.Array, gids []int32) error {
	vals := s.load(col, s.buf)
	if col.DataType().ID() != arrow.FLOAT64 { // float64 input aliases the batch
		s.buf = vals
	}
	v := validityOf(col)
	var charged int64
	for i, g := range gids {
		x := vals[i]
		if !v.ok(i) || x != x {
			continue
		}
		d := s.digests[g]
		if d == nil {
			d = &mdigest{min: x, max: x}
			s.digests[g] = d
		}
		if d.n < digestBuffer {
			charged += digestValueBytes
		}
		d.add(x, &s.sc)
	}
	s.acct.charge(charged)
	return nil
}

func (s *digestState) build(mem memory.Allocator, lo, hi int) arrow.Array {
	out := make([]float64, hi-lo)
	valid := make([]bool, hi-lo)
	for i, d := range s.digests[lo:hi] {
		if d != nil {
			out[i], valid[i] = d.quantile(s.q, &s.sc), true
		}
	}
	return buildFixed(mem, arrow.PrimitiveTypes.Float64, out, valid)
}

// mdigest is one group's merging t-digest.
type mdigest struct {
	means, weights []float64 // centroids, by mean
	buf            []uint64  // values not merged yet, as orderKey

	n        float64 // values added
	min, max float64
}

func (d *mdigest) add(x float64, sc *digestScratch) {
	d.buf = append(d.buf, orderKey(x))
	d.n++
	d.min, d.max = min(d.min, x), max(d.max, x)
	if len(d.buf) >= digestBuffer {
		d.merge(sc)
	}
}

// kScale is the k1 scale function: centroids are small near q = 0 and 1.
func kScale(q float64) float64 {
	return digestCompression / (2 * math.Pi) * math.Asin(2*q-1)
}

func kInverse(k float64) float64 {
	return (math.Sin(k*2*math.Pi/digestCompression) + 1) / 2
}

// merge folds the buffer into the centroids: both sorted by mean, merged
// in one pass, neighbours combined while the combined centroid spans at
// most one unit of kScale.
func (d *mdigest) merge(sc *digestScratch) {
	if len(d.buf) == 0 {
		return
	}
	slices.Sort(d.buf) // integer keys sort about twice as fast as floats
	means, weights := sc.means[:0], sc.weights[:0]
	i, j := 0, 0
	next := func() (float64, float64) {
		if j >= len(d.buf) || (i < len(d.means) && d.means[i] <= fromOrderKey(d.buf[j])) {
			i++
			return d.means[i-1], d.weights[i-1]
		}
		j++
		return fromOrderKey(d.buf[j-1]), 1
	}
	total := d.n
	m, w := next()
	done := 0.0 // weight before the current centroid
	limit := total * kInverse(kScale(0)+1)
	for i < len(d.means) || j < len(d.buf) {
		nm, nw := next()
		if done+w+nw <= limit {
			w += nw
			m += (nm - m) * nw / w
			continue
		}
		means, weights = append(means, m), append(weights, w)
		done += w
		limit = total * kInverse(math.Min(kScale(done/total)+1, kScale(1)))
		m, w = nm, nw
	}
	means, weights = append(means, m), append(weights, w)
	d.means, d.weights = append(d.means[:0], means...), append(d.weights[:0], weights...)
	sc.means, sc.weights = means, weights
	d.buf = d.buf[:0]
}

// digestScratch is merge's output before it is copied back into the
// digest (whose slices keep their capacity): one per digestState.
type digestScratch struct{ means, weights []float64 }

// quantile interpolates linearly between the centroids' centres, at ranks
// 0 .. n-1 (a centroid of weight w before which lie W values is centred at
// rank W + (w-1)/2), with the minimum at rank 0 and the maximum at n-1: for
// centroids of one value each this is quantile's exact interpolation.
// A group that never filled its buffer is answered from its values: exact.
func (d *mdigest) quantile(q float64, sc *digestScratch) float64 {
	means, weights := d.means, d.weights
	if len(means) == 0 {
		slices.Sort(d.buf)
		sc.means = sc.means[:0]
		for _, k := range d.buf {
			sc.means = append(sc.means, fromOrderKey(k))
		}
		means = sc.means
	} else {
		d.merge(sc)
		means, weights = d.means, d.weights
	}
	t := q * (d.n - 1)
	prevR, prevM := 0.0, d.min
	done := 0.0
	for i, m := range means {
		w := 1.0
		if weights != nil {
			w = weights[i]
		}
		r := done + (w-1)/2
		if t <= r {
			return between(prevM, m, prevR, r, t)
		}
		prevR, prevM = r, m
		done += w
	}
	return between(prevM, d.max, prevR, d.n-1, t)
}

// between is the value at rank t between a (rank ra) and b (rank rb >= ra),
// interpolated as quantile does.
func between(a, b, ra, rb, t float64) float64 {
	if rb <= ra || t <= ra {
		return a
	}
	return interpolate(a, b, min(1, (t-ra)/(rb-ra)))
}

// orderKey maps a non-NaN float64 to a uint64 in the same order (-0 before
// +0): a negative value's bits flipped, a positive one's sign bit set (no
// branch: selectKth's partition compares these).
func orderKey(x float64) uint64 {
	b := math.Float64bits(x)
	return b ^ (uint64(int64(b)>>63) | 1<<63)
}

func fromOrderKey(k uint64) float64 {
	if k>>63 != 0 {
		return math.Float64frombits(k &^ (1 << 63))
	}
	return math.Float64frombits(^k)
}
