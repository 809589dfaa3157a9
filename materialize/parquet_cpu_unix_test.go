//go:build unix

package materialize

import (
	"syscall"
	"time"
)

// processCPU returns the CPU time (user + system) the process has used so
// far; benchmarks report it per operation because wall time is noisy on a
// shared machine.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
