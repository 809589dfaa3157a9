package handles

import "time"

// Remote shares handles between replicas of one server (see SetRemote):
// the replica that creates a handle publishes it, the others load it on a
// local miss. Implementations log their own failures: a handle that could
// not be published stays usable on the replica that holds it.
type Remote[T Value] interface {
	// Save publishes handle id of principal holding v, for ttl.
	Save(id, principal string, v T, ttl time.Duration)
	// Load returns handle id as another replica published it, with one
	// reference the caller owns, and restarts its shared lifetime at ttl.
	// ok is false when the handle is unknown, expired, of another
	// principal, or its data is gone.
	Load(id, principal string, ttl time.Duration) (v T, ok bool)
	// Touch restarts the shared lifetime of id at ttl (a local Get).
	Touch(id string, ttl time.Duration)
	// Forget removes id.
	Forget(id string)
}

// SetRemote makes r share its handles through rm: Put publishes, Get falls
// back to rm on a local miss (the loaded value is then kept locally like
// any other handle), a local Get slides the shared lifetime, Delete
// forgets. Call it once, before the registry is used.
func (r *Registry[T]) SetRemote(rm Remote[T]) { r.remote = rm }

// loadRemote is Get's fallback on a local miss: the handle as another
// replica published it, added to this registry. r.mu must not be held.
func (r *Registry[T]) loadRemote(id, principal string) (T, error) {
	var zero T
	v, ok := r.remote.Load(id, principal, r.ttl)
	if !ok {
		return zero, expiredErr(id)
	}
	e := &entry[T]{v: v, principal: principal}
	if s, ok := any(v).(Sizer); ok {
		e.size = max(s.SizeBytes(), 0)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		v.Release()
		return zero, expiredErr(id)
	}
	if old, ok := r.lru.Peek(id); ok && old.retain() { // loaded twice at once: keep the first
		v.Release()
		return old.v, nil
	}
	e.deadline = r.now().Add(r.ttl)
	v.Retain() // the caller's reference; the registry keeps Load's
	r.bytes.Add(e.size)
	r.lru.Add(id, e)
	r.evictLocked(id)
	return v, nil
}
