package engine

import "math/bits"

// Open-addressing hash tables over uint64 keys for the aggregate's hot
// paths (group ids, count_distinct sets, value interning). Linear probing,
// power-of-two sizes, at most 3/4 full; every growth is taken from the
// operator's acct (and so from the query's memory budget and the server's
// pool) before the new table is allocated, the old one given back once it
// is rehashed.

// mix64 scrambles a key so that its top bits depend on every input bit
// (the finalizer of MurmurHash3): keys that differ only in a few high bits
// (float exponents) or low bits (small integers) still spread evenly.
func mix64(k uint64) uint64 {
	k ^= k >> 33
	k *= 0xff51afd7ed558ccd
	k ^= k >> 33
	k *= 0xc4ceb9fe1a85ec53
	k ^= k >> 33
	return k
}

const minTableBits = 4

// u64Map maps uint64 keys to non-negative int32 values.
type u64Map struct {
	slots []u64Slot // v < 0: empty
	shift uint      // 64 - log2(len(slots))
	n     int
	acct  *acct
}

type u64Slot struct {
	k uint64
	v int32
}

const u64SlotBytes = 16

func newU64Map(a *acct) *u64Map {
	m := &u64Map{acct: a}
	m.resize(minTableBits)
	return m
}

// bigResize is the growth step (bytes) from which those of one query take
// turns (acct.turn).
const bigResize = 1 << 20

func (m *u64Map) resize(b uint) {
	old := m.slots
	defer m.acct.turn(int64(1<<b) * u64SlotBytes)()
	m.acct.take(int64(1<<b) * u64SlotBytes)
	m.slots = make([]u64Slot, 1<<b)
	for i := range m.slots {
		m.slots[i].v = -1
	}
	m.shift = 64 - b
	mask := uint64(len(m.slots) - 1)
	for _, s := range old {
		if s.v < 0 {
			continue
		}
		i := mix64(s.k) >> m.shift
		for m.slots[i].v >= 0 {
			i = (i + 1) & mask
		}
		m.slots[i] = s
	}
	m.acct.charge(-int64(len(old)) * u64SlotBytes)
}

// getOrAdd returns the value of k, inserting v when k is new (added).
// v must be non-negative.
func (m *u64Map) getOrAdd(k uint64, v int32) (int32, bool) {
	mask := uint64(len(m.slots) - 1)
	i := mix64(k) >> m.shift
	for {
		s := &m.slots[i]
		if s.v < 0 {
			break
		}
		if s.k == k {
			return s.v, false
		}
		i = (i + 1) & mask
	}
	if 4*(m.n+1) > 3*len(m.slots) {
		m.resize(uint(bits.Len(uint(len(m.slots)))))
		mask = uint64(len(m.slots) - 1)
		i = mix64(k) >> m.shift
		for m.slots[i].v >= 0 {
			i = (i + 1) & mask
		}
	}
	m.slots[i] = u64Slot{k: k, v: v}
	m.n++
	return v, true
}

// bytes is the memory the table holds.
func (m *u64Map) bytes() int64 { return int64(len(m.slots)) * u64SlotBytes }

// u64Set is a set of uint64 keys.
type u64Set struct {
	keys    []uint64 // emptyKey: empty
	hasEmpt bool     // emptyKey itself is a member
	shift   uint
	n       int
	acct    *acct
}

const emptyKey = ^uint64(0)

func newU64Set(a *acct) *u64Set {
	s := &u64Set{acct: a}
	s.resize(minTableBits)
	return s
}

func (s *u64Set) resize(b uint) {
	old := s.keys
	s.acct.take(int64(1<<b) * 8)
	s.keys = make([]uint64, 1<<b)
	for i := range s.keys {
		s.keys[i] = emptyKey
	}
	s.shift = 64 - b
	mask := uint64(len(s.keys) - 1)
	for _, k := range old {
		if k == emptyKey {
			continue
		}
		i := mix64(k) >> s.shift
		for s.keys[i] != emptyKey {
			i = (i + 1) & mask
		}
		s.keys[i] = k
	}
	s.acct.charge(-int64(len(old)) * 8)
}

// add inserts k and reports whether it was new.
func (s *u64Set) add(k uint64) bool {
	if k == emptyKey {
		if s.hasEmpt {
			return false
		}
		s.hasEmpt = true
		return true
	}
	mask := uint64(len(s.keys) - 1)
	i := mix64(k) >> s.shift
	for {
		c := s.keys[i]
		if c == k {
			return false
		}
		if c == emptyKey {
			break
		}
		i = (i + 1) & mask
	}
	if 4*(s.n+1) > 3*len(s.keys) {
		s.resize(uint(bits.Len(uint(len(s.keys)))))
		mask = uint64(len(s.keys) - 1)
		i = mix64(k) >> s.shift
		for s.keys[i] != emptyKey {
			i = (i + 1) & mask
		}
	}
	s.keys[i] = k
	s.n++
	return true
}
