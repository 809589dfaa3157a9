package colcache

import (
	"unicode/utf8"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/quarrydb/quarry/internal/zonemap"
	"github.com/quarrydb/quarry/planner"
)

// ColumnStats implements planner.ColumnStatser: what the cache already
// knows about column name of the unchanged file, without reading it. A
// dictionary-encoded column has at most as many distinct values as its
// chunks' dictionaries hold together (a shared dictionary counted once)
// and none longer than the longest of them; a
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
	dictStats(&st, col.chunks)
	if col.zoned.Load() {
		st.Ranged, st.Min, st.Max = zoneRange(col.zones)
	}
	return st, st.Distinct > 0 || st.Ranged
}

// dictStatsMax bounds the dictionary entries ColumnStats reads one by
// one (to count the distinct values exactly and measure the longest); past
// it, the dictionaries' lengths are summed.
const dictStatsMax = 1 << 16

// dictStats fills st from the dictionaries of chunks when every chunk is
// dictionary-encoded (each dictionary counted once): the distinct values
// and, for at most dictStatsMax entries of strings, the exact count and
// the longest value in characters.
func dictStats(st *planner.ColumnStats, chunks []arrow.Array) {
	var dicts []arrow.Array
	seen := map[arrow.Array]bool{}
	total := int64(0)
	for _, a := range chunks {
		d, ok := a.(*array.Dictionary)
		if !ok {
			return
		}
		if dict := d.Dictionary(); !seen[dict] {
			seen[dict] = true
			dicts = append(dicts, dict)
			total += int64(dict.Len())
		}
	}
	st.Distinct = total
	if total > dictStatsMax || total == 0 {
		return
	}
	values := make(map[string]bool, total)
	longest := int64(0)
	for _, dict := range dicts {
		s, ok := dict.(array.StringLike)
		if !ok {
			return
		}
		for i := range s.Len() {
			if s.IsNull(i) {
				continue
			}
			v := s.Value(i)
			values[v] = true
			longest = max(longest, int64(utf8.RuneCountInString(v)))
		}
	}
	st.Distinct, st.MaxChars = max(int64(len(values)), 1), longest
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
