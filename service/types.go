package service

import (
	"encoding/json"

	"github.com/quarrydb/quarry/catalog"
	"github.com/quarrydb/quarry/materialize"
	"github.com/quarrydb/quarry/planner"
)

// CatalogRequest is the input of get_catalog.
type CatalogRequest struct {
	// Query filters datasets whose id or path contains it (case-insensitive).
	Query string `json:"query,omitempty" jsonschema:"Words all found in id, path or tags; filters diagnostics too."`
	// Kinds keeps only datasets of these kinds.
	Kinds []string `json:"kinds,omitempty" jsonschema:"csv, hdf5, parquet, json, arrow, xlsx, flightsql."`
	// Tags keeps datasets whose schema-card tags include every pair.
	Tags map[string]string `json:"tags,omitempty" jsonschema:"Schema-card tags to match, e.g. {\"year\": \"2024\"}."`
	// Cursor continues a listing (CatalogResponse.NextCursor).
	Cursor string `json:"cursor,omitempty" jsonschema:"next_cursor of the previous page."`
	// Limit is the page size (CatalogDefaultLimit when 0).
	Limit int `json:"limit,omitempty" jsonschema:"Datasets per page (default about 8 KB, max 500)."`
	// all lists every matching dataset on one page (the catalog resource).
	all bool
}

// CatalogEntry is one dataset in get_catalog's answer (and the
// quarry://datasets/{dataset}/catalog resource).
type CatalogEntry struct {
	// ID is the dataset id.
	ID string `json:"id" jsonschema:"Dataset id: pass it as dataset to the other tools."`
	// Kind is the file format.
	Kind string `json:"kind" jsonschema:"csv, hdf5, parquet, json, arrow or xlsx."`
	// Path is relative to the data root.
	Path string `json:"path" jsonschema:"File path relative to the data root."`
	// RowCount is the number of rows (exact when RowCountExact).
	RowCount int64 `json:"row_count"`
	// RowCountExact says whether RowCount was counted exactly.
	RowCountExact bool `json:"row_count_exact"`
	// FileSizeBytes is the data file's size.
	FileSizeBytes int64 `json:"file_size_bytes"`
	// LastModifiedISO is the data file's modification time (RFC 3339, UTC).
	LastModifiedISO string `json:"last_modified_iso"`
	// ColumnCount is the number of columns.
	ColumnCount int `json:"column_count"`
	// Description comes from the schema card or the file's metadata.
	Description string `json:"description,omitempty"`
	// Tags come from schema cards (sidecars and _overall.json).
	Tags map[string]string `json:"tags,omitempty" jsonschema:"Tags from schema cards (e.g. year, source_type); filter get_catalog with tags."`
}

// CatalogResponse is the output of get_catalog.
type CatalogResponse struct {
	// Datasets sorted by id.
	Datasets []CatalogEntry `json:"datasets"`
	// Total is len(Datasets).
	Total int `json:"total" jsonschema:"Number of datasets returned."`
	// Matching is the number of datasets matching the filters, all pages.
	Matching int `json:"matching" jsonschema:"Datasets matching the filters, on all pages."`
	// NextCursor is the cursor of the next page; empty on the last one.
	NextCursor string `json:"next_cursor,omitempty" jsonschema:"Pass as cursor for the next page; absent on the last page."`
	// Diagnostics are files skipped and schema-card problems.
	Diagnostics []catalog.Diagnostic `json:"diagnostics,omitempty" jsonschema:"Files that could not be read and schema-card problems, with reasons."`
	// DiagnosticsTotal is how many diagnostics match, when more than listed.
	DiagnosticsTotal int `json:"diagnostics_total,omitempty" jsonschema:"Diagnostics matching the query when more exist than listed (at most 10, first page only): narrow with query."`
	// Scanning is true while the server's first scan of the data root
	// runs: the list holds the files opened so far.
	Scanning bool `json:"scanning,omitempty" jsonschema:"True while the server is still scanning the data root after start-up: more datasets may appear; call get_catalog again shortly."`
	// PendingFiles is how many files the scan has not opened yet.
	PendingFiles int `json:"pending_files,omitempty" jsonschema:"Files the start-up scan has not opened yet (with scanning)."`
}

