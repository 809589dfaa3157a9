package app

import (
	"log/slog"
	"runtime/debug"
)

// goRuntimeHeadroom is what the Go heap may hold beyond the query and
// handle budgets: the catalog, sessions, buffers of requests in flight,
// goroutine stacks and the runtime's own structures.
const goRuntimeHeadroom int64 = 64 << 20

// GoMemoryLimit is the soft memory limit of the Go runtime the budgets
// imply: the server-wide query memory (--server-memory: Arrow buffers and
// operator state of running queries, on the Go heap) plus the results kept
// behind handles (--handle-memory) plus goRuntimeHeadroom. The column cache
// (--cache-memory) is not part of it: it lives outside the Go heap (mapped
// slabs, colcache). 0 when either budget is unlimited: there is no bound to
// derive.
func GoMemoryLimit(cfg Config) int64 {
	server, handles := serverMemory(cfg), handleMemory(cfg)
	if server <= 0 || handles <= 0 {
		return 0
	}
	return server + handles + goRuntimeHeadroom
}

// ApplyGoMemoryLimit sets the Go runtime's soft memory limit
// (debug.SetMemoryLimit) to GoMemoryLimit, so that the garbage collector
// keeps the process's heap, garbage included, near what the budgets
// account for, unless the user set GOMEMLIMIT (getenv), which the runtime
// already applies. It logs what it did and returns the limit in force
// (0: none) and its source ("GOMEMLIMIT", "budgets" or "").
func ApplyGoMemoryLimit(cfg Config, getenv func(string) string, log *slog.Logger) (int64, string) {
	if getenv("GOMEMLIMIT") != "" {
		limit := debug.SetMemoryLimit(-1) // reads it without changing it
		log.Info("Go memory limit from GOMEMLIMIT", "limit_bytes", limit)
		return limit, "GOMEMLIMIT"
	}
	limit := GoMemoryLimit(cfg)
	if limit <= 0 {
		log.Info("no Go memory limit: the query or handle memory is unlimited")
		return 0, ""
	}
	debug.SetMemoryLimit(limit)
	log.Info("Go memory limit from the budgets (server memory + handle memory + runtime headroom; GOMEMLIMIT overrides)",
		"limit_bytes", limit, "server_memory_bytes", serverMemory(cfg), "handle_memory_bytes", handleMemory(cfg))
	return limit, "budgets"
}
