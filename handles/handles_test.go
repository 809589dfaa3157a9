package handles_test

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/quarrydb/quarry/handles"
	"github.com/quarrydb/quarry/internal/qerr"
	"github.com/quarrydb/quarry/internal/testutil/fakeclock"
)

// val is a reference-counted Value that detects use after free and double
// release. It starts with one reference (the creator's, handed to Put).
type val struct {
	name string
	size int64
	refs atomic.Int64
	bad  atomic.Int64 // Retain after free, or Release below zero
}

func newVal(name string, size int64) *val {
	v := &val{name: name, size: size}
	v.refs.Store(1)
	return v
}

func (v *val) Retain() {
	if v.refs.Add(1) <= 1 {
		v.bad.Add(1)
	}
}

func (v *val) Release() {
	if v.refs.Add(-1) < 0 {
		v.bad.Add(1)
	}
}

func (v *val) SizeBytes() int64 { return v.size }

func (v *val) check(t *testing.T, wantRefs int64) {
	t.Helper()
	if b := v.bad.Load(); b != 0 {
		t.Errorf("%s: %d refcount violations", v.name, b)
	}
	if r := v.refs.Load(); r != wantRefs {
		t.Errorf("%s: refs = %d, want %d", v.name, r, wantRefs)
	}
}

// unsized is a Value that does not implement Sizer.
type unsized struct{ *val }

func (u unsized) SizeBytes() {} // shadows val.SizeBytes with a different signature: not a Sizer

func newClock() *fakeclock.Clock { return fakeclock.New(time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)) }

func isExpired(err error) bool {
	return errors.Is(err, qerr.ErrExpired) && qerr.Code(err) == qerr.CodeHandleExpired
}

func TestPutGet(t *testing.T) {
	r := handles.New[*val](handles.Options{})
	defer r.Close()
	v := newVal("a", 0)
	id := r.Put(v, "")
	if !strings.HasPrefix(id, "h_") || len(id) != 28 {
		t.Fatalf("id = %q, want h_ + 26 chars", id)
	}
	got, err := r.Get(id, "anyone")
	if err != nil {
		t.Fatal(err)
	}
	if got != v {
		t.Fatal("Get returned a different value")
	}
	v.check(t, 2)
	got.Release()
	v.check(t, 1)
	if n := r.Len(); n != 1 {
		t.Fatalf("Len = %d", n)
	}
	r.Delete(id)
	v.check(t, 0)
	if _, err := r.Get(id, ""); !isExpired(err) {
		t.Fatalf("Get after Delete: %v", err)
	}
	r.Delete(id) // no-op
	v.check(t, 0)
}

func TestIDsUnique(t *testing.T) {
	r := handles.New[*val](handles.Options{MaxEntries: 10000})
	defer r.Close()
	seen := map[string]bool{}
	for i := 0; i < 2000; i++ {
		id := r.Put(newVal("x", 0), "")
		if seen[id] {
			t.Fatalf("duplicate id %q", id)
		}
		seen[id] = true
		for _, c := range id[2:] {
			if !(c >= 'a' && c <= 'z' || c >= '2' && c <= '7') {
				t.Fatalf("id %q has non-base32 char %q", id, c)
			}
		}
	}
}