// SchemaRequest is the input of get_schema.
type SchemaRequest struct {
	// Dataset is the dataset id.
	Dataset string `json:"dataset" jsonschema:"Dataset id from get_catalog."`
	// ColumnOffset is the first column to list (paging of wide datasets).
	ColumnOffset int `json:"column_offset,omitempty" jsonschema:"next_column_offset of a previous answer (wide datasets)."`
	// IncludeExamples adds example values per column (the schema card resource).
	IncludeExamples bool `json:"include_examples,omitempty" jsonschema:"Add example values per column (schema card)."`
	// IncludeSummary adds the per-column profile (the summary resource).
	IncludeSummary bool `json:"include_summary,omitempty" jsonschema:"Add a per-column profile (nulls, min, max, distinct, top values)."`
}

// Column describes one column.
type Column struct {
	// Name is the column name.
	Name string `json:"name"`
	// Type is the column type as get_schema names it.
	Type string `json:"type" jsonschema:"int64, float64, string, bool, date, timestamp[...], ... (unsupported: listed but not queryable)."`
	// Nullable reports whether the column may hold nulls.
	Nullable bool `json:"nullable"`
	// Role comes from the schema card (id, dimension, measure, time, ...).
	Role string `json:"role,omitempty" jsonschema:"Column role from the schema card (id, dimension, measure, time, or a domain word)."`
	// Description comes from the schema card.
	Description string `json:"description,omitempty"`
	// Unit comes from the schema card.
	Unit string `json:"unit,omitempty"`
	// Format is the layout a date or timestamp column was read with.
	Format string `json:"format,omitempty" jsonschema:"Layout the date or timestamp column was read with (YYYY/MM/DD, Mon D YYYY, ...)."`
	// Hint says why a column that looks numeric or date-like is a string.
	Hint string `json:"hint,omitempty" jsonschema:"Why a column that looks numeric or date-like is a string (kept as text so nothing is lost)."`
	// Warning names the first value of a date-like column that did not parse.
	Warning string `json:"warning,omitempty" jsonschema:"A date-like column that did not parse in full: the first offending value and row."`
	// Examples are up to 3 distinct non-null values from the first rows
	// (schema card resource only).
	Examples json.RawMessage `json:"examples,omitempty" jsonschema:"Up to 3 distinct example values (schema card resource only)."`
}

// SchemaResponse is the output of get_schema (and, with column examples,
// the schema card resource).
type SchemaResponse struct {
	// Dataset is the dataset id.
	Dataset string `json:"dataset"`
	// Columns in file order.
	Columns []Column `json:"columns"`
	// Shape is [rows, columns].
	Shape []int64 `json:"shape" jsonschema:"[rows, columns]."`
	// SampleRows are up to 5 rows as records.
	SampleRows json.RawMessage `json:"sample_rows" jsonschema:"Up to 5 rows, as records (only the listed columns when columns are paged; fewer rows when 5 exceed 64 KiB)."`
	// SchemaURI is the resource URI of the schema card.
	SchemaURI string `json:"schema_uri" jsonschema:"Resource URI of this schema card."`
	// Description comes from the schema card or the file's metadata.
	Description string `json:"description,omitempty"`
	// Tags come from schema cards.
	Tags map[string]string `json:"tags,omitempty" jsonschema:"Tags from schema cards."`
	// ColumnsTruncated: more columns follow (from NextColumnOffset).
	ColumnsTruncated bool `json:"columns_truncated,omitempty" jsonschema:"True when the dataset has more columns than one answer lists (at most 1,000 or about 256 KiB); call again with column_offset=next_column_offset."`
	// NextColumnOffset is the column_offset of the next page of columns.
	NextColumnOffset int `json:"next_column_offset,omitempty" jsonschema:"column_offset of the next page of columns (with columns_truncated)."`
	// SampleRowsTruncated: fewer than 5 sample rows fit the 64 KiB cap.
	SampleRowsTruncated bool `json:"sample_rows_truncated,omitempty" jsonschema:"True when fewer sample rows are shown because they did not fit in 64 KiB."`
	// ReadOptions are how a delimited text file is read (sniffed, or set by a schema card).
	ReadOptions map[string]any `json:"read_options,omitempty" jsonschema:"CSV/TSV: how the file is read (delimiter, header, encoding, ...; which were sniffed; the cards that set them)."`
	// Summary is the per-column profile (include_summary).
	Summary json.RawMessage `json:"summary,omitempty" jsonschema:"include_summary only: the dataset summary (the summary resource's JSON)."`
}

