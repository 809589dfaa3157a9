package csv

import (
	"syscall"
	"testing"
	"time"
)

// procCPU is the process's user + system CPU time so far.
func procCPU(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkTokenizeAllCPU is BenchmarkTokenizeAll with the CPU time per
// operation, which a loaded machine disturbs less than the wall time.
func BenchmarkTokenizeAllCPU(b *testing.B) {
	t0 := procCPU(b)
	BenchmarkTokenizeAll(b)
	b.ReportMetric(float64(procCPU(b)-t0)/float64(b.N)/1e6, "cpu-ms/op")
}
