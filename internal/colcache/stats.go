package colcache

import (
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/quarrydb/quarry/internal/zonemap"
	"github.com/quarrydb/quarry/planner"
)

// ColumnStats implements planner.ColumnStatser: what the cache already
// knows about column name of the unchanged file, without reading it. A
// dictionary-encoded column has at most as many distinct values as its
// chunks' dictionaries hold together (a shared dictionary counted once); a
// column of integers, dates or timestamps whose zones were computed (by an
// earlier zone-filtered scan; never here) lies within its zones' minimum
// and maximum. ok is false when the column is not cached or nothing is
// known.
func (s *Source) ColumnStats(name string) (st planner.ColumnStats, ok bool) {
	if !s.fresh() {
		return st, false
	}
	s.c.mu.Lock()
	defer s.c.mu.Unlock() // the chunks stay alive while the lock is held
	f := s.c.files[s.key]
	if f == nil || f.cols[name] == nil {
		return st, false
	}
	col := f.cols[name]
	st.Distinct = dictValues(col.chunks)
	if col.zoned.Load() {
		st.Ranged, st.Min, st.Max = zoneRange(col.zones)
	}
	return st, st.Distinct > 0 || st.Ranged
}

// dictValues is the number of values in the dictionaries of chunks when
// every chunk is dictionary-encoded (each dictionary counted once), else 0.
func dictValues(chunks []arrow.Array) int64 {
	seen := map[arrow.Array]bool{}
	n := int64(0)
	for _, a := range chunks {
		d, ok := a.(*array.Dictionary)
		if !ok {
			return 0
		}
		if dict := d.Dictionary(); !seen[dict] {
			seen[dict] = true
			n += int64(dict.Len())
		}
	}
	return n
}

// zoneRange is the least and greatest value over zones of an integer,
// date or timestamp column; ok is false for other types or when no zone
// holds a value.
func zoneRange(zones [][]zonemap.Zone) (ok bool, lo, hi int64) {
	for _, chunk := range zones {
		for _, z := range chunk {
			zlo, zhi, values, isInt := z.IntRange()
			if !isInt {
				return false, 0, 0
			}
			if !values {
				continue
			}
			if !ok {
				ok, lo, hi = true, zlo, zhi
				continue
			}
			lo, hi = min(lo, zlo), max(hi, zhi)
		}
	}
	return ok, lo, hi
}