// EstimateRequest is the input of estimate_query: a dataset and a query spec.
type EstimateRequest struct {
	// Dataset is the dataset id.
	Dataset string `json:"dataset" jsonschema:"Dataset id from get_catalog."`
	// Spec is the query (columns, filters, group_by, aggs, ...).
	planner.Spec
}

// QueryRequest is the input of query_data.
type QueryRequest struct {
	// EstimateRequest is the dataset and the query spec.
	EstimateRequest
	// Datasets, when set, runs the spec over the union of these datasets'
	// rows (see queryUnion).
	Datasets []string `json:"datasets,omitempty" jsonschema:"More datasets: their union (shared columns plus _dataset)."`
	// DeliveryOptions are output_format, max_rows, max_bytes, confirm,
	// explain and shape.
	DeliveryOptions
}

// SuggestedCaps are the caps estimate_query recommends for query_data.
type SuggestedCaps struct {
	// MaxRows to pass to query_data.
	MaxRows int64 `json:"max_rows"`
	// MaxBytes to pass to query_data.
	MaxBytes int64 `json:"max_bytes"`
}

// EstimateResponse is the output of estimate_query.
type EstimateResponse struct {
	// RowEstimate is the estimated number of result rows.
	RowEstimate int64 `json:"row_estimate"`
	// ByteEstimate is the estimated size of the whole result as inline JSON.
	ByteEstimate int64 `json:"byte_estimate" jsonschema:"Estimated bytes of the whole result as inline JSON."`
	// RowBound is the proven upper bound on the result rows
	// (planner.ResultBound); nil when the plan proves none.
	RowBound *int64 `json:"row_bound,omitempty" jsonschema:"Proven upper bound on the result rows from the plan (exact row counts, limits, group keys); absent when none is proven. A query proven under the confirmation thresholds runs without being sized first."`
	// EstimateKind is exact, sampled or formula.
	EstimateKind string `json:"estimate_kind" jsonschema:"exact (the query was run), sampled (extrapolated from the first rows of the file) or formula (a cross join: the product of the catalog row counts)."`
	// Preview holds up to 5 result rows.
	Preview json.RawMessage `json:"preview" jsonschema:"Up to 5 result rows."`
	// Warnings are caveats (sampled, over the caps, empty result).
	Warnings []string `json:"warnings"`
	// SuggestedCaps are caps to pass to query_data.
	SuggestedCaps SuggestedCaps `json:"suggested_caps"`
	// Plan is the optimized logical plan.
	Plan string `json:"plan" jsonschema:"The optimized logical plan, one operator per line."`
	// PhysicalPlan is the operator tree the engine runs (engine.Explain).
	PhysicalPlan string `json:"physical_plan" jsonschema:"The operators the engine runs, one per line, inputs indented below: the operator (fused steps joined by +, e.g. filter+count, filter+top-k sort), its physical choices in parentheses, and after ← the plan nodes it runs."`
}

