package service

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	lru "github.com/hashicorp/golang-lru/v2"

	"github.com/quarrydb/quarry/catalog"
	"github.com/quarrydb/quarry/engine"
	"github.com/quarrydb/quarry/handles"
	"github.com/quarrydb/quarry/internal/artifacts"
	"github.com/quarrydb/quarry/internal/colcache"
	"github.com/quarrydb/quarry/internal/obs"
	"github.com/quarrydb/quarry/internal/qerr"
	"github.com/quarrydb/quarry/materialize"
	"github.com/quarrydb/quarry/planner"
)

// Config wires a Service. Catalog, Materializer and Artifacts are required.
type Config struct {
	// SigningKey, when set, is the HMAC key of filter tokens and download
	// URLs (each domain-separated), shared by replicas so that one
	// replica's tokens and URLs work on the others; nil: random per
	// process.
	SigningKey []byte
	// Catalog lists and opens datasets.
	Catalog *catalog.Catalog
	// Materializer applies caps and picks the delivery.
	Materializer *materialize.Materializer
	// Artifacts serves artifact resources.
	Artifacts *artifacts.Store
	// QueryMemory is the Arrow memory budget of one query in bytes; 0 => 1 GiB.
	QueryMemory int64
	// ServerMemory is the memory budget shared by all running queries
	// (engine.Pool): each reserves from it as it grows; 0 or negative =>
	// no server-wide cap.
	ServerMemory int64
	// ServerMemoryWait is how long a query waits to start while the
	// server-wide budget is in use; 0 => 2 s.
	ServerMemoryWait time.Duration
	// QueryTimeout bounds one query's execution; 0 => 60 s.
	QueryTimeout time.Duration
	// ExactEstimateBytes: estimate_query runs the whole query (exact
	// estimate) when the data file is at most this big; 0 => 256 MiB.
	// Larger files are estimated from the first SampleRows rows.
	ExactEstimateBytes int64
	// SampleRows is how many rows a sampled estimate reads; 0 => 100,000.
	SampleRows int64
	// ResourceReadLimit is the largest artifact resources/read returns
	// inline (base64 blob); 0 => what fits a message of MaxMessageBytes.
	ResourceReadLimit int64
	// MaxMessageBytes bounds one JSON-RPC message (resource reads and
	// read_result pages); 0 => DefaultMaxMessageBytes (8 MiB).
	MaxMessageBytes int64
	// ExportDir is where export writes files; "" => export is refused.
	ExportDir string
	// Alloc allocates query memory; nil => memory.DefaultAllocator.
	Alloc memory.Allocator
	// Cache keeps parsed columns in memory; queries read datasets through
	// it (and plan against the types it holds them in). Nil disables it.
	Cache *colcache.Cache
	// HDF5 browses and slices HDF5 files (h5:// resources and
	// read_dataset_slice); nil disables both.
	HDF5 H5Reader
	// ConfirmRows: query_data and aggregate ask before running a query
	// whose estimated result has more rows; 0 => 1,000,000, negative =>
	// never ask.
	ConfirmRows int64
	// ConfirmBytes: they also ask when the estimated result is bigger (as
	// JSON) than this; 0 => 256 MiB, negative => never ask.
	ConfirmBytes int64
	// DistinctCacheEntries bounds the distinct_values and summary caches
	// (entries each); 0 => 256.
	DistinctCacheEntries int

	// The fields below only describe the server (get_server_info); the
	// service does not enforce them.

	// HandleTTL is the idle lifetime of result handles; 0 => 15 min.
	HandleTTL time.Duration
	// MaxHandles is the number of live result handles; 0 => 256.
	MaxHandles int
	// ArtifactTTL is how long result files are kept; 0 => 1 h.
	ArtifactTTL time.Duration
	// ArtifactQuota is the disk budget of result files; 0 => 2 GiB.
	ArtifactQuota int64
	// Demo says the data root is the bundled demo data (shown as such).
	Demo bool
}

// Service implements Quarry's tools and resources. Safe for concurrent use.
type Service struct {
	cfg      Config
	pool     *engine.Pool // nil without ServerMemory
	distinct *lru.Cache[string, *distinctEntry]
	profiles *lru.Cache[string, *SummaryResponse]
	// patterns caches pattern_filter's normalized distinct values.
	patterns   *lru.Cache[string, *patternDict]
	filterKeys filterKeys
	reach      reachState   // read_result's open result files
	spilled    atomic.Int64 // bytes of join spill files (SpillBytes)
}

