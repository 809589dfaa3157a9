package service

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/quarrydb/quarry/catalog"
	"github.com/quarrydb/quarry/engine"
	"github.com/quarrydb/quarry/internal/artifacts"
	"github.com/quarrydb/quarry/internal/obs"
	"github.com/quarrydb/quarry/internal/qerr"
	"github.com/quarrydb/quarry/materialize"
	"github.com/quarrydb/quarry/planner"
)

// Config wires a Service. Catalog, Materializer and Artifacts are required.
type Config struct {
	// Catalog lists and opens datasets.
	Catalog *catalog.Catalog
	// Materializer applies caps and picks the delivery.
	Materializer *materialize.Materializer
	// Artifacts serves artifact resources.
	Artifacts *artifacts.Store
	// QueryMemory is the Arrow memory budget of one query in bytes; 0 => 1 GiB.
	QueryMemory int64
	// QueryTimeout bounds one query's execution; 0 => 60 s.
	QueryTimeout time.Duration
	// ExactEstimateBytes: estimate_query runs the whole query (exact
	// estimate) when the data file is at most this big; 0 => 256 MiB.
	// Larger files are estimated from the first SampleRows rows.
	ExactEstimateBytes int64
	// SampleRows is how many rows a sampled estimate reads; 0 => 100,000.
	SampleRows int64
	// ResourceReadLimit is the largest artifact resources/read returns
	// inline (base64 blob); 0 => 32 MiB.
	ResourceReadLimit int64
	// Alloc allocates query memory; nil => memory.DefaultAllocator.
	Alloc memory.Allocator
	// HDF5 browses and slices HDF5 files (h5:// resources and
	// read_dataset_slice); nil disables both.
	HDF5 H5Reader
}

// Service implements Quarry's tools and resources. Safe for concurrent use.
type Service struct {
	cfg Config
}

// New validates cfg, fills defaults and returns a Service.
func New(cfg Config) (*Service, error) {
	if cfg.Catalog == nil || cfg.Materializer == nil || cfg.Artifacts == nil {
		return nil, fmt.Errorf("service: Catalog, Materializer and Artifacts are required")
	}
	if cfg.QueryMemory <= 0 {
		cfg.QueryMemory = 1 << 30
	}
	if cfg.QueryTimeout <= 0 {
		cfg.QueryTimeout = 60 * time.Second
	}
	if cfg.ExactEstimateBytes <= 0 {
		cfg.ExactEstimateBytes = 256 << 20
	}
	if cfg.SampleRows <= 0 {
		cfg.SampleRows = 100_000
	}
	if cfg.ResourceReadLimit <= 0 {
		cfg.ResourceReadLimit = 32 << 20
	}
	if cfg.Alloc == nil {
		cfg.Alloc = memory.DefaultAllocator
	}
	return &Service{cfg: cfg}, nil
}

// Config returns the effective configuration (defaults filled in).
func (s *Service) Config() Config { return s.cfg }

// Catalog lists datasets (get_catalog). It re-scans the root first; the
// scan re-parses only files whose size or mtime changed.
func (s *Service) Catalog(ctx context.Context, req CatalogRequest) (*CatalogResponse, error) {
	if err := s.cfg.Catalog.Refresh(ctx); err != nil {
		return nil, err
	}
	for _, k := range req.Kinds {
		if k != string(catalog.KindCSV) && k != string(catalog.KindHDF5) {
			return nil, qerr.Invalid(qerr.CodeInvalidArgument, "unknown dataset kind %q", k).
				With("field", "kinds").WithHint("kinds are csv and hdf5")
		}
	}
	q := strings.ToLower(strings.TrimSpace(req.Query))
	out := &CatalogResponse{Datasets: []CatalogEntry{}, Diagnostics: s.cfg.Catalog.Diagnostics()}
	for _, d := range s.cfg.Catalog.Datasets() {
		if len(req.Kinds) > 0 && !slices.Contains(req.Kinds, string(d.Kind)) {
			continue
		}
		if q != "" && !strings.Contains(strings.ToLower(d.ID), q) && !strings.Contains(strings.ToLower(d.Path), q) {
			continue
		}
		out.Datasets = append(out.Datasets, entryOf(d))
	}
	out.Total = len(out.Datasets)
	return out, nil
}

func entryOf(d *catalog.Dataset) CatalogEntry {
	return CatalogEntry{
		ID: d.ID, Kind: string(d.Kind), Path: d.Path,
		RowCount: d.RowCount, RowCountExact: d.RowCountExact,
		FileSizeBytes: d.SizeBytes, LastModifiedISO: d.ModTime.UTC().Format(time.RFC3339),
		ColumnCount: d.Schema.NumFields(), Description: d.Description,
	}
}

// SchemaURI is the resource URI of a dataset's schema card.
func SchemaURI(dataset string) string {
	return "quarry://datasets/" + url.PathEscape(dataset) + "/schema"
}

