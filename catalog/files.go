package catalog

import (
	"errors"
	"sort"
)

// ErrNoTables marks (with errors.Is) the error of a file that was read
// without trouble but holds no tables: an HDF5 file of N-d arrays only, say.
// Such a file is a diagnostic of the catalog, yet still listed by Files.
var ErrNoTables = errors.New("the file holds no tables")

// KindFile is one file of a kind under the root, for listings of files
// rather than datasets (HDF5 files browsed by structure).
type KindFile struct {
	// Path is relative to the root, slash separated.
	Path string
	// AbsPath is the resolved absolute path.
	AbsPath string
	// Datasets is how many catalog datasets the file holds (0 for a file of
	// arrays only).
	Datasets int
}

// Files lists the files of kind that opened, with or without tables (files
// that failed to open are left out), sorted by path.
func (c *Catalog) Files(kind Kind) []KindFile {
	snap := c.snapshot()
	if snap == nil {
		return nil
	}
	var out []KindFile
	for rel, e := range snap.files {
		if e.format == nil || e.format.Kind() != kind {
			continue
		}
		if e.err != nil && !errors.Is(e.err, ErrNoTables) {
			continue
		}
		out = append(out, KindFile{Path: rel, AbsPath: e.info.AbsPath, Datasets: len(e.datasets)})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out
}
