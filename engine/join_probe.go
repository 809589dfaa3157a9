package engine

import (
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/quarrydb/quarry/planner"
)

// One-number-key lookups of the hash join (join.go). A join on one
// non-string key (integers, dates, timestamps, floats, booleans: keyBits'
// normalized bits; buildSide.oneBits) finds a probe key's chain without
// hashing when it can:
//
//   - dense: when the build keys span at most denseSlotsPerRow slots per
//     build row (1..N primary keys, TPC-H's sparse order keys), the head
//     table is indexed by key - lo: a chain holds only rows of one key, and
//     the probe neither hashes nor compares keys; when no two build rows
//     share a key (buildSide.unique: a primary key), the head slot is the
//     one row and the probe does not read the row entries at all;
//   - otherwise a bitmap over [lo, hi] of the build keys (when it is small:
//     filterBitsPerRow bits per build row, at least filterMinBits) rejects
//     the probe keys no build row has before hashing: a filtered dimension
//     probed by a fact table (TPC-H Q17's 189 parts of 200,000 against
//     6M lines) misses on almost every probe row.
//
// Keys outside [lo, hi] are rejected by one comparison in both cases. The
// probe side's key hashes are then not computed at all (keyVals.noHash):
// the sparse case hashes only the keys that pass the bitmap. Ranges are in
// the unsigned order of the key bits (a signed range that crosses zero is
// wide and gets neither table).

const (
	denseSlotsPerRow = 4
	filterBitsPerRow = 128
	filterMinBits    = 1 << 19 // 64 KiB
	filterMaxBits    = 1 << 28 // 32 MiB
)

// oneKeyHash is the hash keyVals.load gives a one-column number key of bits b.
func oneKeyHash(b uint64) uint64 { return combineHash(0, mix64(b)) }

// keyRange returns the smallest and the largest of bits where ok (unsigned
// order), and whether there is any.
func keyRange(bits []uint64, ok []bool) (lo, hi uint64, any bool) {
	for i, b := range bits {
		if !ok[i] {
			continue
		}
		if !any {
			lo, hi, any = b, b, true
			continue
		}
		lo, hi = min(lo, b), max(hi, b)
	}
	return lo, hi, any
}

// oneKeyTable sets the one-key lookup of the build side (lo, span,
// dense) and returns the size of its head table: size (a hash table's)
// or, dense, the span of the keys; and the words of the key bitmap over
// the range (0: none), which fillFilter allocates.
func (bs *buildSide) oneKeyTable(size int) (int, int) {
	n := len(bs.refs)
	lo, hi, any := keyRange(bs.keys.bits[0], bs.keys.ok)
	if !any { // every build key is null: nothing matches
		bs.lo, bs.span, bs.dense = 0, 0, true
		return 1, 0
	}
	bs.lo, bs.span = lo, hi-lo
	if bs.span < uint64(denseSlotsPerRow*n) {
		bs.dense = true
		return int(bs.span) + 1, 0
	}
	if bs.span < filterMaxBits && bs.span < max(filterMinBits, uint64(filterBitsPerRow*n)) {
		return size, int(bs.span/64 + 1)
	}
	return size, 0
}

// fillFilter allocates the key bitmap of words words and sets the bits
// of the build keys.
func (bs *buildSide) fillFilter(words int) {
	bs.filt = make([]uint64, words)
	for r, k := range bs.keys.bits[0] {
		if bs.keys.ok[r] {
			d := k - bs.lo
			bs.filt[d>>6] |= 1 << (d & 63)
		}
	}
}

// slot is the head slot of a build row with key hash h and (oneBits) key k.
func (bs *buildSide) slot(h, k uint64) uint64 {
	if bs.dense {
		return k - bs.lo
	}
	return h & bs.mask
}

// chainOf returns the first build row (1-based) of probe row i's chain,
// 0 when no build row can have its key.
func (j *joinOp) chainOf(i int) int32 {
	if !j.pk.ok[i] {
		return 0
	}
	bs := &j.build
	if !bs.oneBits {
		return bs.head[j.pk.hash[i]&bs.mask]
	}
	k := j.pk.bits[0][i]
	d := k - bs.lo
	switch {
	case d > bs.span:
		return 0
	case bs.dense:
		return bs.head[d]
	case bs.filt != nil && bs.filt[d>>6]&(1<<(d&63)) == 0:
		return 0
	}
	return bs.head[oneKeyHash(k)&bs.mask]
}

