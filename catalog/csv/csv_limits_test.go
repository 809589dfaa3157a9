package csv

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/quarrydb/quarry/catalog"
	"github.com/quarrydb/quarry/internal/qerr"
)

// TestScanLimitIsResourceExhausted: a limit met while a query reads a file
// (here: lowered after cataloging) fails the scan with resource_exhausted,
// on the parallel and the reference reader alike, never internal.
func TestScanLimitIsResourceExhausted(t *testing.T) {
	dir := t.TempDir()
	var text bytes.Buffer
	text.WriteString("a,b\n")
	for i := range 200_000 {
		text.WriteString("1,")
		text.WriteString(string(rune('a' + i%26)))
		text.WriteString("\n")
	}
	long := append(bytes.Clone(text.Bytes()), "2,"+strings.Repeat("z", 3<<20)+"\n3,y\n"...)
	tests := []struct {
		name string
		text []byte
		gz   bool
		lim  catalog.Limits
	}{
		{"decompressed size", text.Bytes(), true, catalog.Limits{MaxDecompressedBytes: 64 << 10}},
		// A record longer than the reader's chunk (the parallel reader
		// measures only those).
		{"record length", long, false, catalog.Limits{MaxRecordBytes: 1 << 20}},
	}
	for _, tc := range tests {
		for _, reference := range []bool{false, true} {
			rel := "f.csv"
			data := tc.text
			if tc.gz {
				rel = "f.csv.gz"
				var b bytes.Buffer
				zw := gzip.NewWriter(&b)
				_, _ = zw.Write(data)
				_ = zw.Close()
				data = b.Bytes()
			}
			p := filepath.Join(dir, rel)
			if err := os.WriteFile(p, data, 0o644); err != nil {
				t.Fatal(err)
			}
			ds, err := NewFormat().Open(context.Background(), catalog.FileInfo{AbsPath: p, RelPath: rel, BaseID: "f", Size: int64(len(data))})
			if err != nil {
				t.Fatal(err)
			}
			src := ds[0].Source.(*csvSource)
			src.lim = tc.lim.WithDefaults()
			opts := catalog.ScanOptions{BatchSize: 1024}
			var rr array.RecordReader
			if reference {
				rr, err = src.scanReference(context.Background(), opts)
			} else {
				rr, err = src.Scan(context.Background(), opts)
			}
			if err == nil {
				for rr.Next() {
				}
				err = rr.Err()
				rr.Release()
			}
			if qerr.Code(err) != qerr.CodeResourceExhausted || !errors.Is(err, qerr.ErrLimitExceeded) {
				t.Errorf("%s (reference %v): scan error %v, want resource_exhausted", tc.name, reference, err)
			}
		}
	}
}
