//go:build linux

package colcache

import (
	"math/rand/v2"
	"sync"
	"testing"
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
