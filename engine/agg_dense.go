package engine

import "math/bits"

// Direct-indexed tables for small id spaces: group ids of two-column keys
// and count_distinct sets, where both sides are dense ids (valueIDs, group
// ids) whose product is small. They turn a hash probe per row into one
// array access; past their size limits the hash tables take over.

// pairDenseMax is the most entries of a pairDense table (1 MiB).
const pairDenseMax = 1 << 18

// pairDense caches a u64Map of (a, b) id pairs (key a<<32|b) in a table
// indexed by a<<bShift|b. The map stays the source of truth: the table is
// rebuilt from it when the ids outgrow its shape, and dropped for good once
// it would exceed pairDenseMax entries.
type pairDense struct {
	m      *u64Map
	tab    []int32 // -1: not resolved yet
	bShift uint
	rows   int32 // a < rows
	off    bool  // too large: the map alone
	acct   *acct
}

func newPairDense(a *acct) *pairDense { return &pairDense{m: newU64Map(a), acct: a} }

// fit makes the table cover a < na, b < nb and reports whether it is used.
func (p *pairDense) fit(na, nb int32) bool {
	if p.off {
		return false
	}
	if na <= p.rows && int64(nb) <= 1<<p.bShift && p.tab != nil {
		return true
	}
	shift := uint(bits.Len32(uint32(max(2*nb, 8) - 1)))
	rows := max(2*na, 8)
	size := int64(rows) << shift
	if size > pairDenseMax {
		p.off = true
		p.acct.charge(-int64(len(p.tab)) * 4)
		p.tab = nil
		return false
	}
	p.acct.take(size * 4)
	tab := make([]int32, size)
	for i := range tab {
		tab[i] = -1
	}
	for _, s := range p.m.slots {
		if s.v >= 0 {
			tab[(s.k>>32)<<shift|s.k&0xffffffff] = s.v
		}
	}
	p.acct.charge(-int64(len(p.tab)) * 4)
	p.tab, p.bShift, p.rows = tab, shift, rows
	return true
}

// distinctBitsMax is the most bits of a distinctBits set (2 MiB).
const distinctBitsMax = 1 << 24

// distinctBits is a set of (group, value id) pairs as one bit per pair:
// bit g<<shift|id. It re-lays itself out when groups or ids outgrow its
// shape and reports when it would exceed distinctBitsMax bits.
type distinctBits struct {
	words []uint64
	shift uint
	rows  int // groups covered
	acct  *acct
}

// fit makes the set cover groups < ng and ids < nid; false means it would
// be too large (the caller converts to a hash set).
func (d *distinctBits) fit(ng int, nid int32) bool {
	if ng <= d.rows && int64(nid) <= 1<<d.shift && d.words != nil {
		return true
	}
	shift := max(d.shift, uint(bits.Len32(uint32(max(2*nid, 64)-1))))
	rows := max(d.rows, 2*ng, 8)
	size := int64(rows) << shift
	if size > distinctBitsMax {
		return false
	}
	d.acct.take(size / 64 * 8)
	words := make([]uint64, size/64)
	d.each(func(g int, id uint64) {
		bit := uint64(g)<<shift | id
		words[bit>>6] |= 1 << (bit & 63)
	})
	d.acct.charge(-int64(len(d.words)) * 8)
	d.words, d.shift, d.rows = words, shift, rows
	return true
}

// each calls f with every (group, id) pair in the set.
func (d *distinctBits) each(f func(g int, id uint64)) {
	for w, x := range d.words {
		for x != 0 {
			bit := uint64(w)*64 + uint64(bits.TrailingZeros64(x))
			x &= x - 1
			f(int(bit>>d.shift), bit&(1<<d.shift-1))
		}
	}
}

// release gives the set's memory back.
func (d *distinctBits) release() {
	d.acct.charge(-int64(len(d.words)) * 8)
	d.words, d.rows, d.shift = nil, 0, 0
}
