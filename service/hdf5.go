package service

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/quarrydb/quarry/catalog/hdf5"
	"github.com/quarrydb/quarry/internal/obs"
	"github.com/quarrydb/quarry/internal/qerr"
	"github.com/quarrydb/quarry/materialize"
)

// H5Reader browses HDF5 files and reads N-d slices (implemented by
// *hdf5.Format). Config.HDF5 nil disables h5:// resources and
// read_dataset_slice.
type H5Reader interface {
	Match(name string) bool
	Browse(ctx context.Context, absFile, internalPath string) (*hdf5.Object, error)
	ReadSlice(ctx context.Context, absFile, internalPath, slice string, alloc memory.Allocator) (*hdf5.Slice, error)
}

// SliceRequest is the input of read_dataset_slice.
type SliceRequest struct {
	URI          string `json:"uri" jsonschema_description:"h5://<file>?path=<dataset>."`
	SliceStr     string `json:"slice_str,omitempty" jsonschema_description:"NumPy selection: '0:10, :, 3', '...', '-1', '::10'; omit for all."`
	OutputFormat string `json:"output_format,omitempty" jsonschema:"enum=json,enum=csv,enum=parquet,enum=arrow" jsonschema_description:"csv, parquet or arrow: always a file (i0..iN, value); json or omitted: inline when small, else pages."`
	MaxRows      int64  `json:"max_rows,omitempty" jsonschema:"Lower the inline row cap."`
	MaxBytes     int64  `json:"max_bytes,omitempty" jsonschema:"Lower the inline byte cap."`
}

// SliceResponse is the output of read_dataset_slice: the selection's shape
// and dtype, and either data as nested lists (method direct) or the
// flattened slice (index columns i0..iN and value) delivered like query_data.
type SliceResponse struct {
	Shape []int64 `json:"shape" jsonschema:"Shape of the selection (integer-indexed dimensions dropped)."`
	DType string  `json:"dtype" jsonschema:"Element type, e.g. float64, int32, |S8, vlen utf-8 string."`
	*materialize.Result
}

// H5File is one HDF5 file under the root, for resource listings.
type H5File struct {
	// URI is the file's root-group resource (h5://<path>?path=/).
	URI string
	// Path is relative to the data root.
	Path string
	// Datasets is how many catalog tables the file holds.
	Datasets int
}

// H5Files lists the HDF5 files under the root, those of arrays only
// (no catalog table) included, sorted by path.
func (s *Service) H5Files() []H5File {
	files := s.h5Files()
	out := make([]H5File, 0, len(files))
	for _, f := range files {
		out = append(out, H5File{URI: hdf5.FormatURI(f.Path, "/"), Path: f.Path, Datasets: f.Datasets})
	}
	return out
}

// resolveH5 turns an h5:// URI into an absolute file path inside the root
// and an internal path.
func (s *Service) resolveH5(uri string) (abs, rel, internal string, err error) {
	if s.cfg.HDF5 == nil {
		return "", "", "", qerr.Unsupported(qerr.CodeUnsupportedFormat, "HDF5 support is not enabled on this server")
	}
	relFile, internal, err := hdf5.ParseURI(uri)
	if err != nil {
		return "", "", "", err
	}
	abs, rel, err = s.cfg.Catalog.ResolvePath(relFile)
	if err != nil {
		return "", "", "", err
	}
	if !s.cfg.HDF5.Match(strings.ToLower(abs)) {
		return "", "", "", qerr.Invalid(qerr.CodeInvalidArgument, "%q is not an HDF5 file (.h5, .hdf5, .he5, .nc)", rel).
			WithHint("h5:// URIs name HDF5 files; list them with browse_hdf5 (no file)")
	}
	return abs, rel, internal, nil
}

// BrowseH5 describes one HDF5 object (group members, dataset layout, link
// target) as JSON, for h5:// resources.
func (s *Service) BrowseH5(ctx context.Context, uri string) ([]byte, error) {
	obj, err := s.browseH5(ctx, uri)
	if err != nil {
		return nil, err
	}
	return json.Marshal(obj)
}

