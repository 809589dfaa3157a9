package colcache

import (
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/quarrydb/quarry/internal/zonemap"
	"github.com/quarrydb/quarry/planner"
)

// Zone maps: the first Scan that hands the cache zone filters for a column
// computes the zones (per-block statistics, package zonemap) of its cached
// chunks once and keeps them with the column; scans served from memory
// then skip the blocks in which no row can satisfy the filters. A zone
// covers zoneRows rows of a chunk (the last block of a chunk may be
// shorter), finer than a chunk, so a selective filter on a sorted column
// reads little beyond the matching rows; consecutive blocks that may match
// are handed out together as one batch (memReader.Next). Filling the cache
// computes nothing, so queries without filters pay nothing.

// zoneRows is the rows of one zone (tests lower it).
var zoneRows = 8192

var _ planner.ZoneFilterer = (*Source)(nil)

// UsesZoneFilter implements planner.ZoneFilterer: what zonemap can decide.
func (s *Source) UsesZoneFilter(p planner.Predicate, in *arrow.Schema) bool {
	return zonemap.Usable(p, in)
}

// zonesOf returns the zones of chunks, the cached arrays of column name
// as returned by lookup: the column's kept zones (computed now if need be)
// while it is still cached, otherwise zones computed for this scan only.
func (c *Cache) zonesOf(k fileKey, name string, chunks []arrow.Array) [][]zonemap.Zone {
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
	col.zoneOnce.Do(func() {
		col.zones = computeZones(chunks)
		col.zoned.Store(true)
	})
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

// computeZones returns the zones of each chunk: one per block of zoneRows
// rows from the chunk's start.
func computeZones(chunks []arrow.Array) [][]zonemap.Zone {
	zs := make([][]zonemap.Zone, len(chunks))
	for i, a := range chunks {
		n := a.Len()
		if n <= zoneRows {
			zs[i] = []zonemap.Zone{zonemap.Of(a)}
			continue
		}
		zs[i] = make([]zonemap.Zone, 0, (n+zoneRows-1)/zoneRows)
		for off := 0; off < n; off += zoneRows {
			s := array.NewSlice(a, int64(off), int64(min(off+zoneRows, n)))
			zs[i] = append(zs[i], zonemap.Of(s))
			s.Release()
		}
	}
	return zs
}

// skipper decides, for a memReader, which blocks cannot match the scan's
// zone filters.
type skipper struct {
	c     *Cache
	preds []planner.Predicate
	zones [][][]zonemap.Zone // per scan column; nil for columns no filter reads
	// checked and skipped count zones (added to the cache's stats at the
	// end of the read: added); skippedRows counts the rows of the skipped
	// ones.
	checked, skipped, skippedRows int64
	added                         bool
}

// newSkipper prepares the zones the filters read, or returns nil when
// there is nothing to check.
func (s *Source) newSkipper(preds []planner.Predicate, names []string, chunks [][]arrow.Array) *skipper {
	if len(preds) == 0 {
		return nil
	}
	sk := &skipper{c: s.c, preds: preds, zones: make([][][]zonemap.Zone, len(names))}
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

// clip shortens a span of n rows starting delta rows after pos (the
// columns' chunk cursors) so that it ends at or before the end of the
// block it starts in, in every column a filter reads.
func (sk *skipper) clip(pos []cursor, delta, n int) int {
	for i, zs := range sk.zones {
		if zs != nil {
			off := pos[i].off + delta
			n = min(n, (off/zoneRows+1)*zoneRows-off)
		}
	}
	return n
}

// Classes of a block against the zone filters.
const (
	zoneNone = iota // no row can match
	zoneSome        // some rows may match
	zoneAll         // every row matches
)

// class classifies the block starting delta rows after pos.
func (sk *skipper) class(pos []cursor, delta int) int {
	zone := func(i int) *zonemap.Zone {
		if i < 0 || i >= len(sk.zones) || sk.zones[i] == nil {
			return nil
		}
		return &sk.zones[i][pos[i].chunk][(pos[i].off+delta)/zoneRows]
	}
	all := true
	for _, p := range sk.preds {
		if !zonemap.CanMatch(p, zone) {
			return zoneNone
		}
		all = all && zonemap.AllMatch(p, zone)
	}
	if all {
		return zoneAll
	}
	return zoneSome
}

// match classifies the block of n rows at pos, counting it (a block no row
// of which can match is a skipped one).
func (sk *skipper) match(pos []cursor, n int) int {
	sk.checked++
	c := sk.class(pos, 0)
	if c == zoneNone {
		sk.skipped++
		sk.skippedRows += int64(n)
	}
	return c
}

// done adds the counts to the cache's stats.
func (sk *skipper) done() {
	if sk == nil || sk.added {
		return
	}
	sk.added = true
	sk.c.zoneChecked.Add(sk.checked)
	sk.c.zoneSkipped.Add(sk.skipped)
}
