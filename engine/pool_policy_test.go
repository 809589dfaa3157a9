package engine

import (
	"context"
	"errors"
	"testing"
	"time"
)

// poolRun is one query's budget in a pool, driven by hand.
type poolRun struct {
	b   *budget
	adm *Admission
}

// enter admits a run (adm may carry Reserve/Retry/Wait).
func enter(ctx context.Context, p *Pool, adm *Admission) (*poolRun, error) {
	r := &poolRun{b: &budget{pool: p}, adm: adm}
	return r, r.b.admit(ctx, adm)
}

// grow charges n more live bytes and reserves them (what an operator's
// check at a batch boundary does).
func (r *poolRun) grow(n int64) error {
	r.b.live.Add(n)
	return r.b.check()
}

// async runs f on a goroutine; the channel gets its error.
func async(f func() error) chan error {
	ch := make(chan error, 1)
	go func() { ch <- f() }()
	return ch
}

// blocked asserts that ch has no result within a short while.
func blocked(t *testing.T, ch chan error, what string) {
	t.Helper()
	select {
	case err := <-ch:
		t.Fatalf("%s returned %v, want it to wait", what, err)
	case <-time.After(50 * time.Millisecond):
	}
}

// result waits for ch's error.
func result(t *testing.T, ch chan error, what string) error {
	t.Helper()
	select {
	case err := <-ch:
		return err
	case <-time.After(5 * time.Second):
		t.Fatalf("%s still waits", what)
		return nil
	}
}

