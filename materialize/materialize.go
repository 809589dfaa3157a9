package materialize

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync/atomic"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"go.opentelemetry.io/otel/attribute"

	"github.com/quarrydb/quarry/handles"
	"github.com/quarrydb/quarry/internal/artifacts"
	"github.com/quarrydb/quarry/internal/qerr"
	"github.com/quarrydb/quarry/internal/tracing"
	"github.com/quarrydb/quarry/planner"
)

// Default caps, applied for zero Caps fields.
const (
	// DefaultMaxRows is the inline row cap when Caps.MaxRows is 0.
	DefaultMaxRows = 200
	// DefaultMaxBytes is the inline JSON byte cap when Caps.MaxBytes is 0.
	DefaultMaxBytes = 65536
	// DefaultMaxCells is the inline cell (rows × columns) cap when Caps.MaxCells is 0.
	DefaultMaxCells = 10000
	// DefaultPageRows is the handle page size when Caps.PageRows is 0.
	DefaultPageRows = 200
	// DefaultMaxCellChars is the per-cell character limit of inline JSON when
	// Caps.MaxCellChars is 0.
	DefaultMaxCellChars = 2000
	// DefaultPreviewRows is Config.PreviewRows when it is 0.
	DefaultPreviewRows = 10
	// DefaultSpillRows is Config.SpillRows when it is 0.
	DefaultSpillRows = 1_000_000
	// DefaultSpillBytes is Config.SpillBytes when it is 0.
	DefaultSpillBytes = 256 << 20
)

// Output formats.
const (
	// FormatJSON is records inline (direct, or paged through a handle).
	FormatJSON = "json"
	// FormatCSV is an RFC 4180 CSV file artifact.
	FormatCSV = "csv"
	// FormatParquet is a Parquet file artifact (the default file format).
	FormatParquet = "parquet"
	// FormatArrow is an Arrow IPC file artifact; only when
	// Config.EnableArrowIPC is set.
	FormatArrow = "arrow"
)

// Delivery methods (Result.Method).
const (
	// MethodDirect: every row is in Result.Data.
	MethodDirect = "direct"
	// MethodFile: the rows are in an artifact (Result.ResourceURI).
	MethodFile = "file"
	// MethodHandle: Result.Data is one page of a result handle.
	MethodHandle = "handle"
)

// Caps bounds what one response may carry inline. Negative values are
// treated as 0 (the default). The JSON names are those of the limits a
// server reports (get_server_info).
type Caps struct {
	// MaxRows is the most rows returned inline; 0 means DefaultMaxRows (200).
	MaxRows int64 `json:"max_rows"`
	// MaxBytes is the most bytes of serialized inline JSON data (the "data"
	// array, brackets and commas included); 0 means DefaultMaxBytes (65536).
	MaxBytes int64 `json:"max_bytes"`
	// MaxCells is the most inline cells, rows × columns; 0 means
	// DefaultMaxCells (10000).
	MaxCells int64 `json:"max_cells"`
	// PageRows is the most rows per result-handle page; 0 means
	// DefaultPageRows (200). Pages are also bounded by MaxBytes and MaxCells
	// (but hold at least one row).
	PageRows int64 `json:"page_rows"`
	// MaxCellChars is the most characters of one cell value in inline JSON
	// (direct data, handle pages, previews; never in files): longer strings,
	// binary (as base64) and nested values are cut and end with the marker
	// "…[truncated N chars]". 0 means DefaultMaxCellChars (2000). It is a
	// server setting only: per-call requests cannot change it.
	MaxCellChars int64 `json:"max_cell_chars"`
}

// withDefaults fills zero (or negative) fields with the defaults.
func (c Caps) withDefaults() Caps {
	def := func(v, d int64) int64 {
		if v <= 0 {
			return d
		}
		return v
	}
	return Caps{
		MaxRows:      def(c.MaxRows, DefaultMaxRows),
		MaxBytes:     def(c.MaxBytes, DefaultMaxBytes),
		MaxCells:     def(c.MaxCells, DefaultMaxCells),
		PageRows:     def(c.PageRows, DefaultPageRows),
		MaxCellChars: def(c.MaxCellChars, DefaultMaxCellChars),
	}
}

