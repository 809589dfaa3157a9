package materialize

import (
	"context"
	"errors"
	"testing"
)

// failingFile is an io.Writer whose first Write runs onWrite and returns its
// error.
type failingFile struct {
	onWrite func() error
	n       int
}

func (f *failingFile) Write(p []byte) (int, error) {
	f.n++
	if f.n == 1 {
		if err := f.onWrite(); err != nil {
			return 0, err
		}
	}
	return len(p), nil
}

// TestParquetWriterStopsMidFile stops a write while row groups are being
// encoded (two in flight): the file is cancelled or fails on its first
// bytes, which reach the writer when the first row group is committed.
// The error is the cancellation or the file's, and after abort every
// encoder has finished and released the rows it held.
func TestParquetWriterStopsMidFile(t *testing.T) {
	errDisk := errors.New("disk full")
	for _, tc := range []struct {
		name string
		// onWrite is the file's first Write; cancel cancels the write's context.
		onWrite func(cancel context.CancelFunc) error
		want    error
	}{
		{"cancelled", func(cancel context.CancelFunc) error { cancel(); return nil }, context.Canceled},
		{"write error", func(context.CancelFunc) error { return errDisk }, errDisk},
	} {
		t.Run(tc.name, func(t *testing.T) {
			alloc := newAlloc(t)
			tbl := idTable(t, alloc, ParquetRowGroupRows*4+1000, 50_001)
			batches := sliceBatches(t, tbl, 0, tbl.NumRows())
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			file := &failingFile{onWrite: func() error { return tc.onWrite(cancel) }}
			codec, err := ParquetUncompressed.codec()
			if err != nil {
				t.Fatal(err)
			}
			pw, err := newParquetWriterCodec(file, tbl.Schema(), codec)
			if err != nil {
				t.Fatal(err)
			}
			pw.limit = 2
			for _, b := range batches {
				if err = pw.write(ctx, b); err != nil {
					pw.abort()
					break
				}
			}
			if err == nil {
				err = pw.close()
			}
			if !errors.Is(err, tc.want) {
				t.Fatalf("err %v, want %v", err, tc.want)
			}
			if file.n == 0 {
				t.Fatal("the file was never written: the stop did not happen mid-file")
			}
			releaseBatches(batches)
			tbl.Release()
			if n := alloc.CurrentAlloc(); n != 0 {
				t.Fatalf("%d bytes still held after abort", n)
			}
		})
	}
}
