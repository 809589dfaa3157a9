// Package materialize turns a collected query result into what the model
// sees, so that Quarry never drowns the conversation: small answers inline,
// big answers as Parquet/CSV artifacts or paged result handles, always with
// honest counts and warnings, never silently truncated.
//
// It owns:
//
//   - the caps (Caps, Config.Hard, Request.MaxRows/MaxBytes): how many rows,
//     cells and bytes of JSON one response may carry; per-call limits can
//     only lower the server's hard caps;
//   - the delivery choice (Materializer.Deliver): direct when the whole
//     result fits the caps, otherwise a file for csv/parquet or a result
//     handle with pages and signed page tokens for json
//     (Materializer.NextPage);
//   - the encoders: a JSON record encoder writing straight from Arrow arrays
//     (RecordEncoder, EncodeRecords, Preview) with a byte budget so a page
//     fit stops as soon as the cap is reached;
//   - the writers: WriteParquet (typed columns, zstd, statistics) and
//     WriteCSV (RFC 4180).
//
// Table is the collected result (schema + record batches, reference
// counted); it is what result handles hold.
//
// The delivery decision table and the page/token contract are documented in
// docs/DELIVERY.md.
package materialize
