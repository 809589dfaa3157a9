package engine

import (
	"math"
	"sync/atomic"
	"unsafe"

	"github.com/quarrydb/quarry/internal/qerr"
)

// Off-heap value chains: the values median/quantile collect are kept per
// group in chains of blocks that a blockStore carves out of anonymous
// mappings (mapOffHeap), so that
//
//   - each value costs at most 8 bytes, and 4 where that is exactly
//     reversible (see "Compact blocks" below): a value lands in its group's
//     tail block directly (no group id stored beside it, no regrouping
//     pass);
//   - the garbage collector does not see the values: no GC slack on top of
//     them, and no scanning;
//   - memory goes back to the OS the moment it is released: a region is
//     unmapped as soon as the last block in it has been consumed.
//
// Block sizes grow along a chain (32 bytes, doubling up to 8 KiB), so that
// a group of few values holds little memory and a large group wastes at
// most one block. The last 8 bytes of every block link to the previous
// block of its chain: a chain is walked backwards from its tail.
//
// Compact blocks: every block has a form, kept in the top byte of the
// blockRef naming it (the chain's tail ref for the tail block, the next
// block's link for the others). A block in float form holds float64 values;
// a block in compact form with decimal scale d (0..4) holds int32 values k,
// each standing for float64(k)/10^d. A value is stored compactly only when
// that decodes to exactly its bits (so never -0, NaN, ±Inf, or a value
// needing more digits or a larger k). A new block starts compact with the
// previous block's scale (0 after a float block); a value that does not fit
// first raises the block's scale (rescaling its values, which decode to the
// same bits: k/10^d and k*10^e/10^(d+e) are the same real number, rounded
// once), and if no scale fits, the block turns into float form: in place
// when its values fit as float64, else the values past the float capacity
// move to a new (float) tail block. Every block but the tail is full in its
// form, so a chain's count follows from its blocks' forms.
//
// Every mapped byte is charged to the operator's acct when mapped and given
// back when unmapped.

const (
	blockMinBytes  = 32
	blockMaxShift  = 8 // blocks from the 9th on are blockMinBytes<<8 = 8 KiB
	regionMinBytes = 64 << 10
	regionMaxBytes = 4 << 20

	maxScale   = 4       // largest decimal scale of a compact block
	maxRegions = 1 << 24 // region indexes fit below a blockRef's form byte
)

// pow10 are the divisors of the compact scales (padded to a power of two
// for bounds-check-free indexing).
var pow10 = [8]float64{1, 10, 100, 1000, 10000}

// offHeapBytes is the bytes all blockStores of the process hold mapped.
var offHeapBytes atomic.Int64

// blockBytes is the size of the k-th block (0-based) of a chain.
func blockBytes(k uint32) int {
	return blockMinBytes << min(k, blockMaxShift)
}

// blockVals is how many float64 values the k-th block of a chain holds.
func blockVals(k uint32) int { return blockBytes(k)/8 - 1 }

// chainCap is how many float64 values the first k blocks of a chain hold.
func chainCap(k uint32) int64 {
	small := min(k, blockMaxShift)
	// sum over j < small of (4<<j - 1)
	n := int64(blockMinBytes/8)*(int64(1)<<small-1) - int64(small)
	if k > blockMaxShift {
		n += int64(k-blockMaxShift) * int64(blockVals(blockMaxShift))
	}
	return n
}

// blockForm is how a block stores its values: formFloat (float64), or
// compact (int32) with scale form-formScale0.
type blockForm uint8

const (
	formFloat  blockForm = 0
	formScale0 blockForm = 1
)

// compact reports whether the form is compact, and its scale.
func (f blockForm) compact() (scale int, ok bool) {
	return int(f - formScale0), f != formFloat
}

// formVals is how many values the k-th block of a chain holds in form f.
func formVals(k uint32, f blockForm) int {
	if f == formFloat {
		return blockVals(k)
	}
	return 2 * blockVals(k)
}

// blockRef names a block and its form: form << 56 | region index << 32 |
// byte offset in the region.
type blockRef uint64

