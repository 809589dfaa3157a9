package colcache

import "github.com/apache/arrow-go/v18/arrow/memory"

// defaultAlloc allocates cached columns outside the Go heap (see
// slabAllocator; C malloc on other systems): they are big and long-lived,
// and the garbage collector should neither scan them nor count them towards
// its next cycle (with Go memory, filling a cache of N bytes lets the heap
// grow to about 2N before a collection, and the collections during a fill
// stall the parsing goroutines).
var defaultAlloc memory.Allocator = newDefaultAlloc()