// Schema describes a dataset (get_schema): columns, shape and up to five sample rows.
func (s *Service) Schema(ctx context.Context, req SchemaRequest) (*SchemaResponse, error) {
	d, err := s.lookup(req.Dataset)
	if err != nil {
		return nil, err
	}
	out := &SchemaResponse{
		Dataset: d.ID, Shape: []int64{d.RowCount, int64(d.Schema.NumFields())},
		SchemaURI: SchemaURI(d.ID), Description: d.Description,
	}
	for _, f := range d.Schema.Fields() {
		out.Columns = append(out.Columns, Column{Name: f.Name, Type: planner.TypeName(f.Type), Nullable: f.Nullable})
	}
	five := int64(5)
	t, _, err := s.run(ctx, d, planner.Spec{Limit: &five}, 0)
	if err != nil {
		return nil, err
	}
	defer t.Release()
	if out.SampleRows, err = materialize.Preview(t, 5); err != nil {
		return nil, err
	}
	return out, nil
}

// Estimate plans the query and estimates its size (estimate_query).
func (s *Service) Estimate(ctx context.Context, req EstimateRequest) (*EstimateResponse, error) {
	d, err := s.lookup(req.Dataset)
	if err != nil {
		return nil, err
	}
	var sample int64
	kind := "exact"
	if d.SizeBytes > s.cfg.ExactEstimateBytes && d.RowCount > s.cfg.SampleRows {
		sample, kind = s.cfg.SampleRows, "sampled"
	}
	t, plan, err := s.run(ctx, d, req.Spec, sample)
	if err != nil {
		return nil, err
	}
	defer t.Release()
	caps := s.cfg.Materializer.Caps()
	out := &EstimateResponse{EstimateKind: kind, Plan: planner.String(plan), Warnings: []string{}}
	out.RowEstimate = t.NumRows()
	if kind == "sampled" {
		out.RowEstimate = extrapolate(t.NumRows(), sample, d.RowCount, req.Spec)
		out.Warnings = append(out.Warnings, fmt.Sprintf(
			"estimate extrapolated from the first %d of %d rows; the real count may differ", sample, d.RowCount))
	}
	if out.Preview, err = materialize.Preview(t, 5); err != nil {
		return nil, err
	}
	out.ByteEstimate, err = jsonBytes(t, out.RowEstimate)
	if err != nil {
		return nil, err
	}
	out.SuggestedCaps = SuggestedCaps{MaxRows: min(max(out.RowEstimate, 1), caps.MaxRows), MaxBytes: caps.MaxBytes}
	cols := int64(t.Schema().NumFields())
	switch {
	case out.RowEstimate > caps.MaxRows || out.ByteEstimate > caps.MaxBytes || out.RowEstimate*cols > caps.MaxCells:
		out.Warnings = append(out.Warnings, fmt.Sprintf(
			"about %d rows (%d bytes as JSON) exceed the inline caps (%d rows, %d bytes, %d cells): query_data will return a paged result handle (output_format json) or a file resource (csv or parquet); narrow with filters, columns, aggregates or a limit to get it inline",
			out.RowEstimate, out.ByteEstimate, caps.MaxRows, caps.MaxBytes, caps.MaxCells))
	case out.RowEstimate == 0:
		out.Warnings = append(out.Warnings, "the query matches no rows; check filter values with get_schema sample rows")
	}
	obs.Logger(ctx).Info("estimate", "dataset", d.ID, "estimate_kind", kind, "row_estimate", out.RowEstimate,
		"byte_estimate", out.ByteEstimate, "plan", strings.ReplaceAll(strings.TrimSpace(out.Plan), "\n", " | "))
	return out, nil
}

// extrapolate scales the row count of a query over the first sample rows
// to the whole dataset. Global aggregates always give one row; a limit caps it.
func extrapolate(got, sample, total int64, spec planner.Spec) int64 {
	est := got
	switch {
	case len(spec.Aggs) > 0 && len(spec.GroupBy) == 0:
		est = 1
	case len(spec.GroupBy) > 0 || spec.Distinct:
		// Group and distinct counts grow sub-linearly; the sample's count is a lower bound.
	default:
		if sample > 0 {
			est = int64(float64(got) * float64(total) / float64(sample))
		}
	}
	if spec.Offset != nil {
		est = max(0, est-*spec.Offset)
	}
	if spec.Limit != nil {
		est = min(est, *spec.Limit)
	}
	return est
}

// jsonBytes estimates the inline JSON size of rows rows of t from its
// first (up to) 1,000 rows.
func jsonBytes(t *materialize.Table, rows int64) (int64, error) {
	n := min(t.NumRows(), 1000)
	if n == 0 {
		return 2, nil
	}
	b, err := materialize.Preview(t, int(n))
	if err != nil {
		return 0, err
	}
	return int64(float64(len(b)) / float64(n) * float64(rows)), nil
}

