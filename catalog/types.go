package catalog

import (
	"context"
	"os"
	"path/filepath"
	"sync/atomic"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/quarrydb/quarry/catalog/infer"
	"github.com/quarrydb/quarry/internal/safeopen"
	"github.com/quarrydb/quarry/planner"
)

// Kind names the storage format of a dataset.
type Kind string

// Dataset kinds.
const (
	KindCSV  Kind = "csv"
	KindHDF5 Kind = "hdf5"
)

// Dataset is one queryable table in the catalog.
type Dataset struct {
	// ID is the stable address: the path relative to the root without
	// extension, slash separated (plus "/<internal path>" for HDF5 tables).
	ID string
	// Kind is the file format.
	Kind Kind
	// Path is the data file's path relative to the root, slash separated.
	Path string
	// AbsPath is the resolved absolute path of the data file (inside the root).
	AbsPath string
	// Schema is the Arrow schema of the table.
	Schema *arrow.Schema
	// RowCount is the number of rows; RowCountExact says whether it was counted exactly.
	RowCount      int64
	RowCountExact bool
	// SizeBytes and ModTime are the data file's size and modification time.
	SizeBytes int64
	ModTime   time.Time
	// FileID is the data file's identity (device and inode) when it was
	// read; zero when unknown. A file at AbsPath with another identity is
	// another file (replaced since), whatever its size and time.
	FileID safeopen.Identity
	// Description is free text (from HDF5 attributes or sidecars); may be empty.
	Description string
	// Attributes are format-level metadata (e.g. HDF5 attributes), JSON-safe values; may be nil.
	Attributes map[string]any
	// ColumnNotes are what type inference tells about columns beyond their
	// types (date layouts, why a numeric-looking column is text), by
	// column name; nil when there is nothing to tell.
	ColumnNotes map[string]ColumnNote
	// Card is the schema card merged from sidecar files (cards.go); nil
	// when none applies.
	Card *Card
	// Source reads the rows. Never nil for a dataset in the catalog.
	Source Source
}

// ScanOptions tells a Source what to read.
type ScanOptions struct {
	// Columns to read, in this order; nil or empty means all columns in schema order.
	Columns []string
	// BatchSize is the target rows per record batch; 0 means the source's default (64Ki rows).
	BatchSize int
	// Alloc allocates the batches; nil means memory.DefaultAllocator.
	Alloc memory.Allocator
	// ZoneFilters are predicates (all of which a row must satisfy; column
	// indices into Columns) the source may use to skip batches in which no
	// row can satisfy them (planner.Scan.ZoneFilters). A source may ignore
	// them and may return rows that fail them (the caller filters again);
	// it must never drop a row that satisfies them.
	ZoneFilters []planner.Predicate
	// Filters are predicates (all of which a row must satisfy; column
	// indices into Columns, names in Col) pushed into the scan
	// (planner.Scan.Filters): only those the source reported it handles
	// (planner.FilterPushdowner). The source drops the rows that fail them
	// while reading. A source (or a wrapper: a sample, a cache hit) may
	// ignore them: the caller applies them again to what it returns.
	Filters []planner.Predicate
	// SkipRows is how many leading rows the caller drops (the offset of a
	// limit directly over an unfiltered scan). A source that can leave
	// rows out unread (Parquet row groups, by the footer's row counts)
	// may skip up to that many whole leading rows and then adds their
	// number to Skipped before Scan returns. A wrapper that does not
	// pass SkipRows on, or reads what it passes to the caller from
	// elsewhere (a cache hit), leaves Skipped alone; one that must see
	// every row (a sample) clears SkipRows; the column cache does not
	// fill itself from such a scan.
	SkipRows int64
	// Skipped receives the rows skipped for SkipRows; nil when SkipRows is 0.
	Skipped *atomic.Int64
	// Pushed, when set, is the plan subtree over this dataset the source
	// runs itself (planner.Scan.Pushed; only for a planner.SubtreePusher
	// that accepted it): the scan returns its rows (its schema), and
	// Columns and Filters are empty.
	Pushed planner.Node
	// Limit, when > 0, is the most rows the caller reads from the scan
	// (SkipRows included): the offset plus count of a limit directly
	// over it, through projections only, so counted after Filters. A
	// source that applies every one of Filters itself (a remote engine)
	// may stop after that many rows; any other source ignores it.
	Limit int64
}

