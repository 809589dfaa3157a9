package engine

import (
	"context"
	"slices"
	"sync"
	"time"

	"github.com/quarrydb/quarry/internal/qerr"
)

// Pool is a server-wide memory cap shared by concurrent queries. Each
// query's budget (Options.Pool) reserves from it in poolChunk steps as its
// live bytes grow, and gives everything back when the query ends, so the
// bytes all running queries hold together stay under the pool's limit
// (within one chunk per query for allocations that cannot fail at once:
// see softAlloc).
//
// Queries enter in line, first come first served: a query starts once the
// bytes it reserves up front (one chunk, or Admission.Reserve) fit beside
// what the running queries hold and what the queries ahead of it in line
// wait for, waiting up to the pool's wait (or Admission.Wait). A waiting
// query further back that fits beside them goes ahead.
//
// When the pool is full, the oldest running query (first admitted) goes
// on: it preempts the youngest running queries, which fail at their next
// allocation or batch boundary with resource_exhausted and give their
// memory back, and waits for that memory. A younger query that cannot
// grow waits up to the pool's wait for memory (the oldest may preempt it
// meanwhile), then fails. Either way it reports Admission.Requeue with the
// bytes it held, so that its caller can run it again (Admission.Again):
// such a retried run reserves those bytes up front and starts only once
// the query that was the oldest when it failed (the one it gave way to)
// and every other retried run have ended, so that big queries run one
// after the other instead of preempting each other. A
// query the pool cannot hold even alone fails at once. Every failure is
// resource_exhausted with diagnostics scope "server" and a hint; nothing
// waits beyond its context.
type Pool struct {
	limit int64
	wait  time.Duration

	mu     sync.Mutex
	used   int64
	freed  chan struct{} // closed (and replaced) whenever the state changes
	seq    uint64        // admissions so far
	active []*budget     // running queries, oldest first
	line   []*waiter     // queries waiting to start, first come first
	// oldestWaiting is the oldest running query while it waits for
	// memory: younger queries take nothing meanwhile.
	oldestWaiting *budget
	retried       int // running queries that are retries (Admission.Retry)
}

// poolChunk is the step in which budgets reserve from their pool.
const poolChunk = 4 << 20

// oldestWaitCap bounds how long the oldest query waits for the memory of
// the queries it preempted (they give it back at their next batch).
const oldestWaitCap = 30 * time.Second

// Admission is how one execution enters its pool (Options.Admission) and
// what it learned there. The engine sets Requeue and Need; the caller sets
// the rest.
type Admission struct {
	// Reserve is the bytes reserved before the query starts (an estimate of
	// what it needs; at least one chunk, at most the pool). The query waits
	// in line until they fit.
	Reserve int64
	// Wait bounds the wait in line; 0 means the pool's wait.
	Wait time.Duration
	// Retry marks a run of a query that gave its memory back before: it
	// starts only when the query it gave way to and every other retried
	// query have ended.
	Retry bool
	after uint64 // with Retry: the admission number of the query it gave way to

	// Requeue is set when the run failed because it gave its memory back
	// to an older query, or could not grow while other queries held the
	// pool: running it again (with Retry and Reserve = Need) may succeed.
	Requeue bool
	// Need is the bytes the run held when it failed (with Requeue).
	Need int64
}

// Again makes a, after a run that failed with Requeue, the admission of
// the next run: a retry reserving Need up front, waiting up to wait in line.
func (a *Admission) Again(wait time.Duration) {
	*a = Admission{Reserve: a.Need, Wait: wait, Retry: true, after: a.after}
}

// waiter is one query waiting in line.
type waiter struct {
	want  int64
	retry bool
	after uint64 // Admission.after
}

// NewPool returns a pool of limit bytes (limit <= 0: nil, no server-wide
// cap). A query waits up to wait to start, and a running query up to wait
// to grow.
func NewPool(limit int64, wait time.Duration) *Pool {
	if limit <= 0 {
		return nil
	}
	return &Pool{limit: limit, wait: max(wait, 0), freed: make(chan struct{})}
}

// Limit is the pool's cap in bytes.
func (p *Pool) Limit() int64 { return p.limit }

// Used is the bytes currently reserved by running queries.
func (p *Pool) Used() int64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.used
}

// signal wakes every query waiting on the pool (p.mu held).
func (p *Pool) signal() {
	close(p.freed)
	p.freed = make(chan struct{})
}

