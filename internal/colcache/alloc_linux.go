package colcache

import "github.com/apache/arrow-go/v18/arrow/memory"

func newDefaultAlloc() memory.Allocator { return newSlabAllocator() }