// Config configures a Materializer.
type Config struct {
	// Hard are the server's hard caps (serve flags); zero fields mean the
	// defaults (see Caps). Per-call limits may only lower them.
	Hard Caps
	// Artifacts stores file results (parquet, csv). nil: a request that
	// needs a file fails with an internal error.
	Artifacts *artifacts.Store
	// Handles stores paged results. nil: a request that needs a handle
	// fails with an internal error.
	Handles *handles.Registry[*Table]
	// PreviewRows is the number of rows previewed in file results; 0 means
	// DefaultPreviewRows (10), negative means no preview. The preview is
	// also bounded by the effective MaxCells and MaxBytes (not by MaxRows:
	// a preview is a fixed, small sample).
	PreviewRows int
	// EnableArrowIPC allows the "arrow" output format (Arrow IPC files).
	// false (the default): "arrow" is an unsupported_format error whose
	// hint names the serve flag --enable-arrow-ipc.
	EnableArrowIPC bool
	// ExposeFilePaths adds the artifact's absolute path (Result.FilePath)
	// to file results, for clients on the same machine. false (the
	// default): paths are never shown.
	ExposeFilePaths bool
	// SpillRows: a result of more than SpillRows rows is spilled to a
	// Parquet file in the artifact store while it is collected (Collect),
	// so that a result handle holds disk, not memory. 0 means
	// DefaultSpillRows (1,000,000); negative means never by row count.
	SpillRows int64
	// SpillBytes: a result holding more than SpillBytes bytes of Arrow
	// buffers is spilled likewise. 0 means DefaultSpillBytes (256 MiB);
	// negative means never by size.
	SpillBytes int64
	// ParquetCodec compresses the pages of Parquet artifacts (result files
	// and pages switched to parquet). "" means ParquetSnappy, the default;
	// ParquetZstd writes smaller files with more CPU;
	// ParquetUncompressed stores pages as they are. Spill files use the same
	// codec (a whole result's spill file is handed out as its Parquet
	// file). An unknown codec fails every Parquet write with
	// invalid_argument: check flags with ParseParquetCodec.
	ParquetCodec ParquetCodec
	// ShareHandles spills every result put behind a handle to a file of
	// the artifact store first, so that replicas sharing the store's
	// directory serve its pages (see shared.go; the registry's Remote is
	// SharedHandles).
	ShareHandles bool
}

// Materializer enforces the caps and picks how a result is delivered
// (inline, file artifact or paged handle). It is safe for concurrent use.
type Materializer struct {
	hard         Caps
	store        *artifacts.Store
	handles      *handles.Registry[*Table]
	previewRows  int
	arrowIPC     bool
	filePaths    bool
	spillRows    int64
	spillBytes   int64
	codec        ParquetCodec // of Parquet artifacts
	shareHandles bool
	spilled      atomic.Int64 // bytes of committed spill files (SpilledBytes)
}

// SpilledBytes is the bytes of the spill files Collect has written since
// the Materializer was made (a server's spill metric).
func (m *Materializer) SpilledBytes() int64 { return m.spilled.Load() }

// New returns a Materializer for cfg.
func New(cfg Config) *Materializer {
	pr := cfg.PreviewRows
	if pr == 0 {
		pr = DefaultPreviewRows
	}
	def := func(v, d int64) int64 {
		if v == 0 {
			return d
		}
		return v
	}
	return &Materializer{
		hard: cfg.Hard.withDefaults(), store: cfg.Artifacts, handles: cfg.Handles, previewRows: max(pr, 0),
		arrowIPC: cfg.EnableArrowIPC, filePaths: cfg.ExposeFilePaths,
		spillRows: def(cfg.SpillRows, DefaultSpillRows), spillBytes: def(cfg.SpillBytes, DefaultSpillBytes),
		codec: cfg.ParquetCodec, shareHandles: cfg.ShareHandles,
	}
}

// Caps returns the effective hard caps (defaults filled in): the server's
// limits, which per-call values may only lower.
func (m *Materializer) Caps() Caps { return m.hard }

// Formats returns the output formats this Materializer accepts, json first.
func (m *Materializer) Formats() []string {
	f := []string{FormatJSON, FormatCSV, FormatParquet}
	if m.arrowIPC {
		f = append(f, FormatArrow)
	}
	return f
}

// Request is one delivery request.
type Request struct {
	// Format is the requested output format: "", "json", "csv", "parquet"
	// or (with Config.EnableArrowIPC) "arrow"; "" means json. Anything else
	// is an unsupported_format error. It matters only when the result is
	// over the inline caps: json pages through a result handle, the others
	// write a file.
	Format string
	// MaxRows is the per-call inline row cap; 0 means the hard cap. It can
	// only lower the hard cap: a larger value is clamped, with a warning. It
	// also lowers the handle page size.
	MaxRows int64
	// MaxBytes is the per-call inline JSON byte cap; 0 means the hard cap.
	// Like MaxRows it can only lower it. It bounds the direct result and
	// every handle page: the page tokens carry it (signed).
	MaxBytes int64
	// Principal is stored on handles: only the same principal may page.
	Principal string
}

