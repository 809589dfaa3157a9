//go:build linux

package colcache

import (
	"math/rand/v2"
	"sync"
	"testing"
	"time"
)

func TestSlabAllocator(t *testing.T) {
	a := newSlabAllocator()
	r := rand.New(rand.NewPCG(1, 2))
	var live [][]byte
	for i := range 1500 {
		size := []int{0, 1, 63, 64, 1000, 100_000, 1000, 3 << 20}[r.IntN(8)]
		if i%100 == 0 {
			size = slabSize/4 + 1 // a mapping of its own
		}
		b := a.Allocate(size)
		if len(b) != size {
			t.Fatalf("len %d, want %d", len(b), size)
		}
		for j := 0; j < len(b); j += 1 + len(b)/64 {
			if b[j] != 0 || b[len(b)-1-j] != 0 {
				t.Fatalf("allocation %d not zeroed", i)
			}
		}
		if len(b) > 0 {
			b[0], b[len(b)-1] = 1, 2
		}
		if r.IntN(50) == 0 {
			b = a.Reallocate(size*2+10, b)
			if size > 1 && b[0] != 1 {
				t.Fatal("reallocate lost data")
			}
		}
		live = append(live, b)
		if r.IntN(3) == 0 {
			k := r.IntN(len(live))
			a.Free(live[k])
			live = append(live[:k], live[k+1:]...)
		}
	}
	for _, b := range live {
		a.Free(b)
	}
	if a.Allocated() != 0 {
		t.Fatalf("%d bytes still allocated", a.Allocated())
	}
	a.mu.Lock()
	n, free := len(a.slabs), len(a.free)
	a.mu.Unlock()
	if n > free+1 {
		t.Fatalf("%d slabs mapped, %d free", n, free)
	}
}

func TestSlabAllocatorConcurrent(t *testing.T) {
	a := newSlabAllocator()
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Go(func() {
			var bs [][]byte
			for i := range 2000 {
				b := a.Allocate(1 + (i*w)%70000)
				b[0] = byte(w)
				bs = append(bs, b)
			}
			for _, b := range bs {
				if b[0] != byte(w) {
					t.Error("overlapping allocations")
				}
				a.Free(b)
			}
		})
	}
	wg.Wait()
	if a.Allocated() != 0 {
		t.Fatalf("%d bytes still allocated", a.Allocated())
	}
}

// TestSlabAllocatorRetains checks that an emptied slab keeps its pages for
// the next allocations (handed out zeroed) and drops them slabDecay later.
func TestSlabAllocatorRetains(t *testing.T) {
	a := newSlabAllocator()
	a.setRetain(1 << 30)
	var bs [][]byte
	for range 5 { // four fill the first slab, the fifth opens a second
		b := a.Allocate(slabSize / 4)
		for i := range b {
			b[i] = 0xff
		}
		bs = append(bs, b)
	}
	for _, b := range bs {
		a.Free(b) // the first slab is emptied (the second stays current)
	}
	a.mu.Lock()
	retained := a.retained
	a.mu.Unlock()
	if retained == 0 {
		t.Fatal("no emptied slab kept its pages")
	}
	for range 8 { // reuse the kept pages: zeroed
		b := a.Allocate(slabSize / 8)
		for i := 0; i < len(b); i += 4093 {
			if b[i] != 0 {
				t.Fatalf("reused byte %d not zeroed", i)
			}
		}
		b[0] = 1
		a.Free(b)
	}
	deadline := time.Now().Add(10 * slabDecay)
	for {
		a.mu.Lock()
		retained, pending := a.retained, a.decay != nil
		a.mu.Unlock()
		if retained == 0 && !pending {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d bytes still retained %v after the last free", retained, 10*slabDecay)
		}
		time.Sleep(slabDecay / 10)
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, s := range a.free {
		if s.dirty != 0 {
			t.Fatalf("free slab with %d dirty bytes after the decay", s.dirty)
		}
		if s.mem[0] != 0 {
			t.Fatal("a dropped page still holds data")
		}
	}
}

// TestSlabAllocatorRetainBudget checks that emptied slabs drop their pages
// at once when keeping them would take the live and kept bytes over the
// budget.
func TestSlabAllocatorRetainBudget(t *testing.T) {
	a := newSlabAllocator()
	a.setRetain(slabSize + slabSize/2)
	var bs [][]byte
	for range 9 { // two full slabs and a third current one
		bs = append(bs, a.Allocate(slabSize/4))
	}
	for _, b := range bs[:4] {
		a.Free(b) // 32 MiB emptied, 5 buffers (40 MiB) live: over 48 MiB
	}
	a.mu.Lock()
	if a.retained != 0 {
		t.Errorf("%d bytes kept beyond the budget", a.retained)
	}
	a.mu.Unlock()
	for _, b := range bs[4:8] {
		a.Free(b) // 32 MiB emptied, 8 MiB live: within
	}
	a.mu.Lock()
	if a.retained != slabSize {
		t.Errorf("%d bytes kept, want %d", a.retained, slabSize)
	}
	a.mu.Unlock()
	a.Free(bs[8])
}
