package csv_test

import (
	"syscall"
	"testing"
	"time"
)

// cpuTime is the process's user + system CPU time so far.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// withCPU runs bench and also reports the CPU time per operation of the
// whole process (all goroutines), which the load of a shared machine
// disturbs less than the wall time.
func withCPU(b *testing.B, bench func(*testing.B)) {
	t0 := cpuTime(b)
	bench(b)
	b.ReportMetric(float64(cpuTime(b)-t0)/float64(b.N)/1e6, "cpu-ms/op")
}

func BenchmarkCSVOpenKeepCPU(b *testing.B) { withCPU(b, BenchmarkCSVOpenKeep) }
func BenchmarkCSVInferCPU(b *testing.B)    { withCPU(b, BenchmarkCSVInfer) }
