package flightsql

import (
	"sync"
	"time"

	"github.com/quarrydb/quarry/service"
)

// planCache hands the statement planned by GetFlightInfo to the DoGet
// that follows it (the usual Execute-then-DoGet pair), so a query is
// parsed and planned once. Entries are taken once, live planTTL and are
// at most planCacheSize; a miss (another server, a second DoGet of the
// same ticket, an expired entry) plans again from the stateless ticket.
type planCache struct {
	mu      sync.Mutex
	entries map[string]planEntry
}

type planEntry struct {
	st  *service.SQLStatement
	exp time.Time
}

const (
	planTTL       = 30 * time.Second
	planCacheSize = 256
)

// key binds an entry to the principal that planned it.
func planKey(principal string, handle []byte) string { return principal + "\x00" + string(handle) }

func (c *planCache) put(key string, st *service.SQLStatement) {
	now := time.Now()
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.entries == nil {
		c.entries = map[string]planEntry{}
	}
	if len(c.entries) >= planCacheSize {
		for k, e := range c.entries {
			if now.After(e.exp) {
				delete(c.entries, k)
			}
		}
		if len(c.entries) >= planCacheSize {
			return // full of live entries: the DoGet plans again
		}
	}
	c.entries[key] = planEntry{st: st, exp: now.Add(planTTL)}
}

// take removes and returns the live entry of key.
func (c *planCache) take(key string) *service.SQLStatement {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.entries[key]
	if !ok {
		return nil
	}
	delete(c.entries, key)
	if time.Now().After(e.exp) {
		return nil
	}
	return e.st
}
