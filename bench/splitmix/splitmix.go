// Package splitmix is the splitmix64 random stream the benchmark data
// generators (bench/h2o/gen, bench/tpch/gen) draw from, so that their bytes
// depend only on the seed, never on the Go version's math/rand.
package splitmix

// Rand is a splitmix64 stream; the zero value is seed 0.
type Rand struct{ S uint64 }

// New returns a stream seeded with seed.
func New(seed uint64) *Rand { return &Rand{S: seed} }

// Next returns the next 64 random bits.
func (r *Rand) Next() uint64 {
	r.S += 0x9E3779B97F4A7C15
	z := r.S
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9
	z = (z ^ (z >> 27)) * 0x94D049BB133111EB
	return z ^ (z >> 31)
}

// Upto returns a uniform integer in 1..n (n >= 1).
func (r *Rand) Upto(n int64) int64 { return 1 + int64(r.Next()%uint64(n)) }

// Between returns a uniform integer in lo..hi (lo <= hi).
func (r *Rand) Between(lo, hi int64) int64 { return lo + int64(r.Next()%uint64(hi-lo+1)) }