// NextPageRequest is the input of query_next_page.
type NextPageRequest struct {
	// ResultHandle is the handle from query_data.
	ResultHandle string `json:"result_handle" jsonschema:"result_handle from query_data."`
	// PageToken is page_info.page_token of the previous page.
	PageToken string `json:"page_token" jsonschema:"page_info.page_token from the previous page."`
	// Format switches the delivery of this page (json, csv, parquet).
	Format string `json:"format,omitempty" jsonschema:"enum=json,enum=csv,enum=parquet,enum=arrow" jsonschema_description:"json, or this page as a file."`
	// Shape lays out this page's rows (as in query_data).
	Shape string `json:"shape,omitempty" jsonschema:"enum=records,enum=columns,enum=csv" jsonschema_description:"As in query_data."`
}

// Query statuses (QueryResponse.Status).
const (
	// StatusNeedsConfirmation: the query was not run; its estimate is above
	// the confirmation threshold.
	StatusNeedsConfirmation = "needs_confirmation"
)

// Confirmation choices (ConfirmOption.Choice).
const (
	// ChoiceParquet runs the query and delivers it as a Parquet file.
	ChoiceParquet = "parquet"
	// ChoiceFirstPage runs a cheaper version: only the first page of rows.
	ChoiceFirstPage = "first_page"
	// ChoiceCancel does not run the query.
	ChoiceCancel = "cancel"
)

// QueryResponse is the output of query_data and aggregate: a delivered
// result (the materialize.Result fields), or, when the estimate is above the
// confirmation threshold and confirm was not set, status needs_confirmation
// with the estimate and the options (and no result fields).
type QueryResponse struct {
	// Result is the delivered result; nil when Status is needs_confirmation.
	*materialize.Result
	// Status is "needs_confirmation" when the query was not run; omitted otherwise.
	Status string `json:"status,omitempty" jsonschema:"needs_confirmation when the query was NOT run because it is estimated to be big: ask the user, then call again with one option's args added. Omitted when the result is delivered."`
	// Estimate is the size estimate that triggered the confirmation.
	Estimate *ConfirmEstimate `json:"estimate,omitempty" jsonschema:"needs_confirmation only: the estimated size and the thresholds."`
	// Options are the ways to go on, each with the arguments to add.
	Options []ConfirmOption `json:"options,omitempty" jsonschema:"needs_confirmation only: ways to proceed; call again with the chosen option's args merged into the original arguments."`
	// Hint says what to do next.
	Hint string `json:"hint,omitempty" jsonschema:"needs_confirmation only: what to do next."`
	// Analyze holds the per-operator statistics of explain "analyze".
	Analyze *Analysis `json:"analyze,omitempty" jsonschema:"explain analyze only: the operators the query ran and their numbers."`
}

// ConfirmEstimate is the estimate behind a needs_confirmation answer.
type ConfirmEstimate struct {
	// RowEstimate is the estimated number of result rows.
	RowEstimate int64 `json:"row_estimate"`
	// ByteEstimate is the estimated size of the result as inline JSON.
	ByteEstimate int64 `json:"byte_estimate"`
	// EstimateKind is exact, sampled or formula.
	EstimateKind string `json:"estimate_kind" jsonschema:"exact, sampled (extrapolated from the first rows) or formula (a cross join: the product of the catalog row counts)."`
	// ConfirmRows is the row threshold above which the server asks.
	ConfirmRows int64 `json:"confirm_rows"`
	// ConfirmBytes is the byte threshold above which the server asks.
	ConfirmBytes int64 `json:"confirm_bytes"`
}

// ConfirmOption is one way to proceed after needs_confirmation.
type ConfirmOption struct {
	// Choice is parquet, first_page or cancel.
	Choice string `json:"choice" jsonschema:"parquet, first_page or cancel."`
	// Description says what the option does, for the user.
	Description string `json:"description"`
	// Args are the arguments to add to the original call (none for cancel).
	Args map[string]any `json:"args,omitempty" jsonschema:"Arguments to merge into the original call's arguments."`
}

