package safeopen

import "testing"

// forceWalk makes Open use the component walk (the fallback for kernels
// without openat2) for the rest of the test.
func forceWalk(t *testing.T) {
	noOpenat2.Store(true)
	t.Cleanup(func() { noOpenat2.Store(false) })
}
