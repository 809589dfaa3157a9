package transport

import (
	"context"
	"math"
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// Defaults of the HTTP limits (see HTTPOptions).
const (
	// DefaultRateLimit is the sustained requests per second of one principal.
	DefaultRateLimit = 20
	// DefaultRateBurst is the burst of requests one principal may send at once.
	DefaultRateBurst = 40
	// DefaultMaxBody is the largest request body accepted, in bytes.
	DefaultMaxBody = 4 << 20
	// DefaultMaxConcurrent is the in-flight POST requests of one principal.
	DefaultMaxConcurrent = 8
	// DefaultSessionIdleTTL is how long an idle legacy MCP session's
	// transport state is kept.
	DefaultSessionIdleTTL = 30 * time.Minute
	// DefaultShutdownTimeout bounds graceful shutdown.
	DefaultShutdownTimeout = 10 * time.Second
)

// queueWait is the longest a request waits, rather than being answered
// 429, for a rate-limit token or a concurrency slot. A client that sends
// requests one after another is slowed down to the limit instead of
// failing; a burst beyond the limit gets 429 with Retry-After.
const queueWait = time.Second

// anonymous is the principal of every request when authentication is off.
const anonymous = "anonymous"

// principalLimits holds the rate limiter and concurrency slots of each
// principal. Principals come from configuration (plus anonymous), so the
// map is bounded.
type principalLimits struct {
	rate          rate.Limit // <= 0: unlimited
	burst         int
	maxConcurrent int // <= 0: unlimited

	mu    sync.Mutex
	perID map[string]*limits
}

type limits struct {
	lim   *rate.Limiter
	slots chan struct{}
}

func newPrincipalLimits(rps float64, burst, maxConcurrent int) *principalLimits {
	return &principalLimits{rate: rate.Limit(rps), burst: burst, maxConcurrent: maxConcurrent, perID: map[string]*limits{}}
}

func (p *principalLimits) get(principal string) *limits {
	p.mu.Lock()
	defer p.mu.Unlock()
	l := p.perID[principal]
	if l == nil {
		l = &limits{}
		if p.rate > 0 {
			l.lim = rate.NewLimiter(p.rate, max(p.burst, 1))
		}
		if p.maxConcurrent > 0 {
			l.slots = make(chan struct{}, p.maxConcurrent)
		}
		p.perID[principal] = l
	}
	return l
}

// admitRate takes one request token of principal, waiting up to queueWait.
// When the wait would be longer it returns false and the whole seconds the
// client should wait before retrying.
func (p *principalLimits) admitRate(ctx context.Context, principal string) (ok bool, retryAfter int) {
	l := p.get(principal)
	if l.lim == nil {
		return true, 0
	}
	res := l.lim.Reserve()
	d := res.Delay()
	if !res.OK() || d > queueWait {
		res.Cancel()
		if !res.OK() {
			d = time.Second
		}
		return false, max(1, int(math.Ceil(d.Seconds())))
	}
	if d == 0 {
		return true, 0
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true, 0
	case <-ctx.Done():
		res.Cancel()
		return false, 1
	}
}

// acquire takes one in-flight slot of principal, waiting up to queueWait.
// On success the caller must call the returned release.
func (p *principalLimits) acquire(ctx context.Context, principal string) (release func(), ok bool) {
	l := p.get(principal)
	if l.slots == nil {
		return func() {}, true
	}
	release = func() { <-l.slots }
	select {
	case l.slots <- struct{}{}:
		return release, true
	default:
	}
	t := time.NewTimer(queueWait)
	defer t.Stop()
	select {
	case l.slots <- struct{}{}:
		return release, true
	case <-t.C:
	case <-ctx.Done():
	}
	return nil, false
}