// ScanStats are what a scan's reader read and left out, for EXPLAIN
// ANALYZE. A reader that counts them implements ScanStatser.
type ScanStats struct {
	// RowsRead counts the rows the reader read: those it returned plus
	// those filters pushed into it (ScanOptions.Filters) dropped.
	RowsRead int64
	// ZonesSkipped counts the zones (cached blocks, Parquet row groups)
	// the reader skipped unread with zone filters; RowsSkipped their rows.
	ZonesSkipped, RowsSkipped int64
}

// ScanStatser is implemented by the readers of sources that count
// ScanStats
// (and by wrappers of readers, which report ok false when the reader they
// wrap does not count).
type ScanStatser interface {
	ScanStats() (st ScanStats, ok bool)
}

// StatsOf returns rr's ScanStats, if it counts them.
func StatsOf(rr array.RecordReader) (ScanStats, bool) {
	if s, ok := rr.(ScanStatser); ok {
		return s.ScanStats()
	}
	return ScanStats{}, false
}

// Source reads one dataset's rows as Arrow record batches in file order.
//
// Scan returns a reader whose schema is the dataset schema projected to
// opts.Columns. The caller must Release the reader. The reader stops early
// with ctx.Err() (reported by Err()) when ctx is cancelled.
type Source interface {
	Scan(ctx context.Context, opts ScanOptions) (array.RecordReader, error)
}

// ScanDescriber is implemented by sources whose reads are worth showing
// in explain output: DescribeScan says what a scan with opts does (a
// remote's generated statement); "" says nothing. It must not read.
type ScanDescriber interface {
	DescribeScan(opts ScanOptions) string
}

// Diagnostic reports a file the scan skipped, or a problem it met.
type Diagnostic struct {
	// Path relative to the root, slash separated.
	Path string `json:"path"`
	// Level is "warning" or "error".
	Level string `json:"level"`
	// Reason says what went wrong, in one sentence.
	Reason string `json:"reason"`
}

// Format discovers datasets in one kind of file. The catalog asks every
// registered Format, in order, whether it claims a file; the first that does
// opens it. A Format is safe for concurrent use.
type Format interface {
	// Kind names the format.
	Kind() Kind
	// Match reports whether the file (name only, lower-cased extension rules) belongs to this format.
	Match(name string) bool
	// Open inspects the file and returns its datasets. f describes the file;
	// IDs are assigned by the Format from f.BaseID (relative path without extension).
	// An error means the file is skipped and reported in diagnostics.
	Open(ctx context.Context, f FileInfo) ([]*Dataset, error)
}

// FileInfo describes one candidate file found by the scan.
type FileInfo struct {
	// AbsPath is the resolved absolute path (inside the root).
	AbsPath string
	// RelPath is relative to the root, slash separated.
	RelPath string
	// BaseID is RelPath without its extension (".csv", ".csv.gz", ".h5", ...).
	BaseID string
	// Size and ModTime of the file.
	Size    int64
	ModTime time.Time
	// Root is the data root the file was found under (absolute, symlinks
	// resolved). Open confines reads to it; "" means the directory of
	// AbsPath.
	Root string
	// FileID is the file's identity (device and inode) as the scan saw it;
	// zero means unknown (not checked).
	FileID safeopen.Identity
	// Read is what the file's schema cards say about reading it (read
	// options, type overrides); nil when nothing. Set by the catalog.
	Read *ReadSpec
}

// Open opens the file for reading, confined to Root: AbsPath is opened
// below Root without following any symbolic link (a file or directory
// replaced by a symlink since the scan is refused, never followed) and must
// be a regular file with identity FileID (when known). Formats open data
// files only through it. A refused file is a *qerr.Error: code
// path_outside_root (category ErrPermission) for a symlink or escape,
// dataset_not_found (ErrNotFound) for a file replaced since the scan; a
// missing file wraps fs.ErrNotExist.
func (f FileInfo) Open() (*os.File, error) {
	fh, err := safeopen.Open(f.root(), f.AbsPath, f.FileID)
	if err != nil {
		return nil, confineErr(f.RelPath, err)
	}
	return fh, nil
}

func (f FileInfo) root() string {
	if f.Root != "" {
		return f.Root
	}
	return filepath.Dir(f.AbsPath)
}

// sameVersion reports whether a and b describe the same version of the
// same file: path, size, modification time and identity.
func sameVersion(a, b FileInfo) bool {
	return a.AbsPath == b.AbsPath && a.Size == b.Size && a.ModTime.Equal(b.ModTime) && a.FileID == b.FileID
}

// ColumnNote is what type inference tells about a column beyond its type
// (declared with the inference in catalog/infer).
type ColumnNote = infer.ColumnNote