// Result is the tool output of a query; the JSON field names are part of
// the product contract (docs/DELIVERY.md).
type Result struct {
	// Method is how the rows are delivered: direct, file or handle.
	Method string `json:"method"`
	// Data holds the rows of a direct or handle response: a JSON array of
	// records (objects keyed by column name, in schema order).
	Data json.RawMessage `json:"data,omitempty"`
	// RowCount is the number of rows in this response: data rows for
	// direct/handle, rows in the file for file.
	RowCount int64 `json:"row_count"`
	// TotalRows is the number of rows in the whole result.
	TotalRows int64 `json:"total_rows"`
	// Truncated is true iff rows of the result after this response's rows
	// are withheld from it (more pages exist). A last page is not truncated
	// even though earlier pages were delivered by earlier calls.
	Truncated bool `json:"truncated"`
	// ResourceURI is the artifact URI of a file result (read it with
	// read_result or resources/read).
	ResourceURI string `json:"resource_uri,omitempty"`
	// DownloadURL is a signed, expiring HTTP URL of the file (over the HTTP
	// transport only), with Range support.
	DownloadURL string `json:"download_url,omitempty"`
	// FilePath is the artifact's absolute path on the server's machine;
	// only when the server exposes file paths (Config.ExposeFilePaths).
	FilePath string `json:"file_path,omitempty"`
	// Format is parquet, csv or arrow for a file, json for direct and handle.
	Format string `json:"format,omitempty"`
	// SizeBytes is the file size of a file result.
	SizeBytes int64 `json:"size_bytes,omitempty"`
	// MIMEType is the file's MIME type.
	MIMEType string `json:"mime_type,omitempty"`
	// Preview holds the first rows of the file (records, like Data).
	Preview json.RawMessage `json:"preview,omitempty"`
	// Columns is the schema of a file result (clients handle resource links
	// inconsistently, so the schema is also given inline).
	Columns []ColumnInfo `json:"columns,omitempty"`
	// ResultHandle is the handle to page through the result with.
	ResultHandle string `json:"result_handle,omitempty"`
	// PageInfo describes this page (handle results, and file pages served
	// by NextPage).
	PageInfo *PageInfo `json:"page_info,omitempty"`
	// Shape is the layout of Data and Preview when it is not records
	// (ShapeColumns, ShapeCSV; see Reshape).
	Shape string `json:"shape,omitempty"`
	// Warnings are caveats for the caller (clamped caps, why the result was
	// not inline, how to get the rest). Never null: [] when empty.
	Warnings []string `json:"warnings"`
}

// PageInfo describes one page of a result handle.
type PageInfo struct {
	// PageToken is the opaque token for the NEXT page; empty when HasMore is false.
	PageToken string `json:"page_token,omitempty"`
	// Offset is the result row offset of this page's first row (0-based).
	Offset int64 `json:"offset"`
	// Size is the number of rows in this page.
	Size int64 `json:"size"`
	// HasMore reports whether rows after this page exist.
	HasMore bool `json:"has_more"`
}

// ColumnInfo is the name and Arrow type of one result column.
type ColumnInfo struct {
	// Name is the column's output name (see ColumnNames).
	Name string `json:"name"`
	// Type is the Arrow type, as arrow.DataType.String() ("int64",
	// "timestamp[ms, tz=UTC]", "list<item: utf8, nullable>", ...).
	Type string `json:"type"`
}

// normalizeFormat maps "" to json and rejects unknown or disabled formats.
func (m *Materializer) normalizeFormat(f string) (string, error) {
	switch v := strings.ToLower(strings.TrimSpace(f)); v {
	case "", FormatJSON:
		return FormatJSON, nil
	case FormatCSV, FormatParquet:
		return v, nil
	case FormatArrow:
		if m.arrowIPC {
			return v, nil
		}
		return "", qerr.Unsupported(qerr.CodeUnsupportedFormat, "output format arrow (Arrow IPC) is not enabled on this server").
			WithHint("use json, csv or parquet; arrow needs the server started with `quarry serve --enable-arrow-ipc`").
			With("supported", m.Formats())
	}
	hint := "use one of: " + strings.Join(m.Formats(), ", ")
	if !m.arrowIPC {
		hint += " (arrow needs the server started with --enable-arrow-ipc)"
	}
	return "", qerr.Unsupported(qerr.CodeUnsupportedFormat, "output format %q is not supported", clip(f)).
		WithHint("%s", hint).
		With("supported", m.Formats())
}

// isFileFormat reports whether format is delivered as a file artifact.
func isFileFormat(format string) bool {
	return format == FormatCSV || format == FormatParquet || format == FormatArrow
}