// The pool's policy, step by step: who waits, who is preempted, who may
// run again, who fails at once. Each case starts runs a (oldest), b and c
// as its setup says and checks the outcome.
func TestPoolPolicy(t *testing.T) {
	const chunk = poolChunk
	ctx := context.Background()
	for _, tc := range []struct {
		name string
		test func(t *testing.T)
	}{
		{"the oldest preempts the youngest and gets its memory", func(t *testing.T) {
			p := NewPool(3*chunk, time.Second)
			a, _ := enter(ctx, p, &Admission{})
			b, _ := enter(ctx, p, &Admission{})
			c, _ := enter(ctx, p, &Admission{})
			grown := async(func() error { return a.grow(chunk + 1) })
			blocked(t, grown, "the oldest's growth")
			if !c.b.wounded.Load() || b.b.wounded.Load() {
				t.Fatalf("preempted: b %v, c %v; want c only", b.b.wounded.Load(), c.b.wounded.Load())
			}
			err := c.grow(0) // c's next batch boundary
			if !serverExhausted(err) || !c.adm.Requeue || c.adm.Need < chunk {
				t.Fatalf("c: err %v, admission %+v; want the requeue error", err, *c.adm)
			}
			c.b.giveBack()
			if err := result(t, grown, "the oldest's growth"); err != nil {
				t.Fatal(err)
			}
			if b.adm.Requeue || a.adm.Requeue {
				t.Fatal("a or b marked for requeue")
			}
			a.b.giveBack()
			b.b.giveBack()
		}},
		{"a younger query waits for memory, then grows", func(t *testing.T) {
			p := NewPool(2*chunk, 5*time.Second)
			a, _ := enter(ctx, p, nil)
			b, _ := enter(ctx, p, &Admission{})
			grown := async(func() error { return b.grow(chunk + 1) })
			blocked(t, grown, "the younger's growth")
			a.b.giveBack()
			if err := result(t, grown, "the younger's growth"); err != nil || b.adm.Requeue {
				t.Fatalf("err %v, requeue %v", err, b.adm.Requeue)
			}
			b.b.giveBack()
		}},
		{"a younger query that waits too long fails and may run again", func(t *testing.T) {
			p := NewPool(2*chunk, 20*time.Millisecond)
			a, _ := enter(ctx, p, nil)
			b, _ := enter(ctx, p, &Admission{})
			if err := b.grow(chunk + 1); !serverExhausted(err) || !b.adm.Requeue {
				t.Fatalf("err %v, admission %+v", err, *b.adm)
			}
			b.b.giveBack()
			a.b.giveBack()
		}},
		{"a query the pool cannot hold alone fails at once", func(t *testing.T) {
			p := NewPool(2*chunk, time.Minute)
			a, _ := enter(ctx, p, &Admission{})
			start := time.Now()
			if err := a.grow(2*chunk + 1); !serverExhausted(err) || a.adm.Requeue {
				t.Fatalf("err %v, requeue %v", err, a.adm.Requeue)
			}
			if el := time.Since(start); el > time.Second {
				t.Fatalf("took %v", el)
			}
			a.b.giveBack()
		}},
		{"a first reservation bigger than the pool fails at once", func(t *testing.T) {
			p := NewPool(chunk/2, time.Minute)
			if _, err := enter(ctx, p, nil); !serverExhausted(err) {
				t.Fatalf("err %v", err)
			}
		}},
		{"a retry waits until the preemptor ends, then reserves what it held", func(t *testing.T) {
			p := NewPool(4*chunk, time.Second)
			a, _ := enter(ctx, p, nil)
			b, _ := enter(ctx, p, nil)
			c, _ := enter(ctx, p, &Admission{})
			if err := c.grow(2 * chunk); err != nil { // c holds 2 chunks: the pool is full
				t.Fatal(err)
			}
			grown := async(func() error { return a.grow(2 * chunk) })
			if err := result(t, async(func() error { time.Sleep(20 * time.Millisecond); return c.grow(0) }), "c"); !serverExhausted(err) || !c.adm.Requeue {
				t.Fatalf("c: err %v, admission %+v", err, *c.adm)
			}
			c.b.giveBack()
			if err := result(t, grown, "the oldest's growth"); err != nil {
				t.Fatal(err)
			}
			b.b.giveBack() // a holds 2 chunks: c's 2 would fit
			retry := c.adm
			retry.Again(5 * time.Second)
			var c2 *poolRun
			entered := async(func() (err error) { c2, err = enter(ctx, p, retry); return err })
			blocked(t, entered, "the retry")
			// A fresh query still starts beside the waiting retry.
			d, err := enter(ctx, p, &Admission{Wait: time.Millisecond})
			if err != nil {
				t.Fatal(err)
			}
			d.b.giveBack()
			a.b.giveBack()
			if err := result(t, entered, "the retry"); err != nil {
				t.Fatal(err)
			}
			if got := c2.b.reserved.Load(); got != 2*chunk {
				t.Fatalf("the retry reserved %d bytes, want %d", got, 2*chunk)
			}
			c2.b.giveBack()
		}},
		{"the line is first come first served", func(t *testing.T) {
			p := NewPool(3*chunk, 5*time.Second)
			a, _ := enter(ctx, p, &Admission{Reserve: 2 * chunk})
			var big *poolRun
			bigIn := async(func() (err error) { big, err = enter(ctx, p, &Admission{Reserve: 2 * chunk}); return err })
			blocked(t, bigIn, "the big query")
			// A small query would fit now, but not beside the big one waiting ahead.
			if _, err := enter(ctx, p, &Admission{Wait: 20 * time.Millisecond}); !serverExhausted(err) {
				t.Fatalf("the small query: %v", err)
			}
			a.b.giveBack()
			if err := result(t, bigIn, "the big query"); err != nil {
				t.Fatal(err)
			}
			big.b.giveBack()
		}},
		{"a cancelled query stops waiting to grow", func(t *testing.T) {
			p := NewPool(2*chunk, time.Minute)
			a, _ := enter(ctx, p, nil)
			cctx, cancel := context.WithCancel(ctx)
			b, _ := enter(cctx, p, &Admission{})
			grown := async(func() error { return b.grow(chunk + 1) })
			blocked(t, grown, "the younger's growth")
			cancel()
			if err := result(t, grown, "the younger's growth"); !errors.Is(err, context.Canceled) {
				t.Fatalf("err %v", err)
			}
			b.b.giveBack()
			a.b.giveBack()
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.test(t)
		})
	}
}

// A preemption leaves nothing behind in the pool, whatever order the
// queries end in (and ending twice is harmless).
func TestPoolPolicyLeavesNothing(t *testing.T) {
	ctx := context.Background()
	for _, order := range [][]int{{0, 1, 2}, {2, 1, 0}, {1, 0, 2}} {
		p := NewPool(3*poolChunk, 50*time.Millisecond)
		var runs []*poolRun
		for range 3 {
			r, err := enter(ctx, p, &Admission{})
			if err != nil {
				t.Fatal(err)
			}
			runs = append(runs, r)
		}
		grown := async(func() error { return runs[0].grow(2 * poolChunk) })
		_ = runs[2].grow(0)
		_ = runs[1].grow(0)
		for _, i := range order {
			if i != 0 {
				runs[i].b.giveBack()
			}
		}
		_ = result(t, grown, "the oldest's growth")
		runs[0].b.giveBack()
		for _, r := range runs {
			r.b.giveBack() // twice: no effect
		}
		if u := p.Used(); u != 0 {
			t.Fatalf("order %v: the pool still holds %d bytes", order, u)
		}
		if len(p.active) != 0 || p.retried != 0 || p.oldestWaiting != nil {
			t.Fatalf("order %v: state left: %d active, %d retried, oldest waiting %v", order, len(p.active), p.retried, p.oldestWaiting != nil)
		}
	}
}