// ReadSlice reads a NumPy-style selection of an HDF5 dataset
// (read_dataset_slice). Within the inline caps (first dimension ≤ max_rows,
// elements ≤ max_cells, JSON ≤ max_bytes) it answers with nested lists;
// otherwise the flattened slice is delivered exactly like query_data.
func (s *Service) ReadSlice(ctx context.Context, req SliceRequest) (*SliceResponse, error) {
	abs, _, internal, err := s.resolveH5(req.URI)
	if err != nil {
		return nil, err
	}
	slice := strings.TrimSpace(req.SliceStr)
	if slice == "" {
		slice = "..."
	}
	ctx, cancel := s.withDeadline(ctx)
	defer cancel()
	sl, err := s.cfg.HDF5.ReadSlice(ctx, abs, internal, slice, s.cfg.Alloc)
	if err != nil {
		return nil, err
	}
	defer sl.Release()
	out := &SliceResponse{Shape: sl.Shape, DType: sl.DType}

	caps := s.cfg.Materializer.Caps()
	if req.MaxRows > 0 && req.MaxRows < caps.MaxRows {
		caps.MaxRows = req.MaxRows
	}
	if req.MaxBytes > 0 && req.MaxBytes < caps.MaxBytes {
		caps.MaxBytes = req.MaxBytes
	}
	elems := int64(sl.Values.Len())
	first := elems
	if len(sl.Shape) > 0 {
		first = sl.Shape[0]
	}
	if first <= caps.MaxRows && elems <= caps.MaxCells && !fileFormat(req.OutputFormat) {
		data := sl.AppendNestedJSON(nil)
		if int64(len(data)) <= caps.MaxBytes {
			out.Result = &materialize.Result{Method: "direct", Data: data, RowCount: first, TotalRows: first, Format: "json", Warnings: []string{}}
			obs.Logger(ctx).Info("read_slice", "uri", req.URI, "slice", slice, "shape", fmt.Sprint(sl.Shape), "method", "direct", "bytes", len(data))
			return out, nil
		}
	}
	rec, err := sl.Table(s.cfg.Alloc)
	if err != nil {
		return nil, err
	}
	t := materialize.NewTable(rec.Schema(), []arrow.RecordBatch{rec})
	rec.Release()
	defer t.Release()
	res, err := s.cfg.Materializer.Deliver(ctx, t, materialize.Request{
		Format: req.OutputFormat, MaxRows: req.MaxRows, MaxBytes: req.MaxBytes, Principal: obs.Principal(ctx),
	})
	if err != nil {
		return nil, err
	}
	why := "more than fits inline as nested lists"
	if fileFormat(req.OutputFormat) {
		why = "written to a " + strings.ToLower(strings.TrimSpace(req.OutputFormat)) + " file as asked"
	}
	res.Warnings = append([]string{fmt.Sprintf(
		"the slice has %d elements (shape %v), %s; it is delivered flattened: one row per element with its index columns i0..i%d and value",
		elems, sl.Shape, why, max(len(sl.Shape)-1, 0))}, res.Warnings...)
	out.Result = res
	obs.Logger(ctx).Info("read_slice", "uri", req.URI, "slice", slice, "shape", fmt.Sprint(sl.Shape), "method", res.Method, "rows", res.RowCount)
	return out, nil
}

// AppendJSON appends the response's JSON to dst without re-scanning the
// pre-encoded slice data (see materialize.Result.AppendJSON).
func (r *SliceResponse) AppendJSON(dst []byte) ([]byte, error) {
	head, err := json.Marshal(struct {
		Shape []int64 `json:"shape"`
		DType string  `json:"dtype"`
	}{r.Shape, r.DType})
	if err != nil {
		return nil, err
	}
	dst = append(dst, head[:len(head)-1]...)
	if r.Result == nil {
		return append(dst, '}'), nil
	}
	start := len(dst)
	if dst, err = r.Result.AppendJSON(dst); err != nil {
		return nil, err
	}
	if len(dst) > start+2 { // splice: drop the result's opening brace
		dst[start] = ','
	} else {
		dst = append(dst[:start], '}')
	}
	return dst, nil
}

// Envelope is r's JSON without the slice data (see
// materialize.Result.Envelope), for output validation.
func (r *SliceResponse) Envelope() ([]byte, error) {
	head, err := json.Marshal(struct {
		Shape []int64 `json:"shape"`
		DType string  `json:"dtype"`
	}{r.Shape, r.DType})
	if err != nil || r.Result == nil {
		return head, err
	}
	env, err := r.Result.Envelope()
	if err != nil {
		return nil, err
	}
	if len(env) <= 2 {
		return head, nil
	}
	head[len(head)-1] = ','
	return append(head, env[1:]...), nil
}
