package catalog

// The JSON record reader Quarry used before the byte-level one
// (json_records.go), on encoding/json's token decoder: kept as the oracle
// of the differential tests (json_diff_test.go), which check that the new
// reader yields the same fields, record by record, on any input.

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode/utf8"
)

// oracleRecords reads the records (objects) of a JSON file one at a time: a
// top-level array of objects, or objects one after another (newline
// delimited JSON; any whitespace separates them). Nested objects are
// flattened into dotted names ({"a":{"b":1}} is the field "a.b"); arrays
// are kept as compact JSON text.
type oracleRecords struct {
	dec    *json.Decoder
	lim    *oracleLimiter
	max    int // Limits.MaxRecordBytes
	maxKey int // Limits.MaxNameBytes
	array  bool
	start  bool  // the opening '[' was consumed (array) or the first record is next
	n      int64 // records read
	cur    int64 // the record being read (1-based), for messages
	fields []jsonField
	buf    strings.Builder
}

// oracleLimiter counts the bytes read through it and fails once more than
// max bytes were read past mark (the start of the current record), so a
// record never makes the decoder buffer more than about max bytes.
type oracleLimiter struct {
	r    io.Reader
	n    int64
	mark int64
	max  int64
	fail error
}

func (l *oracleLimiter) Read(p []byte) (int, error) {
	if l.fail != nil {
		return 0, l.fail
	}
	n, err := l.r.Read(p)
	l.n += int64(n)
	if l.n-l.mark > l.max {
		l.fail = limitError("a JSON record is longer than %s (the limit)", sizeString(l.max))
		return 0, l.fail
	}
	return n, err
}

// newOracleRecords reads records from br (BOM already stripped).
func newOracleRecords(br *bufio.Reader, lim Limits) (*oracleRecords, error) {
	array, err := jsonLayout(br)
	if err != nil {
		return nil, err
	}
	l := &oracleLimiter{r: br, max: int64(lim.MaxRecordBytes) + 64<<10}
	dec := json.NewDecoder(l)
	dec.UseNumber()
	return &oracleRecords{dec: dec, lim: l, max: lim.MaxRecordBytes, maxKey: lim.MaxNameBytes, array: array}, nil
}

// next reads the next record into r.fields (valid until the next call).
// It returns false at the end of the records.
func (r *oracleRecords) next() (bool, error) {
	r.fields = r.fields[:0]
	r.cur = r.n + 1
	if r.array && !r.start {
		if _, err := r.dec.Token(); err != nil {
			return false, r.syntax(err)
		}
		r.start = true
	}
	if r.array {
		if !r.dec.More() {
			if _, err := r.dec.Token(); err != nil { // the closing ']'
				return false, r.syntax(err)
			}
			if _, err := r.dec.Token(); !errors.Is(err, io.EOF) {
				return false, fmt.Errorf("unexpected data after the top-level array")
			}
			return false, nil
		}
	}
	r.lim.mark = r.dec.InputOffset()
	tok, err := r.dec.Token()
	if errors.Is(err, io.EOF) && !r.array {
		return false, nil
	}
	if err != nil {
		return false, r.syntax(err)
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return false, fmt.Errorf("record %d is not an object (%s); every record must be a JSON object", r.cur, oracleDescribe(tok))
	}
	if err := r.object(""); err != nil {
		return false, err
	}
	r.n++
	return true, nil
}

func oracleDescribe(tok json.Token) string {
	switch tok.(type) {
	case json.Delim:
		return "an array"
	case string:
		return "a string"
	case json.Number:
		return "a number"
	case bool:
		return "a boolean"
	}
	return "null"
}

// syntax describes a decoding error with the record it happened in.
func (r *oracleRecords) syntax(err error) error {
	var se *json.SyntaxError
	var ue *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se):
		return fmt.Errorf("invalid JSON in record %d (byte %d): %v", r.cur, se.Offset, se)
	case errors.As(err, &ue):
		return fmt.Errorf("invalid JSON in record %d: %v", r.cur, ue)
	case errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF):
		return fmt.Errorf("the file ends inside record %d", r.cur)
	}
	return err
}

// object reads the members of an object whose '{' was consumed, flattening
// nested objects under prefix.
func (r *oracleRecords) object(prefix string) error {
	for r.dec.More() {
		tok, err := r.dec.Token()
		if err != nil {
			return r.syntax(err)
		}
		key, _ := tok.(string)
		if len(key) > r.maxKey {
			return limitError("record %d has a key longer than %d bytes (the limit)", r.cur, r.maxKey)
		}
		if !utf8.ValidString(key) {
			return fmt.Errorf("record %d has a key that is not valid UTF-8", r.cur)
		}
		name := prefix + key
		tok, err = r.dec.Token()
		if err != nil {
			return r.syntax(err)
		}
		switch v := tok.(type) {
		case json.Delim:
			if v == '{' {
				if err := r.object(name + "."); err != nil {
					return err
				}
				continue
			}
			r.buf.Reset()
			r.buf.WriteByte('[')
			if err := r.nestedText(false); err != nil {
				return err
			}
			r.fields = append(r.fields, jsonField{name: name, kind: jNested, text: r.buf.String()})
		case json.Number:
			r.fields = append(r.fields, jsonField{name: name, kind: jNumber, text: string(v)})
		case string:
			r.fields = append(r.fields, jsonField{name: name, kind: jString, text: v})
		case bool:
			r.fields = append(r.fields, jsonField{name: name, kind: jBool, text: strconv.FormatBool(v)})
		case nil:
			r.fields = append(r.fields, jsonField{name: name, kind: jNull})
		}
	}
	if _, err := r.dec.Token(); err != nil { // '}'
		return r.syntax(err)
	}
	return nil
}

// nestedText writes the rest of an array (or, with inObj, an object) whose
// opening bracket was written to r.buf as compact JSON, through its
// closing bracket.
func (r *oracleRecords) nestedText(inObj bool) error {
	first := true
	isKey := inObj
	for {
		tok, err := r.dec.Token()
		if err != nil {
			return r.syntax(err)
		}
		if d, ok := tok.(json.Delim); ok && (d == ']' || d == '}') {
			r.buf.WriteByte(byte(d))
			return nil
		}
		if !first && (!inObj || isKey) {
			r.buf.WriteByte(',')
		}
		first = false
		switch v := tok.(type) {
		case json.Delim:
			r.buf.WriteByte(byte(v))
			if err := r.nestedText(v == '{'); err != nil {
				return err
			}
		case json.Number:
			r.buf.WriteString(string(v))
		case string:
			b, _ := json.Marshal(v)
			r.buf.Write(b)
			if inObj && isKey {
				r.buf.WriteByte(':')
			}
		case bool:
			r.buf.WriteString(strconv.FormatBool(v))
		case nil:
			r.buf.WriteString("null")
		}
		if inObj {
			isKey = !isKey
		}
		if r.buf.Len() > r.max {
			return limitError("a JSON record is longer than %s (the limit)", sizeString(int64(r.max)))
		}
	}
}
