package catalog

import (
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// ColumnKeeper keeps columns a Format parsed while opening a file (a column
// cache, typically), so the first queries need not read the file again.
// The CSV format (catalog/csv) and the JSON format (newline-delimited
// files) offer theirs to one. Its methods are called from the catalog's
// scan goroutines.
type ColumnKeeper interface {
	// Reserve is asked before a file is opened; est is a guess of the
	// bytes all its columns take in memory. It returns the allocator for
	// the columns, or ok=false to only type-check the file.
	Reserve(f FileInfo, est int64) (alloc memory.Allocator, ok bool)
	// Keep receives the opened dataset and its columns: cols[i] holds the
	// arrays of schema field i in row order (RowCount rows together), or
	// is nil when that column could not be kept. Keep owns one reference
	// to every array. CSV string columns may be dictionary-encoded
	// (dictionary<int16, utf8>, one dictionary per array, at most 32,768
	// values); every other array has its field's type.
	Keep(ds *Dataset, cols [][]arrow.Array)
}
