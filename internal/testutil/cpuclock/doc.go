// Package cpuclock reads the process's CPU time for benchmarks, which
// report CPU seconds per operation beside wall time because wall time is
// noisy on a shared machine.
package cpuclock
