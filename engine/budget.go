package engine

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/quarrydb/quarry/internal/qerr"
)

// budget counts the bytes one query holds at once: Arrow buffers allocated
// through its allocators plus the Go-side state operators charge explicitly
// (hash tables, sort permutations, string copies).
type budget struct {
	limit int64 // 0 = unlimited
	live  atomic.Int64
	// peak is the highest live seen (after every increase: allocations,
	// charges and takes), for tests and profiles.
	peak atomic.Int64

	// pool, when set, is the server-wide cap the budget reserves from
	// (pool.go); reserved is what it holds of it (changed under the
	// pool's lock, read without it).
	pool     *Pool
	reserved atomic.Int64
	// The rest is the budget's state in its pool, guarded by the pool's
	// lock: seq is its admission number (0: not running), adm the
	// caller's Admission, wounded set when an older query preempted it
	// (also readable without the lock), retried when it is a retry.
	ctx     context.Context
	seq     uint64
	adm     *Admission
	wounded atomic.Bool
	retried bool

	// resizing serializes the big growth steps of the query's operators
	// and workers (acct.turn: u64Map.resize, per-group arrays, stored
	// keys): the old copy of one is given back before the next takes its
	// new one, so that partitions growing in step (agg_radix.go) do not
	// hold all their old and new copies at once, and each step's heap
	// room check (makeHeapRoom) sees the steps before it allocated.
	resizing sync.Mutex
	// refused is the pool's refusal of a take, returned by the next check.
	refused atomic.Pointer[error]
}

// exhausted is the panic value of a hard allocation over the limit. It is
// recovered at operator boundaries (catchBudget, the reader) and turned into
// the budget's error.
type exhausted struct {
	cause error
}

// err is the error of the limit that was hit.
func (e exhausted) err() error { return e.cause }

// add adds n to the live bytes, keeping peak.
func (b *budget) add(n int64) {
	v := b.live.Add(n)
	if n <= 0 {
		return
	}
	for {
		p := b.peak.Load()
		if v <= p || b.peak.CompareAndSwap(p, v) {
			return
		}
	}
}

func (b *budget) wouldExceed(n int64) bool {
	return b.limit > 0 && n > 0 && b.live.Load()+n > b.limit
}

// err is the resource_exhausted error of this budget.
func (b *budget) err() error {
	return qerr.Limit(qerr.CodeResourceExhausted,
		"the query needs more than its memory limit of %s", humanBytes(b.limit)).
		WithHint("narrow the query: add filters, select fewer columns, group by fewer or lower-cardinality columns, or put a limit on sorted results").
		With("memory_limit_bytes", b.limit)
}

// check reports the budget error when the live bytes exceed the limit, or
// the pool's error when an older query preempted this one or its
// reservation cannot cover them (pool.go).
func (b *budget) check() error {
	if b.limit > 0 && b.live.Load() > b.limit {
		return b.err()
	}
	if err := b.refused.Load(); err != nil {
		return *err
	}
	if err := b.preempted(); err != nil {
		return err
	}
	return b.reserve(0)
}

// acct tracks the Go-side bytes one operator charged, so that it can give
// them back when the operator closes.
type acct struct {
	b *budget
	n int64
}

// charge adds n bytes of operator state. It never fails by itself: operators
// call check at batch boundaries (and hard allocations fail once the live
// total is over the limit).
func (a *acct) charge(n int64) {
	if n == 0 {
		return
	}
	a.n += n
	a.b.add(n)
}

// take charges n bytes the operator is about to allocate, first reserving
// them from the server-wide pool (grow before allocate, waiting for memory
// as the pool's policy says): for Go-side state that grows in big steps
// within a batch (hash table resizes, per-group arrays), which would
// otherwise reach the pool only at the next batch boundary, after the
// allocation, or never when it was a transient (the old and the new table
// of a resize). It never fails by itself, as charge: when the pool
// refuses, the refusal is kept and the next check returns it (the query
// then fails at its batch boundary, over its reservation by this one
// step at most), so that no operator has to unwind from the middle of a
// hash table insert. A big step also makes room for itself under the Go
// runtime's soft memory limit (makeHeapRoom).
func (a *acct) take(n int64) {
	if n > 0 && a.b.refused.Load() == nil {
		if err := a.b.reserve(n); err != nil {
			a.b.refused.CompareAndSwap(nil, &err)
		}
	}
	makeHeapRoom(n)
	a.charge(n)
}

