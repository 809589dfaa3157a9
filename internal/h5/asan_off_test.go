//go:build !asan

package h5_test

// asanBuild is true when the tests run under AddressSanitizer
// (go test -asan; see `make asan`).
const asanBuild = false
