package csv_test

import (
	"github.com/quarrydb/quarry/internal/testutil/cpuclock"
	"testing"
)

// withCPU runs bench and also reports the CPU time per operation of the
// whole process (all goroutines), which the load of a shared machine
// disturbs less than the wall time.
func withCPU(b *testing.B, bench func(*testing.B)) {
	t0 := cpuclock.Process()
	bench(b)
	b.ReportMetric(float64(cpuclock.Process()-t0)/float64(b.N)/1e6, "cpu-ms/op")
}

func BenchmarkCSVOpenKeepCPU(b *testing.B) { withCPU(b, BenchmarkCSVOpenKeep) }
func BenchmarkCSVInferCPU(b *testing.B)    { withCPU(b, BenchmarkCSVInfer) }