func TestErrors(t *testing.T) {
	r := handles.New[*val](handles.Options{})
	defer r.Close()
	v := newVal("a", 0)
	id := r.Put(v, "alice")
	open := r.Put(newVal("open", 0), "")
	tests := []struct {
		name      string
		id, princ string
		wantErr   bool
	}{
		{"owner", id, "alice", false},
		{"other principal", id, "bob", true},
		{"empty principal on owned handle", id, "", true},
		{"unowned handle any principal", open, "bob", false},
		{"unowned handle empty principal", open, "", false},
		{"unknown", "h_aaaaaaaaaaaaaaaaaaaaaaaaaa", "alice", true},
		{"empty id", "", "alice", true},
		{"garbage", strings.Repeat("\xff/..", 100), "", true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := r.Get(tc.id, tc.princ)
			if tc.wantErr {
				if !isExpired(err) {
					t.Fatalf("err = %v, want handle_expired", err)
				}
				var qe *qerr.Error
				if !errors.As(err, &qe) || qe.Hint == "" || !strings.Contains(qe.Hint, "re-run") {
					t.Fatalf("missing hint: %#v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got.Release()
		})
	}
	v.check(t, 1)
}

func TestPrincipalMismatchSameAsUnknown(t *testing.T) {
	r := handles.New[*val](handles.Options{})
	defer r.Close()
	id := r.Put(newVal("a", 0), "alice")
	_, e1 := r.Get(id, "mallory")
	_, e2 := r.Get("h_aaaaaaaaaaaaaaaaaaaaaaaaaa", "mallory")
	q1, q2 := qerr.As(e1), qerr.As(e2)
	if q1.Code != q2.Code || q1.Hint != q2.Hint || q1.Category != q2.Category {
		t.Fatalf("mismatch distinguishable from unknown: %#v vs %#v", q1, q2)
	}
}

func TestTTLFakeClock(t *testing.T) {
	const ttl = 10 * time.Minute
	tests := []struct {
		name    string
		steps   []time.Duration // advance, then Get; each successful Get slides expiry
		wantOK  []bool
		wantRef int64 // value refs at the end (1 = still held, 0 = released)
	}{
		{"fresh", []time.Duration{time.Minute}, []bool{true}, 1},
		{"just before", []time.Duration{ttl - time.Nanosecond}, []bool{true}, 1},
		{"exactly at ttl", []time.Duration{ttl}, []bool{false}, 0},
		{"after ttl", []time.Duration{ttl + time.Hour}, []bool{false}, 0},
		{"sliding", []time.Duration{9 * time.Minute, 9 * time.Minute, 9 * time.Minute}, []bool{true, true, true}, 1},
		{"sliding then idle", []time.Duration{9 * time.Minute, 11 * time.Minute, 0}, []bool{true, false, false}, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := newClock()
			r := handles.New[*val](handles.Options{TTL: ttl, Now: c.Now})
			v := newVal("a", 0)
			id := r.Put(v, "")
			for i, d := range tc.steps {
				c.Advance(d)
				got, err := r.Get(id, "")
				if ok := err == nil; ok != tc.wantOK[i] {
					t.Fatalf("step %d: err = %v, want ok=%v", i, err, tc.wantOK[i])
				}
				if err != nil && !isExpired(err) {
					t.Fatalf("step %d: wrong error %v", i, err)
				}
				if err == nil {
					got.Release()
				}
			}
			// Expired but not purged by the real-clock background goroutine:
			// Get must have released it already.
			v.check(t, tc.wantRef)
			wantLen := int(tc.wantRef)
			if n := r.Len(); n != wantLen {
				t.Fatalf("Len = %d, want %d", n, wantLen)
			}
			r.Close()
			v.check(t, 0)
		})
	}
}

func TestLenPurgesExpired(t *testing.T) {
	c := newClock()
	r := handles.New[*val](handles.Options{TTL: time.Minute, Now: c.Now})
	defer r.Close()
	a, b := newVal("a", 0), newVal("b", 0)
	r.Put(a, "")
	c.Advance(30 * time.Second)
	r.Put(b, "")
	c.Advance(45 * time.Second)
	if n := r.Len(); n != 1 {
		t.Fatalf("Len = %d, want 1", n)
	}
	a.check(t, 0)
	b.check(t, 1)
}

// TestTTLBackgroundPurge uses the real clock: the expirable LRU must purge and
// release an expired value with no further calls on the registry.
func TestTTLBackgroundPurge(t *testing.T) {
	r := handles.New[*val](handles.Options{TTL: 50 * time.Millisecond})
	defer r.Close()
	v := newVal("a", 0)
	r.Put(v, "")
	held := newVal("held", 0)
	id := r.Put(held, "")
	got, err := r.Get(id, "")
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for v.refs.Load() != 0 || held.refs.Load() != 1 {
		if time.Now().After(deadline) {
			t.Fatalf("not purged: refs a=%d held=%d", v.refs.Load(), held.refs.Load())
		}
		time.Sleep(5 * time.Millisecond)
	}
	v.check(t, 0)
	// The caller's reference survives the purge.
	held.check(t, 1)
	got.Release()
	held.check(t, 0)
	if _, err := r.Get(id, ""); !isExpired(err) {
		t.Fatalf("Get after purge: %v", err)
	}
}

func TestLRUOrder(t *testing.T) {
	tests := []struct {
		name    string
		max     int
		ops     []string // "+x" puts x, "?x" gets x
		evicted []string
	}{
		{"no touch", 3, []string{"+a", "+b", "+c", "+d"}, []string{"a"}},
		{"get refreshes", 3, []string{"+a", "+b", "+c", "?a", "+d"}, []string{"b"}},
		{"two evictions", 2, []string{"+a", "+b", "?a", "+c", "+d"}, []string{"b", "a"}},
		{"max one", 1, []string{"+a", "+b", "+c"}, []string{"a", "b"}},
		{"gets keep all", 3, []string{"+a", "+b", "?a", "?b", "+c"}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := handles.New[*val](handles.Options{MaxEntries: tc.max})
			vals := map[string]*val{}
			ids := map[string]string{}
			var order []string // eviction order, observed after each op
			gone := map[string]bool{}
			for _, op := range tc.ops {
				name := op[1:]
				switch op[0] {
				case '+':
					vals[name] = newVal(name, 0)
					ids[name] = r.Put(vals[name], "")
				case '?':
					v, err := r.Get(ids[name], "")
					if err != nil {
						t.Fatalf("%s: %v", op, err)
					}
					v.Release()
				}
				for n, v := range vals {
					if !gone[n] && v.refs.Load() == 0 {
						gone[n] = true
						order = append(order, n)
					}
				}
			}
			if fmt.Sprint(order) != fmt.Sprint(tc.evicted) {
				t.Fatalf("evicted %v, want %v", order, tc.evicted)
			}
			for n := range vals {
				_, err := r.Get(ids[n], "")
				if gone[n] != (err != nil) {
					t.Fatalf("%s: gone=%v but Get err=%v", n, gone[n], err)
				}
				if err == nil {
					vals[n].Release()
				}
			}
			if r.Len() != len(vals)-len(order) {
				t.Fatalf("Len = %d", r.Len())
			}
			r.Close()
			for _, v := range vals {
				v.check(t, 0)
			}
		})
	}
}

