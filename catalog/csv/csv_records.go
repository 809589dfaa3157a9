package csv

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/quarrydb/quarry/catalog"
	"golang.org/x/text/encoding"
	"golang.org/x/text/encoding/charmap"
	"golang.org/x/text/encoding/unicode"
	"golang.org/x/text/transform"
)

// The reader of CSV files read with options (a schema card's "read"
// object, a sniffed UTF-16 byte order mark or a sniffed missing header):
// any delimiter, quote and escape character, comment lines, skipped
// lines, and files in UTF-16, Latin-1 or Windows-1252, transcoded to
// UTF-8 while streaming. It is a plain rune-at-a-time reader: files
// without options take the parallel reader of csv_fast.go.

// textDecoder returns the decoder of a canonical encoding name; nil for
// UTF-8 (read as is).
func textDecoder(enc string) *encoding.Decoder {
	switch enc {
	case "utf-16":
		return unicode.UTF16(unicode.LittleEndian, unicode.ExpectBOM).NewDecoder()
	case "utf-16le":
		return unicode.UTF16(unicode.LittleEndian, unicode.UseBOM).NewDecoder()
	case "utf-16be":
		return unicode.UTF16(unicode.BigEndian, unicode.UseBOM).NewDecoder()
	case "latin-1":
		return charmap.ISO8859_1.NewDecoder()
	case "windows-1252":
		return charmap.Windows1252.NewDecoder()
	}
	return nil
}

// sniffEncoding names the encoding a byte order mark at the start of b
// announces ("utf-16" for either UTF-16 mark), or "".
func sniffEncoding(b []byte) string {
	if len(b) >= 2 && (b[0] == 0xFF && b[1] == 0xFE || b[0] == 0xFE && b[1] == 0xFF) {
		return "utf-16"
	}
	return ""
}

// openOptionText opens a CSV file read with options: decompressed,
// transcoded to UTF-8, a UTF-8 BOM skipped, records bounded by lim.
func openOptionText(file catalog.FileInfo, gz bool, lim catalog.Limits, enc string) (*bufio.Reader, io.Closer, error) {
	src, closer, err := catalog.OpenDecompressed(file, gz, lim)
	if err != nil {
		return nil, nil, err
	}
	if dec := textDecoder(enc); dec != nil {
		src = transform.NewReader(src, dec)
	}
	// Not catalog.NewRecordLimiter: it counts '"' quotes, and the quote may be
	// another character here; recordReader bounds records itself.
	br := bufio.NewReaderSize(src, sniffBytes)
	catalog.SkipBOM(br)
	return br, closer, nil
}

// recordReader splits text into records.
type recordReader struct {
	br      *bufio.Reader
	delim   rune
	quote   rune // 0: no quoting
	escape  rune // 0 or == quote: a doubled quote
	comment string
	maxRec  int

	line    int // lines read so far
	size    int // bytes of the current record so far
	fields  []string
	buf     strings.Builder
	pending rune // a rune read ahead (-1: none)
}

// errRecord is a record the reader cannot split; the message names the
// line.
var errRecord = errors.New("malformed record")

func newRecordReader(br *bufio.Reader, delim, quote, escape rune, comment string, maxRec int) *recordReader {
	if escape == quote {
		escape = 0
	}
	return &recordReader{br: br, delim: delim, quote: quote, escape: escape, comment: comment, maxRec: maxRec, pending: -1}
}

func (r *recordReader) next() (rune, error) {
	if r.pending >= 0 {
		c := r.pending
		r.pending = -1
		return c, nil
	}
	c, size, err := r.br.ReadRune()
	if err != nil {
		return 0, err
	}
	if c == utf8.RuneError && size == 1 {
		return 0, fmt.Errorf("%w: line %d is not valid UTF-8 text; re-save the file as UTF-8 or set the encoding in its schema card", errRecord, r.line+1)
	}
	return c, nil
}

