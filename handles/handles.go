package handles

import (
	"crypto/rand"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/golang-lru/v2/expirable"

	"github.com/quarrydb/quarry/internal/qerr"
)

// Value is what a handle holds. The registry retains it while the handle
// exists and releases it on eviction, expiry, Delete or Close.
//
// Release may be called while the registry holds internal locks, so Release
// must not call back into the Registry.
type Value interface {
	// Retain adds a reference.
	Retain()
	// Release drops a reference; the value is freed when none remain.
	Release()
}

// Sizer is implemented by values that know their (approximate) memory
// footprint. Options.MaxBytes bounds the sum of SizeBytes over held values.
type Sizer interface {
	// SizeBytes reports the value's size in bytes. It is read once, at Put.
	SizeBytes() int64
}

// Defaults applied by New for zero Options fields.
const (
	// DefaultTTL is the idle lifetime of a handle when Options.TTL is 0.
	DefaultTTL = 15 * time.Minute
	// DefaultMaxEntries is the handle count bound when Options.MaxEntries is 0.
	DefaultMaxEntries = 256
)

// Options configures a Registry. The zero value is usable.
type Options struct {
	// TTL is the idle lifetime of a handle (sliding: every successful Get
	// extends it); 0 means DefaultTTL.
	TTL time.Duration
	// MaxEntries bounds the number of handles; when exceeded, the least
	// recently used handle is evicted. 0 means DefaultMaxEntries.
	MaxEntries int
	// MaxBytes bounds the sum of Sizer.SizeBytes() of held values (values
	// that do not implement Sizer count as 0). When exceeded, least recently
	// used handles are evicted until the sum is under the bound; the handle
	// just added by Put is never evicted by its own Put, so a single value
	// larger than MaxBytes is kept on its own. 0 means unlimited.
	MaxBytes int64
	// OnBytes, when set, is called after every change of the bytes held
	// (Bytes): a Put, an eviction, an expiry, a Delete, Close. It may run
	// concurrently, on the LRU's purge goroutine and with the registry's
	// locks held, so it must be quick, must not call back into the
	// Registry other than Bytes, and should read Bytes rather than trust
	// the order of its calls.
	OnBytes func()
	// Key is the HMAC-SHA256 key for page tokens. nil means 32 random bytes
	// generated once per process (tokens do not survive a restart).
	Key []byte
	// Now is the clock (for tests); nil means time.Now. It drives Get's
	// expiry check; the background purge of the underlying expirable LRU
	// always uses the real clock.
	Now func() time.Time
}

// Registry holds result handles. It is safe for concurrent use.
type Registry[T Value] struct {
	ttl        time.Duration
	maxEntries int
	maxBytes   int64
	key        []byte
	now        func() time.Time

	// mu serializes Put, Get, Delete, Len and Close. The expirable LRU's
	// background purge does not take it; see release.
	mu     sync.Mutex
	closed bool
	lru    *expirable.LRU[string, *entry[T]]
	bytes  atomic.Int64
	// onBytes is Options.OnBytes (nil: none).
	onBytes func()
	remote  Remote[T] // nil: handles live in this process only

	// testHookAfterRetain, when set (tests only), runs in Get between the
	// caller's Retain and the LRU refresh, to simulate a concurrent purge.
	testHookAfterRetain func(id string)
}

type entry[T Value] struct {
	v         T
	principal string
	size      int64
	deadline  time.Time // guarded by Registry.mu

	// mu orders Get's Retain before the registry's final Release.
	mu       sync.Mutex
	released bool
}

var processKey = sync.OnceValue(func() []byte {
	k := make([]byte, 32)
	_, _ = rand.Read(k) // never fails (crypto/rand.Read crashes the program instead)
	return k
})

// New returns an empty Registry configured by opts.
//
// The expirable LRU underneath starts a purge goroutine that the library
// cannot stop; after Close it idles on an empty cache. Create one Registry
// per process (or per server), not one per request.
func New[T Value](opts Options) *Registry[T] {
	r := &Registry[T]{
		ttl:        opts.TTL,
		maxEntries: opts.MaxEntries,
		maxBytes:   opts.MaxBytes,
		key:        opts.Key,
		now:        opts.Now,
		onBytes:    opts.OnBytes,
	}
	if r.ttl <= 0 {
		r.ttl = DefaultTTL
	}
	if r.maxEntries <= 0 {
		r.maxEntries = DefaultMaxEntries
	}
	if r.maxBytes < 0 {
		r.maxBytes = 0
	}
	if r.key == nil {
		r.key = processKey()
	} else {
		r.key = append([]byte(nil), r.key...)
	}
	if r.now == nil {
		r.now = time.Now
	}
	// Size 0: the LRU itself is unbounded; Put enforces MaxEntries and
	// MaxBytes under r.mu so that both bounds evict in the same LRU order.
	r.lru = expirable.NewLRU[string, *entry[T]](0, func(_ string, e *entry[T]) { r.release(e) }, r.ttl)
	return r
}

// release drops the registry's reference to e exactly once. It runs as the
// LRU's eviction callback, possibly on the LRU's purge goroutine with the
// LRU's lock held, so it must not take r.mu.
func (r *Registry[T]) release(e *entry[T]) {
	e.mu.Lock()
	if e.released {
		e.mu.Unlock()
		return
	}
	e.released = true
	e.mu.Unlock()
	r.addBytes(-e.size)
	e.v.Release()
}

// addBytes adds d to the bytes held and reports the change (OnBytes).
func (r *Registry[T]) addBytes(d int64) {
	if d == 0 {
		return
	}
	r.bytes.Add(d)
	if r.onBytes != nil {
		r.onBytes()
	}
}

