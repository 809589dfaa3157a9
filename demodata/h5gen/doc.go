// Command h5gen writes Quarry's HDF5 demo files:
//
//	demodata/files/physics/experiment.h5
//	demodata/files/physics/calibration.h5
//
// experiment.h5 holds a group-of-columns table (/runs, with a
// variable-length UTF-8 operator column in Armenian), a 1-D compound table
// (/events), a chunked gzip 2-D float64 array with attributes
// (/detector/image), a 3-D array (/detector/cube), a soft link
// (/detector/latest -> /detector/image) and an external link (/calibration
// -> calibration.h5:/gains). calibration.h5 is a small root-level table.
//
// The output is deterministic: fixed-seed PCG generators, no timestamps in
// object headers, nothing read from the clock or the environment.
// Regenerate from the repository root with
//
//	go run ./demodata/h5gen
//
// (or pass -out DIR).
package main
