package catalog

import (
	"bytes"
	"io"
	"strconv"
	"unicode/utf8"

	"github.com/quarrydb/quarry/internal/qerr"
)

// Limits bound what reading one CSV file may cost, so that a hostile or
// broken file (a gzip bomb, a single gigabyte-long line, a header of a
// million columns) becomes a catalog diagnostic or a resource_exhausted
// error instead of exhausting the server's memory. The defaults are far
// beyond real data; zero fields take them (DefaultLimits).
type Limits struct {
	// MaxDecompressedBytes is the most a compressed (.gz) file may inflate
	// to. Default 64 GiB.
	MaxDecompressedBytes int64
	// MaxCompressionRatio is the most a compressed file may inflate per
	// compressed byte read so far, checked once more than
	// ratioFloorBytes came out. Real CSV compresses 3-20x, very
	// repetitive CSV up to ~100x; a gzip bomb ~1000x. Default 250.
	MaxCompressionRatio float64
	// MaxRecordBytes is the longest record (a line, or several lines when
	// a quoted field holds newlines), and so the longest field, a reader
	// buffers. Default 16 MiB. Records shorter than the reader's chunk
	// size (at most 16 MiB) are not measured, so the effective bound is
	// max(MaxRecordBytes, 16 MiB) for the parallel reader.
	MaxRecordBytes int
	// MaxColumns is the most columns a file may have. Default 16,384.
	MaxColumns int
	// MaxNameBytes is the longest column name kept: longer names are cut
	// (at a UTF-8 boundary, then made unique) and the dataset's
	// "truncated_column_names" attribute counts them. Default 1,024.
	MaxNameBytes int
	// MaxMetadataBytes is the longest file footer (Parquet metadata) a
	// typed binary format decodes. Default 64 MiB.
	MaxMetadataBytes int
}

// DefaultLimits returns the limits used when none are given.
func DefaultLimits() Limits {
	return Limits{
		MaxDecompressedBytes: 64 << 30,
		MaxCompressionRatio:  250,
		MaxRecordBytes:       16 << 20,
		MaxColumns:           16_384,
		MaxNameBytes:         1024,
		MaxMetadataBytes:     64 << 20,
	}
}

// WithDefaults fills zero (or negative) fields from DefaultLimits.
func (l Limits) WithDefaults() Limits {
	d := DefaultLimits()
	if l.MaxDecompressedBytes <= 0 {
		l.MaxDecompressedBytes = d.MaxDecompressedBytes
	}
	if l.MaxCompressionRatio <= 0 {
		l.MaxCompressionRatio = d.MaxCompressionRatio
	}
	if l.MaxRecordBytes <= 0 {
		l.MaxRecordBytes = d.MaxRecordBytes
	}
	if l.MaxColumns <= 0 {
		l.MaxColumns = d.MaxColumns
	}
	if l.MaxNameBytes <= 0 {
		l.MaxNameBytes = d.MaxNameBytes
	}
	if l.MaxMetadataBytes <= 0 {
		l.MaxMetadataBytes = d.MaxMetadataBytes
	}
	return l
}

// ratioFloorBytes: the compression ratio is only checked once this many
// bytes were decompressed (small files may compress extremely well).
const ratioFloorBytes = 32 << 20

// limitError is the error of a file that exceeds a limit: resource_exhausted
// (errors.Is qerr.ErrLimitExceeded), with a hint naming the limit.
func limitError(format string, args ...any) error {
	return qerr.Limit(qerr.CodeResourceExhausted, format, args...).
		WithHint("the file exceeds a safety limit of the server (see docs/OPERATIONS.md, \"Limits on input files\"); split or re-save it")
}

func sizeString(n int64) string {
	switch {
	case n >= 1<<30 && n%(1<<30) == 0:
		return strconv.FormatInt(n>>30, 10) + " GiB"
	case n >= 1<<20 && n%(1<<20) == 0:
		return strconv.FormatInt(n>>20, 10) + " MiB"
	case n >= 1<<10 && n%(1<<10) == 0:
		return strconv.FormatInt(n>>10, 10) + " KiB"
	}
	return strconv.FormatInt(n, 10) + " bytes"
}

// countingReader counts the bytes read through it.
type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// inflateLimiter fails a decompressing reader that inflates beyond the
// limits: more than MaxDecompressedBytes in total, or (past
// ratioFloorBytes) more than MaxCompressionRatio times the compressed
// bytes consumed.
type inflateLimiter struct {
	r    io.Reader       // the decompressor
	in   *countingReader // its compressed input
	out  int64
	lim  Limits
	fail error
}

func newInflateLimiter(r io.Reader, in *countingReader, lim Limits) *inflateLimiter {
	return &inflateLimiter{r: r, in: in, lim: lim}
}

func (l *inflateLimiter) Read(p []byte) (int, error) {
	if l.fail != nil {
		return 0, l.fail
	}
	n, err := l.r.Read(p)
	l.out += int64(n)
	if l.out > l.lim.MaxDecompressedBytes {
		l.fail = limitError("the file decompresses to more than %s (the limit)", sizeString(l.lim.MaxDecompressedBytes))
	} else if l.out > ratioFloorBytes && float64(l.out) > l.lim.MaxCompressionRatio*float64(max(l.in.n, 1)) {
		l.fail = limitError("the file decompresses more than %g times its compressed size (a compression bomb?)", l.lim.MaxCompressionRatio)
	}
	if l.fail != nil {
		return 0, l.fail
	}
	return n, err
}

// recordLimiter fails a text stream with a record longer than max bytes:
// it tracks quote parity (as lastBoundary does) and the bytes since the
// last newline outside quotes, so readers that buffer a whole record
// (encoding/csv, arrow-go's CSV reader) never buffer more than max bytes.
type recordLimiter struct {
	r    io.Reader
	max  int
	cur  int  // bytes of the current record so far
	inQ  bool // inside a quoted field
	fail error
}

func NewRecordLimiter(r io.Reader, max int) *recordLimiter {
	return &recordLimiter{r: r, max: max}
}

func (l *recordLimiter) Read(p []byte) (int, error) {
	if l.fail != nil {
		return 0, l.fail
	}
	n, err := l.r.Read(p)
	b := p[:n]
	for len(b) > 0 {
		q := bytes.IndexByte(b, '"')
		seg := b
		if q >= 0 {
			seg = b[:q]
		}
		for !l.inQ {
			k := bytes.IndexByte(seg, '\n')
			if k < 0 {
				break
			}
			if l.cur+k > l.max {
				l.fail = RecordTooLong(l.max)
				return 0, l.fail
			}
			l.cur, seg = 0, seg[k+1:]
		}
		l.cur += len(seg)
		if q < 0 {
			break
		}
		l.cur++ // the quote
		l.inQ = !l.inQ
		b = b[q+1:]
	}
	if l.cur > l.max {
		l.fail = RecordTooLong(l.max)
		return 0, l.fail
	}
	return n, err
}

func RecordTooLong(max int) error {
	return limitError("a record (line) is longer than %s (the limit)", sizeString(int64(max)))
}

func TooManyColumns(n, max int) error {
	return limitError("the header has %d columns, more than the limit of %d", n, max)
}

// CapNames cuts names longer than max bytes (at a UTF-8 boundary) and
// returns how many it cut; callers make the names unique afterwards.
func CapNames(names []string, max int) int {
	cut := 0
	for i, n := range names {
		if len(n) <= max {
			continue
		}
		k := max
		for k > 0 && !utf8.RuneStart(n[k]) {
			k--
		}
		names[i] = n[:k]
		cut++
	}
	return cut
}