// effective applies a request's per-call caps to the hard caps.
func (m *Materializer) effective(req Request) (Caps, []string, error) {
	c := m.hard
	warnings := []string{}
	if req.MaxRows < 0 {
		return c, nil, qerr.Invalid(qerr.CodeInvalidArgument, "max_rows must be positive, got %d", req.MaxRows).
			WithHint("omit max_rows to use the server cap (%d)", c.MaxRows)
	}
	if req.MaxBytes < 0 {
		return c, nil, qerr.Invalid(qerr.CodeInvalidArgument, "max_bytes must be positive, got %d", req.MaxBytes).
			WithHint("omit max_bytes to use the server cap (%d)", c.MaxBytes)
	}
	switch {
	case req.MaxRows > c.MaxRows:
		warnings = append(warnings, fmt.Sprintf("max_rows %d is above the server cap of %d rows; using %d", req.MaxRows, c.MaxRows, c.MaxRows))
	case req.MaxRows > 0:
		c.MaxRows = req.MaxRows
		c.PageRows = min(c.PageRows, req.MaxRows)
	}
	switch {
	case req.MaxBytes > c.MaxBytes:
		warnings = append(warnings, fmt.Sprintf("max_bytes %d is above the server cap of %d bytes; using %d", req.MaxBytes, c.MaxBytes, c.MaxBytes))
	case req.MaxBytes > 0:
		c.MaxBytes = req.MaxBytes
	}
	return c, warnings, nil
}

// cellsFit reports whether rows × cols ≤ maxCells (without overflow).
func cellsFit(rows, cols, maxCells int64) bool {
	return cols == 0 || rows <= maxCells/cols
}

// Deliver applies the delivery rule to t and returns the tool output:
//
//   - format csv, parquet or arrow (asked for explicitly): method file, an
//     artifact holding all rows however few, with a preview, the columns and
//     a warning naming the URI;
//   - otherwise (json), the whole result fits the inline caps (rows ≤
//     MaxRows, rows × columns ≤ MaxCells, JSON bytes ≤ MaxBytes): method
//     direct;
//   - otherwise: method handle, t stored in the handle registry and
//     its first page inline, with a page token for the next one.
//
// Cell values longer than Caps.MaxCellChars characters are shortened in
// the inline JSON (never in files), with a warning counting them.
//
// Deliver takes ownership of nothing: it Retains t when it stores it in a
// handle; the caller still Releases its own reference.
func (m *Materializer) Deliver(ctx context.Context, t *Table, req Request) (*Result, error) {
	ctx, span := tracing.Start(ctx, "materialize", attribute.String("quarry.format", req.Format))
	defer span.End()
	if t == nil {
		return nil, qerr.Internal(errors.New("nil table"), "no result to deliver")
	}
	format, err := m.normalizeFormat(req.Format)
	if err != nil {
		return nil, err
	}
	caps, warnings, err := m.effective(req)
	if err != nil {
		return nil, err
	}
	total, cols := t.NumRows(), t.NumCols()

	if isFileFormat(format) { // the caller asked for a file: a file, however small
		res, err := m.fileResult(ctx, t, 0, total, format, caps, req.Principal)
		if err != nil {
			return nil, err
		}
		res.Warnings = append(warnings, fmt.Sprintf("the result (%d rows) was written to %s (%s, %d bytes) as asked; %s",
			total, res.ResourceURI, format, res.SizeBytes, ReadFileHint))
		res.Warnings = append(res.Warnings, res.pageWarnings...)
		res.pageWarnings = nil
		return &res.Result, nil
	}

	bytesOver := false
	if total <= caps.MaxRows && cellsFit(total, cols, caps.MaxCells) {
		enc, err := encodeRows(ctx, t, 0, total, caps.MaxBytes, int(caps.MaxCellChars))
		if err != nil {
			return nil, qerr.As(err)
		}
		if enc.rows == total {
			warnings = appendShortened(warnings, enc.shortened, caps.MaxCellChars)
			return &Result{
				Method: MethodDirect, Data: enc.data, RowCount: total, TotalRows: total,
				Format: FormatJSON, Warnings: warnings,
			}, nil
		}
		bytesOver = true
	}
	reason := overReason(caps, total, cols, bytesOver)

	if m.handles == nil {
		return nil, qerr.Internal(errors.New("materialize: no handle registry configured"), "the result is too large to return inline and result handles are not available")
	}
	pg, err := m.page(ctx, t, 0, caps.PageRows, caps.MaxBytes, caps.MaxCells, caps.MaxCellChars)
	if err != nil {
		return nil, err
	}
	tokBytes := int64(0) // 0: the server cap
	if caps.MaxBytes < m.hard.MaxBytes {
		tokBytes = caps.MaxBytes
	}
	held, err := m.shareable(ctx, t, req.Principal)
	if err != nil {
		return nil, err
	}
	id := m.handles.Put(held, req.Principal)
	res := m.handleResult(id, t, 0, pg.rows, caps.PageRows, tokBytes, pg.data)
	res.Warnings = append(warnings, fmt.Sprintf("the result has %d rows (%s), so it is paged", total, reason))
	res.Warnings = append(res.Warnings, pg.warnings...)
	if res.PageInfo.HasMore {
		res.Warnings = append(res.Warnings, fmt.Sprintf(
			"showing rows %d–%d of %d; call query_next_page with result_handle and page_info.page_token for the next page, or re-run with output_format=parquet for a file",
			1, pg.rows, total))
	} else { // only when the page size is configured above the inline caps
		res.Warnings = append(res.Warnings, fmt.Sprintf("all %d rows fit in this single page", total))
	}
	return res, nil
}

