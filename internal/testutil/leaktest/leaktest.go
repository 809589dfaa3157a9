// Package leaktest checks, in tests, that goroutines started by the code
// under test have ended.
package leaktest

import (
	"runtime"
	"testing"
	"time"
)

// Goroutines fails t unless the number of goroutines comes back to before
// (runtime.NumGoroutine taken before the code under test ran) within 5
// seconds: goroutines stopping asynchronously get that long to end.
func Goroutines(t testing.TB, before int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for runtime.NumGoroutine() > before && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if n := runtime.NumGoroutine(); n > before {
		t.Fatalf("%d goroutines left, %d before", n, before)
	}
}