// AggregateRequest is the input of aggregate: a grouped summary with the
// delivery knobs of query_data.
type AggregateRequest struct {
	// Dataset is the dataset id.
	Dataset string `json:"dataset" jsonschema:"Dataset id from get_catalog."`
	// GroupBy are the group keys; empty means one row over all (filtered) rows.
	GroupBy planner.GroupKeys `json:"group_by" jsonschema:"Group keys, [] for totals: columns or expressions (\"year(date) AS y\")."`
	// Aggs are the aggregates per group.
	Aggs []planner.AggSpec `json:"aggs" jsonschema:"Aggregates per group, e.g. [{\"col\": \"*\", \"fn\": \"count\"}, {\"col\": \"amount\", \"fn\": \"sum\", \"as\": \"total\"}]."`
	// Filters are applied before grouping (ANDed).
	Filters []planner.FilterSpec `json:"filters,omitempty" jsonschema:"Row filters applied before grouping, as in query_data (ANDed; {\"any\": [...]} for OR)."`
	// Having filters the groups after aggregation (planner.Spec.Having).
	Having []planner.FilterSpec `json:"having,omitempty" jsonschema:"Filters on the groups, applied after aggregation and before order_by/top_n: the language of filters, on group keys and aggregate output names, e.g. [{\"col\": \"count_all\", \"op\": \"gt\", \"value\": 100}] or [{\"expr\": \"sum_qty / count_all > 3\"}]."`
	// TopN keeps the N best groups by OrderBy (default: first aggregate, descending).
	TopN *int64 `json:"top_n,omitempty" jsonschema:"Keep the top N groups (default by the first aggregate)."`
	// Windows are computed over the aggregated rows (planner.Spec.Windows).
	Windows []planner.WindowSpec `json:"windows,omitempty" jsonschema:"Window functions over the aggregated rows (one per group), as in query_data: rank of groups ({\"fn\": \"rank\", \"order_by\": [{\"col\": \"total\", \"desc\": true}]}), the total over all groups for a share ({\"fn\": \"sum\", \"col\": \"total\", \"as\": \"all\"}), month-over-month lag, running totals."`
	// Columns are the output columns (planner.Spec.Columns, post-aggregation).
	Columns []string `json:"columns,omitempty" jsonschema:"Output columns: group keys, aggregate and window outputs, and expressions over them computed per group (\"total / all AS share\"); default: the keys, the aggregates, then the windows."`
	// Join joins other datasets first, as in query_data.
	Join []planner.JoinSpec `json:"join,omitempty" jsonschema:"Datasets to join before filtering and grouping, as in query_data: [{dataset, on: [{left, right}], type?, columns?, as?}]; group by and aggregate their columns as alias.col."`
	// OrderBy sorts the groups; may name group keys and aggregate outputs.
	OrderBy []planner.OrderSpec `json:"order_by,omitempty" jsonschema:"Sort keys: group_by columns or aggregate output names (fn_col, count_all, or as)."`
	// DeliveryOptions are as in query_data.
	DeliveryOptions
}

// DistinctRequest is the input of distinct_values.
type DistinctRequest struct {
	// Dataset is the dataset id.
	Dataset string `json:"dataset" jsonschema:"Dataset id from get_catalog."`
	// Column whose values are counted.
	Column string `json:"column" jsonschema:"Column."`
	// Limit is the most values returned; nil means 50, at most 1000.
	Limit *int64 `json:"limit,omitempty" jsonschema:"Most values (default 50, max 1000)."`
	// MinCount drops values seen fewer times.
	MinCount int64 `json:"min_count,omitempty" jsonschema:"Minimum count."`
	// Filters restrict the rows counted.
	Filters []planner.FilterSpec `json:"filters,omitempty" jsonschema:"Row filters applied first, as in query_data."`
}

// ValueCount is one distinct value and how often it occurs.
type ValueCount struct {
	// Value is the value as it appears in query results (JSON).
	Value json.RawMessage `json:"value" jsonschema:"The value, typed as in query results; use it verbatim in filters."`
	// Count is the number of rows holding it.
	Count int64 `json:"count"`
}