func makeRef(region int, off int, f blockForm) blockRef {
	return blockRef(uint64(f)<<56 | uint64(region)<<32 | uint64(uint32(off)))
}

func (r blockRef) region() int     { return int(uint32(r>>32) & (maxRegions - 1)) }
func (r blockRef) off() int        { return int(uint32(r)) }
func (r blockRef) form() blockForm { return blockForm(r >> 56) }

func (r blockRef) withForm(f blockForm) blockRef {
	return r&^(0xff<<56) | blockRef(f)<<56
}

// valueChain is one group's values: a chain of blocks of which only the
// tail has room left.
type valueChain struct {
	next unsafe.Pointer // the tail block's first free slot (nil: no block yet)
	room uint32         // free slots left in the tail block (in its form)
	nblk uint32         // blocks in the chain
	tail blockRef
}

// valueChainBytes is the Go memory of one valueChain.
const valueChainBytes = int64(unsafe.Sizeof(valueChain{}))

// push appends x to the chain (which must have room: see blockStore.add)
// and reports whether it could: false when the tail block is compact and x
// does not fit its scale (nothing is stored then).
func (ch *valueChain) push(x float64) bool {
	if f := ch.tail.form(); f == formFloat {
		ch.pushFloat(x)
	} else if k, ok := fitScale(x, int(f-formScale0)); ok {
		ch.pushInt(k)
	} else {
		return false
	}
	return true
}

// pushFloat appends x to a float tail block with room.
func (ch *valueChain) pushFloat(x float64) {
	*(*float64)(ch.next) = x
	ch.next = unsafe.Add(ch.next, 8)
	ch.room--
}

// pushInt appends k to a compact tail block with room.
func (ch *valueChain) pushInt(k int32) {
	*(*int32)(ch.next) = k
	ch.next = unsafe.Add(ch.next, 4)
	ch.room--
}

// fitScale returns k with float64(k)/10^d bit-identical to x, if there is
// one in int32 range (|k| < 2^31).
func fitScale(x float64, d int) (int32, bool) {
	p := pow10[d&7]
	t := math.Floor(x*p + 0.5)      // the only candidate (when there is one)
	if !(t > -1<<31 && t < 1<<31) { // also NaN and ±Inf
		return 0, false
	}
	k := int32(t)
	return k, math.Float64bits(float64(k)/p) == math.Float64bits(x)
}

// memRegion is one mapping blocks are carved from.
type memRegion struct {
	mem  []byte // nil once unmapped
	off  int    // bytes handed out
	live int32  // blocks handed out and not released
}

// blockStore hands out the blocks of valueChains and the scratch buffer
// groups are selected in. It is used by one goroutine at a time.
type blockStore struct {
	regions  []memRegion
	cur      int // region blocks are carved from (-1: none)
	nextSize int
	sealed   bool // no more blocks: regions go away with their last block
	scratch  []byte
	mapped   int64 // bytes mapped (and charged to acct)
	acct     *acct // nil: charge nothing (cleanup after an unclosed query)
}

func newBlockStore(a *acct) *blockStore {
	return &blockStore{cur: -1, nextSize: regionMinBytes, acct: a}
}

func (s *blockStore) mapBytes(n int) ([]byte, error) {
	b, err := mapOffHeap(n)
	if err != nil {
		return nil, qerr.Limit(qerr.CodeResourceExhausted, "cannot map %s for the values of median/quantile", humanBytes(int64(n))).
			WithHint("narrow the query: add filters or group by fewer columns").Wrap(err)
	}
	s.mapped += int64(n)
	offHeapBytes.Add(int64(n))
	if s.acct != nil {
		s.acct.charge(int64(n))
	}
	return b, nil
}

func (s *blockStore) unmap(b []byte) {
	if b == nil {
		return
	}
	unmapOffHeap(b)
	s.mapped -= int64(len(b))
	offHeapBytes.Add(-int64(len(b)))
	if s.acct != nil {
		s.acct.charge(-int64(len(b)))
	}
}