func TestMaxBytes(t *testing.T) {
	tests := []struct {
		name    string
		max     int64
		sizes   []int64 // put in order v0, v1, ...
		touch   []int   // Get these (in order) before the last Put
		evicted []int
	}{
		{"under bound", 100, []int64{10, 20, 30}, nil, nil},
		{"exactly at bound", 60, []int64{10, 20, 30}, nil, nil},
		{"evict oldest", 50, []int64{10, 20, 30}, nil, []int{0}},
		{"evict several", 50, []int64{10, 20, 15, 45}, nil, []int{0, 1, 2}},
		{"lru not fifo", 50, []int64{10, 20, 30}, []int{0}, []int{1}},
		{"single oversize kept alone", 50, []int64{10, 20, 80}, nil, []int{0, 1}},
		{"unlimited", 0, []int64{1 << 40, 1 << 40}, nil, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := handles.New[*val](handles.Options{MaxBytes: tc.max})
			defer r.Close()
			vals := make([]*val, len(tc.sizes))
			ids := make([]string, len(tc.sizes))
			for i, s := range tc.sizes {
				if i == len(tc.sizes)-1 {
					for _, j := range tc.touch {
						v, err := r.Get(ids[j], "")
						if err != nil {
							t.Fatal(err)
						}
						v.Release()
					}
				}
				vals[i] = newVal(fmt.Sprint(i), s)
				ids[i] = r.Put(vals[i], "")
			}
			var got []int
			for i, v := range vals {
				if v.refs.Load() == 0 {
					got = append(got, i)
				}
			}
			if fmt.Sprint(got) != fmt.Sprint(tc.evicted) {
				t.Fatalf("evicted %v, want %v", got, tc.evicted)
			}
		})
	}
}

// Bytes follows every change of what the registry holds (Put, eviction,
// Delete, expiry, Close), and OnBytes is called after each of them.
func TestBytesAndOnBytes(t *testing.T) {
	clock := newClock()
	var r *handles.Registry[*val]
	var seen []int64
	r = handles.New[*val](handles.Options{MaxBytes: 50, TTL: time.Minute, Now: clock.Now,
		OnBytes: func() { seen = append(seen, r.Bytes()) }})
	defer r.Close()
	step := func(what string, want int64, do func()) {
		t.Helper()
		seen = nil
		do()
		if r.Bytes() != want || len(seen) == 0 || seen[len(seen)-1] != want {
			t.Fatalf("%s: Bytes %d, OnBytes saw %v; want %d", what, r.Bytes(), seen, want)
		}
	}
	var a, b string
	step("put a", 10, func() { a = r.Put(newVal("a", 10), "") })
	step("put b", 30, func() { b = r.Put(newVal("b", 20), "") })
	step("put c evicting a", 45, func() { r.Put(newVal("c", 25), "") })
	step("delete b", 25, func() { r.Delete(b) })
	r.Delete(a) // already evicted: no change, no call
	clock.Advance(2 * time.Minute)
	step("expiry", 0, func() { r.Len() })
	step("put d", 5, func() { r.Put(newVal("d", 5), "") })
	step("close", 0, r.Close)
}

