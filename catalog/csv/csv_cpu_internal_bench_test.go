package csv

import (
	"github.com/quarrydb/quarry/internal/testutil/cpuclock"
	"testing"
)

// BenchmarkTokenizeAllCPU is BenchmarkTokenizeAll with the CPU time per
// operation, which a loaded machine disturbs less than the wall time.
func BenchmarkTokenizeAllCPU(b *testing.B) {
	t0 := cpuclock.Process()
	BenchmarkTokenizeAll(b)
	b.ReportMetric(float64(cpuclock.Process()-t0)/float64(b.N)/1e6, "cpu-ms/op")
}
