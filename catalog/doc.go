// Package catalog owns discovery: it scans a data root (read-only, confined
// to the root; symlinks and ".." that escape it are rejected) for data files,
// turns each into Datasets with Arrow schemas, exact row counts, sizes and
// modification times, and reports files it could not read as Diagnostics.
// Formats (CSV, HDF5) plug in through the Format interface; each dataset
// carries a Source that streams its rows as Arrow record batches.
package catalog
