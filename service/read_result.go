package service

import (
	"context"
	"path"
	"strings"
	"sync"

	lru "github.com/hashicorp/golang-lru/v2"

	"github.com/quarrydb/quarry/catalog"
	"github.com/quarrydb/quarry/catalog/csv"
	"github.com/quarrydb/quarry/internal/artifacts"
	"github.com/quarrydb/quarry/internal/obs"
	"github.com/quarrydb/quarry/internal/qerr"
	"github.com/quarrydb/quarry/materialize"
	"github.com/quarrydb/quarry/planner"
)

// ReadResultRequest is the input of read_result.
type ReadResultRequest struct {
	ResourceURI  string `json:"resource_uri,omitempty" jsonschema_description:"A file result."`
	ResultHandle string `json:"result_handle,omitempty" jsonschema_description:"Or a paged result."`
	Page         *int64 `json:"page,omitempty" jsonschema_description:"0-based page (or page_token)."`
	PageToken    string `json:"page_token,omitempty" jsonschema_description:"page_info.page_token of the last answer."`
	Format       string `json:"format,omitempty" jsonschema:"enum=json,enum=csv,enum=parquet,enum=arrow" jsonschema_description:"json rows (default); csv/parquet/arrow: a file."`
}

// reachState is what read_result keeps between calls: file results opened
// as datasets (their schema and row count), by path and size.
type reachState struct {
	once  sync.Once
	files *lru.Cache[string, *catalog.Dataset]
	// key signs download URLs (download.go).
	keyOnce sync.Once
	key     []byte
}

const openResultFiles = 16

func (r *reachState) cache() *lru.Cache[string, *catalog.Dataset] {
	r.once.Do(func() { r.files, _ = lru.New[string, *catalog.Dataset](openResultFiles) })
	return r.files
}

// ReadResult is read_result: a page of rows of a file result or of a
// result handle, through a tool (desktop clients do not let the model call
// resources/read).
func (s *Service) ReadResult(ctx context.Context, req ReadResultRequest) (*materialize.Result, error) {
	uri, handle := strings.TrimSpace(req.ResourceURI), strings.TrimSpace(req.ResultHandle)
	if h, n, ok := ParseResultPageURI(uri); ok && handle == "" { // a result page resource
		uri, handle = "", h
		if req.Page == nil && req.PageToken == "" {
			req.Page = &n
		}
	}
	if (uri == "") == (handle == "") {
		return nil, qerr.Invalid(qerr.CodeInvalidArgument, "pass exactly one of resource_uri and result_handle").
			WithHint("resource_uri of a file result (method=file), or result_handle of a paged result (method=handle)")
	}
	if req.Page != nil && req.PageToken != "" {
		return nil, qerr.Invalid(qerr.CodeInvalidArgument, "pass page or page_token, not both").
			WithHint("page_token continues after the previous page; page jumps to a page number")
	}
	if req.Page != nil && *req.Page < 0 {
		return nil, qerr.Invalid(qerr.CodeInvalidArgument, "page %d is negative", *req.Page).WithHint("pages are numbered from 0")
	}
	principal := obs.Principal(ctx)
	if handle != "" {
		if req.PageToken != "" {
			return s.NextPage(ctx, NextPageRequest{ResultHandle: handle, PageToken: req.PageToken, Format: req.Format})
		}
		if f := strings.ToLower(req.Format); f != "" && f != materialize.FormatJSON {
			return nil, qerr.Invalid(qerr.CodeInvalidArgument, "format %s needs page_token", clipURI(req.Format)).
				WithHint("a numbered page is json; pass page_info.page_token to get the next page as a %s file", clipURI(req.Format))
		}
		n := int64(0)
		if req.Page != nil {
			n = *req.Page
		}
		res, err := s.cfg.Materializer.ReadPage(ctx, handle, n, principal)
		if err != nil {
			return nil, err
		}
		return res, s.checkMessage(res)
	}
	if f := strings.ToLower(req.Format); f != "" && f != materialize.FormatJSON {
		return nil, qerr.Invalid(qerr.CodeInvalidArgument, "a file result is read back as json rows, not %s", clipURI(req.Format)).
			WithHint("omit format; to save the file itself call export")
	}
	return s.readFilePage(ctx, uri, req)
}

// readFilePage reads one page of rows of the file result uri.
func (s *Service) readFilePage(ctx context.Context, uri string, req ReadResultRequest) (*materialize.Result, error) {
	principal := obs.Principal(ctx)
	art, err := s.cfg.Artifacts.GetLocal(uri, principal)
	if err != nil {
		return nil, err
	}
	d, err := s.openResultFile(ctx, art)
	if err != nil {
		return nil, err
	}
	m := s.cfg.Materializer
	offset := int64(0)
	switch {
	case req.PageToken != "":
		if offset, err = m.VerifyFilePage(req.PageToken, uri); err != nil {
			return nil, err
		}
	case req.Page != nil:
		offset = *req.Page * m.PageRows()
	}
	if offset > 0 && offset >= d.RowCount {
		pages := (d.RowCount + m.PageRows() - 1) / m.PageRows()
		return nil, qerr.NotFound(qerr.CodeResourceNotFound, "the file has %d rows (%d pages of %d); nothing at row %d", d.RowCount, pages, m.PageRows(), offset+1).
			WithHint("pages are numbered 0 to %d", max(pages-1, 0))
	}
	ctx, cancel := s.withDeadline(ctx)
	defer cancel()
	in := planner.Input{Dataset: d.ID, Schema: d.Schema, RowCount: d.RowCount, RowCountExact: d.RowCountExact}
	t, err := s.runInMemory(ctx, in, d.Source, planner.Spec{Limit: new(m.PageRows()), Offset: new(offset)})
	if err != nil {
		return nil, err
	}
	defer t.Release()
	res, err := m.FilePage(ctx, uri, t, offset, d.RowCount)
	if err != nil {
		return nil, err
	}
	obs.Logger(ctx).Info("read_result", "uri", uri, "offset", offset, "rows", res.RowCount, "total_rows", res.TotalRows)
	return res, s.checkMessage(res)
}

// openResultFile opens a file result as a dataset through the catalog's
// reader of its format, confined to the artifact directory; opened files
// are kept (a result file never changes).
func (s *Service) openResultFile(ctx context.Context, art artifacts.Artifact) (*catalog.Dataset, error) {
	key := art.Path
	if d, ok := s.reach.cache().Get(key); ok && d.SizeBytes == art.Size {
		return d, nil
	}
	lim := catalog.DefaultLimits()
	var f catalog.Format
	switch art.Ext {
	case materialize.FormatParquet:
		f = catalog.NewParquetFormat(lim)
	case materialize.FormatCSV:
		f = csv.NewFormatWith(csv.Options{Limits: lim})
	case materialize.FormatArrow:
		f = catalog.NewArrowFormat(lim)
	default:
		return nil, qerr.Unsupported(qerr.CodeUnsupportedFormat, "%s files cannot be read back as rows", art.Ext)
	}
	name := path.Base(art.Path)
	fi := catalog.FileInfo{AbsPath: art.Path, RelPath: name, BaseID: art.ID, Size: art.Size, ModTime: art.Created, Root: s.cfg.Artifacts.Dir()}
	ds, err := f.Open(ctx, fi)
	if err != nil {
		return nil, err
	}
	if len(ds) != 1 {
		return nil, qerr.Internal(nil, "result file %s holds %d tables", art.URI, len(ds))
	}
	s.reach.cache().Add(key, ds[0])
	return ds[0], nil
}
