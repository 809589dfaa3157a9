package materialize

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
)

// WriteCSV writes batches (all of schema's fields) to w as CSV: RFC 4180
// (comma separator, CRLF record terminator, fields quoted when they contain
// a comma, quote, CR or LF, quotes doubled), UTF-8 (invalid bytes become
// U+FFFD), one header row with ColumnNames(schema).
//
// Cells use the same text as the JSON encoder without the JSON quoting:
// dates "YYYY-MM-DD", RFC 3339 timestamps, shortest round-trip floats (NaN,
// Infinity, -Infinity), integers as plain digits whatever their size, binary
// as base64, decimals exactly, nested values (list, struct, map) as JSON
// text. A null is an empty unquoted field and an empty string is written as
// "", so the two stay distinguishable; in a one-column file a null is also
// written as "" (an empty line would be skipped by readers and the row
// lost). The context is checked between batches.
func WriteCSV(ctx context.Context, w io.Writer, schema *arrow.Schema, batches []arrow.RecordBatch) error {
	cw, err := newCSVWriter(w, schema)
	if err != nil {
		return err
	}
	for _, b := range batches {
		if err := cw.write(ctx, b); err != nil {
			return err
		}
	}
	return cw.close()
}

// csvWriter writes record batches as CSV as they come (see WriteCSV).
type csvWriter struct {
	bw    *bufio.Writer
	line  []byte
	cells []textEncoder
}

// newCSVWriter writes the header row and returns the writer.
func newCSVWriter(w io.Writer, schema *arrow.Schema) (*csvWriter, error) {
	cw := &csvWriter{bw: bufio.NewWriterSize(w, 64<<10), cells: make([]textEncoder, schema.NumFields())}
	for i, n := range ColumnNames(schema) {
		if i > 0 {
			cw.line = append(cw.line, ',')
		}
		cw.line = appendCSVField(cw.line, n)
	}
	cw.line = append(cw.line, '\r', '\n')
	if _, err := cw.bw.Write(cw.line); err != nil {
		return nil, err
	}
	return cw, nil
}

func (cw *csvWriter) write(ctx context.Context, b arrow.RecordBatch) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	cells := cw.cells
	for c := range cells {
		cells[c] = newTextEncoder(b.Column(c), len(cells) == 1)
	}
	for r := range int(b.NumRows()) {
		line := cw.line[:0]
		for c, enc := range cells {
			if c > 0 {
				line = append(line, ',')
			}
			line = enc(line, r)
		}
		line = append(line, '\r', '\n')
		cw.line = line
		if _, err := cw.bw.Write(line); err != nil {
			return err
		}
	}
	return nil
}

func (cw *csvWriter) close() error { return cw.bw.Flush() }

func (cw *csvWriter) abort() {}

// textEncoder appends the CSV field (already quoted if needed) of element i.
type textEncoder func(dst []byte, i int) []byte

// newTextEncoder returns the CSV cell encoder for arr. With quoteNull a null
// is written as "" rather than nothing (for one-column files, where an empty
// line would be skipped by readers and the row lost).
func newTextEncoder(arr arrow.Array, quoteNull bool) textEncoder {
	null := func(dst []byte) []byte {
		if quoteNull {
			return append(dst, '"', '"')
		}
		return dst
	}
	if ext, ok := arr.(array.ExtensionArray); ok {
		arr = ext.Storage()
	}
	var enc textEncoder
	switch a := arr.(type) {
	case array.StringLike:
		enc = func(dst []byte, i int) []byte { return appendCSVField(dst, a.Value(i)) }
	case *array.Dictionary:
		if s, ok := a.Dictionary().(array.StringLike); ok {
			enc = func(dst []byte, i int) []byte {
				j := a.GetValueIndex(i)
				if s.IsNull(j) {
					return null(dst)
				}
				return appendCSVField(dst, s.Value(j))
			}
		}
	case *array.Int64:
		v := a.Int64Values()
		enc = func(dst []byte, i int) []byte { return appendInt(dst, v[i]) }
	case *array.Uint64:
		v := a.Uint64Values()
		enc = func(dst []byte, i int) []byte { return appendUint(dst, v[i]) }
	case *array.Duration:
		v := a.DurationValues()
		enc = func(dst []byte, i int) []byte { return appendInt(dst, int64(v[i])) }
	}
	if enc == nil {
		// Everything else: the JSON text, unquoted when it is a JSON string.
		// A bare JSON null here is a null inside a dictionary or a null-type
		// column.
		js := newValueEncoder(arr)
		var scratch []byte
		enc = func(dst []byte, i int) []byte {
			scratch = js(scratch[:0], i)
			if string(scratch) == "null" {
				return null(dst)
			}
			if len(scratch) >= 2 && scratch[0] == '"' {
				inner := scratch[1 : len(scratch)-1]
				if bytes.IndexByte(inner, '\\') < 0 { // dates, timestamps, base64, ...: no escapes
					return appendCSVField(dst, string(inner))
				}
				var s string
				if err := json.Unmarshal(scratch, &s); err == nil {
					return appendCSVField(dst, s)
				}
			}
			return appendCSVField(dst, string(scratch))
		}
	}
	if arr.NullN() == 0 {
		return enc
	}
	return func(dst []byte, i int) []byte {
		if arr.IsNull(i) {
			return null(dst)
		}
		return enc(dst, i)
	}
}

func appendInt(dst []byte, v int64) []byte { return strconv.AppendInt(dst, v, 10) }

func appendUint(dst []byte, v uint64) []byte { return strconv.AppendUint(dst, v, 10) }

// appendCSVField appends s as one CSV field: quoted when it is empty or
// contains a comma, quote, CR or LF; invalid UTF-8 replaced by U+FFFD.
func appendCSVField(dst []byte, s string) []byte {
	s = toValidUTF8(s)
	if s != "" && !strings.ContainsAny(s, ",\"\r\n") {
		return append(dst, s...)
	}
	dst = append(dst, '"')
	for {
		i := strings.IndexByte(s, '"')
		if i < 0 {
			break
		}
		dst = append(dst, s[:i+1]...)
		dst = append(dst, '"')
		s = s[i+1:]
	}
	dst = append(dst, s...)
	return append(dst, '"')
}

// toValidUTF8 returns s with each invalid UTF-8 byte replaced by U+FFFD (as
// the JSON encoder does).
func toValidUTF8(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b.WriteString("\uFFFD")
		} else {
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}
