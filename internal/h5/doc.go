// Package h5 is Quarry's small cgo shim over libhdf5 (1.10+): the parts of
// the C API that gonum.org/v1/hdf5 lacks or hides, shaped for an engine
// that reads straight into Arrow buffers.
//
// What it offers:
//
//   - files: IsHDF5, OpenFile (read-only, HDF5 file locking off so a
//     long-lived server never blocks a scientist's writer), OpenFD and
//     IsHDF5FD (the same for a file the caller opened and checked, by its
//     descriptor's name, so libhdf5 reads exactly that file) and FileCache,
//     an LRU of open file ids that notices changed or replaced files
//     (identity, mtime or size) and closes evicted files when their last
//     reader releases them;
//   - links and objects: GetLink (H5Lget_info, H5Lget_val,
//     H5Lunpack_elink_val, never following the link), GetObjInfo,
//     OpenObject, ListMembers (H5Literate). A link access property list
//     that refuses external links is used for every by-name call, so a path
//     can never silently leave the file: callers resolve external links
//     themselves and decide whether the target is allowed;
//   - datatypes: DescribeType turns a datatype into a detached Go tree
//     (class, size, order, sign, compound members with offsets, enum
//     members, array dims, vlen and fixed strings with charset and padding,
//     opaque tags, reference kinds) and MemType builds the native in-memory
//     counterpart, from which callers derive projected memory types
//     (NewCompound with a subset of members reads single columns of
//     compound datasets, HDF5 matching members by name);
//   - datasets: DatasetSpace, GetDatasetInfo (layout, chunk dims, filter
//     pipeline via H5Pget_filter2 incl. unknown ids and their availability
//     via H5Zfilter_avail, fill value state, storage size), FillValue, and
//     Read, which reads a hyperslab (start/stride/count) with a memory type
//     directly into a caller-provided buffer (an Arrow buffer) with no
//     per-element work in Go. ReadVarStrings and PackFixedStrings turn
//     variable- and fixed-length strings into Arrow offsets+data;
//   - attributes: AttributeNames (H5Aiterate2), ReadAttribute(s) decoding
//     into JSON-safe Go values;
//   - ParseSlice, a NumPy-style slice-string parser (no evaluation);
//   - no writing: files, groups, datasets, attributes and links are
//     created by the sibling package h5write, which only tests and the demo
//     data generator import (the shipped binary does not link it).
//
// Why not gonum/hdf5: its identifiers wrap hid_t in unexported fields, so
// mixing it with a shim is awkward, and it reads through reflection into Go
// slices. This package calls the C API directly; gonum/hdf5 is still used
// by tests as an independent reader to cross-check results.
//
// Concurrency: Debian's libhdf5 is built thread-safe (H5_HAVE_THREADSAFE),
// which serializes every API call behind the library's global lock. The
// package detects this at start-up (ThreadSafe) and, for a library built
// without it, takes a package mutex around every call. Error stacks and the
// automatic error printer are per OS thread in thread-safe builds and Go
// moves goroutines between threads, so every C helper first silences the
// printer for its thread (H5Eset_auto2(H5E_DEFAULT, NULL, NULL)) and
// captures the error stack (H5Ewalk2) into the returned Error within the
// same cgo call.
//
// Parallel chunk decoding: ChunkReader reads the raw chunks a selection
// touches with H5Dread_chunk (one locked library call per chunk) and undoes
// the filter pipeline itself on up to GOMAXPROCS goroutines that hold no
// HDF5 lock: fletcher32 verified, deflate inflated with libdeflate when
// libdeflate.so.0 can be loaded at run time (dlopen; not a build
// dependency) and zlib otherwise, shuffle undone. It applies to datasets
// whose pipeline is made of those three filters and whose type is made
// only of integers, floats, fixed-length strings, enums, arrays and
// compounds of those (no variable-length data, no references) and equals
// the memory type (so H5Dread would convert nothing); unallocated chunks yield the fill
// value, and a failed read, a bad checksum or stream, or a chunk that does
// not decode to its exact size falls back to H5Dread for the whole
// selection, so results and errors equal H5Dread's. Fixed-length strings
// become Arrow strings through PackFixedStringsFrom / FixedPacker (NUL or
// space padding trimmed 8 bytes at a time, large inputs split across
// cores).
//
// Robustness: libhdf5 itself is not hardened against malicious files; the
// package checks every return value and bounds what it allocates, but a
// crafted file can still crash or stall the library (documented limitation).
package h5
