package service

import "github.com/quarrydb/quarry/internal/colcache"

// MemoryUse is the bytes running queries hold of the server-wide memory
// budget and its limit (0, 0 without one).
func (s *Service) MemoryUse() (used, limit int64) {
	if s.pool == nil {
		return 0, 0
	}
	return s.pool.Used(), s.pool.Limit()
}

// CacheStats are the column cache's counters (zero without a cache).
func (s *Service) CacheStats() colcache.Stats {
	if s.cfg.Cache == nil {
		return colcache.Stats{}
	}
	return s.cfg.Cache.Stats()
}

// SpillBytes is the bytes of spill files written since start: by joins
// whose build side went over the query memory budget, and by results
// collected to disk (materialize's spill files).
func (s *Service) SpillBytes() (join, result int64) {
	return s.spilled.Load(), s.cfg.Materializer.SpilledBytes()
}