// DistinctResponse is the output of distinct_values.
type DistinctResponse struct {
	// Dataset and Column echo the request.
	Dataset string `json:"dataset"`
	// Column is the column counted.
	Column string `json:"column"`
	// Values are ordered by count (descending), then value.
	Values []ValueCount `json:"values" jsonschema:"Most frequent first (ties by value); nulls are counted in null_count instead."`
	// TotalDistinct is the number of distinct non-null values (matching the filters).
	TotalDistinct int64 `json:"total_distinct" jsonschema:"Number of distinct non-null values in the (filtered) rows."`
	// NullCount is the number of (filtered) rows where the column is null.
	NullCount int64 `json:"null_count"`
	// Truncated is true when more values (with count >= min_count) exist than returned.
	Truncated bool `json:"truncated" jsonschema:"More values (with count >= min_count) exist than returned; raise limit or filter."`
}

// ServerInfoRequest is the (empty) input of get_server_info.
type ServerInfoRequest struct{}

// ServerInfo is the output of get_server_info.
type ServerInfo struct {
	// Name and Version of the server.
	Name string `json:"name"`
	// Version of the server.
	Version string `json:"version"`
	// ProtocolVersions are the MCP revisions the server speaks, newest first.
	ProtocolVersions []string `json:"protocol_versions" jsonschema:"MCP protocol revisions the server speaks, newest first."`
	// Capabilities are the MCP features the server offers.
	Capabilities map[string]bool `json:"capabilities" jsonschema:"MCP features offered: tools, resources, prompts, completions, logging, ..."`
	// Limits are the hard caps in force.
	Limits Limits `json:"limits"`
	// DataRoot is a display form of the data root (home-relative or its base name).
	DataRoot string `json:"data_root" jsonschema:"The data root, shortened for display."`
	// DatasetCount is the number of datasets in the catalog.
	DatasetCount int `json:"dataset_count"`
	// Features are optional behaviours of this build.
	Features []string `json:"features" jsonschema:"Optional behaviours: result_handles, file_exports, confirmation, progress, schema_cards, ..."`
}

// Limits are the server's hard caps and thresholds.
type Limits struct {
	// MaxRows is the inline row cap.
	MaxRows int64 `json:"max_rows"`
	// MaxBytes is the inline JSON byte cap.
	MaxBytes int64 `json:"max_bytes"`
	// MaxCells is the inline cell (rows x columns) cap.
	MaxCells int64 `json:"max_cells"`
	// PageRows is the page size of result handles.
	PageRows int64 `json:"page_rows"`
	// MaxCellChars is the most characters of one cell value inline (longer ones are shortened; files keep them whole).
	MaxCellChars int64 `json:"max_cell_chars"`
	// HandleTTLSeconds is the idle lifetime of a result handle.
	HandleTTLSeconds int64 `json:"handle_ttl_seconds"`
	// MaxHandles is the number of result handles kept at once.
	MaxHandles int `json:"max_handles"`
	// ArtifactTTLSeconds is how long result files are kept.
	ArtifactTTLSeconds int64 `json:"artifact_ttl_seconds"`
	// ArtifactQuotaBytes is the disk budget of result files.
	ArtifactQuotaBytes int64 `json:"artifact_quota_bytes"`
	// QueryTimeoutMS bounds one query.
	QueryTimeoutMS int64 `json:"query_timeout_ms"`
	// QueryMemoryBytes is the memory budget of one query.
	QueryMemoryBytes int64 `json:"query_memory_bytes"`
	// ResourceReadLimitBytes is the largest artifact resources/read returns.
	ResourceReadLimitBytes int64 `json:"resource_read_limit_bytes"`
	// ConfirmRows is the row estimate above which query_data/aggregate ask first (0: never).
	ConfirmRows int64 `json:"confirm_rows" jsonschema:"Estimated result rows above which query_data and aggregate ask before running (0: never)."`
	// ConfirmBytes is the JSON byte estimate above which they ask first (0: never).
	ConfirmBytes int64 `json:"confirm_bytes" jsonschema:"Estimated result bytes (as JSON) above which query_data and aggregate ask before running (0: never)."`
	// SampleRows is how many rows a sampled estimate or summary reads.
	SampleRows int64 `json:"sample_rows"`
	// DistinctLimit is the largest distinct_values limit.
	DistinctLimit int64 `json:"distinct_values_max_limit"`
}