// skipLine drops the rest of the current line.
func (r *recordReader) skipLine() error {
	r.pending = -1
	for {
		b, err := r.br.ReadSlice('\n')
		if err == nil {
			r.line++
			return nil
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if errors.Is(err, io.EOF) {
			if len(b) > 0 {
				r.line++
			}
			return io.EOF
		}
		return err
	}
}

// skipLines drops n lines.
func (r *recordReader) skipLines(n int) error {
	for range n {
		if err := r.skipLine(); err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
	}
	return nil
}

// read returns the next record (valid until the next call) and the line
// it starts on; io.EOF at the end. Blank lines and comment lines are
// skipped.
func (r *recordReader) read() ([]string, int, error) {
	for {
		if r.comment != "" {
			if b, err := r.br.Peek(len(r.comment)); err == nil && r.pending < 0 && string(b) == r.comment {
				if err := r.skipLine(); err != nil {
					if errors.Is(err, io.EOF) {
						return nil, 0, io.EOF
					}
					return nil, 0, err
				}
				continue
			}
		}
		rec, start, blank, err := r.record()
		if err != nil {
			return nil, 0, err
		}
		if !blank {
			return rec, start, nil
		}
	}
}

// record reads one record; blank reports an empty line.
func (r *recordReader) record() (rec []string, start int, blank bool, err error) {
	r.fields = r.fields[:0]
	start = r.line + 1
	r.size = 0
	for {
		c, err := r.next()
		if err != nil {
			if errors.Is(err, io.EOF) && (len(r.fields) > 0 || r.buf.Len() > 0) {
				r.line++
				return r.endField(), start, false, nil
			}
			return nil, start, false, err
		}
		switch {
		case c == r.delim:
			r.fields = append(r.fields, r.buf.String())
			r.buf.Reset()
		case c == '\n' || c == '\r':
			if c == '\r' {
				if n, err := r.next(); err == nil && n != '\n' {
					r.pending = n
				}
			}
			r.line++
			if len(r.fields) == 0 && r.buf.Len() == 0 {
				return nil, start, true, nil
			}
			return r.endField(), start, false, nil
		case c == r.quote && r.quote != 0 && r.buf.Len() == 0:
			if err := r.quoted(start); err != nil {
				return nil, start, false, err
			}
		case c == r.quote && r.quote != 0:
			return nil, start, false, fmt.Errorf("%w: line %d, field %d: a quote inside an unquoted field (set \"quote\" in the schema card's read options)", errRecord, r.line+1, len(r.fields)+1)
		default:
			r.buf.WriteRune(c)
		}
		if r.size += utf8.RuneLen(c); r.size > r.maxRec {
			return nil, start, false, errRecordTooLong(r.maxRec, start)
		}
	}
}

func errRecordTooLong(max, _ int) error { return catalog.RecordTooLong(max) }

func (r *recordReader) endField() []string {
	r.fields = append(r.fields, r.buf.String())
	r.buf.Reset()
	return r.fields
}

// quoted reads a quoted field after its opening quote, up to the
// delimiter or line end that follows the closing quote (left unread).
func (r *recordReader) quoted(start int) error {
	for {
		c, err := r.next()
		if err != nil {
			if errors.Is(err, io.EOF) {
				return fmt.Errorf("%w: line %d: a quoted field is not closed", errRecord, start)
			}
			return err
		}
		if r.size += utf8.RuneLen(c); r.size > r.maxRec {
			return errRecordTooLong(r.maxRec, start)
		}
		switch {
		case c == r.escape && r.escape != 0:
			n, err := r.next()
			if err != nil {
				return fmt.Errorf("%w: line %d: a quoted field is not closed", errRecord, start)
			}
			if n != r.quote && n != r.escape {
				r.buf.WriteRune(c) // not an escape sequence: kept as written
			}
			r.buf.WriteRune(n)
			if n == '\n' {
				r.line++
			}
		case c == r.quote:
			n, err := r.next()
			if errors.Is(err, io.EOF) {
				return nil
			}
			if err != nil {
				return err
			}
			if n == r.quote && r.escape == 0 {
				r.buf.WriteRune(n) // doubled quote
				continue
			}
			if n != r.delim && n != '\n' && n != '\r' {
				return fmt.Errorf("%w: line %d: text after the closing quote of field %d", errRecord, r.line+1, len(r.fields)+1)
			}
			r.pending = n
			return nil
		default:
			if c == '\n' {
				r.line++
			}
			r.buf.WriteRune(c)
		}
	}
}
