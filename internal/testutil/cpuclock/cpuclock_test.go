//go:build unix

package cpuclock_test

import (
	"testing"

	"github.com/quarrydb/quarry/internal/testutil/cpuclock"
)

func TestProcessAdvancesWithWork(t *testing.T) {
	before := cpuclock.Process()
	if before <= 0 {
		t.Fatalf("Process() = %v before any work, want > 0", before)
	}
	x := uint64(1)
	for cpuclock.Process()-before < 20_000_000 { // 20 ms of CPU
		for range 1 << 16 {
			x = x*6364136223846793005 + 1442695040888963407
		}
	}
	if x == 0 {
		t.Log(x)
	}
}
