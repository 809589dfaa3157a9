//go:build !linux && cgo

package colcache

import (
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/arrow/memory/mallocator"
)

func newDefaultAlloc() memory.Allocator { return mallocator.NewMallocator() }
