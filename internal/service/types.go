package service

import (
	"encoding/json"

	"github.com/quarrydb/quarry/catalog"
	"github.com/quarrydb/quarry/planner"
)

// CatalogRequest is the input of get_catalog.
type CatalogRequest struct {
	// Query filters datasets whose id or path contains it (case-insensitive).
	Query string `json:"query,omitempty" jsonschema:"Case-insensitive substring of the dataset id or path to filter by."`
	// Kinds keeps only datasets of these kinds.
	Kinds []string `json:"kinds,omitempty" jsonschema:"Keep only these dataset kinds (csv, hdf5)."`
}

// CatalogEntry is one dataset in get_catalog's answer.
type CatalogEntry struct {
	ID              string `json:"id" jsonschema:"Dataset id: pass it as dataset to the other tools."`
	Kind            string `json:"kind" jsonschema:"csv or hdf5."`
	Path            string `json:"path" jsonschema:"File path relative to the data root."`
	RowCount        int64  `json:"row_count"`
	RowCountExact   bool   `json:"row_count_exact"`
	FileSizeBytes   int64  `json:"file_size_bytes"`
	LastModifiedISO string `json:"last_modified_iso"`
	ColumnCount     int    `json:"column_count"`
	Description     string `json:"description,omitempty"`
}

// CatalogResponse is the output of get_catalog.
type CatalogResponse struct {
	Datasets    []CatalogEntry       `json:"datasets"`
	Total       int                  `json:"total" jsonschema:"Number of datasets returned."`
	Diagnostics []catalog.Diagnostic `json:"diagnostics,omitempty" jsonschema:"Files that could not be read, with reasons."`
}

// SchemaRequest is the input of get_schema.
type SchemaRequest struct {
	Dataset string `json:"dataset" jsonschema:"Dataset id from get_catalog."`
}

// Column describes one column.
type Column struct {
	Name     string `json:"name"`
	Type     string `json:"type" jsonschema:"int64, float64, string, bool, date, timestamp[...], ... (unsupported: listed but not queryable)."`
	Nullable bool   `json:"nullable"`
}

// SchemaResponse is the output of get_schema.
type SchemaResponse struct {
	Dataset     string          `json:"dataset"`
	Columns     []Column        `json:"columns"`
	Shape       []int64         `json:"shape" jsonschema:"[rows, columns]."`
	SampleRows  json.RawMessage `json:"sample_rows" jsonschema:"Up to 5 rows, as records."`
	SchemaURI   string          `json:"schema_uri" jsonschema:"Resource URI of this schema card."`
	Description string          `json:"description,omitempty"`
}

// EstimateRequest is the input of estimate_query: a dataset and a query spec.
type EstimateRequest struct {
	Dataset string `json:"dataset" jsonschema:"Dataset id from get_catalog."`
	planner.Spec
}

// QueryRequest is the input of query_data.
type QueryRequest struct {
	EstimateRequest
	OutputFormat string `json:"output_format,omitempty" jsonschema:"enum=json,enum=csv,enum=parquet" jsonschema_description:"How to deliver a result too large to return inline: json pages through a result handle; csv or parquet write a file resource. Small results always come back inline."`
	MaxRows      int64  `json:"max_rows,omitempty" jsonschema:"Lower the inline row cap for this call (cannot raise the server's cap)."`
	MaxBytes     int64  `json:"max_bytes,omitempty" jsonschema:"Lower the inline byte cap for this call (cannot raise the server's cap)."`
}

// SuggestedCaps are the caps estimate_query recommends for query_data.
type SuggestedCaps struct {
	MaxRows  int64 `json:"max_rows"`
	MaxBytes int64 `json:"max_bytes"`
}

// EstimateResponse is the output of estimate_query.
type EstimateResponse struct {
	RowEstimate   int64           `json:"row_estimate"`
	ByteEstimate  int64           `json:"byte_estimate" jsonschema:"Estimated bytes of the whole result as inline JSON."`
	EstimateKind  string          `json:"estimate_kind" jsonschema:"exact (the query was run) or sampled (extrapolated from the first rows of the file)."`
	Preview       json.RawMessage `json:"preview" jsonschema:"Up to 5 result rows."`
	Warnings      []string        `json:"warnings"`
	SuggestedCaps SuggestedCaps   `json:"suggested_caps"`
	Plan          string          `json:"plan" jsonschema:"The optimized logical plan, one operator per line."`
}

// NextPageRequest is the input of query_next_page.
type NextPageRequest struct {
	ResultHandle string `json:"result_handle" jsonschema:"result_handle from query_data."`
	PageToken    string `json:"page_token" jsonschema:"page_info.page_token from the previous page."`
	Format       string `json:"format,omitempty" jsonschema:"enum=json,enum=csv,enum=parquet" jsonschema_description:"Deliver this page as json records or as a csv/parquet file resource; default: the format of the previous page (json unless switched)."`
}