func TestMaxBytesIgnoresNonSizer(t *testing.T) {
	r := handles.New[unsized](handles.Options{MaxBytes: 1})
	defer r.Close()
	a, b := unsized{newVal("a", 100)}, unsized{newVal("b", 100)}
	r.Put(a, "")
	r.Put(b, "")
	a.check(t, 1)
	b.check(t, 1)
}

func TestCallerReferenceSurvivesEviction(t *testing.T) {
	for _, how := range []string{"delete", "lru", "ttl", "close"} {
		t.Run(how, func(t *testing.T) {
			c := newClock()
			r := handles.New[*val](handles.Options{MaxEntries: 1, TTL: time.Minute, Now: c.Now})
			v := newVal("a", 0)
			id := r.Put(v, "")
			got, err := r.Get(id, "")
			if err != nil {
				t.Fatal(err)
			}
			switch how {
			case "delete":
				r.Delete(id)
			case "lru":
				r.Put(newVal("b", 0), "")
			case "ttl":
				c.Advance(2 * time.Minute)
				if _, err := r.Get(id, ""); !isExpired(err) {
					t.Fatal(err)
				}
			case "close":
				r.Close()
			}
			got.check(t, 1) // only the caller's reference is left
			got.Release()
			v.check(t, 0)
			r.Close()
			v.check(t, 0)
		})
	}
}

func TestClose(t *testing.T) {
	r := handles.New[*val](handles.Options{})
	vals := []*val{newVal("a", 0), newVal("b", 0)}
	var ids []string
	for _, v := range vals {
		ids = append(ids, r.Put(v, ""))
	}
	r.Close()
	r.Close()
	for i, v := range vals {
		v.check(t, 0)
		if _, err := r.Get(ids[i], ""); !isExpired(err) {
			t.Fatal(err)
		}
	}
	late := newVal("late", 0)
	id := r.Put(late, "")
	late.check(t, 0)
	if _, err := r.Get(id, ""); !isExpired(err) {
		t.Fatal(err)
	}
	if r.Len() != 0 {
		t.Fatal("Len after Close")
	}
}

// TestConcurrentHammer runs Put/Get/Release/Delete from many goroutines
// against count, byte and (real-clock, short) TTL eviction, then checks that
// every value was released exactly once and never retained after free.
func TestConcurrentHammer(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts handles.Options
	}{
		{"lru", handles.Options{MaxEntries: 8}},
		{"bytes", handles.Options{MaxEntries: 1000, MaxBytes: 64}},
		{"ttl", handles.Options{MaxEntries: 16, TTL: 2 * time.Millisecond}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := handles.New[*val](tc.opts)
			var mu sync.Mutex
			var all []*val
			var ids []string
			var wg sync.WaitGroup
			const workers, iters = 16, 1500
			for w := 0; w < workers; w++ {
				wg.Add(1)
				go func(w int) {
					defer wg.Done()
					rng := rand.New(rand.NewPCG(uint64(w), 1))
					var held []*val
					for i := 0; i < iters; i++ {
						switch rng.IntN(10) {
						case 0, 1, 2:
							v := newVal("v", rng.Int64N(16))
							id := r.Put(v, "")
							mu.Lock()
							all = append(all, v)
							ids = append(ids, id)
							mu.Unlock()
						case 3:
							mu.Lock()
							var id string
							if len(ids) > 0 {
								id = ids[rng.IntN(len(ids))]
							}
							mu.Unlock()
							r.Delete(id)
						case 4:
							if len(held) > 0 {
								held[0].Release()
								held = held[1:]
							}
						case 5:
							_ = r.Len()
						default:
							mu.Lock()
							var id string
							if len(ids) > 0 {
								id = ids[len(ids)-1-rng.IntN(min(len(ids), 20))]
							}
							mu.Unlock()
							if v, err := r.Get(id, ""); err == nil {
								if v.refs.Load() < 1 { // the registry may already have dropped its own
									t.Errorf("got value with refs=%d", v.refs.Load())
								}
								held = append(held, v)
							} else if !isExpired(err) {
								t.Errorf("unexpected error %v", err)
							}
						}
					}
					for _, v := range held {
						v.Release()
					}
				}(w)
			}
			wg.Wait()
			r.Close()
			for _, v := range all {
				v.check(t, 0)
			}
			if len(all) == 0 {
				t.Fatal("no values")
			}
		})
	}
}
