// Package fakeclock is a clock tests move by hand, for code that takes a
// Now function (expiries, TTL sweeps). Only tests import it.
package fakeclock

import (
	"sync"
	"time"
)

// Clock reads the same time until Advance moves it; it is safe for
// concurrent use.
type Clock struct {
	mu sync.Mutex
	t  time.Time
}

// New is a clock that reads t.
func New(t time.Time) *Clock { return &Clock{t: t} }

// Now is the clock's time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

// Advance moves the clock d forward.
func (c *Clock) Advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}
