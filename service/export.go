package service

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/quarrydb/quarry/internal/obs"
	"github.com/quarrydb/quarry/internal/qerr"
	"github.com/quarrydb/quarry/materialize"
	"github.com/quarrydb/quarry/planner"
)

// ExportRequest is the input of export.
type ExportRequest struct {
	ResultHandle string          `json:"result_handle,omitempty" jsonschema_description:"A paged result (all rows)."`
	ResourceURI  string          `json:"resource_uri,omitempty" jsonschema_description:"A file result."`
	Query        json.RawMessage `json:"query,omitempty" jsonschema_description:"query_data arguments."`
	Path         string          `json:"path" jsonschema_description:"Relative to the export directory."`
	Format       string          `json:"format,omitempty" jsonschema:"enum=parquet,enum=csv,enum=arrow" jsonschema_description:"Default: the extension."`
	Overwrite    bool            `json:"overwrite,omitempty" jsonschema_description:"Replace an existing file."`
}

// ExportResponse is the output of export.
type ExportResponse struct {
	Path        string `json:"path" jsonschema_description:"Path relative to the export directory."`
	FilePath    string `json:"file_path" jsonschema_description:"Absolute path of the written file, to open it."`
	Format      string `json:"format"`
	Rows        int64  `json:"rows"`
	SizeBytes   int64  `json:"size_bytes"`
	Overwritten bool   `json:"overwritten,omitempty"`
}

// exportExt maps file extensions to output formats.
var exportExt = map[string]string{
	".parquet": materialize.FormatParquet, ".csv": materialize.FormatCSV, ".arrow": materialize.FormatArrow,
}

// PrepareExportDir resolves dir (created if missing) and checks it is
// neither inside the data root nor holds it: export never writes into the
// data root.
func PrepareExportDir(dir, dataRoot string) (string, error) {
	if dir == "" {
		return "", nil
	}
	root, err := filepath.EvalSymlinks(dataRoot)
	if err != nil {
		return "", fmt.Errorf("data root %q: %w", dataRoot, err)
	}
	overlap := func(p string) error {
		if within(root, p) || within(p, root) {
			return fmt.Errorf("export directory %q and the data root %q overlap: choose a directory outside the data root (Quarry never writes into it)", dir, dataRoot)
		}
		return nil
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", fmt.Errorf("export directory %q: %w", dir, err)
	}
	existing, rest := abs, ""
	for { // check before creating anything: the longest existing prefix, resolved
		if r, err := filepath.EvalSymlinks(existing); err == nil {
			if err := overlap(filepath.Join(r, rest)); err != nil {
				return "", err
			}
			break
		}
		parent := filepath.Dir(existing)
		if parent == existing {
			break
		}
		rest, existing = filepath.Join(filepath.Base(existing), rest), parent
	}
	if err := os.MkdirAll(abs, 0o755); err != nil {
		return "", fmt.Errorf("export directory %q: %w", dir, err)
	}
	real, err := filepath.EvalSymlinks(abs)
	if err == nil {
		real, err = filepath.Abs(real)
	}
	if err != nil {
		return "", fmt.Errorf("export directory %q: %w", dir, err)
	}
	if st, err := os.Stat(real); err != nil || !st.IsDir() {
		return "", fmt.Errorf("export directory %q is not a directory", dir)
	}
	if err := overlap(real); err != nil {
		return "", err
	}
	return real, nil
}

func within(root, p string) bool {
	rel, err := filepath.Rel(root, p)
	return err == nil && (rel == "." || filepath.IsLocal(rel))
}

// ExportEnabled tells whether the server has an export directory (else
// Export refuses every call with export_disabled, and the MCP server does
// not list the export tool).
func (s *Service) ExportEnabled() bool { return s.cfg.ExportDir != "" }

