//go:build cgo && !nohdf5

package hdf5

import (
	"strings"

	"github.com/quarrydb/quarry/catalog"
	"github.com/quarrydb/quarry/internal/h5"
	"github.com/quarrydb/quarry/internal/qerr"
)

// pyTablesIndexPrefix starts the names of PyTables' index groups
// (/_i_<table>): sorted copies and bookkeeping of indexed columns, not data.
const pyTablesIndexPrefix = "_i_"

// internalName reports group members that are format bookkeeping by name
// alone (PyTables index groups). The catalog does not walk into them and
// Browse marks them internal.
func internalName(name string) bool { return strings.HasPrefix(name, pyTablesIndexPrefix) }

// netCDFDimPrefix starts the NAME attribute of a NetCDF-4 dimension that
// is not a variable: a dataset of fill values that only anchors a dimension.
const netCDFDimPrefix = "This is a netCDF dimension but not a netCDF variable"

// netCDFDimOnly reports whether the dataset did is such a placeholder,
// reading its NAME attribute only.
func netCDFDimOnly(did h5.ID) bool {
	if names, _, err := h5.AttributeNames(did, maxAttrs); err != nil || !hasString(names, "NAME") {
		return false
	}
	v, err := h5.ReadAttribute(did, "NAME")
	if err != nil {
		return false
	}
	s, _ := h5.AttrText(v)
	return strings.HasPrefix(s, netCDFDimPrefix)
}

func hasString(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// noTables is the error of a file with no tables: the catalog lists it as
// a diagnostic, browse_hdf5 and the h5:// resources still list the file.
func noTables() error {
	return qerr.Unsupported(qerr.CodeUnsupportedFormat, "the file holds no tables, only arrays: browse it with browse_hdf5 and read them with read_dataset_slice").
		Wrap(catalog.ErrNoTables)
}