// Query runs the query and delivers the result (query_data).
func (s *Service) Query(ctx context.Context, req QueryRequest) (*materialize.Result, error) {
	d, err := s.lookup(req.Dataset)
	if err != nil {
		return nil, err
	}
	start := time.Now()
	t, plan, err := s.run(ctx, d, req.Spec, 0)
	if err != nil {
		return nil, err
	}
	defer t.Release()
	res, err := s.cfg.Materializer.Deliver(ctx, t, materialize.Request{
		Format: req.OutputFormat, MaxRows: req.MaxRows, MaxBytes: req.MaxBytes, Principal: obs.Principal(ctx),
	})
	if err != nil {
		return nil, err
	}
	obs.Logger(ctx).Info("query", "dataset", d.ID, "plan", strings.ReplaceAll(strings.TrimSpace(planner.String(plan)), "\n", " | "),
		"method", res.Method, "truncated", res.Truncated, "rows", res.RowCount, "total_rows", res.TotalRows,
		"bytes", len(res.Data)+int(res.SizeBytes), "duration_ms", time.Since(start).Milliseconds())
	return res, nil
}

// NextPage serves the next page of a result handle (query_next_page).
func (s *Service) NextPage(ctx context.Context, req NextPageRequest) (*materialize.Result, error) {
	if req.ResultHandle == "" || req.PageToken == "" {
		return nil, qerr.Invalid(qerr.CodeInvalidArgument, "result_handle and page_token are required").
			WithHint("pass result_handle and page_info.page_token from the previous query_data or query_next_page result")
	}
	res, err := s.cfg.Materializer.NextPage(ctx, req.ResultHandle, req.PageToken, req.Format, obs.Principal(ctx))
	if err != nil {
		return nil, err
	}
	obs.Logger(ctx).Info("next_page", "handle", req.ResultHandle, "method", res.Method, "rows", res.RowCount, "total_rows", res.TotalRows)
	return res, nil
}

func (s *Service) lookup(id string) (*catalog.Dataset, error) {
	if strings.TrimSpace(id) == "" {
		return nil, qerr.Invalid(qerr.CodeInvalidArgument, "dataset is required").
			With("field", "dataset").WithHint("call get_catalog to list dataset ids")
	}
	return s.cfg.Catalog.Lookup(id)
}

// run plans, optimizes and executes spec over d and collects the result.
// sample > 0 reads only the first sample rows of the dataset.
func (s *Service) run(ctx context.Context, d *catalog.Dataset, spec planner.Spec, sample int64) (*materialize.Table, planner.Node, error) {
	plan, err := planner.Build(spec, planner.Input{Dataset: d.ID, Schema: d.Schema, RowCount: d.RowCount, RowCountExact: d.RowCountExact})
	if err != nil {
		return nil, nil, err
	}
	var opts planner.OptimizeOptions
	if p, ok := d.Source.(planner.FilterPushdowner); ok {
		opts.Pushdown = p
	}
	if plan, err = planner.Optimize(plan, opts); err != nil {
		return nil, nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, s.cfg.QueryTimeout)
	defer cancel()
	var src catalog.Source = d.Source
	if sample > 0 {
		src = headSource{src: src, rows: sample}
	}
	rr, err := engine.Execute(ctx, plan, src, engine.Options{Alloc: s.cfg.Alloc, MemoryLimit: s.cfg.QueryMemory})
	if err != nil {
		return nil, nil, err
	}
	defer rr.Release()
	t, err := materialize.Collect(ctx, rr)
	if err != nil {
		if ctx.Err() != nil {
			err = qerr.As(ctx.Err())
		}
		return nil, nil, err
	}
	return t, plan, nil
}

// headSource reads only the first rows rows of a source (sampled estimates).
type headSource struct {
	src  catalog.Source
	rows int64
}

func (h headSource) Scan(ctx context.Context, opts catalog.ScanOptions) (array.RecordReader, error) {
	rr, err := h.src.Scan(ctx, opts)
	if err != nil {
		return nil, err
	}
	return &headReader{RecordReader: rr, left: h.rows}, nil
}

// ReadResource reads one of Quarry's own resources: artifacts, schema
// cards and the catalog card. It returns the bytes and their MIME type.
func (s *Service) ReadResource(ctx context.Context, uri string) ([]byte, string, error) {
	switch {
	case strings.HasPrefix(uri, "quarry://artifacts/"):
		b, a, err := s.cfg.Artifacts.ReadAll(uri, s.cfg.ResourceReadLimit)
		if err != nil {
			return nil, "", err
		}
		return b, a.MIME, nil
	case uri == "quarry://catalog":
		c, err := s.Catalog(ctx, CatalogRequest{})
		if err != nil {
			return nil, "", err
		}
		b, err := json.Marshal(c)
		return b, "application/json", err
	case strings.HasPrefix(uri, "quarry://datasets/") && strings.HasSuffix(uri, "/schema"):
		id, err := url.PathUnescape(strings.TrimSuffix(strings.TrimPrefix(uri, "quarry://datasets/"), "/schema"))
		if err != nil {
			return nil, "", qerr.Invalid(qerr.CodeInvalidArgument, "malformed resource URI %q", uri)
		}
		sc, err := s.Schema(ctx, SchemaRequest{Dataset: id})
		if err != nil {
			return nil, "", err
		}
		b, err := json.Marshal(sc)
		return b, "application/json", err
	}
	return nil, "", qerr.NotFound(qerr.CodeResourceNotFound, "no resource %q", uri).
		WithHint("resources are quarry://catalog, quarry://datasets/{dataset}/schema and quarry://artifacts/{id} from query results")
}
