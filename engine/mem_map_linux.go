package engine

import "syscall"

// mapOffHeap returns n zeroed bytes of a fresh anonymous mapping, outside
// the Go heap: the garbage collector neither scans nor counts them, pages
// become resident only when first written, and unmapOffHeap gives them back
// to the OS at once. The start is page-aligned.
func mapOffHeap(n int) ([]byte, error) {
	return syscall.Mmap(-1, 0, n, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
}

// unmapOffHeap releases a mapping made by mapOffHeap. b must be the whole
// slice mapOffHeap returned; nothing may read it afterwards.
func unmapOffHeap(b []byte) {
	if len(b) > 0 {
		_ = syscall.Munmap(b)
	}
}
