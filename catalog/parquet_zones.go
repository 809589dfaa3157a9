package catalog

import (
	"slices"

	"math"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/metadata"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/quarrydb/quarry/internal/zonemap"
	"github.com/quarrydb/quarry/planner"
)

// Row-group pruning: a Parquet footer keeps per row group and column the
// minimum, maximum and null count. A scan with zone filters
// (ScanOptions.ZoneFilters) reads only the row groups in which some row
// may satisfy all of them, deciding with package zonemap exactly as the
// column cache decides for its batches. Only flat columns whose stored
// type is exposed unchanged and whose statistics the writer is known to
// compute correctly (pqarrow's StatsSet) are used: signed integers, dates,
// timestamps (int64), floats (no NaN bound) and strings. Anything else
// is "unknown" and never prunes.

var _ planner.ZoneFilterer = (*parquetSource)(nil)

// UsesZoneFilter implements planner.ZoneFilterer: what zonemap can decide.
func (s *parquetSource) UsesZoneFilter(p planner.Predicate, in *arrow.Schema) bool {
	return zonemap.Usable(p, in)
}

// keptRowGroups returns the row groups a scan of the columns at proj
// (indices into the schema, in output order) needs under preds (their
// Index refers to proj's order); nil means all of them.
func (s *parquetSource) keptRowGroups(md *metadata.FileMetaData, fr *pqarrow.FileReader, proj []int, preds []planner.Predicate) []int {
	if len(preds) == 0 {
		return nil
	}
	kept := []int{}
	for rg := range md.NumRowGroups() {
		zones := make([]*zonemap.Zone, len(proj))
		for i, j := range proj {
			zones[i] = s.rowGroupZone(md, fr, rg, j)
		}
		zone := func(i int) *zonemap.Zone {
			if i < 0 || i >= len(zones) {
				return nil
			}
			return zones[i]
		}
		match := true
		for _, p := range preds {
			if !zonemap.CanMatch(p, zone) {
				match = false
				break
			}
		}
		if match {
			kept = append(kept, rg)
		}
	}
	return kept
}

// rowGroupZone is the zone of field j in row group rg from the footer's
// statistics, or nil when they do not decide anything.
func (s *parquetSource) rowGroupZone(md *metadata.FileMetaData, fr *pqarrow.FileReader, rg, j int) (z *zonemap.Zone) {
	defer func() {
		if recover() != nil { // statistics that do not decode decide nothing
			z = nil
		}
	}()
	st := s.stored.Field(j).Type
	if j >= len(fr.Manifest.Fields) || !fr.Manifest.Fields[j].IsLeaf() || !arrow.TypeEqual(st, s.schema.Field(j).Type) {
		return nil
	}
	rgm := md.RowGroup(rg)
	cc, err := rgm.ColumnChunk(fr.Manifest.Fields[j].ColIndex)
	if err != nil {
		return nil
	}
	stats, err := cc.Statistics()
	if err != nil || stats == nil || !stats.HasNullCount() {
		return nil
	}
	rows, nulls := rgm.NumRows(), stats.NullCount()
	mem := memory.DefaultAllocator
	var arr arrow.Array
	switch {
	case !stats.HasMinMax():
		if nulls != rows {
			return nil
		}
		b := array.NewInt64Builder(mem) // every row null: no values
		b.AppendNull()
		arr = b.NewArray()
	default:
		arr = statsBounds(mem, stats, st.ID())
	}
	if arr == nil {
		return nil
	}
	defer arr.Release()
	zz := zonemap.Of(arr)
	zz.Rows, zz.Nulls = rows, nulls
	return &zz
}

// statsBounds is a two-value array [min, max] of the statistics, for a
// column of Arrow type id; nil when they cannot bound it.
func statsBounds(mem memory.Allocator, stats metadata.TypedStatistics, id arrow.Type) arrow.Array {
	ints := func(lo, hi int64) arrow.Array {
		b := array.NewInt64Builder(mem)
		defer b.Release()
		b.AppendValues([]int64{lo, hi}, nil)
		return b.NewArray()
	}
	switch s := stats.(type) {
	case *metadata.Int32Statistics:
		switch id {
		case arrow.INT8, arrow.INT16, arrow.INT32, arrow.DATE32:
			return ints(int64(s.Min()), int64(s.Max()))
		}
	case *metadata.Int64Statistics:
		switch id {
		case arrow.INT64, arrow.TIMESTAMP:
			return ints(s.Min(), s.Max())
		}
	case *metadata.Float32Statistics:
		if id == arrow.FLOAT32 {
			return floatBounds(mem, float64(s.Min()), float64(s.Max()))
		}
	case *metadata.Float64Statistics:
		if id == arrow.FLOAT64 {
			return floatBounds(mem, s.Min(), s.Max())
		}
	case *metadata.ByteArrayStatistics:
		if id == arrow.STRING {
			b := array.NewStringBuilder(mem)
			defer b.Release()
			b.AppendValues([]string{string(s.Min()), string(s.Max())}, nil)
			return b.NewArray()
		}
	}
	return nil
}

func floatBounds(mem memory.Allocator, lo, hi float64) arrow.Array {
	if math.IsNaN(lo) || math.IsNaN(hi) {
		return nil
	}
	b := array.NewFloat64Builder(mem)
	defer b.Release()
	b.AppendValues([]float64{lo, hi}, nil)
	return b.NewArray()
}

// prunedStats counts the row groups left out of kept (nil: none) and
// their rows.
func prunedStats(md *metadata.FileMetaData, kept []int) *ScanStats {
	st := &ScanStats{}
	if kept == nil {
		return st
	}
	for rg := range md.NumRowGroups() {
		if !slices.Contains(kept, rg) {
			st.ZonesSkipped++
			st.RowsSkipped += md.RowGroup(rg).NumRows()
		}
	}
	return st
}