// SummaryResponse is the quarry://datasets/{dataset}/summary resource: a
// tiny per-column profile, safe to load at the start of a chat.
type SummaryResponse struct {
	// Dataset is the dataset id.
	Dataset string `json:"dataset"`
	// RowCount is the dataset's row count.
	RowCount int64 `json:"row_count"`
	// ProfiledRows is the number of rows the profile was computed from.
	ProfiledRows int64 `json:"profiled_rows"`
	// Sampled is true when ProfiledRows < RowCount (the first rows only).
	Sampled bool `json:"sampled"`
	// Columns are profiled in file order (the first SchemaMaxColumns).
	Columns []ColumnProfile `json:"columns"`
	// ColumnsTruncated: the dataset has more than SchemaMaxColumns
	// columns; the others are not profiled.
	ColumnsTruncated bool `json:"columns_truncated,omitempty"`
}

// ColumnProfile is the profile of one column.
type ColumnProfile struct {
	// Name and Type of the column.
	Name string `json:"name"`
	// Type as get_schema names it.
	Type string `json:"type"`
	// Role from the schema card.
	Role string `json:"role,omitempty"`
	// Unit from the schema card.
	Unit string `json:"unit,omitempty"`
	// NullCount is the number of nulls among the profiled rows.
	NullCount int64 `json:"null_count"`
	// Min and Max are the smallest and largest values (omitted for types without an order).
	Min json.RawMessage `json:"min,omitempty"`
	// Max is the largest value.
	Max json.RawMessage `json:"max,omitempty"`
	// DistinctEstimate is the number of distinct non-null values among the profiled rows.
	DistinctEstimate int64 `json:"distinct_estimate"`
	// TopValues are the most frequent values (up to 3; omitted when every value is unique).
	TopValues []ValueCount `json:"top_values,omitempty"`
}

// Example is one generated tool call (query_examples prompt).
type Example struct {
	// Title says what the example shows.
	Title string `json:"title"`
	// Tool is the tool to call.
	Tool string `json:"tool"`
	// Args are its arguments.
	Args map[string]any `json:"args"`
	// Then describes a follow-up step, if any ("" when none).
	Then string `json:"then,omitempty"`
	// Section groups examples under a heading ("" for the query
	// examples; SectionCharts for the plot examples).
	Section string `json:"section,omitempty"`
}

// AppendJSON appends q's JSON to dst. It shadows the method promoted from
// the embedded *materialize.Result: a delivered result takes that fast
// path (rows copied as encoded); a needs_confirmation answer, which has no
// Result, is marshalled normally.
func (q *QueryResponse) AppendJSON(dst []byte) ([]byte, error) {
	if q.Result != nil && q.Status == "" {
		out, err := q.Result.AppendJSON(dst)
		if err != nil {
			return nil, err
		}
		return q.appendAnalyze(out)
	}
	b, err := json.Marshal(q)
	if err != nil {
		return nil, err
	}
	return append(dst, b...), nil
}

// Envelope is q's JSON without the bulk row fields (see
// materialize.Result.Envelope), for output validation.
func (q *QueryResponse) Envelope() ([]byte, error) {
	if q.Result != nil && q.Status == "" {
		b, err := q.Result.Envelope()
		if err != nil {
			return nil, err
		}
		return q.appendAnalyze(b)
	}
	return json.Marshal(q)
}
