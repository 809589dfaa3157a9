package engine

import (
	"sync/atomic"
	"unsafe"

	"github.com/quarrydb/quarry/internal/qerr"
)

// Off-heap value chains: the values median/quantile collect are kept per
// group in chains of blocks that a blockStore carves out of anonymous
// mappings (mapOffHeap), so that
//
//   - each value costs 8 bytes: a value lands in its group's tail block
//     directly (no group id stored beside it, no regrouping pass);
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
// Every mapped byte is charged to the operator's acct when mapped and given
// back when unmapped.

const (
	blockMinBytes  = 32
	blockMaxShift  = 8 // blocks from the 9th on are blockMinBytes<<8 = 8 KiB
	regionMinBytes = 64 << 10
	regionMaxBytes = 4 << 20
)

// offHeapBytes is the bytes all blockStores of the process hold mapped.
var offHeapBytes atomic.Int64

// blockBytes is the size of the k-th block (0-based) of a chain.
func blockBytes(k uint32) int {
	return blockMinBytes << min(k, blockMaxShift)
}

// blockVals is how many values the k-th block of a chain holds.
func blockVals(k uint32) int { return blockBytes(k)/8 - 1 }

// chainCap is how many values the first k blocks of a chain hold.
func chainCap(k uint32) int64 {
	small := min(k, blockMaxShift)
	// sum over j < small of (4<<j - 1)
	n := int64(blockMinBytes/8)*(int64(1)<<small-1) - int64(small)
	if k > blockMaxShift {
		n += int64(k-blockMaxShift) * int64(blockVals(blockMaxShift))
	}
	return n
}

// blockRef names a block: region index << 32 | byte offset in the region.
type blockRef uint64

// valueChain is one group's values: a chain of blocks of which only the
// tail has room left.
type valueChain struct {
	next unsafe.Pointer // the tail block's first free slot (nil: no block yet)
	room uint32         // free slots left in the tail block
	nblk uint32         // blocks in the chain
	tail blockRef
}

// valueChainBytes is the Go memory of one valueChain.
const valueChainBytes = int64(unsafe.Sizeof(valueChain{}))

// count is the number of values in the chain.
func (ch *valueChain) count() int64 {
	if ch.nblk == 0 {
		return 0
	}
	return chainCap(ch.nblk) - int64(ch.room)
}

// push appends x to the chain (which must have room: see blockStore.extend).
func (ch *valueChain) push(x float64) {
	*(*float64)(ch.next) = x
	ch.next = unsafe.Add(ch.next, 8)
	ch.room--
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

// extend appends a new, empty tail block to ch.
func (s *blockStore) extend(ch *valueChain) error {
	n := blockBytes(ch.nblk)
	if s.cur < 0 || s.regions[s.cur].off+n > len(s.regions[s.cur].mem) {
		size := max(s.nextSize, n)
		s.nextSize = min(2*s.nextSize, regionMaxBytes)
		mem, err := s.mapBytes(size)
		if err != nil {
			return err
		}
		s.regions = append(s.regions, memRegion{mem: mem})
		s.cur = len(s.regions) - 1
	}
	r := &s.regions[s.cur]
	p := unsafe.Pointer(&r.mem[r.off])
	*(*uint64)(unsafe.Add(p, n-8)) = uint64(ch.tail) // link to the previous block
	ch.tail = blockRef(uint64(s.cur)<<32 | uint64(r.off))
	ch.next, ch.room = p, uint32(n/8-1)
	ch.nblk++
	r.off += n
	r.live++
	return nil
}

// block returns the k-th block (of any chain) at ref, link slot included.
func (s *blockStore) block(ref blockRef, k uint32) []float64 {
	r := &s.regions[ref>>32]
	return unsafe.Slice((*float64)(unsafe.Pointer(&r.mem[uint32(ref)])), blockBytes(k)/8)
}

// release gives back the block at ref; a sealed store unmaps its region
// with the last block in it.
func (s *blockStore) release(ref blockRef) {
	r := &s.regions[ref>>32]
	r.live--
	if r.live == 0 && s.sealed {
		s.unmap(r.mem)
		r.mem = nil
	}
}

// seal ends the adding of blocks and maps a scratch buffer of n values (see
// take). Regions without live blocks are unmapped.
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

// take empties ch (in a sealed store) and returns its values: the tail
// block itself when the chain has one block, else the scratch buffer
// holding a copy. Every block but a lone one is released as soon as it is
// copied; done releases the lone block. The slice is valid until done, and
// the values are in no particular order.
func (s *blockStore) take(ch *valueChain) (vals []float64, done func()) {
	n := ch.count()
	if ch.nblk == 0 {
		return nil, func() {}
	}
	last := ch.nblk - 1
	if last == 0 {
		ref := ch.tail
		*ch = valueChain{}
		return s.block(ref, 0)[:n], func() { s.release(ref) }
	}
	dst := unsafe.Slice((*float64)(unsafe.Pointer(unsafe.SliceData(s.scratch))), len(s.scratch)/8)[:n]
	ref, at := ch.tail, n
	for k := int64(last); k >= 0; k-- {
		blk := s.block(ref, uint32(k))
		used := int64(blockVals(uint32(k)))
		if uint32(k) == last {
			used -= int64(ch.room)
		}
		at -= used
		copy(dst[at:at+used], blk[:used])
		prev := blockRef(*(*uint64)(unsafe.Pointer(&blk[len(blk)-1])))
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
