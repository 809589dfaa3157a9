package engine

import (
	"math"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"testing"
)

// A big take collects the garbage and returns the free pages to the OS
// when it would take the Go runtime over its soft memory limit, and
// collects nothing without a limit, with room under it, or for a small
// step.
func TestTakeMakesHeapRoom(t *testing.T) {
	prev := debug.SetMemoryLimit(-1)
	defer debug.SetMemoryLimit(prev)
	cycles := []metrics.Sample{{Name: "/gc/cycles/total:gc-cycles"}}
	collected := func(step int64) bool {
		metrics.Read(cycles)
		before := cycles[0].Value.Uint64()
		a := &acct{b: &budget{}}
		a.take(step)
		a.release()
		metrics.Read(cycles)
		return cycles[0].Value.Uint64() != before
	}
	mapped := func() int64 {
		heapRoom.Lock()
		defer heapRoom.Unlock()
		return goMapped()
	}
	runtime.GC()
	garbage := make([]byte, 64<<20)
	for i := range garbage {
		garbage[i] = 1
	}
	runtime.KeepAlive(garbage)
	garbage = nil
	held := mapped()
	for _, tc := range []struct {
		name  string
		limit int64
		step  int64
	}{
		{"no limit", math.MaxInt64, 1 << 30},
		{"room under the limit", held + 1<<30, 64 << 20},
		{"small step", held, heapRoomMin - 1},
	} {
		debug.SetMemoryLimit(tc.limit)
		if collected(tc.step) {
			t.Fatalf("%s: a take of %d bytes collected", tc.name, tc.step)
		}
	}
	debug.SetMemoryLimit(held + 16<<20)
	if !collected(32 << 20) {
		t.Fatal("a 32 MiB take 16 MiB under the limit did not collect")
	}
	if after := mapped(); after > held-32<<20 {
		t.Fatalf("the Go runtime holds %d MiB after the take, %d MiB before: the 64 MiB of garbage were not returned", after>>20, held>>20)
	}
}
