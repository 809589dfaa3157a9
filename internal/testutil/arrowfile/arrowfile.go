// Package arrowfile writes Arrow record batches as Parquet files and Arrow
// IPC files and streams, in memory, for tests that need such files on
// disk. Only tests import it.
package arrowfile

import (
	"bytes"
	"io"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
)

// Parquet writes recs (one schema) as a Parquet file with arrow-go's
// pqarrow writer, props saying row groups, dictionaries, compression,
// aprops whether the Arrow schema is stored. Any error fails t.
func Parquet(t testing.TB, props *parquet.WriterProperties, aprops pqarrow.ArrowWriterProperties, recs ...arrow.RecordBatch) []byte {
	t.Helper()
	return write(t, recs, func(w io.Writer) (recordWriter, error) {
		return pqarrow.NewFileWriter(recs[0].Schema(), w, props, aprops)
	})
}

// IPC writes recs as an Arrow IPC file with the first one's schema, opts
// added (compression, allocator). Any error fails t.
func IPC(t testing.TB, opts []ipc.Option, recs ...arrow.RecordBatch) []byte {
	t.Helper()
	return write(t, recs, func(w io.Writer) (recordWriter, error) {
		return ipc.NewFileWriter(w, append([]ipc.Option{ipc.WithSchema(recs[0].Schema())}, opts...)...)
	})
}

// IPCStream writes recs as an Arrow IPC stream, as IPC does a file.
func IPCStream(t testing.TB, opts []ipc.Option, recs ...arrow.RecordBatch) []byte {
	t.Helper()
	return write(t, recs, func(w io.Writer) (recordWriter, error) {
		return ipc.NewWriter(w, append([]ipc.Option{ipc.WithSchema(recs[0].Schema())}, opts...)...), nil
	})
}

// recordWriter is what the three writers share.
type recordWriter interface {
	Write(arrow.RecordBatch) error
	Close() error
}

// write writes recs through the writer open makes over a buffer, closes it
// and returns the bytes.
func write(t testing.TB, recs []arrow.RecordBatch, open func(io.Writer) (recordWriter, error)) []byte {
	t.Helper()
	var buf bytes.Buffer
	w, err := open(&buf)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range recs {
		if err := w.Write(r); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}
