package materialize

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/quarrydb/quarry/planner"
	"strings"

	"github.com/quarrydb/quarry/handles"
	"github.com/quarrydb/quarry/internal/artifacts"
	"github.com/quarrydb/quarry/internal/qerr"
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
	// DefaultPreviewRows is Config.PreviewRows when it is 0.
	DefaultPreviewRows = 10
)

// Output formats.
const (
	FormatJSON    = "json"
	FormatCSV     = "csv"
	FormatParquet = "parquet"
)

// Delivery methods (Result.Method).
const (
	MethodDirect = "direct"
	MethodFile   = "file"
	MethodHandle = "handle"
)

// Caps bounds what one response may carry inline. Negative values are
// treated as 0 (the default).
type Caps struct {
	// MaxRows is the most rows returned inline; 0 means DefaultMaxRows (200).
	MaxRows int64
	// MaxBytes is the most bytes of serialized inline JSON data (the "data"
	// array, brackets and commas included); 0 means DefaultMaxBytes (65536).
	MaxBytes int64
	// MaxCells is the most inline cells, rows × columns; 0 means
	// DefaultMaxCells (10000).
	MaxCells int64
	// PageRows is the most rows per result-handle page; 0 means
	// DefaultPageRows (200). Pages are also bounded by MaxBytes and MaxCells
	// (but hold at least one row).
	PageRows int64
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
		MaxRows:  def(c.MaxRows, DefaultMaxRows),
		MaxBytes: def(c.MaxBytes, DefaultMaxBytes),
		MaxCells: def(c.MaxCells, DefaultMaxCells),
		PageRows: def(c.PageRows, DefaultPageRows),
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
}

// Materializer enforces the caps and picks how a result is delivered
// (inline, file artifact or paged handle). It is safe for concurrent use.
type Materializer struct {
	hard        Caps
	store       *artifacts.Store
	handles     *handles.Registry[*Table]
	previewRows int
}

// New returns a Materializer for cfg.
func New(cfg Config) *Materializer {
	pr := cfg.PreviewRows
	if pr == 0 {
		pr = DefaultPreviewRows
	}
	return &Materializer{hard: cfg.Hard.withDefaults(), store: cfg.Artifacts, handles: cfg.Handles, previewRows: max(pr, 0)}
}

// Caps returns the effective hard caps (defaults filled in).
func (m *Materializer) Caps() Caps { return m.hard }

