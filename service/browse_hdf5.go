package service

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/quarrydb/quarry/catalog"
	"github.com/quarrydb/quarry/catalog/hdf5"
	"github.com/quarrydb/quarry/internal/obs"
	"github.com/quarrydb/quarry/internal/qerr"
	"github.com/quarrydb/quarry/materialize"
)

// BrowseH5Request is the input of browse_hdf5.
type BrowseH5Request struct {
	File            string `json:"file,omitempty" jsonschema_description:"File (or h5:// URI); omit to list files."`
	Path            string `json:"path,omitempty" jsonschema_description:"Group or dataset path (default /)."`
	IncludeInternal bool   `json:"include_internal,omitempty" jsonschema_description:"Show format bookkeeping too."`
}

// H5FileEntry is one HDF5 file in browse_hdf5's file listing.
type H5FileEntry struct {
	Path   string `json:"path" jsonschema_description:"Pass it as file."`
	Tables int    `json:"tables" jsonschema_description:"Catalog datasets (tables) the file holds; 0 for a file of arrays only."`
}

// BrowseH5Response is the output of browse_hdf5: the file listing, or one
// object (the same JSON as its h5:// resource) with its URI.
type BrowseH5Response struct {
	Files  []H5FileEntry   `json:"files,omitempty" jsonschema_description:"The HDF5 files under the data root (when no file was given)."`
	URI    string          `json:"uri,omitempty" jsonschema_description:"h5:// URI of the object: pass a dataset's to read_dataset_slice."`
	Object json.RawMessage `json:"object,omitempty" jsonschema_description:"The object: kind; attributes; a group's members (name, kind, shape, dtype, link target); a dataset's shape, maxshape, dtype, chunks, filters and fill value; a link's target."`
	// HiddenInternal counts members and attributes left out as format bookkeeping.
	HiddenInternal int    `json:"hidden_internal,omitempty" jsonschema_description:"Members and attributes hidden as format bookkeeping (include_internal shows them)."`
	Hint           string `json:"hint,omitempty"`
}

// browseH5 resolves an h5:// URI and describes its object.
func (s *Service) browseH5(ctx context.Context, uri string) (*hdf5.Object, error) {
	abs, _, internal, err := s.resolveH5(uri)
	if err != nil {
		return nil, err
	}
	return s.cfg.HDF5.Browse(ctx, abs, internal)
}

// BrowseHDF5 is browse_hdf5: without a file, the HDF5 files under the root
// (those of arrays only included); with one, the object at path, format
// bookkeeping hidden unless include_internal.
func (s *Service) BrowseHDF5(ctx context.Context, req BrowseH5Request) (*BrowseH5Response, error) {
	if s.cfg.HDF5 == nil {
		return nil, qerr.Unsupported(qerr.CodeUnsupportedFormat, "HDF5 support is not enabled on this server")
	}
	if strings.TrimSpace(req.File) == "" {
		if req.Path != "" {
			return nil, qerr.Invalid(qerr.CodeInvalidArgument, "path %q given without a file", clipURI(req.Path)).
				WithHint("pass file too: call browse_hdf5 without arguments to list the HDF5 files")
		}
		s.WaitFirstScan(ctx)
		files := s.H5Files()
		out := &BrowseH5Response{Files: make([]H5FileEntry, len(files))}
		for i, f := range files {
			out.Files[i] = H5FileEntry{Path: f.Path, Tables: f.Datasets}
		}
		out.Hint = "browse a file with {file}; its tables are also catalog datasets (get_catalog kinds=[hdf5])"
		if len(files) == 0 {
			out.Hint = "no HDF5 files (.h5, .hdf5, .he5, .nc) under the data root"
		}
		return out, nil
	}
	uri := req.File
	if !strings.HasPrefix(strings.ToLower(uri), hdf5.URIScheme+"://") {
		uri = hdf5.FormatURI(strings.TrimPrefix(uri, "/"), "/")
	}
	if req.Path != "" {
		if _, err := hdf5.CleanInternalPath(req.Path); err != nil {
			return nil, qerr.Invalid(qerr.CodeInvalidArgument, "path: %v", err).WithHint("pass an HDF5 path such as /group/dataset")
		}
		file, _, err := hdf5.ParseURI(uri)
		if err != nil {
			return nil, err
		}
		uri = hdf5.FormatURI(file, req.Path)
	}
	obj, err := s.browseH5(ctx, uri)
	if err != nil {
		return nil, err
	}
	out := &BrowseH5Response{URI: uri}
	if !req.IncludeInternal {
		out.HiddenInternal = hideInternal(obj)
	}
	if out.Object, err = json.Marshal(obj); err != nil {
		return nil, qerr.Internal(err, "encoding %s", uri)
	}
	switch {
	case obj.Kind == hdf5.KindDataset:
		out.Hint = "read values with read_dataset_slice {uri, slice_str}"
	case obj.Kind == hdf5.KindGroup:
		out.Hint = fmt.Sprintf("browse a member with path=%s", strings.TrimSuffix(obj.Path, "/")+"/<name>")
	case obj.LinkInfo != nil:
		out.Hint = "browse the link's target path to follow it"
	}
	if out.HiddenInternal > 0 {
		out.Hint += fmt.Sprintf("; %d internal entries hidden (include_internal shows them)", out.HiddenInternal)
	}
	obs.Logger(ctx).Info("browse_hdf5", "uri", uri, "kind", obj.Kind, "hidden", out.HiddenInternal)
	return out, nil
}

// hideInternal drops the internal members and attributes of obj and
// returns how many it dropped.
func hideInternal(obj *hdf5.Object) int {
	n := 0
	for k := range obj.Attributes {
		if hdf5.IsInternalAttr(k) {
			delete(obj.Attributes, k)
			n++
		}
	}
	if obj.GroupInfo != nil {
		kept := obj.Members[:0]
		for _, m := range obj.Members {
			if m.Internal {
				n++
				continue
			}
			kept = append(kept, m)
		}
		obj.Members = kept
	}
	return n
}

// h5Files lists every HDF5 file under the root that opened, with or
// without tables.
func (s *Service) h5Files() []catalog.KindFile { return s.cfg.Catalog.Files(catalog.KindHDF5) }

// fileFormat reports an explicit file output format (csv, parquet, arrow),
// which always yields a file.
func fileFormat(f string) bool {
	switch strings.ToLower(strings.TrimSpace(f)) {
	case materialize.FormatCSV, materialize.FormatParquet, materialize.FormatArrow:
		return true
	}
	return false
}
