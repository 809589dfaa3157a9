package service

// DeliveryOptions are how a query's result is delivered: the arguments
// query_data, aggregate and advanced_query share (declared once, embedded
// in QueryRequest, AggregateRequest and SQLRequest).
type DeliveryOptions struct {
	// OutputFormat is json (handle pages), csv or parquet (file) for results over the inline caps.
	OutputFormat string `json:"output_format,omitempty" jsonschema:"enum=json,enum=csv,enum=parquet,enum=arrow" jsonschema_description:"csv, parquet or arrow: always a file; json or omitted: inline when small, else pages."`
	// MaxRows lowers the inline row cap for this call.
	MaxRows int64 `json:"max_rows,omitempty" jsonschema:"Lower the inline row cap."`
	// MaxBytes lowers the inline byte cap for this call.
	MaxBytes int64 `json:"max_bytes,omitempty" jsonschema:"Lower the inline byte cap."`
	// Confirm runs the query even when its estimate is above the
	// confirmation threshold.
	Confirm bool `json:"confirm,omitempty" jsonschema:"After needs_confirmation, once the user agreed."`
	// Explain "analyze" runs the query and returns per-operator statistics.
	Explain string `json:"explain,omitempty" jsonschema:"enum=analyze" jsonschema_description:"analyze: add per-operator statistics."`
	// Shape lays out the inline rows (materialize.Shapes).
	Shape string `json:"shape,omitempty" jsonschema:"enum=records,enum=columns,enum=csv" jsonschema_description:"records (default), columns {col: [values]} or csv: half the bytes."`
	// Round rounds the float columns the query computed to this many
	// significant digits (round.go); 0 keeps full precision.
	Round int `json:"round,omitempty" jsonschema:"Significant digits (1..17) of computed floats (aggregates, expressions)."`
}
