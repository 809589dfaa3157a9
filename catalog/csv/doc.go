// Package csv is the catalog.Format for delimited text: ".csv" and ".tsv"
// files, plain or compressed (gzip, zstd, bzip2). Opening a
// file sniffs its dialect and infers each column's type in one parallel
// pass (csv_fast.go: chunks split at record boundaries by the chunk
// reader CSV shares with JSON, catalog/internal/chunk, memory-mapped where
// it can; a word-at-a-time tokenizer, csv_tokenize.go, with an assembly
// quote mask on amd64), keeping a column
// numeric or temporal only when no value is lost (catalog/infer). Scans
// stream Arrow record batches of the requested columns and take pushed
// filters (csv_pushdown.go), tested on the tokenized cells before parsing.
// With a ColumnKeeper (NewFormatWith) the columns parsed while opening are
// handed to a column cache, low-cardinality strings dictionary-encoded
// (csv_dict.go). Register it like any format: catalog.Options{Formats:
// []catalog.Format{csv.NewFormat(), ...}}.
package csv