// NextPage serves the page pageToken points at, of the result behind
// handleID. format "" means the token's format; json yields a handle-shaped
// result (data + page_info), csv, parquet or arrow a file holding just that
// page's rows (plus page_info). Errors: a tampered, foreign or out-of-range
// token is invalid_page_token; an unknown or expired handle (or another
// principal's) is handle_expired.
//
// The same token always yields the same rows: the page starts at the
// token's offset and its length is computed deterministically from the
// token's page size and byte cap, the hard caps and the data.
func (m *Materializer) NextPage(ctx context.Context, handleID, pageToken, format, principal string) (*Result, error) {
	if m.handles == nil {
		return nil, qerr.Internal(errors.New("materialize: no handle registry configured"), "result handles are not available")
	}
	tok, err := m.handles.Verify(pageToken, handleID)
	if err != nil {
		return nil, err
	}
	if format == "" {
		format = tok.Format
	}
	format, err = m.normalizeFormat(format)
	if err != nil {
		return nil, err
	}
	if tok.Offset < 0 || tok.Size <= 0 || tok.MaxBytes < 0 {
		return nil, invalidToken("the page token is malformed")
	}
	t, err := m.handles.Get(handleID, principal)
	if err != nil {
		return nil, err
	}
	defer t.Release()
	total := t.NumRows()
	if tok.Offset >= total {
		return nil, invalidToken(fmt.Sprintf("the page token points past the end of the result (offset %d, %d rows)", tok.Offset, total))
	}
	size := min(tok.Size, m.hard.PageRows)
	caps := m.hard
	if tok.MaxBytes > 0 && tok.MaxBytes < caps.MaxBytes {
		caps.MaxBytes = tok.MaxBytes
	}

	if isFileFormat(format) {
		n := min(size, total-tok.Offset)
		res, err := m.fileResult(ctx, t, tok.Offset, n, format, caps, principal)
		if err != nil {
			return nil, err
		}
		next := tok.Offset + n
		res.ResultHandle = handleID
		res.PageInfo = &PageInfo{Offset: tok.Offset, Size: n, HasMore: next < total}
		res.Truncated = next < total
		msg := fmt.Sprintf("rows %d–%d of %d were written to %s (%s, %d bytes); %s",
			tok.Offset+1, next, total, res.ResourceURI, format, res.SizeBytes, ReadFileHint)
		if next < total {
			res.PageInfo.PageToken = m.handles.Sign(handles.Token{Handle: handleID, Offset: next, Size: tok.Size, Format: format, MaxBytes: tok.MaxBytes})
			msg += "; call query_next_page with result_handle and page_info.page_token for the next page"
		}
		res.Warnings = append([]string{msg}, res.pageWarnings...)
		res.pageWarnings = nil
		return &res.Result, nil
	}

	pg, err := m.page(ctx, t, tok.Offset, size, caps.MaxBytes, caps.MaxCells, caps.MaxCellChars)
	if err != nil {
		return nil, err
	}
	res := m.handleResult(handleID, t, tok.Offset, pg.rows, tok.Size, tok.MaxBytes, pg.data)
	res.Warnings = append(res.Warnings, pg.warnings...)
	if res.PageInfo.HasMore {
		res.Warnings = append(res.Warnings, fmt.Sprintf(
			"showing rows %d–%d of %d; call query_next_page with result_handle and page_info.page_token for the next page",
			tok.Offset+1, tok.Offset+pg.rows, total))
	}
	return res, nil
}

