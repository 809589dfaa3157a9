//go:build linux || darwin || freebsd

package catalog

import (
	"os"
	"syscall"
)

// mapFile maps the first size bytes of f read-only (shared: the page
// cache, no copy).
func mapFile(f *os.File, size int) ([]byte, error) {
	return syscall.Mmap(int(f.Fd()), 0, size, syscall.PROT_READ, syscall.MAP_SHARED)
}

// unmapFile undoes mapFile.
func unmapFile(b []byte) error { return syscall.Munmap(b) }