// New validates cfg, fills defaults and returns a Service.
func New(cfg Config) (*Service, error) {
	if cfg.Catalog == nil || cfg.Materializer == nil || cfg.Artifacts == nil {
		return nil, fmt.Errorf("service: Catalog, Materializer and Artifacts are required")
	}
	if cfg.QueryMemory <= 0 {
		cfg.QueryMemory = DefaultQueryMemory
	}
	if cfg.QueryTimeout <= 0 {
		cfg.QueryTimeout = DefaultQueryTimeout
	}
	if cfg.ExactEstimateBytes <= 0 {
		cfg.ExactEstimateBytes = 256 << 20
	}
	if cfg.SampleRows <= 0 {
		cfg.SampleRows = 100_000
	}
	if cfg.MaxMessageBytes <= 0 {
		cfg.MaxMessageBytes = DefaultMaxMessageBytes
	}
	if cfg.ResourceReadLimit <= 0 {
		cfg.ResourceReadLimit = resourceReadLimit(cfg.MaxMessageBytes)
	}
	if cfg.Alloc == nil {
		cfg.Alloc = memory.DefaultAllocator
	}
	if cfg.ConfirmRows == 0 {
		cfg.ConfirmRows = DefaultConfirmRows
	}
	if cfg.ConfirmBytes == 0 {
		cfg.ConfirmBytes = DefaultConfirmBytes
	}
	if cfg.DistinctCacheEntries <= 0 {
		cfg.DistinctCacheEntries = 256
	}
	if cfg.HandleTTL <= 0 {
		cfg.HandleTTL = handles.DefaultTTL
	}
	if cfg.MaxHandles <= 0 {
		cfg.MaxHandles = handles.DefaultMaxEntries
	}
	if cfg.ArtifactTTL <= 0 {
		cfg.ArtifactTTL = artifacts.DefaultTTL
	}
	if cfg.ArtifactQuota <= 0 {
		cfg.ArtifactQuota = artifacts.DefaultQuota
	}
	if cfg.ServerMemoryWait <= 0 {
		cfg.ServerMemoryWait = DefaultServerMemoryWait
	}
	s := &Service{cfg: cfg, pool: engine.NewPool(cfg.ServerMemory, cfg.ServerMemoryWait)}
	var err error
	if s.distinct, err = lru.New[string, *distinctEntry](cfg.DistinctCacheEntries); err != nil {
		return nil, err
	}
	if s.profiles, err = lru.New[string, *SummaryResponse](cfg.DistinctCacheEntries); err != nil {
		return nil, err
	}
	if s.patterns, err = lru.New[string, *patternDict](patternCacheEntries); err != nil {
		return nil, err
	}
	s.filterKeys = newFilterKeys(cfg.SigningKey)
	if cfg.SigningKey != nil {
		s.reach.keyOnce.Do(func() { s.reach.key = cfg.SigningKey })
	}
	return s, nil
}

// Config returns the effective configuration (defaults filled in).
func (s *Service) Config() Config { return s.cfg }

// catalogScanWait is how long get_catalog waits for the server's first
// catalog scan before answering with what it has opened so far.
var catalogScanWait = 2 * time.Second

// WaitFirstScan waits up to catalogScanWait (or until ctx ends) for the
// server's first catalog scan, so listings made right after start-up are
// complete on small data roots; on large ones they list what is open so far.
func (s *Service) WaitFirstScan(ctx context.Context) {
	wctx, cancel := context.WithTimeout(ctx, catalogScanWait)
	_ = s.cfg.Catalog.WaitScanned(wctx)
	cancel()
}

// Catalog lists datasets (get_catalog). It re-scans the root first; the
// scan re-parses only files whose size or mtime changed. While the first
// (background) scan runs, it waits up to catalogScanWait for it, then
// lists the files opened so far with Scanning set.
func (s *Service) Catalog(ctx context.Context, req CatalogRequest) (*CatalogResponse, error) {
	s.WaitFirstScan(ctx)
	if err := s.cfg.Catalog.Refresh(ctx); err != nil {
		return nil, err
	}
	for _, k := range req.Kinds {
		if !catalog.KnownKind(k) {
			return nil, qerr.Invalid(qerr.CodeInvalidArgument, "unknown dataset kind %q", k).
				With("field", "kinds").WithHint("kinds are %s", catalog.KindList())
		}
	}
	words := queryWords(req.Query)
	out := &CatalogResponse{Datasets: []CatalogEntry{}}
	out.Diagnostics, out.DiagnosticsTotal = filterDiagnostics(s.cfg.Catalog.Diagnostics(), words)
	if out.DiagnosticsTotal <= len(out.Diagnostics) {
		out.DiagnosticsTotal = 0
	}
	if st := s.cfg.Catalog.ScanStatus(); st.Scanning {
		out.Scanning, out.PendingFiles = true, st.PendingFiles
	}
	for _, d := range s.cfg.Catalog.Datasets() {
		if len(req.Kinds) > 0 && !slices.Contains(req.Kinds, string(d.Kind)) {
			continue
		}
		if !datasetMatches(d, words) {
			continue
		}
		if !tagsMatch(d, req.Tags) {
			continue
		}
		out.Datasets = append(out.Datasets, entryOf(d))
	}
	if err := pageCatalog(out, req); err != nil {
		return nil, err
	}
	out.Total = len(out.Datasets)
	return out, nil
}

