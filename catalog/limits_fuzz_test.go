package catalog

import (
	"bytes"
	"errors"
	"io"
	"testing"

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
		l := NewRecordLimiter(chunkedReader{bytes.NewReader(data), read}, max)
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
