package catalog

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

// jsonKind is the JSON type of one value.
type jsonKind uint8

const (
	jNull jsonKind = iota
	jNumber
	jString
	jBool
	jNested // an array, kept as compact JSON text
)

// jsonField is one flattened field of a record: its dotted name and value
// (a number's text as written, a string's value, "true"/"false", or an
// array as compact JSON).
type jsonField struct {
	name string
	kind jsonKind
	text string
}

// jsonRecords reads the records (objects) of a JSON file one at a time: a
// top-level array of objects, or objects one after another (newline
// delimited JSON; any whitespace separates them). Nested objects are
// flattened into dotted names ({"a":{"b":1}} is the field "a.b"); arrays
// are kept as compact JSON text.
type jsonRecords struct {
	dec    *json.Decoder
	lim    *jsonLimiter
	max    int // Limits.MaxRecordBytes
	maxKey int // Limits.MaxNameBytes
	array  bool
	start  bool  // the opening '[' was consumed (array) or the first record is next
	n      int64 // records read
	cur    int64 // the record being read (1-based), for messages
	fields []jsonField
	buf    strings.Builder
}

// jsonLimiter counts the bytes read through it and fails once more than
// max bytes were read past mark (the start of the current record), so a
// record never makes the decoder buffer more than about max bytes.
type jsonLimiter struct {
	r    io.Reader
	n    int64
	mark int64
	max  int64
	fail error
}

func (l *jsonLimiter) Read(p []byte) (int, error) {
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

// newJSONRecords reads records from br (BOM already stripped).
func newJSONRecords(br *bufio.Reader, lim Limits) (*jsonRecords, error) {
	first, err := peekNonSpace(br)
	if err != nil {
		if errors.Is(err, io.EOF) {
			return nil, errors.New("the file is empty: a JSON file needs objects (one per line, or an array of them)")
		}
		return nil, err
	}
	if first != '[' && first != '{' {
		return nil, fmt.Errorf("the file does not start with an object or an array of objects (it starts with %q)", first)
	}
	l := &jsonLimiter{r: br, max: int64(lim.MaxRecordBytes) + 64<<10}
	dec := json.NewDecoder(l)
	dec.UseNumber()
	return &jsonRecords{dec: dec, lim: l, max: lim.MaxRecordBytes, maxKey: lim.MaxNameBytes, array: first == '['}, nil
}

func peekNonSpace(br *bufio.Reader) (byte, error) {
	for i := 1; ; i++ {
		b, err := br.Peek(i)
		if err != nil {
			return 0, err
		}
		c := b[i-1]
		if c != ' ' && c != '\t' && c != '\n' && c != '\r' {
			return c, nil
		}
		if i >= 4096 {
			if _, err := br.Discard(i); err != nil {
				return 0, err
			}
			i = 0
		}
	}
}

// next reads the next record into r.fields (valid until the next call).
// It returns false at the end of the records.
func (r *jsonRecords) next() (bool, error) {
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
		return false, fmt.Errorf("record %d is not an object (%s); every record must be a JSON object", r.cur, describeToken(tok))
	}
	if err := r.object(""); err != nil {
		return false, err
	}
	r.n++
	return true, nil
}

func describeToken(tok json.Token) string {
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
func (r *jsonRecords) syntax(err error) error {
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
func (r *jsonRecords) object(prefix string) error {
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
func (r *jsonRecords) nestedText(inObj bool) error {
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
