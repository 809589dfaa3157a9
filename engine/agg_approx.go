// approx_count_distinct (HyperLogLog++, github.com/axiomhq/hyperloglog) and
// approx_quantile (t-digest, github.com/caio/go-tdigest): one sketch per
// group, created with the group's first value.

package engine

import (
	"math"
	"math/rand"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/axiomhq/hyperloglog"
	tdigest "github.com/caio/go-tdigest/v4"
	"github.com/zeebo/xxh3"

	"github.com/quarrydb/quarry/internal/qerr"
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
	strs     []string
	cbuf     []int32
	acct     *acct
}

// hllInsertBytes is the memory charged per inserted value up to
// hllMaxInserts per group: a sparse sketch grows with its distinct values
// up to the dense one (2^14 registers).
const (
	hllInsertBytes = 4
	hllMaxInserts  = 4096
	hllGroupBytes  = 8 + 4 + 64 // pointer, counter, sketch header
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
	if s.str {
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

func (s *hllState) build(mem memory.Allocator, lo, hi int) arrow.Array {
	out := make([]int64, hi-lo)
	for i, sk := range s.sketches[lo:hi] {
		if sk != nil {
			out[i] = int64(sk.Estimate())
		}
	}
	return buildFixed(mem, arrow.PrimitiveTypes.Int64, out, nil)
}

// digestState is approx_quantile: a t-digest (compression 100) per group
// over the non-null, non-NaN values as float64. The digests share one
// seeded random source, so the same input gives the same estimate.
type digestState struct {
	q        float64
	load     func(arrow.Array, []float64) []float64
	buf      []float64
	digests  []*tdigest.TDigest
	inserted []int32
	rng      *rand.Rand
	acct     *acct
}

const (
	digestCompression = 100
	// digestValueBytes per value up to digestMaxValues per group: a
	// digest holds at most a few times its compression in centroids.
	digestValueBytes = 16
	digestMaxValues  = 8 * digestCompression
	digestGroupBytes = 8 + 4 + 200
)

func newDigestState(dt arrow.DataType, q float64, a *acct) aggState {
	load := floatLoader(dt)
	if load == nil {
		return nil
	}
	return &digestState{q: q, load: load, rng: rand.New(rand.NewSource(1)), acct: a}
}

func (s *digestState) grow(n int) {
	s.digests, s.inserted = growTo(s.digests, n), growTo(s.inserted, n)
}
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
		if !v.ok(i) || math.IsNaN(x) {
			continue
		}
		d := s.digests[g]
		if d == nil {
			var err error
			d, err = tdigest.New(tdigest.Compression(digestCompression), tdigest.RandomNumberGenerator(s.rng))
			if err != nil {
				return qerr.Internal(err, "approx_quantile: %v", err)
			}
			s.digests[g] = d
		}
		if err := d.Add(x); err != nil {
			return qerr.Internal(err, "approx_quantile: %v", err)
		}
		if s.inserted[g] < digestMaxValues {
			s.inserted[g]++
			charged += digestValueBytes
		}
	}
	s.acct.charge(charged)
	return nil
}

func (s *digestState) build(mem memory.Allocator, lo, hi int) arrow.Array {
	out := make([]float64, hi-lo)
	valid := make([]bool, hi-lo)
	for i, d := range s.digests[lo:hi] {
		if d != nil {
			out[i], valid[i] = d.Quantile(s.q), true
		}
	}
	return buildFixed(mem, arrow.PrimitiveTypes.Float64, out, valid)
}
