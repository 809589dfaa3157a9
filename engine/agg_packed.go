package engine

import (
	"math/bits"

	"github.com/apache/arrow-go/v18/arrow"
)

// packedKeys assigns group ids to key tuples of many columns. Each column's
// values are numbered by a valueIDs (null is a value of its own); a row's
// ids are packed into kw 64-bit words, every column a bit field wide enough
// for its ids so far (with room to double), and an open-addressing table
// maps packed tuples to group ids, handed out in first-seen row order.
// When a column's ids outgrow its field, every stored tuple is repacked
// into the wider layout and the table rebuilt (amortized: fields double).
//
// The packed tuples are the groups' stored keys too (kw words per group):
// decode turns them back into values through the value ids. A batch is
// processed column by column: value ids, then packing, then hashing, then
// one probe per row.
type packedKeys struct {
	vids  []*valueIDs
	width []uint // bits of each column's field
	word  []int  // word holding each column's field
	shift []uint // the field's offset in its word
	kw    int    // words per key

	keys  [][]uint64 // packed keys in chunks of keyChunk groups (see key)
	slots []uint64   // 0: empty; else the key's hash<<32 | group id + 1 (place: hash & mask)
	sbits uint       // log2(len(slots))
	n     int        // groups

	ids  [][]int32 // this batch's value ids per column
	kbuf []uint64  // this batch's packed keys
	hbuf []uint64  // and their hashes
	gids []int32
	sink uint64 // (touch: keeps its loads)
	acct *acct
}

// keyChunk is the groups per chunk of stored keys: chunks never move, so
// the keys grow without copies or a doubled capacity.
const keyChunk = 1 << 12

// key returns group g's packed key.
func (p *packedKeys) key(g int) []uint64 {
	o := (g % keyChunk) * p.kw
	return p.keys[g/keyChunk][o : o+p.kw]
}

// appendKey stores k as the key of group p.n (the caller counts it).
func (p *packedKeys) appendKey(k []uint64) {
	if p.n%keyChunk == 0 {
		p.acct.take(keyChunk * int64(p.kw) * 8)
		p.keys = append(p.keys, make([]uint64, 0, keyChunk*p.kw))
	}
	last := len(p.keys) - 1
	p.keys[last] = append(p.keys[last], k...)
}

func newPackedKeys(types []arrow.DataType, keep bool, a *acct) *packedKeys {
	p := &packedKeys{acct: a, ids: make([][]int32, len(types))}
	for _, dt := range types {
		v := newValueIDs(dt, true, a)
		v.keep = keep
		p.vids = append(p.vids, v)
	}
	p.width = make([]uint, len(types))
	p.word = make([]int, len(types))
	p.shift = make([]uint, len(types))
	p.layout()
	p.sbits = minTableBits
	p.slots = make([]uint64, 1<<p.sbits)
	a.charge(int64(len(p.slots)) * 8)
	return p
}

// layout sizes every field for its column's ids so far (at least one bit
// more than the largest id needs, so room for up to twice as many) and places
// the fields first-fit into words (a field never straddles two words). It
// reports whether anything moved.
func (p *packedKeys) layout() bool {
	changed := false
	for c, v := range p.vids {
		if w := max(uint(bits.Len32(uint32(v.n))), 1); w > p.width[c] {
			p.width[c] = min(w, 32)
			changed = true
		}
	}
	if !changed && p.kw > 0 {
		return false
	}
	var used []uint // bits used per word
	for c, w := range p.width {
		k := 0
		for k < len(used) && used[k]+w > 64 {
			k++
		}
		if k == len(used) {
			used = append(used, 0)
		}
		p.word[c], p.shift[c] = k, used[k]
		used[k] += w
	}
	p.kw = len(used)
	return true
}

// fits reports whether every column's ids fit their fields.
func (p *packedKeys) fits() bool {
	for c, v := range p.vids {
		if uint64(v.n) > 1<<p.width[c] {
			return false
		}
	}
	return true
}

// id returns column c's value id in the packed key k (kw words).
func (p *packedKeys) id(k []uint64, c int) int32 {
	return int32(k[p.word[c]] >> p.shift[c] & (1<<p.width[c] - 1))
}

// relayout widens the fields, repacks every stored key and rebuilds the
// table.
func (p *packedKeys) relayout() {
	oldKW := p.kw
	oldWord, oldShift, oldWidth := append([]int(nil), p.word...), append([]uint(nil), p.shift...), append([]uint(nil), p.width...)
	p.layout()
	old, n := p.keys, p.n
	p.acct.charge(-int64(len(old)) * keyChunk * int64(oldKW) * 8)
	p.keys, p.n = nil, 0
	nk := make([]uint64, p.kw)
	for g := range n {
		o := old[g/keyChunk][(g%keyChunk)*oldKW:]
		clear(nk)
		for c := range p.vids {
			id := o[oldWord[c]] >> oldShift[c] & (1<<oldWidth[c] - 1)
			nk[p.word[c]] |= id << p.shift[c]
		}
		p.appendKey(nk)
		p.n++
	}
	p.rehash(p.sbits, true)
}

// hashKey hashes one packed key.
func hashKey(k []uint64) uint64 {
	h := uint64(0x9E3779B97F4A7C15)
	for _, w := range k {
		h = mix64(h ^ w)
	}
	return h
}

