//go:build !linux && !cgo

package colcache

import "github.com/apache/arrow-go/v18/arrow/memory"

// The cgo-free release archives for darwin and windows: arrow-go's
// mallocator needs cgo, so the cache allocates from the Go heap there.
func newDefaultAlloc() memory.Allocator { return memory.NewGoAllocator() }
