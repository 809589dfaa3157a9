//go:build !linux

package engine

import "unsafe"

// mapOffHeap returns n zeroed, 8-byte aligned bytes. Off Linux they come
// from the Go heap (the garbage collector frees them once unreferenced).
func mapOffHeap(n int) ([]byte, error) {
	w := make([]uint64, (n+7)/8)
	return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(w))), n), nil
}

// unmapOffHeap releases memory from mapOffHeap (off Linux: nothing to do).
func unmapOffHeap([]byte) {}