// sleep waits, with p.mu held on entry and on return, until the pool's
// state changes, timer fires (false) or ctx ends (false).
func (p *Pool) sleep(ctx context.Context, timer *time.Timer) bool {
	freed := p.freed
	p.mu.Unlock()
	defer p.mu.Lock()
	select {
	case <-freed:
		return true
	case <-timer.C:
		return false
	case <-ctx.Done():
		return false
	}
}

// admit enters b in line and waits until it may start: its first
// reservation is then taken and b is running.
func (p *Pool) admit(ctx context.Context, b *budget, adm *Admission) error {
	want, wait, retry, after := int64(poolChunk), p.wait, false, uint64(0)
	if adm != nil {
		want, retry, after = max(adm.Reserve, poolChunk), adm.Retry, adm.after
		if adm.Wait > 0 {
			wait = adm.Wait
		}
	}
	if want > p.limit {
		if !retry {
			return p.tooBig()
		}
		want = p.limit // it ran before: let it try alone
	}
	w := &waiter{want: want, retry: retry, after: after}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.line = append(p.line, w)
	defer func() {
		p.line = slices.DeleteFunc(p.line, func(x *waiter) bool { return x == w })
		p.signal() // the queries behind move up
	}()
	timer := time.NewTimer(wait)
	defer timer.Stop()
	for !p.admissible(w) {
		if !p.sleep(ctx, timer) {
			if err := ctx.Err(); err != nil {
				return err
			}
			return p.errf("the server's memory for queries (%s, shared by all running queries) is in use by other queries; the query waited %s for it and did not start",
				humanBytes(p.limit), wait.Round(time.Millisecond))
		}
	}
	p.used += want
	p.seq++
	b.seq = p.seq
	b.reserved.Store(want)
	b.retried = retry
	b.adm = adm
	p.active = append(p.active, b)
	if retry {
		p.retried++
	}
	return nil
}

// admissible reports whether w may start now (p.mu held): the oldest
// running query does not wait for memory, w is not a retry held back
// (held), and w's bytes fit beside the running queries and the waiters
// ahead of it not held back.
func (p *Pool) admissible(w *waiter) bool {
	if p.oldestWaiting != nil || p.held(w) {
		return false
	}
	ahead := int64(0)
	for _, x := range p.line {
		if x == w {
			break
		}
		if !p.held(x) {
			ahead += x.want
		}
	}
	return p.used+ahead+w.want <= p.limit
}

// held reports whether w is a retry that must wait for the query it gave
// way to, or for another retry, to end (p.mu held).
func (p *Pool) held(w *waiter) bool {
	if !w.retry {
		return false
	}
	if p.retried > 0 {
		return true
	}
	for _, x := range p.active {
		if x.seq <= w.after {
			return true
		}
	}
	return false
}

// grow makes b's reservation cover need bytes, waiting for memory as the
// pool's policy says (see Pool).
func (p *Pool) grow(b *budget, need int64) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	var timer *time.Timer
	waiting, timedOldest := false, false
	defer func() {
		if timer != nil {
			timer.Stop()
		}
		if p.oldestWaiting == b {
			p.oldestWaiting = nil
		}
		if waiting {
			p.signal() // admissions may proceed
		}
	}()
	for {
		if b.seq == 0 { // not running (Explain) or already ended
			return nil
		}
		if b.wounded.Load() {
			return p.preemptedErr(b)
		}
		r := b.reserved.Load()
		if need <= r {
			return nil
		}
		oldest := p.oldest() == b
		if oldest || p.oldestWaiting == nil {
			n := need - r
			for _, step := range []int64{(n + poolChunk - 1) / poolChunk * poolChunk, n} {
				if p.used+step <= p.limit {
					p.used += step
					b.reserved.Add(step)
					return nil
				}
			}
		}
		if oldest {
			if !p.preempt(b, p.used+need-r-p.limit) {
				return p.tooBig()
			}
			p.oldestWaiting = b
		}
		if timer == nil || oldest && !timedOldest { // a query that became the oldest waits longer
			if timer != nil {
				timer.Stop()
			}
			wait := p.wait
			if oldest {
				wait = max(wait, oldestWaitCap)
			}
			timer, timedOldest = time.NewTimer(wait), oldest
		}
		waiting = true
		if !p.sleep(b.ctx, timer) {
			if err := b.ctx.Err(); err != nil {
				return err
			}
			return p.requeue(b, "the server's memory for queries (%s, shared by all running queries) is in use by other queries",
				humanBytes(p.limit))
		}
	}
}

