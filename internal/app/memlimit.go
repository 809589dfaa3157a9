package app

import (
	"log/slog"
	"runtime/debug"
	"sync"
)

// goRuntimeHeadroom is what the Go runtime may hold beyond the queries'
// reservations and the results kept behind handles: the server's own heap
// (catalog, sessions, buffers of requests in flight; a few MiB), goroutine
// stacks, the runtime's metadata, and the garbage between two collections.
// It is part of the 10% the process may use beyond --server-memory and
// --cache-memory (docs/RELIABILITY.md), beside the binary's mapped code.
const goRuntimeHeadroom int64 = 32 << 20

// goLimitStep is the change of the handle bytes from which the soft
// limit is set again.
const goLimitStep int64 = 1 << 20

// GoMemoryLimit is the soft memory limit of the Go runtime the budgets
// imply while handleBytes of results are kept behind handles: the
// server-wide query memory (--server-memory: Arrow buffers and operator
// state of running queries, on the Go heap) plus those results (on the Go
// heap too, at most --handle-memory) plus goRuntimeHeadroom. The column
// cache (--cache-memory) is not part of it: it lives outside the Go heap
// (mapped slabs, colcache). Handle memory counts only as far as it is
// used, so that the collector does not let garbage fill the room of
// results that are not there. 0 when the server memory is unlimited:
// there is no bound to derive.
func GoMemoryLimit(cfg Config, handleBytes int64) int64 {
	server := serverMemory(cfg)
	if server <= 0 {
		return 0
	}
	return server + max(handleBytes, 0) + goRuntimeHeadroom
}

// goLimit keeps the runtime's soft memory limit at GoMemoryLimit as the
// bytes behind handles change (handles.Options.OnBytes calls update).
type goLimit struct {
	cfg     Config
	handles func() int64 // the bytes behind handles

	mu      sync.Mutex
	on      bool  // apply was called and the limit is the budgets'
	applied int64 // the limit last set
}

// apply sets the limit for the handle bytes held now and keeps it up to
// date from then on; it returns the limit (0: none set).
func (g *goLimit) apply() int64 {
	g.mu.Lock()
	defer g.mu.Unlock()
	limit := GoMemoryLimit(g.cfg, g.handles())
	if limit <= 0 {
		return 0
	}
	g.on, g.applied = true, limit
	debug.SetMemoryLimit(limit)
	return limit
}

// update follows a change of the handle bytes: the limit is set again
// when it moves by goLimitStep or more, or back to none kept.
func (g *goLimit) update() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if !g.on {
		return
	}
	held := g.handles()
	limit := GoMemoryLimit(g.cfg, held)
	if d := limit - g.applied; d >= goLimitStep || d <= -goLimitStep || d != 0 && held == 0 {
		g.applied = limit
		debug.SetMemoryLimit(limit)
	}
}

// ApplyGoMemoryLimit sets the Go runtime's soft memory limit
// (debug.SetMemoryLimit) to GoMemoryLimit and keeps it there as results
// are kept behind handles and let go, so that the garbage collector keeps
// the process's heap, garbage included, near what the budgets account for,
// unless the user set GOMEMLIMIT (getenv), which the runtime already
// applies. It logs what it did and returns the limit in force (0: none)
// and its source ("GOMEMLIMIT", "budgets" or "").
func (a *App) ApplyGoMemoryLimit(getenv func(string) string) (int64, string) {
	log := a.Config.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if getenv("GOMEMLIMIT") != "" {
		limit := debug.SetMemoryLimit(-1) // reads it without changing it
		log.Info("Go memory limit from GOMEMLIMIT", "limit_bytes", limit)
		return limit, "GOMEMLIMIT"
	}
	limit := a.goLimit.apply()
	if limit <= 0 {
		log.Info("no Go memory limit: the server memory is unlimited")
		return 0, ""
	}
	log.Info("Go memory limit from the budgets (server memory + handle memory in use + runtime headroom; GOMEMLIMIT overrides)",
		"limit_bytes", limit, "server_memory_bytes", serverMemory(a.Config), "headroom_bytes", goRuntimeHeadroom)
	return limit, "budgets"
}
