package colcache

import (
	"sync"
	"syscall"
	"time"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow/memory"
)

// slabAllocator is the cache's default memory.Allocator on Linux: buffers
// are carved (64-byte aligned, zeroed) out of 32 MiB anonymous mappings,
// outside the Go heap: the garbage collector neither scans the data nor
// counts it towards its next cycle, and freeing a slab gives its pages back
// at once. (MADV_HUGEPAGE was tried: on this KVM guest, fresh huge pages
// often cost a host-side fault each and made filling the cache slower and
// erratic; MADV_POPULATE_WRITE serialized the fill.)
// When a slab's last buffer is freed the range stays mapped and is reused
// by the next slab. Its pages stay resident for slabDecay while the
// emptied slabs holding pages stay under slabRetain bytes and, with the
// live bytes, under the cache's budget (setRetain), as a malloc
// keeps freed pages for a while: a column loaded after one was evicted (or
// after a dataset was purged) then fills pages that are already there,
// cleared by Allocate, instead of taking a page fault per 4 KiB (on a
// 5M-row Parquet group-by, a third of the CPU time of a cold query; see
// docs/BENCHMARKS.md). Past either bound the pages go back to the OS
// (MADV_DONTNEED): a string still viewing freed Arrow memory (a
// use-after-Release elsewhere, harmless with Go memory) then reads zeros
// instead of faulting, and the process's RSS falls back to the live bytes.
// Buffers bigger than a quarter slab get a mapping of their own (unmapped
// when freed). Safe for concurrent use.
type slabAllocator struct {
	mu       sync.Mutex
	cur      *slab
	slabs    map[uintptr]*slab // by aligned base
	free     []*slab           // emptied slabs, reused first (last emptied first)
	live     int64
	limit    int64       // live plus retained bytes stay below it (setRetain; 0: nothing is retained)
	retained int64       // bytes of the free slabs whose pages are still resident
	decay    *time.Timer // drops the pages of free slabs emptied slabDecay ago; nil when none is pending
}

const (
	// slabRetain bounds the bytes of emptied slabs whose pages stay resident.
	slabRetain = 256 << 20
	// slabDecay is how long an emptied slab keeps its pages when not reused.
	slabDecay = time.Second
)

const (
	slabSize  = 32 << 20
	slabAlign = 64
	hugePage  = 2 << 20
)

type slab struct {
	mapping []byte // the whole mapping (for munmap)
	base    uintptr
	mem     []byte // slabSize bytes at base (or the dedicated size)
	off     int
	live    int // buffers not freed yet
	big     bool
	dirty   int       // bytes from the start that may hold old data (pages kept when emptied)
	emptied time.Time // when the slab was last emptied (dirty > 0 and on the free list)
}

func newSlabAllocator() *slabAllocator { return &slabAllocator{slabs: map[uintptr]*slab{}} }