// Export is the export tool: it writes a result (a handle's rows, a file
// result, or a query's rows) to path under the export directory, atomically
// and never over an existing file unless overwrite.
func (s *Service) Export(ctx context.Context, req ExportRequest) (*ExportResponse, error) {
	if s.cfg.ExportDir == "" {
		return nil, qerr.Unsupported(qerr.CodeExportDisabled, "this server has no export directory").
			WithHint("the user can start it with `quarry serve --export-dir DIR`; meanwhile read rows with read_result")
	}
	rel, format, err := exportTarget(req.Path, req.Format)
	if err != nil {
		return nil, err
	}
	n := 0
	for _, set := range []bool{req.ResultHandle != "", req.ResourceURI != "", len(bytes.TrimSpace(req.Query)) > 0} {
		if set {
			n++
		}
	}
	if n != 1 {
		return nil, qerr.Invalid(qerr.CodeInvalidArgument, "pass exactly one of result_handle, resource_uri and query").
			WithHint("result_handle or resource_uri from an earlier answer, or query with query_data's arguments")
	}
	root, err := os.OpenRoot(s.cfg.ExportDir)
	if err != nil {
		return nil, qerr.Internal(err, "cannot open the export directory")
	}
	defer root.Close()
	existed := false
	if st, err := root.Lstat(rel); err == nil {
		if !st.Mode().IsRegular() {
			return nil, qerr.Invalid(qerr.CodeInvalidArgument, "%s exists and is not a regular file", rel).WithHint("choose another path")
		}
		if !req.Overwrite {
			return nil, qerr.New(qerr.ErrInvalidArgument, qerr.CodeFileExists, "%s already exists in the export directory", rel).
				WithHint("choose another path, or pass overwrite: true to replace it (ask the user first)")
		}
		existed = true
	}
	res, err := s.exportSource(ctx, req, format)
	if err != nil {
		return nil, err
	}
	art, err := s.cfg.Artifacts.GetLocal(res.ResourceURI, obs.Principal(ctx))
	if err != nil {
		return nil, err
	}
	if err := copyAtomic(root, rel, art.Path, req.Overwrite); err != nil {
		return nil, err
	}
	out := &ExportResponse{Path: rel, FilePath: filepath.Join(s.cfg.ExportDir, filepath.FromSlash(rel)), Format: format,
		Rows: res.RowCount, SizeBytes: art.Size, Overwritten: existed}
	obs.Logger(ctx).Info("export", "path", rel, "format", format, "rows", out.Rows, "bytes", out.SizeBytes, "overwritten", existed)
	return out, nil
}

// exportTarget validates the path (relative, no "..", a known extension
// matching format) and returns it cleaned with the format.
func exportTarget(p, format string) (string, string, error) {
	bad := func(msg string, args ...any) error {
		return qerr.Invalid(qerr.CodeInvalidArgument, msg, args...).
			WithHint("pass a path relative to the export directory ending in .parquet, .csv or .arrow, e.g. sales/2024.parquet")
	}
	p = strings.TrimSpace(p)
	if p == "" {
		return "", "", bad("path is empty")
	}
	if strings.ContainsRune(p, 0) || strings.Contains(p, "\\") {
		return "", "", bad("path %q has a character paths here cannot have", clipURI(p))
	}
	if path.IsAbs(p) || filepath.IsAbs(p) {
		return "", "", bad("path %q is absolute", clipURI(p))
	}
	for _, c := range strings.Split(p, "/") {
		if c == ".." {
			return "", "", qerr.New(qerr.ErrPermission, qerr.CodePathOutsideRoot, "path %q climbs out of the export directory", clipURI(p)).
				WithHint("name files relative to the export directory without \"..\"")
		}
	}
	p = path.Clean(p)
	if strings.HasPrefix(path.Base(p), ".") {
		return "", "", bad("path %q names a hidden file", clipURI(p))
	}
	byExt, ok := exportExt[strings.ToLower(path.Ext(p))]
	if !ok {
		return "", "", bad("path %q does not end in .parquet, .csv or .arrow", clipURI(p))
	}
	if format = strings.ToLower(strings.TrimSpace(format)); format == "" {
		format = byExt
	}
	if format != byExt {
		return "", "", bad("format %s does not match the extension of %q", clipURI(format), clipURI(p))
	}
	return p, format, nil
}

