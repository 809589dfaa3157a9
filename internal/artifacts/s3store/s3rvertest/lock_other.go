//go:build !unix

package s3rvertest

// lockInstall does not lock where flock is missing: run one test binary
// at a time there (go test -p 1) on a fresh checkout.
func lockInstall(string) (unlock func(), err error) { return func() {}, nil }
