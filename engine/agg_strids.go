package engine

import (
	"encoding/binary"
	"math/bits"
)

// shortStrs numbers strings of at most 16 bytes (most group keys: codes,
// ids, names) for valueIDs without the Go map: each slot holds the string
// inline (two words, zero-padded), a tag (its length and 27 bits of its
// hash) and its id, so a lookup reads one slot per probe and compares
// words, where a Go map of string keys also follows each candidate key's
// pointer to its bytes (a cache miss per row on 100k-distinct keys).
// Linear probing, power-of-two sizes, at most 3/4 full; growth is taken
// from the acct before the new table is allocated.
type shortStrs struct {
	slots []strSlot // tag 0: empty
	shift uint      // 64 - log2(len(slots))
	n     int
	acct  *acct
}

type strSlot struct {
	a, b uint64
	tag  uint32 // hash bits &^ 31 | len + 1
	id   int32
}

const (
	shortStrMax   = 16
	strSlotBytes  = 24
	shortStrsBits = 6
)

func newShortStrs(a *acct) *shortStrs {
	m := &shortStrs{acct: a}
	m.resize(shortStrsBits)
	return m
}

// load16 returns s (at most 16 bytes) as two little-endian words, zero-padded.
func load16(s string) (a, b uint64) {
	var buf [shortStrMax]byte
	copy(buf[:], s)
	return binary.LittleEndian.Uint64(buf[:8]), binary.LittleEndian.Uint64(buf[8:])
}

// strHash hashes a short string's words and length.
func strHash(a, b uint64, n int) uint64 {
	return mix64(a ^ bits.RotateLeft64(b*0x9E3779B97F4A7C15, 31) ^ uint64(n)<<58)
}

func (m *shortStrs) resize(b uint) {
	old := m.slots
	m.acct.take(int64(1<<b) * strSlotBytes)
	m.slots = make([]strSlot, 1<<b)
	m.shift = 64 - b
	mask := uint64(len(m.slots) - 1)
	for _, s := range old {
		if s.tag == 0 {
			continue
		}
		i := strHash(s.a, s.b, int(s.tag&31)-1) >> m.shift
		for m.slots[i].tag != 0 {
			i = (i + 1) & mask
		}
		m.slots[i] = s
	}
	m.acct.charge(-int64(len(old)) * strSlotBytes)
}

// id returns the id of s (len(s) <= shortStrMax), numbering it with
// v.newStr when it is new.
func (m *shortStrs) id(s string, v *valueIDs) int32 {
	a, b := load16(s)
	return m.probe(a, b, strHash(a, b, len(s)), s, v)
}

// probe is id with s's words and hash computed.
func (m *shortStrs) probe(a, b, h uint64, s string, v *valueIDs) int32 {
	tag := uint32(h)&^31 | uint32(len(s)+1)
	mask := uint64(len(m.slots) - 1)
	i := h >> m.shift
	for {
		sl := &m.slots[i]
		if sl.tag == 0 {
			break
		}
		if sl.tag == tag && sl.a == a && sl.b == b {
			return sl.id
		}
		i = (i + 1) & mask
	}
	if 4*(m.n+1) > 3*len(m.slots) {
		m.resize(uint(bits.Len(uint(len(m.slots)))))
		mask = uint64(len(m.slots) - 1)
		i = h >> m.shift
		for m.slots[i].tag != 0 {
			i = (i + 1) & mask
		}
	}
	id := v.newStr(s)
	m.slots[i] = strSlot{a: a, b: b, tag: tag, id: id}
	m.n++
	return id
}

// strBatch is the words and hash of each short row of a batch.
type strBatch struct{ a, b, h []uint64 }

// assignStrs numbers the rows of a plain string array: the words and hashes
// of the whole batch first, then the probes (one loop of independent
// table reads, whose cache misses overlap).
func (v *valueIDs) assignStrs(src strSrc, out []int32, valid validity) {
	n := len(out)
	sb := &v.sbuf
	sb.a, sb.b, sb.h = growTo(sb.a[:0], n)[:n], growTo(sb.b[:0], n)[:n], growTo(sb.h[:0], n)[:n]
	for i := range out {
		s := src.at(i)
		if len(s) <= shortStrMax {
			a, b := load16(s)
			sb.a[i], sb.b[i], sb.h[i] = a, b, strHash(a, b, len(s))
		}
	}
	for i := range out {
		if !valid.ok(i) {
			out[i] = v.null()
			continue
		}
		s := src.at(i)
		if len(s) > shortStrMax {
			out[i] = v.strID(s)
			continue
		}
		out[i] = v.short.probe(sb.a[i], sb.b[i], sb.h[i], s, v)
	}
}
