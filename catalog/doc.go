// Package catalog owns discovery: it scans a data root (read-only, confined
// to the root; symlinks and ".." that escape it are rejected) for data files,
// turns each into Datasets with Arrow schemas, exact row counts, sizes and
// modification times, and reports files it could not read as Diagnostics.
// The scan is not trusted afterwards: formats open files only through
// FileInfo.Open (internal/safeopen: below the root, no symlink followed,
// identity checked on the descriptor), and Lookup re-resolves a dataset's
// path before every query, refusing one that now leads out of the root.
// Formats plug in through the Format interface (Options.Formats names
// them): JSON, Parquet, Arrow IPC and Excel live here (compressed text
// through compress.go), CSV/TSV in catalog/csv and HDF5 in catalog/hdf5;
// the text-type inference CSV, JSON and Excel share is catalog/infer; a
// file's schema cards reach its Format as FileInfo.Read (CSV read options
// and type overrides, readopts.go); each dataset carries a Source that
// streams its rows as Arrow record batches. Reading CSV, JSON and Parquet
// (and Arrow IPC, validated before arrow-go reads it: arrowipc_check.go)
// is bounded by Limits: a file beyond them is a diagnostic, a
// scan meeting one fails with a resource_exhausted error. With
// Options.Background the first scan runs after New returns (ScanStatus,
// LookupContext).
//
// A Source's batches have exactly the dataset schema's types. The one
// exception is a CSV format with a ColumnKeeper (csv.NewFormatWith): the
// columns it hands to the keeper while opening a file may have
// low-cardinality string columns dictionary-encoded (dictionary<int16,
// utf8>), so a column cache keeps them small and the engine can filter and
// group on codes. Such columns are still "string" in Dataset.Schema and
// everywhere users see types (get_schema, JSON, CSV and Parquet results
// decode them).
package catalog
