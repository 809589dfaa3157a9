//go:build cgo && !nohdf5

package hdf5

// Available reports whether this binary reads HDF5 files (true: built with
// cgo and libhdf5, without -tags nohdf5).
const Available = true
