package transport

import "context"

// Limiter applies the HTTP transport's per-principal limits — the rate
// limit (--rate-limit, --rate-burst) and the cap on calls in flight
// (--max-concurrent) — to calls of another protocol (the Flight SQL
// facade), with the same waiting rule: a call waits up to a second for a
// token or a slot, then is refused. It is safe for concurrent use.
type Limiter struct {
	p             *principalLimits
	rps           float64
	maxConcurrent int
}

// NewLimiter limits each principal to rps calls per second with bursts of
// burst, and to maxConcurrent calls at once; rps <= 0 or maxConcurrent <=
// 0 turns that limit off.
func NewLimiter(rps float64, burst, maxConcurrent int) *Limiter {
	return &Limiter{p: newPrincipalLimits(rps, burst, maxConcurrent), rps: rps, maxConcurrent: maxConcurrent}
}

// Limiter returns a Limiter with the flags' HTTP limits.
func (f *HTTPFlags) Limiter() *Limiter { return NewLimiter(f.RateLimit, f.RateBurst, f.MaxConcurrent) }

// Admit takes one call of principal from its rate budget. When that would
// take more than a second, ok is false and retryAfter is the whole seconds
// to wait before retrying.
func (l *Limiter) Admit(ctx context.Context, principal string) (ok bool, retryAfter int) {
	return l.p.admitRate(ctx, principal)
}

// Acquire takes one of principal's in-flight slots; ok is false when none
// came free within a second. On success call release when the call ends.
func (l *Limiter) Acquire(ctx context.Context, principal string) (release func(), ok bool) {
	return l.p.acquire(ctx, principal)
}

// Rate is the calls per second allowed per principal (<= 0: unlimited).
func (l *Limiter) Rate() float64 { return l.rps }

// MaxConcurrent is the calls in flight allowed per principal (<= 0:
// unlimited).
func (l *Limiter) MaxConcurrent() int { return l.maxConcurrent }