// ReadPage returns page n (0-based) of the result behind handleID as a
// handle-shaped result: rows [n×PageRows, (n+1)×PageRows) of the result
// (the server's page size), the resource quarry://results/<handle>/pages/<n>.
// Unlike query_next_page pages, these fixed row ranges are not shortened to
// fit MaxBytes or MaxCells (so a page number always names the same rows);
// long cell values are shortened as in every inline result. page_info
// carries a token for query_next_page to continue after the page.
//
// Errors: a negative n is invalid_argument; an unknown or expired handle
// (or another principal's) handle_expired; n past the last page
// resource_not_found.
func (m *Materializer) ReadPage(ctx context.Context, handleID string, n int64, principal string) (*Result, error) {
	if m.handles == nil {
		return nil, qerr.Internal(errors.New("materialize: no handle registry configured"), "result handles are not available")
	}
	if n < 0 {
		return nil, qerr.Invalid(qerr.CodeInvalidArgument, "page %d is negative", n).
			WithHint("pages are numbered from 0: quarry://results/<handle>/pages/0 is the first")
	}
	t, err := m.handles.Get(handleID, principal)
	if err != nil {
		return nil, err
	}
	defer t.Release()
	total, size := t.NumRows(), m.hard.PageRows
	pages := (total + size - 1) / size
	if n >= pages {
		return nil, qerr.NotFound(qerr.CodeResourceNotFound, "page %d does not exist: the result has %d rows, %d pages of %d", n, total, pages, size).
			WithHint("pages are numbered 0 to %d", max(pages-1, 0))
	}
	offset := n * size
	enc, err := encodeRows(ctx, t, offset, size, 0, int(m.hard.MaxCellChars))
	if err != nil {
		return nil, qerr.As(err)
	}
	res := m.handleResult(handleID, t, offset, enc.rows, size, 0, enc.data)
	res.Warnings = appendShortened(res.Warnings, enc.shortened, m.hard.MaxCellChars)
	if res.PageInfo.HasMore {
		res.Warnings = append(res.Warnings, fmt.Sprintf("page %d of %d (rows %d–%d of %d); read page %d next, or call query_next_page with page_info.page_token",
			n, pages, offset+1, offset+enc.rows, total, n+1))
	}
	return res, nil
}

// pageOut is one encoded page.
type pageOut struct {
	data     []byte
	rows     int64
	warnings []string
}

// page encodes the page starting at offset: the longest prefix that fits
// pageRows, maxCells and maxBytes, with at least one row (a row over the
// byte cap on its own is returned with a warning, so paging always
// progresses). Cell values are shortened to cellChars characters.
func (m *Materializer) page(ctx context.Context, t *Table, offset, pageRows, maxBytes, maxCells, cellChars int64) (pageOut, error) {
	rows := pageRows
	if cols := t.NumCols(); cols > 0 {
		rows = min(rows, maxCells/cols)
	}
	rows = max(rows, 1)
	enc, err := encodeRows(ctx, t, offset, rows, maxBytes, int(cellChars))
	if err != nil {
		return pageOut{}, qerr.As(err)
	}
	var warns []string
	if enc.rows == 0 && offset < t.NumRows() {
		enc, err = encodeRows(ctx, t, offset, 1, 0, int(cellChars))
		if err != nil {
			return pageOut{}, qerr.As(err)
		}
		warns = append(warns, fmt.Sprintf("row %d alone is %d bytes of JSON, over the %d-byte cap; it is returned anyway so paging can progress (select fewer columns or use output_format=parquet)",
			offset+1, len(enc.data)-2, maxBytes))
	}
	warns = appendShortened(warns, enc.shortened, cellChars)
	return pageOut{data: enc.data, rows: enc.rows, warnings: warns}, nil
}

// appendShortened adds the warning about n shortened cell values (if any).
func appendShortened(warnings []string, n, limit int64) []string {
	if n <= 0 {
		return warnings
	}
	what, were := "values", "were"
	if n == 1 {
		what, were = "value", "was"
	}
	return append(warnings, fmt.Sprintf("%d cell %s %s longer than %d characters and %s shortened (ending in \"…[truncated N chars]\"); use output_format=parquet for full values",
		n, what, were, limit, were))
}

// handleResult builds a handle-shaped result for rows [offset, offset+n).
// pageSize and maxBytes (0: the server cap) go into the next page's token.
func (m *Materializer) handleResult(id string, t *Table, offset, n, pageSize, maxBytes int64, data []byte) *Result {
	total := t.NumRows()
	next := offset + n
	pi := &PageInfo{Offset: offset, Size: n, HasMore: next < total}
	if pi.HasMore {
		pi.PageToken = m.handles.Sign(handles.Token{Handle: id, Offset: next, Size: pageSize, Format: FormatJSON, MaxBytes: maxBytes})
	}
	return &Result{
		Method: MethodHandle, Data: data, RowCount: n, TotalRows: total, Truncated: pi.HasMore,
		Format: FormatJSON, ResultHandle: id, PageInfo: pi, Warnings: []string{},
	}
}