// rehash rebuilds the table with 1<<b slots: from the old slots when only
// the size changes (a slot's hash bits give its new place), from the stored
// keys after a relayout (fresh says so).
func (p *packedKeys) rehash(b uint, fresh bool) {
	old := p.slots
	p.acct.take(int64(1<<b) * 8)
	p.slots = make([]uint64, 1<<b)
	defer p.acct.charge(-int64(len(old)) * 8) // once rehashed
	p.sbits = b
	mask := uint64(len(p.slots) - 1)
	place := func(s uint64) {
		i := s >> 32 & mask
		for p.slots[i] != 0 {
			i = (i + 1) & mask
		}
		p.slots[i] = s
	}
	if !fresh {
		for _, s := range old {
			if s != 0 {
				place(s)
			}
		}
		return
	}
	for g := range p.n {
		place(hashKey(p.key(g))<<32 | uint64(g+1))
	}
}

// assign returns the group id of every row of cols (n rows); the slice is
// reused by the next call.
func (p *packedKeys) assign(cols []arrow.Array, n int) []int32 {
	for c, v := range p.vids {
		p.ids[c] = v.assign(cols[c])
	}
	if !p.fits() {
		p.relayout()
	}
	kw := p.kw
	p.kbuf = growTo(p.kbuf[:0], n*kw)[:n*kw]
	kb := p.kbuf
	clear(kb)
	for c, ids := range p.ids {
		w, sh := p.word[c], p.shift[c]
		if kw == 1 {
			for i, id := range ids[:n] {
				kb[i] |= uint64(uint32(id)) << sh
			}
			continue
		}
		for i, id := range ids[:n] {
			kb[i*kw+w] |= uint64(uint32(id)) << sh
		}
	}
	p.hbuf = growTo(p.hbuf[:0], n)[:n]
	hs := p.hbuf
	if kw == 1 {
		for i, k := range kb {
			hs[i] = mix64(0x9E3779B97F4A7C15 ^ k)
		}
	} else {
		for i := range hs {
			hs[i] = hashKey(kb[i*kw : (i+1)*kw])
		}
	}
	p.gids = growTo(p.gids[:0], n)[:n]
	gids := p.gids
	for lo := 0; lo < n; lo += probeBlock {
		hi := min(lo+probeBlock, n)
		p.touch(hs[lo:hi])
		for i := lo; i < hi; i++ {
			gids[i] = p.find(kb[i*kw:(i+1)*kw], hs[i])
		}
	}
	clear(p.ids)
	return gids
}

// probeBlock is the rows whose home slots touch loads before their probes.
const probeBlock = 32

// touch loads the home slot of every hash of hs: independent loads, whose
// cache misses overlap, so that the probes that follow (each a dependent
// chain of loads and compares) mostly hit the cache. On a table larger
// than the caches (H2O q10: millions of groups) a probe is otherwise one
// memory latency per row.
func (p *packedKeys) touch(hs []uint64) {
	slots := p.slots
	mask := uint64(len(slots) - 1)
	var x uint64
	for _, h := range hs {
		x += slots[h&mask]
	}
	p.sink += x
}

// find returns the group of key k (hash h), adding it when new.
func (p *packedKeys) find(k []uint64, h uint64) int32 {
	mask := uint64(len(p.slots) - 1)
	tag := h << 32 // the hash's low 32 bits, which also give the place
	i := h & mask
	kw := p.kw
	for {
		s := p.slots[i]
		if s == 0 {
			break
		}
		if s&^0xffffffff == tag {
			g := int(uint32(s)) - 1
			if kw == 1 {
				if p.key(g)[0] == k[0] {
					return int32(g)
				}
			} else if equalWords(p.key(g), k) {
				return int32(g)
			}
		}
		i = (i + 1) & mask
	}
	if 4*(p.n+1) > 3*len(p.slots) {
		p.rehash(p.sbits+1, false)
		mask = uint64(len(p.slots) - 1)
		i = h & mask
		for p.slots[i] != 0 {
			i = (i + 1) & mask
		}
	}
	g := p.n
	p.appendKey(k)
	p.n++
	p.slots[i] = tag | uint64(g+1)
	return int32(g)
}

func equalWords(a, b []uint64) bool {
	for i, x := range a {
		if b[i] != x {
			return false
		}
	}
	return true
}

// decode fills kc's stored keys (gbits or gstrs, and gvalid) with column
// c's values of groups [lo, hi).
func (p *packedKeys) decode(c, lo, hi int, kc *keyCol) {
	v := p.vids[c]
	kc.gvalid = make([]bool, hi-lo)
	if kc.str {
		kc.gstrs = make([]string, hi-lo)
	} else {
		kc.gbits = make([]uint64, hi-lo)
	}
	kw, sh, mask := p.kw, p.shift[c], uint64(1)<<p.width[c]-1
	for g := lo; g < hi; {
		end := min(hi, (g/keyChunk+1)*keyChunk) // this chunk's groups
		ks := p.keys[g/keyChunk][(g%keyChunk)*kw+p.word[c]:]
		valid := kc.gvalid[g-lo : end-lo]
		for i := range valid {
			id := int32(ks[i*kw] >> sh & mask)
			if id == v.nullID {
				continue
			}
			valid[i] = true
			if kc.str {
				kc.gstrs[g-lo+i] = v.strs[id]
			} else {
				kc.gbits[g-lo+i] = v.vals[id]
			}
		}
		g = end
	}
}

// doneAssigning drops the table (the keys stay for decode): no more
// rows will come.
func (p *packedKeys) doneAssigning() {
	p.acct.charge(-int64(len(p.slots)) * 8)
	p.slots, p.kbuf, p.hbuf, p.gids = nil, nil, nil, nil
}

// reset drops all state (the caller releases the charged bytes).
func (p *packedKeys) reset() {
	for _, v := range p.vids {
		v.reset()
	}
	p.vids, p.keys, p.slots, p.kbuf, p.hbuf, p.gids, p.ids = nil, nil, nil, nil, nil, nil, nil
	p.n = 0
}
