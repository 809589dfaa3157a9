package engine

import (
	"context"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// TestAggregateChargesItsHeap: a group-by over 1M distinct int64 keys
// (every row its own group, as the soak's 10M-group queries) charges its
// budget for the Go heap it holds, serially and radix-partitioned: once
// the input is consumed, the budget's live bytes are within 10% of the
// heap growth measured after a full GC; and the pool's reservation (which
// only grows while the query runs: its peak) covers at least 90% of the
// highest live heap seen at any garbage collection during the run
// (GOGC=5, so collections are frequent and catch the transients of table
// resizes and per-group array growth). Ratios, not bytes: the heap
// figures are the runtime's, the test is not timed.
func TestAggregateChargesItsHeap(t *testing.T) {
	if testing.Short() {
		t.Skip("1M groups")
	}
	const groups = 1 << 20
	src := uniqueKeysSource(groups)
	defer src.release()
	plan := aggOf(scanOf(src.schema), []string{"k"}, "sum:v")
	for _, tc := range []struct {
		name    string
		workers int
	}{{"serial", 1}, {"radix", 2}} {
		t.Run(tc.name, func(t *testing.T) {
			old, oldPipe := parallelWorkers, pipelined
			parallelWorkers = func() int { return tc.workers }
			pipelined = func() bool { return tc.workers > 1 }
			defer func() { parallelWorkers, pipelined = old, oldPipe }()
			ran := false
			oldRadix := radixRan
			radixRan = func() { ran = true }
			defer func() { radixRan = oldRadix }()

			pool := NewPool(1<<40, 0)
			base := liveHeap()
			gcp := debug.SetGCPercent(5)
			rr, err := Execute(context.Background(), plan, src, Options{Pool: pool})
			if err != nil {
				t.Fatal(err)
			}
			defer rr.Release()
			b := rr.(*reader).budget
			w := watchHeap()
			if !rr.Next() { // the whole input consumed, the first batch out
				t.Fatal(rr.Err())
			}
			peakHeap := w.stop() - base
			debug.SetGCPercent(gcp)
			grown := liveHeap() - base
			live, reserved := b.live.Load(), pool.Used()
			t.Logf("heap growth %d MiB, charged %d MiB (%.2f); peak heap growth at a GC %d MiB, pool reservation %d MiB (%.2f)",
				grown>>20, live>>20, float64(live)/float64(grown), peakHeap>>20, reserved>>20, float64(reserved)/float64(peakHeap))
			if ran != (tc.workers > 1) {
				t.Fatalf("radix-partitioned %v with %d workers", ran, tc.workers)
			}
			if float64(live) < 0.9*float64(grown) || float64(live) > 1.25*float64(grown) {
				t.Errorf("charged %d bytes for a heap growth of %d: want within 10%% (at most 25%% over)", live, grown)
			}
			if float64(reserved) < 0.9*float64(peakHeap) {
				t.Errorf("the pool reserved %d bytes at most, the heap grew by %d at a peak: the transients are not charged", reserved, peakHeap)
			}
		})
	}
}

// uniqueKeysSource is n rows of k (a permutation of 0..n-1) and v (k %
// 1000), in 64Ki-row batches served zero-copy.
func uniqueKeysSource(n int) *memSource {
	mem := memory.DefaultAllocator
	schema := arrow.NewSchema([]arrow.Field{{Name: "k", Type: tInt64, Nullable: true}, {Name: "v", Type: tInt64, Nullable: true}}, nil)
	var batches []arrow.RecordBatch
	kb, vb := array.NewInt64Builder(mem), array.NewInt64Builder(mem)
	defer kb.Release()
	defer vb.Release()
	for lo := 0; lo < n; lo += 1 << 16 {
		hi := min(lo+1<<16, n)
		for i := lo; i < hi; i++ {
			k := int64(i) * 7919 % int64(n)
			kb.Append(k)
			vb.Append(k % 1000)
		}
		ka, va := kb.NewArray(), vb.NewArray()
		batches = append(batches, array.NewRecordBatch(schema, []arrow.Array{ka, va}, int64(hi-lo)))
		ka.Release()
		va.Release()
	}
	return &memSource{schema: schema, batches: batches, noCopy: true}
}

// liveHeap is the live heap after a full garbage collection.
func liveHeap() int64 {
	runtime.GC()
	return heapAtLastGC()
}

func heapAtLastGC() int64 {
	s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	metrics.Read(s)
	return int64(s[0].Value.Uint64())
}

// heapWatch records the live heap at every garbage collection (a
// finalizer re-armed each cycle) until stop, which returns the highest.
type heapWatch struct {
	mu      sync.Mutex
	stopped bool
	peak    int64
}

func watchHeap() *heapWatch {
	w := &heapWatch{}
	var arm func()
	arm = func() {
		x := new([4]int64)
		runtime.SetFinalizer(x, func(*[4]int64) {
			w.mu.Lock()
			defer w.mu.Unlock()
			if !w.stopped {
				w.peak = max(w.peak, heapAtLastGC())
				go arm()
			}
		})
	}
	arm()
	return w
}

func (w *heapWatch) stop() int64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.stopped = true
	return max(w.peak, heapAtLastGC())
}
