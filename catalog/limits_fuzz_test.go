package catalog

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/quarrydb/quarry/internal/qerr"
)

// longestRecord is the reference for recordLimiter: the longest record of
// b (bytes before a newline outside quotes, quote parity as lastBoundary
// decides; the last record may end without a newline).
func longestRecord(b []byte) int {
	longest, cur, inQ := 0, 0, false
	for _, c := range b {
		switch {
		case c == '"':
			inQ = !inQ
		case c == '\n' && !inQ:
			longest, cur = max(longest, cur), 0
			continue
		}
		cur++
	}
	return max(longest, cur)
}

// chunkedReader returns at most n bytes per Read.
type chunkedReader struct {
	r io.Reader
	n int
}

func (c chunkedReader) Read(p []byte) (int, error) { return c.r.Read(p[:min(len(p), c.n)]) }

// FuzzRecordLimiter: reading through a recordLimiter fails (with a limit
// error) exactly when the text holds a record longer than the limit,
// whatever the read sizes, and otherwise passes the text through unchanged.
func FuzzRecordLimiter(f *testing.F) {
	for _, s := range []struct {
		data      string
		max, read int
	}{
		{"a,b\n1,2\n", 3, 1},
		{"a,b\n1,22\n", 3, 4},
		{"x\n\"multi\nline\",1\n", 8, 3},
		{"\"unterminated\n\n\n", 4, 64},
		{"no newline at all", 16, 5},
		{"a\r\n\"\"\"q\"\"\"\r\n", 5, 2},
	} {
		f.Add([]byte(s.data), s.max, s.read)
	}
	f.Fuzz(func(t *testing.T, data []byte, max, read int) {
		if max < 0 || read <= 0 || read > 1<<16 {
			return
		}
		l := newRecordLimiter(chunkedReader{bytes.NewReader(data), read}, max)
		got, err := io.ReadAll(l)
		want := longestRecord(data) > max
		if want != (err != nil) {
			t.Fatalf("longest record %d, limit %d: err = %v", longestRecord(data), max, err)
		}
		if err != nil && !errors.Is(err, qerr.ErrLimitExceeded) {
			t.Fatalf("error %v is not a limit error", err)
		}
		if err == nil && !bytes.Equal(got, data) {
			t.Fatalf("text changed: %q -> %q", data, got)
		}
	})
}

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
		lim  Limits
	}{
		{"decompressed size", text.Bytes(), true, Limits{MaxDecompressedBytes: 64 << 10}},
		// A record longer than the reader's chunk (the parallel reader
		// measures only those).
		{"record length", long, false, Limits{MaxRecordBytes: 1 << 20}},
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
			ds, err := NewCSVFormat().Open(context.Background(), FileInfo{AbsPath: p, RelPath: rel, BaseID: "f", Size: int64(len(data))})
			if err != nil {
				t.Fatal(err)
			}
			src := ds[0].Source.(*csvSource)
			src.lim = tc.lim.withDefaults()
			opts := ScanOptions{BatchSize: 1024}
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
