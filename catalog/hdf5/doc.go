// Package hdf5 is Quarry's HDF5 format: it implements catalog.Format for
// .h5, .hdf5, .he5 and .nc (NetCDF-4) files and gives the MCP layer object
// browsing (Browse), NumPy-style slicing (ReadSlice) and h5:// URIs
// (ParseURI, FormatURI). It is built on the cgo shim internal/h5.
//
// # Discovery
//
// Match is by extension only (case-insensitive): an HDF5 file named
// data.bin is simply not a candidate, and a .nc file that is NetCDF-3
// classic (not HDF5) fails Open with unsupported_format. Open checks the
// signature (H5Fis_hdf5) and opens the file read-only through a small LRU
// cache; invalid, truncated or unreadable files make Open return an error,
// which the catalog reports as a diagnostic.
//
// Open walks the file's groups through hard links only (soft and external
// links are browsable but never catalogued, so nothing is listed twice and
// nothing outside the file is pulled in; an object reachable through two
// hard links is listed once). Each table becomes a catalog.Dataset of kind
// KindHDF5 with ID "<BaseID>/<internal path without leading slash>" (the
// root group's table has ID BaseID):
//
//   - a 1-D compound dataset is a table with one column per member; nested
//     compounds are flattened as "a.b", array members become fixed-size
//     lists;
//   - a group's direct 1-D non-compound datasets form one table with those
//     datasets as columns (pandas/PyTables column layout) when they all
//     have one length; when lengths differ, the largest set of equal length
//     forms the table if it has at least two members and is strictly the
//     largest (else no group table);
//   - every other 1-D dataset is a one-column table named after itself;
//   - a 2-D integer or float dataset is a table with one column per column
//     index, named from a "columns" or "column_names" string-array
//     attribute of the right length, else c0..cN (at most 10,000 columns;
//     zero-column arrays are skipped);
//   - scalar, null-dataspace and >=3-D datasets are not tables (they are
//     browsable and sliceable). NetCDF-4 dimension placeholders (a NAME
//     attribute "This is a netCDF dimension but not a netCDF variable")
//     are skipped.
//
// Attributes of the table's group or dataset become Dataset.Attributes
// (JSON-safe: NaN/Inf as strings, enums as names, opaque bytes as
// base64; attributes over the caps of internal/h5 cut to their first
// elements or characters inside a {"truncated": true, ...} object; NetCDF
// bookkeeping attributes with object references are dropped) and Description comes from the first string attribute named
// description, long_name or title. Column datasets' units and description
// attributes are copied into Arrow field metadata ("units",
// "description"). RowCount is exact, from the dataspace.
//
// # Types
//
// HDF5 -> Arrow: integers of every width, signed or not, map to the Arrow
// integer of the same width; float16/float32 -> Float32, float64 (and
// wider) -> Float64; big-endian data is converted to native order by the
// library during the read. h5py booleans (an integer enum with exactly
// FALSE=0 and TRUE=1) -> Boolean. Other integer enums -> String holding the
// member name (plain strings rather than dictionary arrays, so every
// downstream operator handles them; values outside the enum read as null).
// Fixed-length and variable-length strings, ASCII or UTF-8 -> String
// (fixed strings trimmed per their padding: NULLTERM at the first NUL,
// NULLPAD of trailing NULs, SPACEPAD of trailing spaces; a NULL
// variable-length string reads as ""). Array types of numbers ->
// FixedSizeList. Anything else (opaque, references, bitfields, time, vlen
// sequences, arrays of non-numbers) becomes a column of type arrow.Null
// with field metadata quarry.unsupported=<hdf5 type>; the planner rejects
// queries that use it and reading it yields nulls.
//
// # Reading
//
// Source.Scan reads only the projected columns, in batches of
// ScanOptions.BatchSize rows (default 64Ki) rounded to a multiple of the
// dataset's chunk rows when the batch is at least one chunk (so every read
// covers whole chunks). Each batch is one hyperslab read per column with a
// native memory type straight into freshly allocated Arrow buffers
// (compound tables read every projected member in one read per batch into
// a packed record buffer, split into columns by typed copies on every core;
// variable-length string members are read on their own); 2-D tables read one row block per batch for all projected
// columns (bounded to 32 MiB) and split it into columns. Datasets of
// fixed-size types (numbers, fixed strings, enums, arrays, compounds of
// those) in native layout compressed only with deflate, shuffle and
// fletcher32 (the common h5py/PyTables pipelines) are read through
// h5.ChunkReader (see
// internal/h5): raw chunks come out of the library one call each and are
// decoded and copied on every core, outside the library's lock; anything
// else, and any surprise on that path, goes through H5Dread. ReadSlice uses
// the same reader. Memory is bounded by the batch, not the file; the context is checked before every batch;
// every buffer comes from ScanOptions.Alloc. A dataset whose filter the
// library lacks (H5Zfilter_avail false, e.g. LZO 305 or Blosc 32001) fails
// with unsupported_filter before any read, naming the filter; a dataset
// whose raw data lives in external flat files (H5Pset_external) or that is
// a virtual dataset (VDS) fails with unsupported_format, since either would
// make the server read files it was not pointed at. Scan
// re-checks the live file against the catalogued schema and fails with
// dataset_not_found ("rescan") if it changed.
//
// # Browsing, slicing, links
//
// Browse describes a group (attributes, members), a dataset (shape,
// maxshape, dtype and structured dtype_detail, sizes, layout, chunks,
// filters, fill value) or a link (target, dangling; not followed).
// ReadSlice parses a NumPy slice (h5.ParseSlice) and reads it with one
// hyperslab read; Slice renders nested JSON or a flat coordinates+value
// table. Soft links on a path are followed within the file; external links
// are followed only to files inside the root given by WithRoot (without a
// root: inside the directory of the file addressed), relative link file
// names resolving against the linking file's directory (HDF5_EXT_PREFIX is
// not consulted). A link to a missing object or file is dangling_link; a
// target outside the root is path_outside_root.
//
// Table scans ignore ScanOptions.ZoneFilters: an HDF5 file keeps no
// per-chunk statistics (no min/max), so whether a chunk can match is known
// only after reading and decoding it, which is the cost skipping would
// save (the engine's filter then costs about what a min/max pass would).
// Tables read through the column cache skip batches with the cache's zone
// maps once cached (internal/colcache).
//
// # Concurrency and robustness
//
// A Format is safe for concurrent use; see internal/h5 for how libhdf5 is
// called safely. libhdf5 is not hardened against deliberately malformed
// files; corrupt and truncated files produce errors, but a crafted file can
// still crash or stall the library.
package hdf5