// reserve charges n bytes the operator is about to allocate, or fails
// without charging anything (and before anything is allocated): with the
// budget's error when they would take the query past its limit, with the
// pool's when the server-wide pool refused this or an earlier take. For
// state an operator allocates where it can still return an error (a
// sort's rows, a join's build side and table, a window's per-row arrays),
// unlike take, which never fails. A big step makes room under the Go
// runtime's soft memory limit first, as take. n <= 0 is a plain charge.
func (a *acct) reserve(n int64) error {
	if n <= 0 {
		a.charge(n)
		return nil
	}
	if err := a.b.refused.Load(); err != nil {
		return *err
	}
	if a.b.wouldExceed(n) {
		return a.b.err()
	}
	if err := a.b.reserve(n); err != nil {
		return err
	}
	makeHeapRoom(n)
	a.charge(n)
	return nil
}

// turn waits for the query's other big growth steps (budget.resizing)
// before one of n bytes, from bigResize up, and returns what ends it (a
// no-op below): the caller takes, allocates, copies and gives the old copy
// back before calling it.
func (a *acct) turn(n int64) (done func()) {
	if n < bigResize {
		return func() {}
	}
	a.b.resizing.Lock()
	return a.b.resizing.Unlock
}

// check is budget.check.
func (a *acct) check() error { return a.b.check() }

// release gives every charged byte back.
func (a *acct) release() {
	if a.n != 0 {
		a.b.live.Add(-a.n)
		a.n = 0
	}
}

// hardAlloc enforces the budget on every allocation: an allocation that would
// take the live total over the limit panics with exhausted{} before any
// memory is taken. Only the engine's own code (which recovers the panic and
// releases what it built) uses it.
type hardAlloc struct {
	b   *budget
	mem memory.Allocator
}

// Allocate implements memory.Allocator; it panics with exhausted over the limit.
func (a *hardAlloc) Allocate(size int) []byte {
	if a.b.wouldExceed(int64(size)) {
		panic(exhausted{a.b.err()})
	}
	if err := a.b.reserve(int64(size)); err != nil {
		panic(exhausted{err})
	}
	a.b.add(int64(size))
	return a.mem.Allocate(size)
}

// Reallocate implements memory.Allocator; it panics with exhausted over the limit.
func (a *hardAlloc) Reallocate(size int, b []byte) []byte {
	delta := int64(size - len(b))
	if a.b.wouldExceed(delta) {
		panic(exhausted{a.b.err()})
	}
	if err := a.b.reserve(delta); err != nil {
		panic(exhausted{err})
	}
	a.b.add(delta)
	return a.mem.Reallocate(size, b)
}

// Free implements memory.Allocator.
func (a *hardAlloc) Free(b []byte) {
	a.b.live.Add(-int64(len(b)))
	a.mem.Free(b)
}

// softAlloc counts allocations against the budget but never fails: it is
// handed to the Source (which may allocate on goroutines of its own, where a
// panic could not be recovered) and to Arrow library code whose cleanup on
// panic is not guaranteed. Overruns are detected by budget.check at the next
// batch boundary.
type softAlloc struct {
	b   *budget
	mem memory.Allocator
}

// Allocate implements memory.Allocator.
func (a *softAlloc) Allocate(size int) []byte {
	a.b.add(int64(size))
	return a.mem.Allocate(size)
}

// Reallocate implements memory.Allocator.
func (a *softAlloc) Reallocate(size int, b []byte) []byte {
	a.b.add(int64(size - len(b)))
	return a.mem.Reallocate(size, b)
}

// Free implements memory.Allocator.
func (a *softAlloc) Free(b []byte) {
	a.b.live.Add(-int64(len(b)))
	a.mem.Free(b)
}

// catchBudget, deferred directly, turns an exhausted panic into *err. Other
// panics keep unwinding.
func catchBudget(err *error) {
	if r := recover(); r != nil {
		if e, ok := r.(exhausted); ok {
			*err = e.err()
			return
		}
		panic(r)
	}
}

func humanBytes(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}
