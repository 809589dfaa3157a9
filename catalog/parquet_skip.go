package catalog

import "github.com/apache/arrow-go/v18/parquet/metadata"

// skipRowGroups leaves out of rgs (nil: every row group) the leading row
// groups that lie wholly within opts.SkipRows rows (ScanOptions.SkipRows:
// an offset over an unfiltered scan), counting their rows in
// opts.Skipped. The footer's row counts say where each group starts, so
// an offset of millions of rows costs no decoding. Nothing is skipped
// when the scan has filters (the offset counts rows after them).
func skipRowGroups(md *metadata.FileMetaData, rgs []int, opts ScanOptions) []int {
	if opts.SkipRows <= 0 || opts.Skipped == nil || len(opts.ZoneFilters) > 0 || len(opts.Filters) > 0 {
		return rgs
	}
	if rgs == nil {
		rgs = identity(md.NumRowGroups())
	}
	var skipped int64
	i := 0
	for ; i < len(rgs); i++ {
		n := md.RowGroup(rgs[i]).NumRows()
		if skipped+n > opts.SkipRows {
			break
		}
		skipped += n
	}
	opts.Skipped.Add(skipped)
	return rgs[i:]
}