// extend appends a new, empty tail block to ch: compact with the scale of
// the previous block (0 after a float block or as the first block).
func (s *blockStore) extend(ch *valueChain) error {
	n := blockBytes(ch.nblk)
	if s.cur < 0 || s.regions[s.cur].off+n > len(s.regions[s.cur].mem) {
		if len(s.regions) >= maxRegions {
			return qerr.Limit(qerr.CodeResourceExhausted, "too many memory regions for the values of median/quantile").
				WithHint("narrow the query: add filters or group by fewer columns")
		}
		size := max(s.nextSize, n)
		s.nextSize = min(2*s.nextSize, regionMaxBytes)
		mem, err := s.mapBytes(size)
		if err != nil {
			return err
		}
		s.regions = append(s.regions, memRegion{mem: mem})
		s.cur = len(s.regions) - 1
	}
	f := formScale0
	if ch.nblk > 0 && ch.tail.form() != formFloat {
		f = ch.tail.form()
	}
	r := &s.regions[s.cur]
	p := unsafe.Pointer(&r.mem[r.off])
	*(*uint64)(unsafe.Add(p, n-8)) = uint64(ch.tail) // link to the previous block
	ch.tail = makeRef(s.cur, r.off, f)
	ch.next, ch.room = p, uint32(formVals(ch.nblk, f))
	ch.nblk++
	r.off += n
	r.live++
	return nil
}

// add appends x to ch, extending the chain or changing the form of its tail
// block as needed.
func (s *blockStore) add(ch *valueChain, x float64) error {
	if ch.room == 0 {
		if err := s.extend(ch); err != nil {
			return err
		}
	}
	if ch.push(x) {
		return nil
	}
	return s.widen(ch, x)
}

// widen stores x, which does not fit the scale of ch's compact tail block
// (which has room): the block's scale is raised if x and its values fit a
// larger one, else the block turns into float form (see "Compact blocks").
func (s *blockStore) widen(ch *valueChain, x float64) error {
	k := ch.nblk - 1
	d, _ := ch.tail.form().compact()
	base := s.blockPtr(ch.tail)
	used := formVals(k, ch.tail.form()) - int(ch.room)
	vals := unsafe.Slice((*int32)(base), used)
	var most int64
	for _, v := range vals {
		most = max(most, abs64(int64(v)))
	}
	for e := d + 1; e <= maxScale; e++ {
		m := int64(pow10[e-d])
		if most*m >= 1<<31 {
			break
		}
		if _, ok := fitScale(x, e); !ok {
			continue
		}
		for i, v := range vals {
			vals[i] = v * int32(m)
		}
		ch.tail = ch.tail.withForm(formScale0 + blockForm(e))
		if !ch.push(x) {
			panic("median/quantile: value does not fit the scale it was checked against")
		}
		return nil
	}
	// To float form. p is the divisor; values past the float capacity move
	// to a new tail block first (their slots are overwritten below).
	p := pow10[d]
	fcap := blockVals(k)
	if used > fcap {
		old, room := ch.tail, ch.room
		ch.tail = ch.tail.withForm(formFloat)
		if err := s.extend(ch); err != nil {
			ch.tail, ch.room = old, room
			return err
		}
		ch.tail = ch.tail.withForm(formFloat)
		ch.room = uint32(blockVals(ch.nblk - 1))
		for _, v := range vals[fcap:] {
			ch.push(float64(v) / p)
		}
		vals = vals[:fcap]
	}
	// Widen in place from the back: float i covers int32 slots 2i and
	// 2i+1, which are at or past i and already read.
	fs := unsafe.Slice((*float64)(base), len(vals))
	for i := len(vals) - 1; i >= 0; i-- {
		fs[i] = float64(vals[i]) / p
	}
	if used <= fcap {
		ch.tail = ch.tail.withForm(formFloat)
		ch.next = unsafe.Add(base, 8*used)
		ch.room = uint32(fcap - used)
	}
	return s.add(ch, x) // the float tail has room, or a new block is added
}

func abs64(v int64) int64 {
	if v < 0 {
		return -v
	}
	return v
}

