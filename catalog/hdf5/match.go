package hdf5

import (
	"path/filepath"
	"strings"

	"github.com/quarrydb/quarry/catalog"
)

// Kind returns catalog.KindHDF5.
func (f *Format) Kind() catalog.Kind { return catalog.KindHDF5 }

// Extensions are the file extensions Match accepts (lower case).
var Extensions = []string{".h5", ".hdf5", ".he5", ".nc"}

// Match reports whether name has an HDF5 extension (.h5, .hdf5, .he5, or
// .nc for NetCDF-4), case-insensitively. Matching is by name only: an HDF5
// file with another extension is not a candidate.
func (f *Format) Match(name string) bool {
	ext := strings.ToLower(filepath.Ext(name))
	for _, e := range Extensions {
		if ext == e {
			return true
		}
	}
	return false
}