// Bytes is the sum of Sizer.SizeBytes of the values held (those that are
// not Sizers count as 0).
func (r *Registry[T]) Bytes() int64 { return r.bytes.Load() }

// retain adds a caller reference to e unless the registry already released
// its own (in which case the value may be freed and must not be touched).
func (e *entry[T]) retain() bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.released {
		return false
	}
	e.v.Retain()
	return true
}

func (e *entry[T]) isReleased() bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.released
}

// newID returns "h_" + 26 lowercase base32 characters (130 random bits).
func newID() string { return "h_" + strings.ToLower(rand.Text()) }

// Put stores v under a new unguessable id and returns the id. The registry
// takes over the caller's reference to v (the caller must not Release it
// unless it Retained it again). principal, when non-empty, restricts Get to
// the same principal.
//
// Put may evict least recently used handles to honour MaxEntries and
// MaxBytes. On a closed Registry, Put releases v at once and returns an id
// that Get will never resolve.
func (r *Registry[T]) Put(v T, principal string) (id string) {
	id = newID()
	e := &entry[T]{v: v, principal: principal}
	if s, ok := any(v).(Sizer); ok {
		e.size = max(s.SizeBytes(), 0)
	}
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		v.Release()
		return id
	}
	e.deadline = r.now().Add(r.ttl)
	r.addBytes(e.size)
	r.lru.Add(id, e)
	r.evictLocked(id)
	if r.remote != nil && e.retain() { // published outside the lock, with a reference of its own
		r.mu.Unlock()
		r.remote.Save(id, principal, v, r.ttl)
		v.Release()
		return id
	}
	r.mu.Unlock()
	return id
}

// evictLocked evicts least recently used handles (never keep) until both
// bounds hold. r.mu must be held.
func (r *Registry[T]) evictLocked(keep string) {
	for r.lru.Len() > r.maxEntries || (r.maxBytes > 0 && r.bytes.Load() > r.maxBytes) {
		k, _, ok := r.lru.GetOldest()
		if !ok || k == keep {
			return
		}
		r.lru.Remove(k) // the eviction callback releases the value
	}
}

// Get returns the value for id with an extra reference: the caller must
// Release it when done, and it stays valid until then even if the handle is
// evicted meanwhile. A successful Get marks the handle most recently used
// and extends its lifetime by TTL (sliding expiry).
//
// An unknown, expired or evicted id, or a principal mismatch (the handle
// was stored with a non-empty principal different from principal), returns
// a qerr.ErrExpired error with code qerr.CodeHandleExpired.
func (r *Registry[T]) Get(id, principal string) (T, error) {
	v, local, err := r.getLocal(id, principal)
	switch {
	case r.remote == nil:
	case local && err == nil:
		r.remote.Touch(id, r.ttl)
	case !local:
		return r.loadRemote(id, principal)
	}
	return v, err
}

// getLocal is Get on this process's handles; local is false when id is not
// held here (unknown or expired), so a shared registry may ask its Remote.
func (r *Registry[T]) getLocal(id, principal string) (_ T, local bool, _ error) {
	var zero T
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return zero, true, expiredErr(id)
	}
	e, ok := r.lru.Peek(id)
	if !ok {
		// Unknown, or expired but not purged yet: purge now so it is released.
		r.lru.Remove(id)
		return zero, false, expiredErr(id)
	}
	now := r.now()
	if !now.Before(e.deadline) {
		r.lru.Remove(id)
		return zero, false, expiredErr(id) // another replica may have used it since
	}
	if e.principal != "" && e.principal != principal {
		return zero, true, expiredErr(id)
	}
	if !e.retain() {
		// Purged by the background goroutine since Peek.
		return zero, false, expiredErr(id)
	}
	if r.testHookAfterRetain != nil {
		r.testHookAfterRetain(id)
	}
	e.deadline = now.Add(r.ttl)
	// Add on an existing key moves it to the front and renews the LRU's own
	// expiry. If the background purge removed the entry after Peek, Add puts
	// the (already released) entry back; take it out again. The caller's
	// reference taken above keeps the value valid either way.
	r.lru.Add(id, e)
	if e.isReleased() {
		r.lru.Remove(id)
	}
	return e.v, true, nil
}

// Delete removes the handle (releasing the registry's reference); unknown
// ids are ignored. References held by callers of Get stay valid.
func (r *Registry[T]) Delete(id string) {
	r.mu.Lock()
	r.lru.Remove(id)
	r.mu.Unlock()
	if r.remote != nil {
		r.remote.Forget(id)
	}
}

// Len returns the number of live handles, purging expired ones first.
func (r *Registry[T]) Len() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	now := r.now()
	for _, k := range r.lru.Keys() {
		if e, ok := r.lru.Peek(k); !ok || !now.Before(e.deadline) {
			r.lru.Remove(k)
		}
	}
	return r.lru.Len()
}

// Close releases every held value. Afterwards Get fails with
// CodeHandleExpired and Put releases its value at once. Close is idempotent.
func (r *Registry[T]) Close() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return
	}
	r.closed = true
	r.lru.Purge()
}

func expiredErr(id string) error {
	return qerr.New(qerr.ErrExpired, qerr.CodeHandleExpired,
		"result handle %q has expired or does not exist", clip(id)).
		WithHint("result handles are short-lived; re-run the query to get a fresh handle")
}

// clip bounds caller-supplied strings echoed in error messages.
func clip(s string) string {
	const n = 64
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}
