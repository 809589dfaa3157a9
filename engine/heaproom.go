package engine

import (
	"math"
	"runtime/debug"
	"runtime/metrics"
	"sync"
)

// heapRoomMin is the allocation (bytes) from which acct.take first makes
// room for it under the Go runtime's soft memory limit (makeHeapRoom).
const heapRoomMin = 8 << 20

// heapRoom serializes makeHeapRoom (one collection serves the queries
// that wait meanwhile) and holds its metrics samples.
var heapRoom struct {
	sync.Mutex
	samples []metrics.Sample
}

// goMapped is the memory the Go runtime holds from the OS (mapped and not
// released), which its soft memory limit bounds (heapRoom held).
func goMapped() int64 {
	if heapRoom.samples == nil {
		heapRoom.samples = []metrics.Sample{{Name: "/memory/classes/total:bytes"}, {Name: "/memory/classes/heap/released:bytes"}}
	}
	metrics.Read(heapRoom.samples)
	return int64(heapRoom.samples[0].Value.Uint64() - heapRoom.samples[1].Value.Uint64())
}

// makeHeapRoom is called before n bytes of Go memory are allocated in one
// piece (a hash table, per-group arrays): when the runtime has a soft
// memory limit (GOMEMLIMIT, or what quarry serve sets from its budgets)
// and what it holds plus n would exceed it, it collects the garbage and
// returns the free pages to the OS first (debug.FreeOSMemory). Otherwise
// the allocation would run past the limit while the collector catches up:
// the runtime returns free pages only slowly, a big piece rarely fits in
// the free spans that smaller pieces (the last resize's old table) left,
// and under CPU load its limiter stops the collector from keeping up, so
// the queries that replace each other in the server memory pool pushed the
// process's peak well over the limit. It reports whether it collected.
func makeHeapRoom(n int64) bool {
	if n < heapRoomMin {
		return false
	}
	limit := debug.SetMemoryLimit(-1) // reads it
	if limit == math.MaxInt64 {
		return false
	}
	heapRoom.Lock()
	defer heapRoom.Unlock()
	if goMapped()+n <= limit {
		return false
	}
	debug.FreeOSMemory()
	return true
}