// after is the build row (1-based) after row r on r's chain, 0 at its end.
func (bs *buildSide) after(r int32) int32 {
	if bs.unique {
		return 0
	}
	return bs.ents[r].next
}

// matches reports whether build row r, on probe row i's chain, has row i's key.
func (j *joinOp) matches(i int, r int32) bool {
	bs := &j.build
	if bs.oneBits {
		return bs.dense || bs.ents[r].k == j.pk.bits[0][i]
	}
	return bs.ents[r].h == j.pk.hash[i] && j.equal(i, int(r))
}

// bits64 returns the values of a 64-bit integer key column as key bits
// (keyBits' normalization is the identity for them), aliasing Arrow
// memory; nil for other types.
func bits64(arr arrow.Array) []uint64 {
	switch arr.DataType().ID() {
	case arrow.INT64, arrow.DATE64, arrow.TIMESTAMP, arrow.UINT64:
		v := values[int64](arr)
		return unsafe.Slice((*uint64)(unsafe.Pointer(unsafe.SliceData(v))), len(v))
	}
	return nil
}

// missEmits reports whether a probe row without a match is emitted (anti
// joins probing, outer joins keeping the probe side).
func (j *joinOp) missEmits() bool {
	if j.p.semiAnti() {
		return j.p.typ == planner.JoinAnti && !j.p.markOnly()
	}
	return j.p.probeUnmatched()
}

// skipMisses returns the first probe row from i on whose key some build row
// may have (n: none), for a one-number-key join whose misses emit nothing
// (or, with a residual, are emitted at the batch's end): the rows before
// it are decided without touching the chains.
func (j *joinOp) skipMisses(i, n int) int {
	bs := &j.build
	keys, ok := j.pk.bits[0][:n], j.pk.ok[:n]
	lo, span, filt, head := bs.lo, bs.span, bs.filt, bs.head
	if bs.dense {
		head = head[:span+1]
		for ; i < n; i++ {
			if d := keys[i] - lo; d <= span && ok[i] && head[d] != 0 {
				return i
			}
		}
		return n
	}
	for ; i < n; i++ {
		d := keys[i] - lo
		if d > span || !ok[i] || filt != nil && filt[d>>6]&(1<<(d&63)) == 0 {
			continue
		}
		if head[oneKeyHash(keys[i])&bs.mask] != 0 {
			return i
		}
	}
	return n
}

// bitsDecide reports whether the one-key lookup alone decides a probe
// row's match: the dense head table or the bitmap holds exactly the build
// keys, so a semi or anti join probing (not marking) needs no chain.
func (j *joinOp) bitsDecide() bool {
	bs := &j.build
	return j.p.semiAnti() && !j.p.markOnly() && j.p.residual == nil && bs.oneBits && (bs.dense || bs.filt != nil)
}

// probeBits is probe for a join whose lookup decides (bitsDecide): rows
// from j.pi on are kept or dropped by their key alone, about bsz at a time.
func (j *joinOp) probeBits(bsz int) {
	bs := &j.build
	n := int(j.pb.NumRows())
	keys, ok := j.pk.bits[0][:n], j.pk.ok[:n]
	lo, span, filt, head := bs.lo, bs.span, bs.filt, bs.head
	keep := j.p.typ == planner.JoinSemi
	dropNull := j.na.dropsNullProbe()
	i := j.pi
	for ; i < n && len(j.pRows) < bsz; i++ {
		d := keys[i] - lo
		hit := ok[i] && d <= span
		if hit && bs.dense {
			hit = head[d] != 0
		} else if hit {
			hit = filt[d>>6]&(1<<(d&63)) != 0
		}
		if hit == keep && (ok[i] || !dropNull) {
			j.pRows, j.bRows = append(j.pRows, int32(i)), append(j.bRows, -1)
		}
	}
	j.pi = i
}
