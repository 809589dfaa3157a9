package catalog

// Kinds lists every dataset kind the catalog's formats produce, in the
// order get_catalog documents them.
var Kinds = []Kind{KindCSV, KindHDF5, KindParquet, KindJSON, KindArrow, KindXLSX, KindFlightSQL}

// KnownKind reports whether k names one of Kinds.
func KnownKind(k string) bool {
	for _, x := range Kinds {
		if string(x) == k {
			return true
		}
	}
	return false
}

// KindList is Kinds joined by ", " (for hints and docs).
func KindList() string {
	s := ""
	for i, k := range Kinds {
		if i > 0 {
			s += ", "
		}
		s += string(k)
	}
	return s
}