// blockPtr is the start of the block at ref.
func (s *blockStore) blockPtr(ref blockRef) unsafe.Pointer {
	return unsafe.Pointer(&s.regions[ref.region()].mem[ref.off()])
}

// link is the ref of the block before the k-th block (at ref) of a chain.
func (s *blockStore) link(ref blockRef, k uint32) blockRef {
	return blockRef(*(*uint64)(unsafe.Add(s.blockPtr(ref), blockBytes(k)-8)))
}

// count is the number of values in ch (walking its blocks' links).
func (s *blockStore) count(ch *valueChain) int64 {
	if ch.nblk == 0 {
		return 0
	}
	last := ch.nblk - 1
	ref := ch.tail
	n := int64(formVals(last, ref.form())) - int64(ch.room)
	for k := last; k > 0; k-- {
		ref = s.link(ref, k)
		n += int64(formVals(k-1, ref.form()))
	}
	return n
}

// scratchNeed is how many values of ch take copies into the scratch buffer:
// its count unless it is a lone float block (taken in place), else 0.
func (s *blockStore) scratchNeed(ch *valueChain) int64 {
	if ch.nblk == 0 || ch.nblk == 1 && ch.tail.form() == formFloat {
		return 0
	}
	return s.count(ch)
}

// release gives back the block at ref; a sealed store unmaps its region
// with the last block in it.
func (s *blockStore) release(ref blockRef) {
	r := &s.regions[ref.region()]
	r.live--
	if r.live == 0 && s.sealed {
		s.unmap(r.mem)
		r.mem = nil
	}
}

// seal ends the adding of blocks and maps a scratch buffer of n values (at
// least the largest scratchNeed of the chains, see take). Regions without
// live blocks are unmapped.
func (s *blockStore) seal(n int64) error {
	s.sealed = true
	s.cur = -1
	for i := range s.regions {
		if r := &s.regions[i]; r.live == 0 && r.mem != nil {
			s.unmap(r.mem)
			r.mem = nil
		}
	}
	if n > 0 {
		b, err := s.mapBytes(int(n) * 8)
		if err != nil {
			return err
		}
		s.scratch = b
	}
	return nil
}

// take empties ch (in a sealed store) and returns its values as float64:
// the tail block itself when the chain is one float block, else the scratch
// buffer holding a decoded copy. Every block but a lone float one is
// released as soon as it is copied; done releases the lone block. The
// slice is valid until done, and the values are in no particular order.
func (s *blockStore) take(ch *valueChain) (vals []float64, done func()) {
	if ch.nblk == 0 {
		return nil, func() {}
	}
	n := s.count(ch)
	last := ch.nblk - 1
	if last == 0 && ch.tail.form() == formFloat {
		ref := ch.tail
		*ch = valueChain{}
		return unsafe.Slice((*float64)(s.blockPtr(ref)), n), func() { s.release(ref) }
	}
	dst := unsafe.Slice((*float64)(unsafe.Pointer(unsafe.SliceData(s.scratch))), len(s.scratch)/8)[:n]
	ref, at := ch.tail, n
	for k := int64(last); k >= 0; k-- {
		f := ref.form()
		used := int64(formVals(uint32(k), f))
		if uint32(k) == last {
			used -= int64(ch.room)
		}
		at -= used
		out := dst[at : at+used]
		p := s.blockPtr(ref)
		if d, ok := f.compact(); ok {
			div := pow10[d]
			for i, v := range unsafe.Slice((*int32)(p), used) {
				out[i] = float64(v) / div
			}
		} else {
			copy(out, unsafe.Slice((*float64)(p), used))
		}
		prev := s.link(ref, uint32(k))
		s.release(ref)
		ref = prev
	}
	*ch = valueChain{}
	return dst, func() {}
}

// freeScratch unmaps the scratch buffer.
func (s *blockStore) freeScratch() {
	s.unmap(s.scratch)
	s.scratch = nil
}

// free unmaps everything the store holds. Nothing may read its blocks
// afterwards.
func (s *blockStore) free() {
	for i := range s.regions {
		s.unmap(s.regions[i].mem)
	}
	s.regions = nil
	s.cur = -1
	s.freeScratch()
}