// fileOut is a file result plus warnings about its preview.
type fileOut struct {
	Result
	pageWarnings []string
}

// fileChunkRows is how many rows of a spilled table are read back at a time
// when writing a file.
const fileChunkRows = 64 * 1024

// batchWriter writes record batches to one file of some format.
type batchWriter interface {
	write(ctx context.Context, b arrow.RecordBatch) error
	// close completes the file.
	close() error
	// abort gives up on an incomplete file (stopping any helpers).
	abort()
}

func (m *Materializer) newBatchWriter(format string, w io.Writer, schema *arrow.Schema) (batchWriter, error) {
	switch format {
	case FormatParquet:
		codec, err := m.codec.codec()
		if err != nil {
			return nil, err
		}
		return newParquetWriterCodec(w, schema, codec)
	case FormatCSV:
		return newCSVWriter(w, schema)
	case FormatArrow:
		return newArrowWriter(w, schema)
	}
	return nil, fmt.Errorf("no writer for format %q", format)
}

// fileResult writes rows [offset, offset+n) of t as an artifact of
// principal (only that principal can read it back).
func (m *Materializer) fileResult(ctx context.Context, t *Table, offset, n int64, format string, caps Caps, principal string) (*fileOut, error) {
	if m.store == nil {
		return nil, qerr.Internal(errors.New("materialize: no artifact store configured"), "the result is too large to return inline and file results are not available")
	}
	art, err := m.writeFile(ctx, t, offset, n, format, principal)
	if err != nil {
		return nil, err
	}
	out := &fileOut{Result: Result{
		Method: MethodFile, RowCount: n, TotalRows: t.NumRows(), ResourceURI: art.URI,
		Format: format, SizeBytes: art.Size, MIMEType: art.MIME, Columns: columnInfos(t), Warnings: []string{},
	}}
	if m.filePaths {
		out.FilePath = art.Path
	}
	if m.previewRows > 0 {
		rows := min(int64(m.previewRows), n)
		if cols := t.NumCols(); cols > 0 {
			rows = min(rows, caps.MaxCells/cols)
		}
		enc, err := encodeRows(ctx, t, offset, rows, caps.MaxBytes, int(caps.MaxCellChars))
		if err != nil {
			return nil, qerr.As(err)
		}
		out.Preview = enc.data
		if enc.rows < rows {
			out.pageWarnings = append(out.pageWarnings, fmt.Sprintf(
				"the preview shows %d of the first %d rows (the inline byte cap is %d)", enc.rows, rows, caps.MaxBytes))
		}
		if enc.shortened > 0 {
			out.pageWarnings = append(out.pageWarnings, fmt.Sprintf(
				"%d cell values in the preview were longer than %d characters and were shortened; the file holds the full values",
				enc.shortened, caps.MaxCellChars))
		}
	}
	return out, nil
}

// writeFile writes rows [offset, offset+n) of t to a new artifact of
// principal. The Parquet file of a whole spilled table is its spill file
// itself, when it was spilled for the same principal.
func (m *Materializer) writeFile(ctx context.Context, t *Table, offset, n int64, format, principal string) (artifacts.Artifact, error) {
	if sp := t.spill; sp != nil && format == FormatParquet && offset == 0 && n == t.NumRows() {
		if a, err := m.store.Get(sp.art.URI, principal); err == nil {
			sp.publish()
			return a, nil
		}
	}
	w, err := m.store.Create(format, principal)
	if err != nil {
		return artifacts.Artifact{}, err
	}
	defer w.Abort() // no-op after Commit
	fail := func(err error) (artifacts.Artifact, error) {
		if ctx.Err() != nil {
			return artifacts.Artifact{}, qerr.As(ctx.Err())
		}
		if qe := storeError(err); qe != nil {
			return artifacts.Artifact{}, qe
		}
		return artifacts.Artifact{}, qerr.Internal(err, "cannot write the %s file", format)
	}
	schema := t.Schema()
	chunk := n
	if t.spill != nil {
		schema, chunk = t.spill.schema, fileChunkRows
	}
	bw, err := m.newBatchWriter(format, w, schema)
	if err != nil {
		return fail(err)
	}
	for off, end := offset, offset+n; off < end || (off == offset && n == 0); off += max(chunk, 1) {
		v, err := t.Slice(ctx, off, min(chunk, end-off))
		if err != nil {
			bw.abort()
			return fail(err)
		}
		for _, b := range v.batches {
			if err = bw.write(ctx, b); err != nil {
				break
			}
		}
		v.Release()
		if err != nil {
			bw.abort()
			return fail(err)
		}
		if n == 0 {
			break
		}
	}
	if err := bw.close(); err != nil {
		return fail(err)
	}
	return w.Commit()
}

