// Package materialize turns a collected query result into what the model
// sees, so that Quarry never drowns the conversation: small answers inline,
// big answers as Parquet/CSV/Arrow artifacts or paged result handles, always
// with honest counts and warnings, never silently truncated.
//
// It owns:
//
//   - the caps (Caps, Config.Hard, Request.MaxRows/MaxBytes): how many rows,
//     cells and bytes of JSON one response may carry, and how long one cell
//     value may be inline (Caps.MaxCellChars; longer values are shortened
//     with a marker and counted in a warning); per-call limits can only
//     lower the server's hard caps;
//   - the delivery choice (Materializer.Deliver): direct when the whole
//     result fits the caps, otherwise a file for csv/parquet/arrow or a
//     result handle with pages and signed page tokens for json
//     (Materializer.NextPage), also readable as fixed pages
//     (Materializer.ReadPage, the quarry://results/<handle>/pages/<n>
//     resources);
//   - spilling (Materializer.Collect): a result over Config.SpillRows or
//     Config.SpillBytes is streamed into a Parquet file of the artifact
//     store while it is collected, and pages are read back by row range;
//   - the encoders: a JSON record encoder writing straight from Arrow arrays,
//     column by column (EncodeRecords, Preview), with a byte budget so a page
//     fit stops as soon as the cap is reached;
//   - the writers: WriteParquet (typed columns, zstd, statistics, page index,
//     row groups encoded in parallel; flat results encoded straight from
//     the Arrow buffers with dictionary and delta encodings, parquet_flat.go,
//     others through parquet-go's rows; WriteParquetWith takes a codec: zstd
//     by default, snappy or none), WriteCSV (RFC 4180) and WriteArrow
//     (Arrow IPC file).
//
// Table is the collected result (schema + record batches, or a spill file;
// reference counted); it is what result handles hold.
//
// The delivery decision table and the page/token contract are documented in
// docs/DELIVERY.md.
package materialize