// tagsMatch reports whether d's card has every pair of want (values
// compared case-insensitively, surrounding space ignored).
func tagsMatch(d *catalog.Dataset, want map[string]string) bool {
	for k, v := range want {
		if d.Card == nil {
			return false
		}
		got, ok := d.Card.Tags[k]
		if !ok || !strings.EqualFold(strings.TrimSpace(got), strings.TrimSpace(v)) {
			return false
		}
	}
	return true
}

func entryOf(d *catalog.Dataset) CatalogEntry {
	e := CatalogEntry{
		ID: d.ID, Kind: string(d.Kind), Path: d.Path,
		RowCount: d.RowCount, RowCountExact: d.RowCountExact,
		FileSizeBytes: d.SizeBytes, LastModifiedISO: d.ModTime.UTC().Format(time.RFC3339),
		ColumnCount: d.Schema.NumFields(), Description: d.Description,
	}
	if d.Card != nil && len(d.Card.Tags) > 0 {
		e.Tags = d.Card.Tags
	}
	return e
}

// SchemaURI is the resource URI of a dataset's schema card.
func SchemaURI(dataset string) string { return DatasetURI(dataset, ResourceSchema) }

// Schema describes a dataset (get_schema): columns (with their schema-card
// role, description and unit), shape and up to five sample rows.
func (s *Service) Schema(ctx context.Context, req SchemaRequest) (*SchemaResponse, error) {
	resp, err := s.schema(ctx, req, req.IncludeExamples)
	if err != nil || !req.IncludeSummary {
		return resp, err
	}
	sum, err := s.Summary(ctx, req.Dataset)
	if err != nil {
		return nil, err
	}
	if resp.Summary, err = json.Marshal(sum); err != nil {
		return nil, qerr.Internal(err, "encoding the summary")
	}
	return resp, nil
}

// schema builds get_schema's answer; examples adds up to 3 example values
// per column, taken from the first rows (the schema card resource).
func (s *Service) schema(ctx context.Context, req SchemaRequest, examples bool) (*SchemaResponse, error) {
	ctx, cancel := s.withDeadline(ctx)
	defer cancel()
	return onDataset(ctx, s, req.Dataset, func(d *catalog.Dataset) (*SchemaResponse, error) {
		return s.schemaOf(ctx, d, req, examples)
	})
}

