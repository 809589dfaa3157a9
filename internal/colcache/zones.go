package colcache

import (
	"github.com/apache/arrow-go/v18/arrow"

	"github.com/quarrydb/quarry/internal/zonemap"
	"github.com/quarrydb/quarry/planner"
)

// Zone maps: the first Scan that hands the cache zone filters for a column
// computes the zones (per-chunk statistics, package zonemap) of its cached
// chunks once and keeps them with the column; scans served from memory
// then skip the batches in which no row can satisfy the filters. Filling
// the cache computes nothing, so queries without filters pay nothing.

var _ planner.ZoneFilterer = (*Source)(nil)

// UsesZoneFilter implements planner.ZoneFilterer: what zonemap can decide.
func (s *Source) UsesZoneFilter(p planner.Predicate, in *arrow.Schema) bool {
	return zonemap.Usable(p, in)
}

// zonesOf returns the zones of chunks, the cached arrays of column name
// as returned by lookup: the column's kept zones (computed now if need be)
// while it is still cached, otherwise zones computed for this scan only.
func (c *Cache) zonesOf(k fileKey, name string, chunks []arrow.Array) []zonemap.Zone {
	c.mu.Lock()
	var col *column
	if f := c.files[k]; f != nil {
		if col = f.cols[name]; col != nil && !sameArrays(col.chunks, chunks) {
			col = nil
		}
	}
	c.mu.Unlock()
	if col == nil {
		return computeZones(chunks)
	}
	col.zoneOnce.Do(func() { col.zones = computeZones(chunks) })
	return col.zones
}

// sameArrays reports whether a and b hold the same arrays in order.
func sameArrays(a, b []arrow.Array) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func computeZones(chunks []arrow.Array) []zonemap.Zone {
	zs := make([]zonemap.Zone, len(chunks))
	for i, a := range chunks {
		zs[i] = zonemap.Of(a)
	}
	return zs
}

// skipper decides, for a memReader, which batches cannot match the scan's
// zone filters.
type skipper struct {
	c     *Cache
	preds []planner.Predicate
	zones [][]zonemap.Zone // per scan column; nil for columns no filter reads
	// checked and skipped count batches (added to the cache's stats at the
	// end of the read).
	checked, skipped int64
}

// newSkipper prepares the zones the filters read, or returns nil when
// there is nothing to check.
func (s *Source) newSkipper(preds []planner.Predicate, names []string, chunks [][]arrow.Array) *skipper {
	if len(preds) == 0 {
		return nil
	}
	sk := &skipper{c: s.c, preds: preds, zones: make([][]zonemap.Zone, len(names))}
	var mark func(ps []planner.Predicate)
	mark = func(ps []planner.Predicate) {
		for _, p := range ps {
			mark(p.Any)
			if i := p.Index; p.Op != planner.OpAny && i >= 0 && i < len(names) && sk.zones[i] == nil {
				sk.zones[i] = s.c.zonesOf(s.key, names[i], chunks[i])
			}
		}
	}
	mark(preds)
	return sk
}

// match reports whether some row of the batch starting at pos (the
// columns' chunk cursors) may satisfy every filter.
func (sk *skipper) match(pos []cursor) bool {
	sk.checked++
	zone := func(i int) *zonemap.Zone {
		if i < 0 || i >= len(sk.zones) || sk.zones[i] == nil {
			return nil
		}
		return &sk.zones[i][pos[i].chunk]
	}
	for _, p := range sk.preds {
		if !zonemap.CanMatch(p, zone) {
			sk.skipped++
			return false
		}
	}
	return true
}

// done adds the counts to the cache's stats.
func (sk *skipper) done() {
	if sk == nil || sk.checked == 0 {
		return
	}
	sk.c.zoneChecked.Add(sk.checked)
	sk.c.zoneSkipped.Add(sk.skipped)
	sk.checked, sk.skipped = 0, 0
}