// mapSlab maps n bytes aligned to slabSize.
func mapSlab(n int, big bool) (*slab, error) {
	total := n + slabSize
	m, err := syscall.Mmap(-1, 0, total, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	if err != nil {
		return nil, err
	}
	start := uintptr(unsafe.Pointer(unsafe.SliceData(m)))
	base := (start + slabSize - 1) &^ (slabSize - 1)
	off := int(base - start)
	s := &slab{mapping: m, base: base, mem: m[off : off+n : off+n], big: big}
	return s, nil
}

// Allocate implements memory.Allocator.
func (a *slabAllocator) Allocate(size int) []byte {
	if size < 0 {
		panic("colcache: negative allocation")
	}
	if size == 0 {
		return []byte{}
	}
	n := (size + slabAlign - 1) &^ (slabAlign - 1)
	a.mu.Lock()
	defer a.mu.Unlock()
	if n > slabSize/4 {
		s, err := mapSlab((n+hugePage-1)&^(hugePage-1), true)
		if err != nil {
			panic("colcache: out of memory: " + err.Error())
		}
		s.live = 1
		a.slabs[s.base] = s
		a.live += int64(n)
		return s.mem[:size:size]
	}
	if a.cur == nil || a.cur.off+n > len(a.cur.mem) {
		if a.cur != nil && a.cur.live == 0 {
			a.retireLocked(a.cur)
		}
		if k := len(a.free); k > 0 {
			a.cur, a.free = a.free[k-1], a.free[:k-1]
			a.cur.off = 0
			a.retained -= int64(a.cur.dirty)
		} else {
			s, err := mapSlab(slabSize, false)
			if err != nil {
				panic("colcache: out of memory: " + err.Error())
			}
			a.slabs[s.base] = s
			a.cur = s
		}
	}
	s := a.cur
	b := s.mem[s.off : s.off+size : s.off+size]
	if s.off < s.dirty {
		clear(s.mem[s.off:min(s.off+n, s.dirty)]) // pages kept from before: zero what is handed out
	}
	s.off += n
	s.live++
	a.live += int64(n)
	return b
}

// Free implements memory.Allocator.
func (a *slabAllocator) Free(b []byte) {
	if cap(b) == 0 {
		return
	}
	p := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	a.mu.Lock()
	defer a.mu.Unlock()
	s := a.slabs[p&^(slabSize-1)]
	if s == nil {
		return // not ours (or freed twice)
	}
	a.live -= int64((cap(b) + slabAlign - 1) &^ (slabAlign - 1))
	s.live--
	if s.live == 0 && s != a.cur {
		a.retireLocked(s)
	}
}

// retireLocked gives an empty slab's memory back: a dedicated mapping is
// unmapped; a slab waits for reuse on the free list, keeping its pages
// while the retained bytes stay under slabRetain (dropped slabDecay later
// unless reused), else dropping them (they read as zeros).
func (a *slabAllocator) retireLocked(s *slab) {
	if a.cur == s {
		a.cur = nil
	}
	if s.big {
		delete(a.slabs, s.base)
		_ = syscall.Munmap(s.mapping)
		return
	}
	used := max(s.off, s.dirty)
	s.off, s.dirty = 0, 0
	if keep := a.retained + int64(used); keep <= slabRetain && a.live+keep <= a.limit {
		s.dirty, s.emptied = used, time.Now()
		a.retained += int64(used)
		if a.decay == nil {
			a.decay = time.AfterFunc(slabDecay, a.decayPages)
		}
	} else {
		_ = syscall.Madvise(s.mem[:used], syscall.MADV_DONTNEED)
	}
	a.free = append(a.free, s)
}

// setRetain bounds the live bytes plus the pages kept by emptied slabs
// (the cache's budget, colcache.New; the last cache made sets it): within
// it, RSS stays at what the cache may hold anyway.
func (a *slabAllocator) setRetain(limit int64) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.limit = limit
}

// decayPages drops the pages of the free slabs emptied slabDecay ago or
// earlier, and comes back for the others.
func (a *slabAllocator) decayPages() {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.decay = nil
	now, next := time.Now(), time.Duration(0)
	for _, s := range a.free {
		if s.dirty == 0 {
			continue
		}
		if wait := slabDecay - now.Sub(s.emptied); wait > 0 {
			if next == 0 || wait < next {
				next = wait
			}
			continue
		}
		_ = syscall.Madvise(s.mem[:s.dirty], syscall.MADV_DONTNEED)
		a.retained -= int64(s.dirty)
		s.dirty = 0
	}
	if next > 0 {
		a.decay = time.AfterFunc(next, a.decayPages)
	}
}

// Reallocate implements memory.Allocator.
func (a *slabAllocator) Reallocate(size int, b []byte) []byte {
	if size <= cap(b) {
		return b[:size]
	}
	nb := a.Allocate(size)
	copy(nb, b)
	a.Free(b)
	return nb
}

// Allocated returns the bytes handed out and not freed (rounded to 64).
func (a *slabAllocator) Allocated() int64 {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.live
}

var _ memory.Allocator = (*slabAllocator)(nil)
