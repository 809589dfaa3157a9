package main

import (
	"github.com/quarrydb/quarry/internal/app"
	"github.com/quarrydb/quarry/internal/metrics"
)

// watchApp adds a's scrape-time gauges (cache, handles, artifacts, memory
// budget, spill bytes) to m.
func watchApp(m *metrics.Metrics, a *app.App) {
	m.AddGauges(metrics.Sources{
		Cache:   a.Service.CacheStats,
		Handles: a.HandlesLive,
		Artifacts: func() (int, int64) {
			list := a.Artifacts.List()
			var bytes int64
			for _, art := range list {
				bytes += art.Size
			}
			return len(list), bytes
		},
		Memory: a.Service.MemoryUse,
		Spill:  a.Service.SpillBytes,
	})
}
