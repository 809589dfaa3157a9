package service

import "time"

// Defaults of the query policy, declared once: New fills a zero Config
// field from them and `quarry serve`'s flags (internal/app) show them; the
// flag table of docs/OPERATIONS.md is generated from those flags. Defaults
// of other layers stay with their owners (materialize.DefaultMaxRows and
// the other caps, handles.DefaultTTL, artifacts.DefaultTTL and
// DefaultQuota, catalog.DefaultLimits, transport's HTTP defaults).
const (
	// DefaultQueryTimeout is the time limit of one query.
	DefaultQueryTimeout = 60 * time.Second
	// DefaultQueryMemory is the Arrow memory budget of one query, bytes.
	DefaultQueryMemory int64 = 1 << 30
	// DefaultServerMemoryWait is how long a query waits for memory from
	// the server-wide pool before failing with resource_exhausted.
	DefaultServerMemoryWait = 2 * time.Second
	// DefaultConfirmRows and DefaultConfirmBytes are the estimated result
	// size above which query_data/aggregate ask the user first.
	DefaultConfirmRows  int64 = 1_000_000
	DefaultConfirmBytes int64 = 256 << 20
)