// oldest is the first running query not preempted (p.mu held).
func (p *Pool) oldest() *budget {
	for _, x := range p.active {
		if !x.wounded.Load() {
			return x
		}
	}
	return nil
}

// preempt makes the youngest running queries other than b give their
// memory back until what they hold covers short bytes (with the queries
// preempted before and still holding theirs); false when all of them
// together cannot (p.mu held).
func (p *Pool) preempt(b *budget, short int64) bool {
	pending := int64(0)
	for _, x := range p.active {
		if x.wounded.Load() {
			pending += x.reserved.Load()
		}
	}
	for i := len(p.active) - 1; i >= 0 && pending < short; i-- {
		x := p.active[i]
		if x == b {
			break
		}
		if !x.wounded.Load() {
			x.wounded.Store(true)
			pending += x.reserved.Load()
			p.signal() // a preempted query waiting to grow fails now
		}
	}
	return pending >= short
}

// requeue is the error of a run that may be run again (p.mu held): it
// records in b's Admission the bytes b held and the query it gives way
// to (the oldest running).
func (p *Pool) requeue(b *budget, format string, args ...any) error {
	if b.adm != nil {
		b.adm.Requeue = true
		b.adm.Need = max(b.adm.Need, b.reserved.Load(), b.live.Load())
		if o := p.oldest(); o != nil {
			b.adm.after = o.seq
		}
	}
	return p.errf(format, args...)
}

// preemptedErr is the error of a query an older one preempted (p.mu held).
func (p *Pool) preemptedErr(b *budget) error {
	return p.requeue(b, "the server's memory for queries (%s, shared by all running queries) was needed by a query that started earlier; this one gave its memory back",
		humanBytes(p.limit))
}

// tooBig is the error of a query the pool cannot hold even alone.
func (p *Pool) tooBig() error {
	return qerr.Limit(qerr.CodeResourceExhausted,
		"the query needs more than the server's memory for queries (%s, shared by all running queries), even with no other query running", humanBytes(p.limit)).
		WithHint("narrow the query: add filters, select fewer columns, group by fewer or lower-cardinality columns, or put a limit on sorted results").
		With("scope", "server").With("server_memory_limit_bytes", p.limit)
}

func (p *Pool) errf(format string, args ...any) error {
	return qerr.Limit(qerr.CodeResourceExhausted, format, args...).
		WithHint("retry in a few seconds, when other queries have finished; a narrower query (filters, fewer columns, fewer groups) needs less memory").
		With("scope", "server").With("server_memory_limit_bytes", p.limit)
}

// leave ends b's run: its reservation goes back and the queries waiting
// are woken.
func (p *Pool) leave(b *budget) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if b.seq == 0 {
		return
	}
	b.seq = 0
	p.used -= b.reserved.Swap(0)
	p.active = slices.DeleteFunc(p.active, func(x *budget) bool { return x == b })
	if b.retried {
		p.retried--
	}
	if p.oldestWaiting == b {
		p.oldestWaiting = nil
	}
	p.signal()
}

// reserve makes b's reservation from its pool cover its live bytes plus
// n; the error says why it cannot (see Pool). Budgets without a pool, or
// not running, always succeed.
func (b *budget) reserve(n int64) error {
	if b.pool == nil {
		return nil
	}
	need := b.live.Load() + n
	if need <= b.reserved.Load() {
		return nil
	}
	return b.pool.grow(b, need)
}

// preempted reports whether an older query asked b to give its memory
// back (batch boundaries check it: budget.check).
func (b *budget) preempted() error {
	if b.pool == nil || !b.wounded.Load() {
		return nil
	}
	b.pool.mu.Lock()
	defer b.pool.mu.Unlock()
	if b.seq == 0 {
		return nil
	}
	return b.pool.preemptedErr(b)
}

// admit enters the budget in its pool's line (Execute, before anything
// runs).
func (b *budget) admit(ctx context.Context, adm *Admission) error {
	if b.pool == nil {
		return nil
	}
	b.ctx = ctx
	return b.pool.admit(ctx, b, adm)
}

// giveBack returns the whole reservation to the pool (the query ended).
func (b *budget) giveBack() {
	if b.pool != nil {
		b.pool.leave(b)
	}
}
