// Package chunk cuts a text input into chunks of complete records and
// runs a function over them on several goroutines, delivering the results
// in input order. The record boundary is the format's (Config.Boundary:
// CSV's quote-aware newline, NDJSON's newline); everything else is shared.
//
// Reading (and decompression, which is sequential) happens on one
// goroutine; finding the last boundary of a window runs at memory speed
// there (bytes.IndexByte), everything else in the workers. Plain regular
// files are not read at all where the OS allows it: their chunks are views
// of a read-only memory map (mmap.go), so there is no copy and no chunk
// buffer; compressed input, pipes and small files are read into pooled
// buffers. The reader runs a bounded number of chunks (workers+2) ahead
// of the consumer, so memory stays bounded whatever the input's size.
//
// Users: catalog/csv (records end at a newline outside quotes) and
// catalog's newline-delimited JSON (records end at a newline), both
// through catalog.OpenChunks.
package chunk
