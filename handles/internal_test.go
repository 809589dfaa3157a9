package handles

import (
	"sync/atomic"
	"testing"
)

type cval struct {
	refs atomic.Int64
	bad  atomic.Int64
}

func (v *cval) Retain() {
	if v.refs.Add(1) <= 1 {
		v.bad.Add(1)
	}
}

func (v *cval) Release() {
	if v.refs.Add(-1) < 0 {
		v.bad.Add(1)
	}
}

// The background purge (which does not take r.mu) can release an entry at
// any point of Get. These tests inject it at the two interesting points.

func TestGetAfterPurgeReleasedBeforeRetain(t *testing.T) {
	r := New[*cval](Options{})
	defer r.Close()
	v := &cval{}
	v.refs.Store(1)
	id := r.Put(v, "")
	e, _ := r.lru.Peek(id)
	r.release(e) // purge callback fired; entry not yet unlinked
	if _, err := r.Get(id, ""); err == nil {
		t.Fatal("Get returned a released value")
	}
	r.lru.Remove(id) // the purge finishes: callback again, must be a no-op
	if v.refs.Load() != 0 || v.bad.Load() != 0 {
		t.Fatalf("refs=%d bad=%d", v.refs.Load(), v.bad.Load())
	}
	if r.bytes.Load() != 0 {
		t.Fatalf("bytes=%d", r.bytes.Load())
	}
}

func TestGetPurgedAfterRetainIsNotResurrected(t *testing.T) {
	r := New[*cval](Options{MaxEntries: 2})
	defer r.Close()
	v := &cval{}
	v.refs.Store(1)
	id := r.Put(v, "")
	other := &cval{}
	other.refs.Store(1)
	r.Put(other, "")
	r.testHookAfterRetain = func(id string) { r.lru.Remove(id) }
	got, err := r.Get(id, "")
	r.testHookAfterRetain = nil
	if err != nil {
		t.Fatal(err)
	}
	if r.lru.Contains(id) {
		t.Fatal("purged entry resurrected by Get's refresh")
	}
	if v.refs.Load() != 1 {
		t.Fatalf("refs=%d, want the caller's 1", v.refs.Load())
	}
	got.Release()
	if v.refs.Load() != 0 || v.bad.Load() != 0 {
		t.Fatalf("refs=%d bad=%d", v.refs.Load(), v.bad.Load())
	}
	if other.refs.Load() != 1 {
		t.Fatal("an unrelated handle was evicted")
	}
	if r.Len() != 1 {
		t.Fatalf("Len=%d", r.Len())
	}
}
