package engine

import (
	"context"
	"sync"
	"time"

	"github.com/quarrydb/quarry/internal/qerr"
)

// Pool is a server-wide memory cap shared by concurrent queries. Each
// query's budget (Options.Pool) reserves from it in poolChunk steps as its
// live bytes grow, and gives everything back when the query ends, so the
// bytes all running queries hold together stay under the pool's limit
// (within one chunk per query for allocations that cannot fail at once:
// see softAlloc). A query starts only once its first chunk fits (waiting up
// to the pool's wait); a query that cannot grow fails with
// resource_exhausted (scope "server") instead of the process running out of
// memory.
type Pool struct {
	limit int64
	wait  time.Duration

	mu    sync.Mutex
	used  int64
	freed chan struct{} // closed (and replaced) whenever bytes are given back
}

// poolChunk is the step in which budgets reserve from their pool.
const poolChunk = 4 << 20

// NewPool returns a pool of limit bytes (limit <= 0: nil, no server-wide
// cap). A query waits up to wait for its first chunk.
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

// tryReserve takes n bytes when they fit.
func (p *Pool) tryReserve(n int64) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.used+n > p.limit {
		return false
	}
	p.used += n
	return true
}

// release gives n bytes back and wakes the queries waiting to start.
func (p *Pool) release(n int64) {
	if n <= 0 {
		return
	}
	p.mu.Lock()
	p.used -= n
	close(p.freed)
	p.freed = make(chan struct{})
	p.mu.Unlock()
}

// admit reserves n bytes, waiting up to the pool's wait (or until ctx
// ends) for running queries to give memory back.
func (p *Pool) admit(ctx context.Context, n int64) error {
	var timer *time.Timer
	for {
		p.mu.Lock()
		if p.used+n <= p.limit {
			p.used += n
			p.mu.Unlock()
			return nil
		}
		freed := p.freed
		p.mu.Unlock()
		if timer == nil {
			timer = time.NewTimer(p.wait)
			defer timer.Stop()
		}
		select {
		case <-freed:
		case <-timer.C:
			return p.err(true)
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// err is the resource_exhausted error of a query the pool cannot hold;
// waited says it could not even start.
func (p *Pool) err(waited bool) error {
	msg := "the server's memory for queries (%s, shared by all running queries) is in use by other queries"
	if waited {
		msg += "; the query waited %s for it and did not start"
		return p.errf(msg, humanBytes(p.limit), p.wait)
	}
	return p.errf(msg, humanBytes(p.limit))
}

func (p *Pool) errf(format string, args ...any) error {
	return qerr.Limit(qerr.CodeResourceExhausted, format, args...).
		WithHint("retry in a few seconds, when other queries have finished; a narrower query (filters, fewer columns, fewer groups) needs less memory").
		With("scope", "server").With("server_memory_limit_bytes", p.limit)
}

// reserve makes b's reservation from its pool cover its live bytes plus
// n; false when the pool cannot. Budgets without a pool always succeed.
func (b *budget) reserve(n int64) bool {
	if b.pool == nil {
		return true
	}
	need := b.live.Load() + n
	if need <= b.reserved.Load() {
		return true
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	r := b.reserved.Load()
	if need <= r {
		return true
	}
	grow := (need - r + poolChunk - 1) / poolChunk * poolChunk
	if !b.pool.tryReserve(grow) {
		if grow = need - r; !b.pool.tryReserve(grow) {
			return false
		}
	}
	b.reserved.Add(grow)
	return true
}

// admit reserves the budget's first chunk (Execute, before anything runs).
func (b *budget) admit(ctx context.Context) error {
	if b.pool == nil {
		return nil
	}
	if err := b.pool.admit(ctx, poolChunk); err != nil {
		return err
	}
	b.reserved.Add(poolChunk)
	return nil
}

// giveBack returns the whole reservation to the pool (the query ended).
func (b *budget) giveBack() {
	if b.pool == nil {
		return
	}
	b.mu.Lock()
	r := b.reserved.Swap(0)
	b.mu.Unlock()
	b.pool.release(r)
}