// Collect drains rr into a Table like the package-level Collect, but
// spills the result to a Parquet file in the artifact store as soon as it
// has more than Config.SpillRows rows or Config.SpillBytes bytes: the
// batches collected so far and all later ones are written to the file and
// released, so the Table (and a result handle holding it) costs disk, not
// memory. Without an artifact store it never spills. The spill file is an
// artifact of principal (the one the query runs for): it is handed out as
// the Parquet file result of the whole table to that principal only.
func (m *Materializer) Collect(ctx context.Context, rr array.RecordReader, principal string) (*Table, error) {
	if m.store == nil || (m.spillRows < 0 && m.spillBytes < 0) {
		return Collect(ctx, rr)
	}
	var (
		batches []arrow.RecordBatch
		rows    int64
		size    int64
		sw      *spillWriter
	)
	fail := func(err error) (*Table, error) {
		for _, b := range batches {
			b.Release()
		}
		if sw != nil {
			sw.abort()
		}
		if ctx.Err() != nil {
			return nil, qerr.As(ctx.Err())
		}
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return fail(err)
	}
	schema := rr.Schema()
	for rr.Next() {
		if err := ctx.Err(); err != nil {
			return fail(err)
		}
		b := rr.RecordBatch()
		if b == nil || b.NumRows() == 0 {
			continue
		}
		rows += b.NumRows()
		if sw != nil {
			if err := sw.write(ctx, b); err != nil {
				return fail(spillError(err))
			}
			continue
		}
		b.Retain()
		batches = append(batches, b)
		size += batchesSize([]arrow.RecordBatch{b})
		// A result too wide for a Parquet file stays in memory.
		if ((m.spillRows > 0 && rows > m.spillRows) || (m.spillBytes > 0 && size > m.spillBytes)) && schema.NumFields() <= MaxParquetColumns {
			var err error
			if sw, err = startSpill(m.store, schema, principal, m.codec); err != nil {
				return fail(err)
			}
			for _, kept := range batches {
				if err := sw.write(ctx, kept); err != nil {
					return fail(spillError(err))
				}
			}
			for _, kept := range batches {
				kept.Release()
			}
			batches = nil
		}
	}
	if err := rr.Err(); err != nil {
		return fail(err)
	}
	if err := ctx.Err(); err != nil {
		return fail(err)
	}
	if sw != nil {
		t, err := sw.finish(m.store, rows)
		if err != nil {
			sw = nil // finish aborted or committed it
			return fail(spillError(err))
		}
		m.spilled.Add(t.spill.art.Size)
		return t, nil
	}
	t := newTable(schema, batches)
	t.size = batchesSize(batches)
	return t, nil
}

// spillError is an error writing a spill file: the artifact store's own
// structured errors (a full or read-only artifact directory is
// resource_exhausted) as they are, anything else internal.
func spillError(err error) error {
	if qe := storeError(err); qe != nil {
		return qe
	}
	return qerr.Internal(err, "cannot spill the result to disk")
}

// storeError is the structured, non-internal qerr error in err's chain
// (what the artifact store says of a full disk, say), or nil.
func storeError(err error) *qerr.Error {
	var qe *qerr.Error
	if errors.As(err, &qe) && qe.Code != qerr.CodeInternal {
		return qe
	}
	return nil
}

func columnInfos(t *Table) []ColumnInfo {
	names := ColumnNames(t.Schema())
	out := make([]ColumnInfo, len(names))
	for i, f := range t.Schema().Fields() {
		out[i] = ColumnInfo{Name: names[i], Type: planner.TypeName(f.Type)}
	}
	return out
}

// overReason says which inline caps the result exceeds.
func overReason(c Caps, rows, cols int64, bytesOver bool) string {
	var rs []string
	if rows > c.MaxRows {
		rs = append(rs, fmt.Sprintf("more than max_rows %d", c.MaxRows))
	}
	if !cellsFit(rows, cols, c.MaxCells) {
		rs = append(rs, fmt.Sprintf("%d columns × %d rows is more than max_cells %d", cols, rows, c.MaxCells))
	}
	if bytesOver || len(rs) == 0 {
		rs = append(rs, fmt.Sprintf("more than max_bytes %d of JSON", c.MaxBytes))
	}
	return strings.Join(rs, "; ")
}

func invalidToken(msg string) error {
	return qerr.Invalid(qerr.CodeInvalidPageToken, "%s", msg).
		WithHint("pass page_info.page_token exactly as returned by the previous page, with the same result_handle")
}

// clip bounds caller-supplied strings echoed in error messages.
func clip(s string) string {
	const n = 32
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}