// Request is one delivery request.
type Request struct {
	// Format is the requested output format: "", "json", "csv" or
	// "parquet" ("" means json). Anything else is an unsupported_format
	// error. It matters only when the result is over the inline caps:
	// json pages through a result handle, csv/parquet writes a file.
	Format string
	// MaxRows is the per-call inline row cap; 0 means the hard cap. It can
	// only lower the hard cap: a larger value is clamped, with a warning. It
	// also lowers the handle page size.
	MaxRows int64
	// MaxBytes is the per-call inline JSON byte cap; 0 means the hard cap.
	// Like MaxRows it can only lower it. It bounds the direct result and the
	// first handle page; later pages use the hard byte cap (the page token
	// does not carry it).
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
	// resources/read).
	ResourceURI string `json:"resource_uri,omitempty"`
	// Format is parquet or csv for a file, json for direct and handle.
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

// normalizeFormat maps "" to json and rejects unknown formats.
func normalizeFormat(f string) (string, error) {
	switch strings.ToLower(strings.TrimSpace(f)) {
	case "", FormatJSON:
		return FormatJSON, nil
	case FormatCSV:
		return FormatCSV, nil
	case FormatParquet:
		return FormatParquet, nil
	}
	return "", qerr.Unsupported(qerr.CodeUnsupportedFormat, "output format %q is not supported", clip(f)).
		WithHint("use one of: json, csv, parquet").
		With("supported", []string{FormatJSON, FormatCSV, FormatParquet})
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
//   - the whole result fits the inline caps (rows ≤ MaxRows, rows × columns
//     ≤ MaxCells, JSON bytes ≤ MaxBytes): method direct, whatever the format;
//   - otherwise, format csv or parquet: method file, an artifact holding all
//     rows, with a preview, the columns and a warning naming the URI;
//   - otherwise (json): method handle, t stored in the handle registry and
//     its first page inline, with a page token for the next one.
//
// Deliver takes ownership of nothing: it Retains t when it stores it in a
// handle; the caller still Releases its own reference.
func (m *Materializer) Deliver(ctx context.Context, t *Table, req Request) (*Result, error) {
	if t == nil {
		return nil, qerr.Internal(errors.New("nil table"), "no result to deliver")
	}
	format, err := normalizeFormat(req.Format)
	if err != nil {
		return nil, err
	}
	caps, warnings, err := m.effective(req)
	if err != nil {
		return nil, err
	}
	total, cols := t.NumRows(), t.NumCols()

	bytesOver := false
	if total <= caps.MaxRows && cellsFit(total, cols, caps.MaxCells) {
		data, n, err := EncodeRecords(ctx, t, 0, total, caps.MaxBytes)
		if err != nil {
			return nil, qerr.As(err)
		}
		if n == total {
			if format != FormatJSON && total > 0 {
				warnings = append(warnings, fmt.Sprintf(
					"the result (%d rows) fits the inline caps, so it is returned directly as JSON rather than as a %s file", total, format))
			}
			return &Result{
				Method: MethodDirect, Data: data, RowCount: total, TotalRows: total,
				Format: FormatJSON, Warnings: warnings,
			}, nil
		}
		bytesOver = true
	}
	reason := overReason(caps, total, cols, bytesOver)

	if format == FormatCSV || format == FormatParquet {
		res, err := m.fileResult(ctx, t, 0, total, format, caps)
		if err != nil {
			return nil, err
		}
		res.Warnings = append(warnings, fmt.Sprintf(
			"the result had %d rows (%s), so it was written to %s (%s, %d bytes) instead of being returned inline; read it with resources/read",
			total, reason, res.ResourceURI, format, res.SizeBytes))
		res.Warnings = append(res.Warnings, res.pageWarnings...)
		res.pageWarnings = nil
		return &res.Result, nil
	}

	if m.handles == nil {
		return nil, qerr.Internal(errors.New("materialize: no handle registry configured"), "the result is too large to return inline and result handles are not available")
	}
	data, n, pageWarn, err := m.page(ctx, t, 0, caps.PageRows, caps.MaxBytes, caps.MaxCells)
	if err != nil {
		return nil, err
	}
	t.Retain()
	id := m.handles.Put(t, req.Principal)
	res := m.handleResult(id, t, 0, n, caps.PageRows, data)
	res.Warnings = append(warnings, fmt.Sprintf("the result has %d rows (%s), so it is paged", total, reason))
	res.Warnings = append(res.Warnings, pageWarn...)
	if res.PageInfo.HasMore {
		res.Warnings = append(res.Warnings, fmt.Sprintf(
			"showing rows %d–%d of %d; call query_next_page with result_handle and page_info.page_token for the next page, or re-run with output_format=parquet for a file",
			1, n, total))
	} else { // only when the page size is configured above the inline caps
		res.Warnings = append(res.Warnings, fmt.Sprintf("all %d rows fit in this single page", total))
	}
	return res, nil
}

// NextPage serves the page pageToken points at, of the result behind
// handleID. format "" means the token's format; json yields a handle-shaped
// result (data + page_info), csv or parquet a file holding just that page's
// rows (plus page_info). Errors: a tampered, foreign or out-of-range token
// is invalid_page_token; an unknown or expired handle (or another
// principal's) is handle_expired.
//
// The same token always yields the same rows: the page starts at the
// token's offset and its length is computed deterministically from the
// token's page size, the hard caps and the data.
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
	format, err = normalizeFormat(format)
	if err != nil {
		return nil, err
	}
	if tok.Offset < 0 || tok.Size <= 0 {
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

	if format == FormatCSV || format == FormatParquet {
		n := min(size, total-tok.Offset)
		res, err := m.fileResult(ctx, t, tok.Offset, n, format, m.hard)
		if err != nil {
			return nil, err
		}
		next := tok.Offset + n
		res.ResultHandle = handleID
		res.PageInfo = &PageInfo{Offset: tok.Offset, Size: n, HasMore: next < total}
		res.Truncated = next < total
		msg := fmt.Sprintf("rows %d–%d of %d were written to %s (%s, %d bytes); read it with resources/read",
			tok.Offset+1, next, total, res.ResourceURI, format, res.SizeBytes)
		if next < total {
			res.PageInfo.PageToken = m.handles.Sign(handles.Token{Handle: handleID, Offset: next, Size: tok.Size, Format: format})
			msg += "; call query_next_page with result_handle and page_info.page_token for the next page"
		}
		res.Warnings = append([]string{msg}, res.pageWarnings...)
		res.pageWarnings = nil
		return &res.Result, nil
	}

	data, n, pageWarn, err := m.page(ctx, t, tok.Offset, size, m.hard.MaxBytes, m.hard.MaxCells)
	if err != nil {
		return nil, err
	}
	res := m.handleResult(handleID, t, tok.Offset, n, tok.Size, data)
	res.Warnings = append(res.Warnings, pageWarn...)
	if res.PageInfo.HasMore {
		res.Warnings = append(res.Warnings, fmt.Sprintf(
			"showing rows %d–%d of %d; call query_next_page with result_handle and page_info.page_token for the next page",
			tok.Offset+1, tok.Offset+n, total))
	}
	return res, nil
}

// page encodes the page starting at offset: the longest prefix that fits
// pageRows, maxCells and maxBytes, with at least one row (a row over the
// byte cap on its own is returned with a warning, so paging always
// progresses).
func (m *Materializer) page(ctx context.Context, t *Table, offset, pageRows, maxBytes, maxCells int64) ([]byte, int64, []string, error) {
	rows := pageRows
	if cols := t.NumCols(); cols > 0 {
		rows = min(rows, maxCells/cols)
	}
	rows = max(rows, 1)
	data, n, err := EncodeRecords(ctx, t, offset, rows, maxBytes)
	if err != nil {
		return nil, 0, nil, qerr.As(err)
	}
	if n > 0 || offset >= t.NumRows() {
		return data, n, nil, nil
	}
	data, n, err = EncodeRecords(ctx, t, offset, 1, 0)
	if err != nil {
		return nil, 0, nil, qerr.As(err)
	}
	warn := fmt.Sprintf("row %d alone is %d bytes of JSON, over the %d-byte cap; it is returned anyway so paging can progress (select fewer columns or use output_format=parquet)",
		offset+1, len(data)-2, maxBytes)
	return data, n, []string{warn}, nil
}

// handleResult builds a handle-shaped result for rows [offset, offset+n).
func (m *Materializer) handleResult(id string, t *Table, offset, n, pageSize int64, data []byte) *Result {
	total := t.NumRows()
	next := offset + n
	pi := &PageInfo{Offset: offset, Size: n, HasMore: next < total}
	if pi.HasMore {
		pi.PageToken = m.handles.Sign(handles.Token{Handle: id, Offset: next, Size: pageSize, Format: FormatJSON})
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

// fileResult writes rows [offset, offset+n) of t as an artifact.
func (m *Materializer) fileResult(ctx context.Context, t *Table, offset, n int64, format string, caps Caps) (*fileOut, error) {
	if m.store == nil {
		return nil, qerr.Internal(errors.New("materialize: no artifact store configured"), "the result is too large to return inline and file results are not available")
	}
	w, err := m.store.Create(format)
	if err != nil {
		return nil, err
	}
	defer w.Abort() // no-op after Commit
	batches := t.Slice(offset, n)
	defer func() {
		for _, b := range batches {
			b.Release()
		}
	}()
	if format == FormatParquet {
		err = WriteParquet(ctx, w, t.Schema(), batches)
	} else {
		err = WriteCSV(ctx, w, t.Schema(), batches)
	}
	if err != nil {
		if ctx.Err() != nil {
			return nil, qerr.As(ctx.Err())
		}
		var qe *qerr.Error
		if errors.As(err, &qe) {
			return nil, err
		}
		return nil, qerr.Internal(err, "cannot write the %s file", format)
	}
	art, err := w.Commit()
	if err != nil {
		return nil, err
	}

	out := &fileOut{Result: Result{
		Method: MethodFile, RowCount: n, TotalRows: t.NumRows(), ResourceURI: art.URI,
		Format: format, SizeBytes: art.Size, MIMEType: art.MIME, Columns: columnInfos(t), Warnings: []string{},
	}}
	if m.previewRows > 0 {
		rows := min(int64(m.previewRows), n)
		if cols := t.NumCols(); cols > 0 {
			rows = min(rows, caps.MaxCells/cols)
		}
		pv, pn, err := EncodeRecords(ctx, t, offset, rows, caps.MaxBytes)
		if err != nil {
			return nil, qerr.As(err)
		}
		out.Preview = pv
		if pn < rows {
			out.pageWarnings = append(out.pageWarnings, fmt.Sprintf(
				"the preview shows %d of the first %d rows (the inline byte cap is %d)", pn, rows, caps.MaxBytes))
		}
	}
	return out, nil
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