// exportSource turns the request's source into a file result of format.
func (s *Service) exportSource(ctx context.Context, req ExportRequest, format string) (*materialize.Result, error) {
	principal := obs.Principal(ctx)
	switch {
	case req.ResultHandle != "":
		return s.cfg.Materializer.HandleFile(ctx, req.ResultHandle, format, principal)
	case req.ResourceURI != "":
		art, err := s.cfg.Artifacts.GetLocal(req.ResourceURI, principal)
		if err != nil {
			return nil, err
		}
		d, err := s.openResultFile(ctx, art)
		if err != nil {
			return nil, err
		}
		if art.Ext == format {
			return &materialize.Result{ResourceURI: art.URI, RowCount: d.RowCount}, nil
		}
		ctx, cancel := s.withDeadline(ctx)
		defer cancel()
		in := planner.Input{Dataset: d.ID, Schema: d.Schema, RowCount: d.RowCount, RowCountExact: d.RowCountExact}
		t, err := s.runInMemory(ctx, in, d.Source, planner.Spec{})
		if err != nil {
			return nil, err
		}
		defer t.Release()
		return s.cfg.Materializer.Deliver(ctx, t, materialize.Request{Format: format, Principal: principal})
	}
	var q QueryRequest
	dec := json.NewDecoder(bytes.NewReader(req.Query))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&q); err != nil {
		return nil, qerr.Invalid(qerr.CodeInvalidArgument, "query: %v", err).With("field", "query").
			WithHint("pass query_data's arguments as query, e.g. {\"dataset\": \"sales/orders\", \"filters\": [...]}")
	}
	q.OutputFormat, q.Confirm = format, true // the user asked for the file
	qr, err := s.Query(ctx, q)
	if err != nil {
		return nil, err
	}
	if qr.Result == nil || qr.ResourceURI == "" {
		return nil, qerr.Internal(errors.New("no file result"), "the query gave no file to export")
	}
	return qr.Result, nil
}

// copyAtomic copies src to rel under root through a temporary file in the
// target's directory, renamed (overwrite) or linked (no overwrite, which
// fails if the target appeared meanwhile) into place.
func copyAtomic(root *os.Root, rel, src string, overwrite bool) error {
	dir := path.Dir(rel)
	if dir != "." {
		if err := root.MkdirAll(dir, 0o755); err != nil {
			return exportIOError(err, rel)
		}
	}
	in, err := os.Open(src)
	if err != nil {
		return qerr.Internal(err, "cannot read the result file")
	}
	defer in.Close()
	tmp := path.Join(dir, fmt.Sprintf(".%s.%s.tmp", path.Base(rel), obs.NewRequestID()))
	out, err := root.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return exportIOError(err, rel)
	}
	defer root.Remove(tmp) // gone after a rename; cleans up otherwise
	_, err = io.Copy(out, in)
	if err == nil {
		err = out.Sync()
	}
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return exportIOError(err, rel)
	}
	if overwrite {
		err = root.Rename(tmp, rel)
	} else {
		err = root.Link(tmp, rel)
	}
	if errors.Is(err, fs.ErrExist) {
		return qerr.New(qerr.ErrInvalidArgument, qerr.CodeFileExists, "%s already exists in the export directory", rel).
			WithHint("choose another path, or pass overwrite: true to replace it")
	}
	if err != nil {
		return exportIOError(err, rel)
	}
	return nil
}

func exportIOError(err error, rel string) error {
	if strings.Contains(err.Error(), "path escapes from parent") {
		return qerr.New(qerr.ErrPermission, qerr.CodePathOutsideRoot, "%s leads out of the export directory (a symbolic link)", rel).
			WithHint("choose a path that stays inside the export directory")
	}
	return qerr.Internal(err, "cannot write %s in the export directory", rel)
}