// schemaOf is schema for dataset d.
func (s *Service) schemaOf(ctx context.Context, d *catalog.Dataset, req SchemaRequest, examples bool) (*SchemaResponse, error) {
	out := &SchemaResponse{
		Dataset: d.ID, Shape: []int64{d.RowCount, int64(d.Schema.NumFields())},
		SchemaURI: SchemaURI(d.ID), Description: d.Description,
	}
	if d.Card != nil && len(d.Card.Tags) > 0 {
		out.Tags = d.Card.Tags
	}
	out.ReadOptions, _ = d.Attributes["read_options"].(map[string]any)
	fields := d.Schema.Fields()
	if req.ColumnOffset < 0 || req.ColumnOffset > len(fields) {
		return nil, qerr.Invalid(qerr.CodeInvalidArgument, "column_offset %d is out of range: dataset %q has %d columns", req.ColumnOffset, d.ID, len(fields)).
			With("field", "column_offset").WithHint("pass next_column_offset from the previous get_schema answer")
	}
	size := 0
	var listed []string // queryable listed columns
	for i := req.ColumnOffset; i < len(fields); i++ {
		f := fields[i]
		cc := d.Card.Column(f.Name)
		note := d.ColumnNotes[f.Name]
		col := Column{Name: f.Name, Type: planner.TypeName(f.Type), Nullable: f.Nullable,
			Role: cc.Role, Description: cc.Description, Unit: cc.Unit, Format: note.Format, Hint: note.Hint, Warning: note.Warning}
		n := len(col.Name) + len(col.Type) + len(col.Role) + len(col.Description) + len(col.Unit) +
			len(col.Format) + len(col.Hint) + len(col.Warning) + 64
		if len(out.Columns) >= SchemaMaxColumns || (len(out.Columns) > 0 && size+n > SchemaMaxBytes) {
			out.ColumnsTruncated, out.NextColumnOffset = true, i
			break
		}
		size += n
		out.Columns = append(out.Columns, col)
		if _, bad := f.Metadata.GetValue(planner.UnsupportedMetaKey); !bad {
			listed = append(listed, f.Name)
		}
	}
	n := int64(5)
	if examples {
		n = 100
		if len(out.Columns) > 100 {
			n = 10 // bound the cells read for the examples of wide datasets
		}
	}
	spec := planner.Spec{Limit: &n}
	if out.ColumnsTruncated || req.ColumnOffset > 0 {
		if len(listed) == 0 {
			out.SampleRows = json.RawMessage("[]")
			return out, nil
		}
		spec.Columns = listed // sample the listed columns only
	}
	q, err := s.prepare(ctx, d, spec)
	if err != nil {
		return nil, err
	}
	t, err := q.run(ctx, 0)
	if err != nil {
		return nil, err
	}
	defer t.Release()
	if out.SampleRows, out.SampleRowsTruncated, err = boundedPreview(t, 5, SchemaSampleBytes); err != nil {
		return nil, err
	}
	if examples {
		if err := addExamples(t, out.Columns); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// Caps of get_schema answers (and schema card resources), so a dataset of
// thousands of columns or huge cells cannot produce a giant answer.
const (
	// SchemaMaxColumns is the most columns one answer lists.
	SchemaMaxColumns = 1000
	// SchemaMaxBytes bounds the (approximate) JSON bytes of the listed
	// columns; at least one column is always listed.
	SchemaMaxBytes = 256 << 10
	// SchemaSampleBytes bounds the JSON bytes of the sample rows: fewer
	// rows are shown when 5 do not fit, none when one does not.
	SchemaSampleBytes = 64 << 10
)

// boundedPreview is materialize.Preview of up to n rows of t, with as
// many rows as fit in limit JSON bytes; cut reports that rows were left out.
func boundedPreview(t *materialize.Table, n int, limit int) (json.RawMessage, bool, error) {
	n = min(n, int(t.NumRows()))
	for k := n; k > 0; k-- {
		raw, err := materialize.Preview(t, k)
		if err != nil {
			return nil, false, err
		}
		if len(raw) <= limit {
			return raw, k < n, nil
		}
	}
	return json.RawMessage("[]"), n > 0, nil
}

// addExamples fills Column.Examples with up to 3 distinct non-null values
// of each column among the rows of t.
func addExamples(t *materialize.Table, cols []Column) error {
	raw, err := materialize.Preview(t, int(t.NumRows()))
	if err != nil {
		return err
	}
	var rows []map[string]json.RawMessage
	if err := json.Unmarshal(raw, &rows); err != nil {
		return qerr.Internal(err, "decoding sample rows")
	}
	for i := range cols {
		var vals []json.RawMessage
		seen := map[string]bool{}
		for _, r := range rows {
			v := r[cols[i].Name]
			if len(v) == 0 || string(v) == "null" || seen[string(v)] || len(v) > 120 {
				continue
			}
			seen[string(v)] = true
			vals = append(vals, v)
			if len(vals) == 3 {
				break
			}
		}
		if len(vals) > 0 {
			b, err := json.Marshal(vals)
			if err != nil {
				return qerr.Internal(err, "encoding examples")
			}
			cols[i].Examples = b
		}
	}
	return nil
}

// Estimate plans the query and estimates its size (estimate_query), and
// describes the operators the engine runs for it.
func (s *Service) Estimate(ctx context.Context, req EstimateRequest) (*EstimateResponse, error) {
	ctx, cancel := s.withDeadline(ctx)
	defer cancel()
	return onDataset(ctx, s, req.Dataset, func(d *catalog.Dataset) (*EstimateResponse, error) {
		return s.estimateOn(ctx, d, req.Spec)
	})
}

// estimateOn is Estimate for dataset d.
func (s *Service) estimateOn(ctx context.Context, d *catalog.Dataset, spec planner.Spec) (*EstimateResponse, error) {
	q, err := s.prepare(ctx, d, spec)
	if err != nil {
		return nil, err
	}
	return s.estimatePrepared(ctx, d, q)
}

// estimatePrepared sizes a prepared query whose main dataset is d.
func (s *Service) estimatePrepared(ctx context.Context, d *catalog.Dataset, q *preparedQuery) (*EstimateResponse, error) {
	var sample int64
	if d.SizeBytes > s.cfg.ExactEstimateBytes && d.RowCount > s.cfg.SampleRows && !q.cached() {
		sample = s.cfg.SampleRows
	}
	phys, err := q.explain()
	if err != nil {
		return nil, err
	}
	est, err := q.estimate(ctx, sample)
	if err != nil {
		return nil, err
	}
	defer est.table.Release()
	caps := s.cfg.Materializer.Caps()
	out := &EstimateResponse{EstimateKind: est.kind, Plan: planner.String(est.plan), PhysicalPlan: phys.String(), Warnings: []string{},
		RowEstimate: est.rows, ByteEstimate: est.bytes}
	if b := s.resultBound(q); b.Rows != planner.Unbounded {
		out.RowBound = &b.Rows
	}
	if est.kind == estimateSampled {
		out.Warnings = append(out.Warnings, fmt.Sprintf(
			"estimate extrapolated from the first %d of %d rows; the real count may differ", sample, d.RowCount))
	}
	if est.kind == estimateFormula {
		out.Warnings = append(out.Warnings, fmt.Sprintf(
			"a cross join: about %d rows, the product of the joined datasets' row counts (not run)", est.rows))
	}
	if out.Preview, err = materialize.Preview(est.table, 5); err != nil {
		return nil, err
	}
	out.SuggestedCaps = SuggestedCaps{MaxRows: min(max(out.RowEstimate, 1), caps.MaxRows), MaxBytes: caps.MaxBytes}
	cols := int64(est.table.Schema().NumFields())
	switch {
	case out.RowEstimate > caps.MaxRows || out.ByteEstimate > caps.MaxBytes || out.RowEstimate*cols > caps.MaxCells:
		out.Warnings = append(out.Warnings, fmt.Sprintf(
			"about %d rows (%d bytes as JSON) exceed the inline caps (%d rows, %d bytes, %d cells): query_data will return a paged result handle (output_format json) or a file resource (csv or parquet); narrow with filters, columns, aggregates or a limit to get it inline",
			out.RowEstimate, out.ByteEstimate, caps.MaxRows, caps.MaxBytes, caps.MaxCells))
	case out.RowEstimate == 0:
		out.Warnings = append(out.Warnings, "the query matches no rows; check filter values with distinct_values or get_schema sample rows")
	}
	if s.overThreshold(out.RowEstimate, out.ByteEstimate) {
		out.Warnings = append(out.Warnings, fmt.Sprintf(
			"the result is above the confirmation threshold (%d rows or %d bytes): query_data will ask the user first; prefer an aggregate or output_format parquet",
			s.cfg.ConfirmRows, s.cfg.ConfirmBytes))
	}
	obs.Logger(ctx).Info("estimate", "dataset", d.ID, "estimate_kind", est.kind, "row_estimate", out.RowEstimate,
		"byte_estimate", out.ByteEstimate, "plan", planSummary(est.plan))
	return out, nil
}

// Estimate kinds.
const (
	estimateExact   = "exact"
	estimateSampled = "sampled"
)

// estimation is the outcome of running a query (or its sampled version) to size it.
type estimation struct {
	table *materialize.Table // the result (of the sample when kind is sampled); caller releases
	plan  planner.Node
	kind  string // estimateExact or estimateSampled
	rows  int64  // estimated result rows
	bytes int64  // estimated result bytes as inline JSON
}

// extrapolate scales the row count of a query over the first sample rows
// to the whole dataset. Global aggregates always give one row; a limit caps it.
func extrapolate(got, sample, total int64, spec planner.Spec) int64 {
	est := got
	switch {
	case len(spec.Aggs) > 0 && len(spec.GroupBy) == 0:
		est = 1
	case len(spec.GroupBy) > 0 || spec.Distinct || spec.Deduplicate:
		// Group and distinct counts grow sub-linearly; the sample's count is a lower bound.
	default:
		if sample > 0 {
			est = int64(float64(got) * float64(total) / float64(sample))
		}
	}
	if spec.TopN != nil && len(spec.Aggs) > 0 {
		est = min(est, *spec.TopN)
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

// planSummary is the plan on one line, for logs.
func planSummary(plan planner.Node) string {
	return strings.ReplaceAll(strings.TrimSpace(planner.String(plan)), "\n", " | ")
}

// Query runs the query and delivers the result (query_data). When the
// estimated result is above the confirmation threshold and req.Confirm is
// false it does not deliver anything and answers needs_confirmation.
func (s *Service) Query(ctx context.Context, req QueryRequest) (*QueryResponse, error) {
	if err := checkShape(req.Shape); err != nil {
		return nil, err
	}
	r, err := s.query(ctx, req, "query_data")
	return shapeQuery(r, err, req.Shape)
}

// Aggregate runs a grouped summary (aggregate): Query with a spec of
// group_by, aggs, filters, having, top_n, order_by, windows over the groups
// and post-aggregation columns.
func (s *Service) Aggregate(ctx context.Context, req AggregateRequest) (*QueryResponse, error) {
	if err := checkShape(req.Shape); err != nil {
		return nil, err
	}
	if len(req.Aggs) == 0 {
		return nil, qerr.Invalid(qerr.CodeInvalidAggregate, "aggs is empty").With("field", "aggs").
			WithHint(`pass at least one aggregate, e.g. [{"col": "*", "fn": "count"}]`)
	}
	q := QueryRequest{
		EstimateRequest: EstimateRequest{Dataset: req.Dataset, Spec: planner.Spec{
			GroupBy: req.GroupBy, Aggs: req.Aggs, Filters: req.Filters, TopN: req.TopN, OrderBy: req.OrderBy, Having: req.Having, Join: req.Join,
			Windows: req.Windows, Columns: req.Columns,
		}},
		DeliveryOptions: req.DeliveryOptions,
	}
	r, err := s.query(ctx, q, "aggregate")
	return shapeQuery(r, err, req.Shape)
}

func (s *Service) query(ctx context.Context, req QueryRequest, tool string) (*QueryResponse, error) {
	ctx, cancel := s.withDeadline(ctx)
	defer cancel()
	if req.Explain != "" && req.Explain != ExplainAnalyze {
		return nil, qerr.Invalid(qerr.CodeInvalidArgument, "unknown explain mode %q", req.Explain).With("field", "explain").
			WithHint(`explain takes "analyze" (run the query and return per-operator statistics); estimate_query shows the plan without running it`)
	}
	if len(req.Datasets) > 0 {
		if req.Dataset != "" && !slices.Contains(req.Datasets, req.Dataset) {
			req.Datasets = append([]string{req.Dataset}, req.Datasets...)
		}
		return s.queryUnion(ctx, req, tool)
	}
	return onDataset(ctx, s, req.Dataset, func(d *catalog.Dataset) (*QueryResponse, error) {
		return s.queryOn(ctx, d, req, tool)
	})
}

// queryOn is query for dataset d.
func (s *Service) queryOn(ctx context.Context, d *catalog.Dataset, req QueryRequest, tool string) (*QueryResponse, error) {
	start := time.Now()
	q, err := s.prepare(ctx, d, req.Spec)
	if err != nil {
		return nil, err
	}
	return s.runPrepared(ctx, d, q, req, tool, start)
}

// resultBound is what q's plan proves about its result's rows and inline
// JSON bytes (planner.ResultBound, under the encoder's cell cap, with what
// the sources already know of their columns: the column cache's
// dictionaries and computed zone maps).
func (s *Service) resultBound(q *preparedQuery) planner.Bound {
	cells := max(s.cfg.Materializer.Caps().MaxCellChars, materialize.DefaultMaxCellChars)
	return planner.ResultBound(q.plan, planner.BoundOptions{MaxCellChars: cells, Stats: q.columnStats})
}

// runPrepared runs a prepared query whose main dataset is d and delivers
// it (the confirmation preflight, explain analyze and the materializer).
func (s *Service) runPrepared(ctx context.Context, d *catalog.Dataset, q *preparedQuery, req QueryRequest, tool string, start time.Time) (*QueryResponse, error) {
	log := obs.Logger(ctx).With("dataset", d.ID)
	if err := checkRound(req.Round); err != nil {
		return nil, err
	}
	q.round = req.Round
	var err error
	var (
		t        *materialize.Table
		ops      *engine.Operator
		decision = "not_needed"
	)
	if !req.Confirm && s.confirmEnabled() {
		if b := s.resultBound(q); !s.overThreshold(b.Rows, b.Bytes) {
			// The plan proves the result is under both thresholds: it
			// runs once, without the preflight.
			decision = "bounded"
			log = log.With("row_bound", b.Rows, "byte_bound", b.Bytes)
		} else {
			// Preflight: small datasets run in full (the result is reused),
			// big ones are sized from their first SampleRows rows.
			var sample int64
			if d.RowCount > s.cfg.SampleRows {
				sample = s.cfg.SampleRows
			}
			est, err := q.estimate(ctx, sample)
			if err != nil {
				return nil, err
			}
			log = log.With("estimate_kind", est.kind, "row_estimate", est.rows, "byte_estimate", est.bytes)
			if s.overThreshold(est.rows, est.bytes) {
				est.table.Release()
				log.Info("query needs confirmation", "tool", tool, "plan", planSummary(q.plan),
					"confirm_rows", s.cfg.ConfirmRows, "confirm_bytes", s.cfg.ConfirmBytes, "duration_ms", time.Since(start).Milliseconds())
				return s.needsConfirmation(est, tool, req), nil
			}
			decision = "under_threshold"
			if est.kind == estimateExact && req.Explain == "" {
				t = est.table
			} else {
				est.table.Release()
			}
		}
	} else if req.Confirm {
		decision = "confirmed"
	}
	switch {
	case t != nil:
	case req.Explain == ExplainAnalyze:
		if t, ops, err = q.analyze(ctx); err != nil {
			return nil, err
		}
		log.Debug("explain analyze", "operators", statsText(ops))
	default:
		if t, err = q.run(ctx, 0); err != nil {
			return nil, err
		}
	}
	defer t.Release()
	res, err := s.cfg.Materializer.Deliver(ctx, t, materialize.Request{
		Format: req.OutputFormat, MaxRows: req.MaxRows, MaxBytes: req.MaxBytes, Principal: obs.Principal(ctx),
	})
	if err != nil {
		return nil, ctxErr(ctx, err)
	}
	log.Info("query", "tool", tool, "plan", planSummary(q.plan), "confirmation", decision,
		"method", res.Method, "truncated", res.Truncated, "rows", res.RowCount, "total_rows", res.TotalRows,
		"bytes", len(res.Data)+int(res.SizeBytes), "duration_ms", time.Since(start).Milliseconds())
	out := &QueryResponse{Result: res}
	if ops != nil {
		out.Analyze = analysisOf(ops)
	}
	return out, nil
}

// NextPage serves the next page of a result handle (query_next_page).
func (s *Service) NextPage(ctx context.Context, req NextPageRequest) (*materialize.Result, error) {
	if req.ResultHandle == "" || req.PageToken == "" {
		return nil, qerr.Invalid(qerr.CodeInvalidArgument, "result_handle and page_token are required").
			WithHint("pass result_handle and page_info.page_token from the previous query_data or query_next_page result")
	}
	if err := checkShape(req.Shape); err != nil {
		return nil, err
	}
	res, err := s.cfg.Materializer.NextPage(ctx, req.ResultHandle, req.PageToken, req.Format, obs.Principal(ctx))
	if err != nil {
		return nil, err
	}
	if err := applyShape(res, req.Shape); err != nil {
		return nil, err
	}
	obs.Logger(ctx).Info("next_page", "handle", req.ResultHandle, "method", res.Method, "rows", res.RowCount, "total_rows", res.TotalRows)
	return res, nil
}

// lookup finds a dataset; while the catalog's first scan runs, it waits
// (bounded by ctx) for an id not known yet.
func (s *Service) lookup(ctx context.Context, id string) (*catalog.Dataset, error) {
	if strings.TrimSpace(id) == "" {
		return nil, qerr.Invalid(qerr.CodeInvalidArgument, "dataset is required").
			With("field", "dataset").WithHint("call get_catalog to list dataset ids")
	}
	return s.cfg.Catalog.LookupContext(ctx, id)
}

// deadlineKey marks a context that carries its request's query deadline.
type deadlineKey struct{}

// withDeadline starts the request's one query deadline, QueryTimeout from
// now, unless ctx already carries it: every phase of a request (planning,
// the confirmation preflight, the run, delivery) shares the same deadline
// instead of each starting its own. Entry points call it first.
func (s *Service) withDeadline(ctx context.Context) (context.Context, context.CancelFunc) {
	if ctx.Value(deadlineKey{}) != nil {
		return ctx, func() {}
	}
	ctx, cancel := context.WithTimeout(ctx, s.cfg.QueryTimeout)
	return context.WithValue(ctx, deadlineKey{}, true), cancel
}

// ctxErr turns err into the timeout or cancelled error when ctx is done
// (whatever failed failed because of it), else returns err unchanged.
func ctxErr(ctx context.Context, err error) error {
	if err != nil && ctx.Err() != nil {
		return qerr.As(ctx.Err())
	}
	return err
}

// headSource reads only the first rows rows of a source (sampled estimates).
type headSource struct {
	src  catalog.Source
	rows int64
}

// Scan implements catalog.Source: the first rows only. It drops the zone
// and pushed filters: a sample is the first rows of the file, skipped or
// filtered out or not (the engine applies the filters to the sample).
func (h headSource) Scan(ctx context.Context, opts catalog.ScanOptions) (array.RecordReader, error) {
	opts.ZoneFilters, opts.Filters = nil, nil
	opts.SkipRows, opts.Skipped = 0, nil
	opts.Limit = h.rows // the reader stops there (a remote reads no more)
	rr, err := h.src.Scan(ctx, opts)
	if err != nil {
		return nil, err
	}
	return &headReader{RecordReader: rr, left: h.rows}, nil
}

// Resource URIs.
const (
	// CatalogURI is the catalog card resource.
	CatalogURI = "quarry://catalog"
	// DatasetURIPrefix starts the per-dataset resource URIs.
	DatasetURIPrefix = "quarry://datasets/"
)

// Per-dataset resource kinds (the last URI segment).
const (
	ResourceSchema  = "schema"
	ResourceCatalog = "catalog"
	ResourceSummary = "summary"
)

// DatasetURI is the URI of a per-dataset resource (kind is schema, catalog
// or summary); the id is percent-encoded (/ as %2F).
func DatasetURI(dataset, kind string) string {
	return DatasetURIPrefix + url.PathEscape(dataset) + "/" + kind
}

// ParseDatasetURI splits a per-dataset resource URI into the dataset id and
// the kind; ok is false when uri is not one.
func ParseDatasetURI(uri string) (dataset, kind string, ok bool) {
	rest, found := strings.CutPrefix(uri, DatasetURIPrefix)
	if !found {
		return "", "", false
	}
	i := strings.LastIndexByte(rest, '/')
	if i <= 0 {
		return "", "", false
	}
	kind = rest[i+1:]
	if kind != ResourceSchema && kind != ResourceCatalog && kind != ResourceSummary {
		return "", "", false
	}
	id, err := url.PathUnescape(rest[:i])
	if err != nil || id == "" {
		return "", "", false
	}
	return id, kind, true
}

// ReadResource reads one of Quarry's own resources: artifacts, the catalog
// card and the per-dataset schema card, catalog entry and summary. It
// returns the bytes and their MIME type.
func (s *Service) ReadResource(ctx context.Context, uri string) ([]byte, string, error) {
	var v any
	switch {
	case artifactURI(uri):
		return s.readArtifact(ctx, uri)
	case strings.HasPrefix(uri, ResultsURIPrefix):
		b, err := s.ReadResultPage(ctx, uri)
		if err != nil {
			return nil, "", err
		}
		return b, "application/json", nil
	case uri == CatalogURI:
		c, err := s.Catalog(ctx, CatalogRequest{all: true})
		if err != nil {
			return nil, "", err
		}
		v = c
	case strings.HasPrefix(uri, DatasetURIPrefix):
		id, kind, ok := ParseDatasetURI(uri)
		if !ok {
			return nil, "", qerr.NotFound(qerr.CodeResourceNotFound, "malformed dataset resource URI %q", uri).
				WithHint("use quarry://datasets/{dataset}/schema, /catalog or /summary with the dataset id percent-encoded (/ as %%2F)")
		}
		var err error
		switch kind {
		case ResourceSchema:
			v, err = s.schema(ctx, SchemaRequest{Dataset: id}, true)
		case ResourceCatalog:
			var d *catalog.Dataset
			if d, err = s.lookup(ctx, id); err == nil {
				v = entryOf(d)
			}
		case ResourceSummary:
			v, err = s.Summary(ctx, id)
		}
		if err != nil {
			return nil, "", err
		}
	default:
		return nil, "", qerr.NotFound(qerr.CodeResourceNotFound, "no resource %q", uri).
			WithHint("resources are quarry://catalog, quarry://datasets/{dataset}/schema|catalog|summary and quarry://artifacts/{id} from query results")
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil, "", qerr.Internal(err, "encoding resource %s", uri)
	}
	return b, "application/json", nil
}
