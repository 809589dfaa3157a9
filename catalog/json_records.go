package catalog

import (
	"bufio"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/bits"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
	"unsafe"
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
//
// It is a byte-level tokenizer: the input is read into a window, each
// record is tokenized once, in place, and its fields' names and texts are
// views of the window (or, for strings with escapes and dotted names, of
// a per-record arena), valid until the next call of next: whoever keeps
// one copies it. A record cut by the end of the window is tokenized again
// from its start once the window holds more (at most once per window
// refill, so the cost is one record per 256 KiB). It accepts exactly what
// encoding/json's decoder accepts and yields the same values: strings
// unescaped as encoding/json does (invalid UTF-8 and lone surrogates
// become U+FFFD), numbers as written, arrays re-encoded compactly with
// encoding/json's escaping (json_diff_test.go checks it against the
// decoder-based reader it replaced, FuzzJSONRecords on any input).
type jsonRecords struct {
	src    io.Reader
	buf    []byte // the window: input bytes [off, off+end)
	pos    int    // the next byte of buf not consumed
	end    int
	off    int64 // input offset of buf[0]
	eof    bool  // src has no more bytes
	max    int   // Limits.MaxRecordBytes
	maxKey int   // Limits.MaxNameBytes
	array  bool
	start  bool  // array: the opening '[' was consumed
	comma  bool  // array: a ',' after the last record was consumed
	done   bool  // the end of the records was reached
	n      int64 // records read
	cur    int64 // the record being read (1-based), for messages
	fields []jsonField
	arena  []byte // the current record's decoded strings, dotted names and array texts
	nested int    // arena offset of the array being compacted (for the record limit)
	quoted []byte // compactString's scratch
	// recStart, recEnd: window indices of the last record read, its '{'
	// to just past its '}'.
	recStart, recEnd int
}

// jsonWindow is the initial window of a jsonRecords (it grows for a record
// that does not fit, up to the record limit).
const jsonWindow = 256 << 10

// errJSONShort: the record goes on past the bytes read so far.
var errJSONShort = errors.New("json: record continues past the window")

// newJSONRecords reads records from br (BOM already stripped).
func newJSONRecords(br *bufio.Reader, lim Limits) (*jsonRecords, error) {
	return newJSONRecordsWindow(br, lim, jsonWindow)
}

// newJSONRecordsWindow is newJSONRecords with an initial window of size
// bytes (tests use tiny windows to cut records everywhere).
func newJSONRecordsWindow(br *bufio.Reader, lim Limits, size int) (*jsonRecords, error) {
	array, err := jsonLayout(br)
	if err != nil {
		return nil, err
	}
	size = max(1, min(size, lim.MaxRecordBytes+1))
	return &jsonRecords{src: br, buf: make([]byte, size), max: lim.MaxRecordBytes, maxKey: lim.MaxNameBytes, array: array}, nil
}

// chunkRecords is a jsonRecords over data, a run of whole records of
// objects one after another (a chunk of newline-delimited JSON) all in
// memory, at input offset start, whose first record is record base+1. It
// reuses r's scratch when r is not nil. data is only read.
func chunkRecords(r *jsonRecords, data []byte, start, base int64, lim Limits) *jsonRecords {
	if r == nil {
		r = &jsonRecords{}
	}
	*r = jsonRecords{buf: data, end: len(data), off: start, eof: true, max: lim.MaxRecordBytes, maxKey: lim.MaxNameBytes,
		n: base, fields: r.fields[:0], arena: r.arena[:0], quoted: r.quoted[:0]}
	return r
}

// jsonLayout peeks at the first byte that is not whitespace: an array of
// objects ('['), objects one after another ('{'), or not JSON records.
func jsonLayout(br *bufio.Reader) (array bool, err error) {
	first, err := peekNonSpace(br)
	if err != nil {
		if errors.Is(err, io.EOF) {
			return false, errors.New("the file is empty: a JSON file needs objects (one per line, or an array of them)")
		}
		return false, err
	}
	if first != '[' && first != '{' {
		return false, fmt.Errorf("the file does not start with an object or an array of objects (it starts with %q)", first)
	}
	return first == '[', nil
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
	if r.done {
		return false, nil
	}
	r.cur = r.n + 1
	for {
		r.fields = r.fields[:0]
		r.arena = r.arena[:0]
		more, err := r.record()
		if err == errJSONShort {
			if err := r.fill(); err != nil {
				return false, err
			}
			continue
		}
		if err != nil || !more {
			r.done = true
			return false, err
		}
		r.n++
		return true, nil
	}
}

// fill drops the consumed bytes from the window and reads more, growing
// the window when the unconsumed bytes fill it.
func (r *jsonRecords) fill() error {
	if r.pos > 0 {
		r.end = copy(r.buf, r.buf[r.pos:r.end])
		r.off += int64(r.pos)
		r.pos = 0
	}
	if r.end == len(r.buf) {
		nb := make([]byte, min(2*len(r.buf), r.max+1))
		copy(nb, r.buf[:r.end])
		r.buf = nb
	}
	for {
		n, err := r.src.Read(r.buf[r.end:])
		r.end += n
		if errors.Is(err, io.EOF) {
			r.eof = true
			return nil
		}
		if err != nil || n > 0 {
			return err
		}
	}
}

// record tokenizes the record at r.pos; errJSONShort when the window ends
// inside it (r.pos is then at its first byte, or past the separators
// before it).
func (r *jsonRecords) record() (bool, error) {
	b := r.buf[:r.end]
	for {
		i := skipJSONSpace(b, r.pos)
		r.pos = i
		if i == len(b) {
			switch {
			case !r.eof:
				return false, errJSONShort
			case r.array:
				return false, fmt.Errorf("the file ends inside record %d", r.cur)
			}
			return false, nil
		}
		c := b[i]
		if r.array {
			switch {
			case !r.start: // the '[' newJSONRecords saw
				r.start = true
				r.pos = i + 1
				continue
			case c == ']' && !r.comma:
				r.pos = i + 1
				return false, r.trailing()
			case r.n > 0 && !r.comma:
				if c != ',' {
					return false, r.bad(i, c, "after array element")
				}
				r.comma = true
				r.pos = i + 1
				continue
			}
		}
		var err error
		if c != '{' {
			err = r.notObject(i)
		} else {
			var j int
			if j, err = r.object(i+1, "", 1); err == nil {
				r.recStart, r.recEnd = i, j
				r.pos = j
				r.comma = false
				return true, nil
			}
		}
		if err == errJSONShort && r.end-r.pos > r.max {
			return false, limitError("a JSON record is longer than %s (the limit)", sizeString(int64(r.max)))
		}
		return false, err
	}
}

// trailing checks that nothing but whitespace follows the top-level array.
func (r *jsonRecords) trailing() error {
	for {
		b := r.buf[:r.end]
		if r.pos = skipJSONSpace(b, r.pos); r.pos < len(b) {
			return errors.New("unexpected data after the top-level array")
		}
		if r.eof {
			return nil
		}
		if err := r.fill(); err != nil {
			return err
		}
	}
}

// jsonMaxDepth is how deep objects and arrays may nest (encoding/json's
// scanner limit), so that no input can exhaust the stack.
const jsonMaxDepth = 10000

// tooDeep is the error of an object or array at i nested too deep.
func (r *jsonRecords) tooDeep(i int) error {
	return fmt.Errorf("invalid JSON in record %d (byte %d): exceeded max depth", r.cur, r.off+int64(i)+1)
}

// short is the error of a value cut by the end of the bytes read: more
// are needed, or the file ends inside the record.
func (r *jsonRecords) short() error {
	if r.eof {
		return fmt.Errorf("the file ends inside record %d", r.cur)
	}
	return errJSONShort
}

// bad is the syntax error of byte c at window index i, worded as
// encoding/json words it.
func (r *jsonRecords) bad(i int, c byte, context string) error {
	return fmt.Errorf("invalid JSON in record %d (byte %d): invalid character %s %s", r.cur, r.off+int64(i)+1, quoteJSONChar(c), context)
}

func quoteJSONChar(c byte) string {
	switch c {
	case '\'':
		return `'\''`
	case '"':
		return `'"'`
	}
	s := strconv.Quote(string(rune(c)))
	return "'" + s[1:len(s)-1] + "'"
}

// notObject is the error of a top-level value at i that is not an
// object (a syntax error when it is not a valid value either).
func (r *jsonRecords) notObject(i int) error {
	b := r.buf[:r.end]
	var what string
	var err error
	switch c := b[i]; {
	case c == '[':
		what = "an array"
	case c == '"':
		_, _, _, err = r.scanString(i)
		what = "a string"
	case c == '-' || isJSONDigit(c):
		_, err = r.number(i)
		what = "a number"
	case c == 't' || c == 'f' || c == 'n':
		var lit string
		lit, _, err = r.literal(i)
		what = "a boolean"
		if lit == "null" {
			what = "null"
		}
	default:
		return r.bad(i, c, "looking for beginning of value")
	}
	if err != nil {
		return err
	}
	return fmt.Errorf("record %d is not an object (%s); every record must be a JSON object", r.cur, what)
}

// object tokenizes the members of an object whose '{' ends before i,
// flattening nested objects under prefix; it returns the index after the
// closing '}'. depth counts the objects and arrays it is in, itself
// included.
func (r *jsonRecords) object(i int, prefix string, depth int) (int, error) {
	b := r.buf[:r.end]
	if depth > jsonMaxDepth {
		return i, r.tooDeep(i)
	}
	if i = skipJSONSpace(b, i); i == len(b) {
		return i, r.short()
	}
	if b[i] == '}' {
		return i + 1, nil
	}
	for {
		if b[i] != '"' {
			return i, r.bad(i, b[i], "looking for beginning of object key string")
		}
		key, j, err := r.str(i)
		if err != nil {
			return j, err
		}
		if len(key) > r.maxKey {
			return j, limitError("record %d has a key longer than %d bytes (the limit)", r.cur, r.maxKey)
		}
		if i = skipJSONSpace(b, j); i == len(b) {
			return i, r.short()
		}
		if b[i] != ':' {
			return i, r.bad(i, b[i], "after object key")
		}
		if i = skipJSONSpace(b, i+1); i == len(b) {
			return i, r.short()
		}
		name := key
		if prefix != "" {
			name = r.joined(prefix, key, "")
		}
		if i, err = r.member(i, name, depth); err != nil {
			return i, err
		}
		if i = skipJSONSpace(b, i); i == len(b) {
			return i, r.short()
		}
		switch b[i] {
		case ',':
			if i = skipJSONSpace(b, i+1); i == len(b) {
				return i, r.short()
			}
		case '}':
			return i + 1, nil
		default:
			return i, r.bad(i, b[i], "after object key:value pair")
		}
	}
}

// member tokenizes the value at i of the field name, in an object at
// depth.
func (r *jsonRecords) member(i int, name string, depth int) (int, error) {
	b := r.buf[:r.end]
	switch c := b[i]; {
	case c == '{':
		return r.object(i+1, r.joined(name, "", "."), depth+1)
	case c == '[':
		r.nested = len(r.arena)
		j, err := r.compact(i, depth+1)
		if err == nil {
			r.fields = append(r.fields, jsonField{name: name, kind: jNested, text: arenaString(r.arena[r.nested:])})
		}
		return j, err
	case c == '"':
		s, j, err := r.str(i)
		if err == nil {
			r.fields = append(r.fields, jsonField{name: name, kind: jString, text: s})
		}
		return j, err
	case c == 't' || c == 'f' || c == 'n':
		lit, j, err := r.literal(i)
		if err == nil {
			if lit == "null" {
				r.fields = append(r.fields, jsonField{name: name, kind: jNull})
			} else {
				r.fields = append(r.fields, jsonField{name: name, kind: jBool, text: lit})
			}
		}
		return j, err
	case c == '-' || isJSONDigit(c):
		j, err := r.number(i)
		if err == nil {
			r.fields = append(r.fields, jsonField{name: name, kind: jNumber, text: arenaString(b[i:j])})
		}
		return j, err
	default:
		return i, r.bad(i, c, "looking for beginning of value")
	}
}

// joined is a+b+c in the arena.
func (r *jsonRecords) joined(a, b, c string) string {
	at := len(r.arena)
	r.arena = append(append(append(r.arena, a...), b...), c...)
	return arenaString(r.arena[at:])
}

// arenaString views b as a string (b is never written while the view
// lives: the window and the arena are only rewritten by the next record).
func arenaString(b []byte) string { return unsafe.String(unsafe.SliceData(b), len(b)) }

// literal tokenizes true, false or null at i.
func (r *jsonRecords) literal(i int) (string, int, error) {
	b := r.buf[:r.end]
	lit := "null"
	switch b[i] {
	case 't':
		lit = "true"
	case 'f':
		lit = "false"
	}
	for k := 1; k < len(lit); k++ {
		if i+k == len(b) {
			return lit, i + k, r.short()
		}
		if b[i+k] != lit[k] {
			return lit, i + k, r.bad(i+k, b[i+k], "in literal "+lit+" (expecting "+quoteJSONChar(lit[k])+")")
		}
	}
	return lit, i + len(lit), nil
}

// number tokenizes the number at i (JSON's grammar) and returns its end.
func (r *jsonRecords) number(i int) (int, error) {
	b := r.buf[:r.end]
	j := i
	if b[j] == '-' {
		if j++; j == len(b) {
			return j, r.short()
		}
	}
	switch c := b[j]; {
	case c == '0':
		j++
	case isJSONDigit(c):
		j = skipJSONDigits(b, j+1)
	default:
		return j, r.bad(j, c, "in numeric literal")
	}
	if j < len(b) && b[j] == '.' {
		if j++; j == len(b) {
			return j, r.short()
		}
		if !isJSONDigit(b[j]) {
			return j, r.bad(j, b[j], "after decimal point in numeric literal")
		}
		j = skipJSONDigits(b, j+1)
	}
	if j < len(b) && (b[j] == 'e' || b[j] == 'E') {
		if j++; j < len(b) && (b[j] == '+' || b[j] == '-') {
			j++
		}
		if j == len(b) {
			return j, r.short()
		}
		if !isJSONDigit(b[j]) {
			return j, r.bad(j, b[j], "in exponent of numeric literal")
		}
		j = skipJSONDigits(b, j+1)
	}
	if j == len(b) && !r.eof {
		return j, errJSONShort // more digits may follow
	}
	return j, nil
}

// str tokenizes the string at i: its value (a view of the window when it
// needs no unescaping, else unescaped into the arena) and the index after
// its closing quote.
func (r *jsonRecords) str(i int) (string, int, error) {
	b := r.buf[:r.end]
	j := i + 1
	for ; j+8 <= len(b); j += 8 { // eight bytes at a time up to the first '"' or special byte
		if m := strStops(binary.LittleEndian.Uint64(b[j:])); m != 0 {
			j += bits.TrailingZeros64(m) / 8
			break
		}
	}
	for ; j < len(b); j++ {
		c := b[j]
		if c == '"' {
			return arenaString(b[i+1 : j]), j + 1, nil
		}
		if jsonStrSpecial[c] {
			break
		}
	}
	raw, esc, j, err := r.scanString(i)
	if err != nil {
		return "", j, err
	}
	if !esc && utf8.Valid(raw) {
		return arenaString(raw), j, nil
	}
	at := len(r.arena)
	r.arena = appendUnescaped(r.arena, raw)
	return arenaString(r.arena[at:]), j, nil
}

// scanString checks the string at i as encoding/json's scanner does and
// returns its raw bytes between the quotes, whether it holds an escape,
// and the index after its closing quote.
func (r *jsonRecords) scanString(i int) ([]byte, bool, int, error) {
	b := r.buf[:r.end]
	esc := false
	j := i + 1
	for j < len(b) {
		switch c := b[j]; {
		case c == '"':
			return b[i+1 : j], esc, j + 1, nil
		case c == '\\':
			esc = true
			if j+1 == len(b) {
				return nil, esc, j, r.short()
			}
			switch b[j+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				j += 2
			case 'u':
				for k := 2; k < 6; k++ {
					if j+k == len(b) {
						return nil, esc, j, r.short()
					}
					if !isJSONHex(b[j+k]) {
						return nil, esc, j, r.bad(j+k, b[j+k], "in \\u hexadecimal character escape")
					}
				}
				j += 6
			default:
				return nil, esc, j, r.bad(j+1, b[j+1], "in string escape code")
			}
		case c < ' ':
			return nil, esc, j, r.bad(j, c, "in string literal")
		default:
			j++
		}
	}
	return nil, esc, j, r.short()
}

// appendUnescaped appends the value of the checked string body s as
// encoding/json unquotes it: escapes resolved, a surrogate pair joined, a
// lone surrogate and each byte of invalid UTF-8 replaced by U+FFFD.
func appendUnescaped(dst, s []byte) []byte {
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == '\\':
			switch s[i+1] {
			case 'b':
				dst = append(dst, '\b')
			case 'f':
				dst = append(dst, '\f')
			case 'n':
				dst = append(dst, '\n')
			case 'r':
				dst = append(dst, '\r')
			case 't':
				dst = append(dst, '\t')
			case 'u':
				rr := getU4(s[i:])
				i += 6
				if utf16.IsSurrogate(rr) {
					if dec := utf16.DecodeRune(rr, getU4(s[i:])); dec != utf8.RuneError {
						dst = utf8.AppendRune(dst, dec)
						i += 6
						continue
					}
					rr = utf8.RuneError
				}
				dst = utf8.AppendRune(dst, rr)
				continue
			default: // '"', '\\', '/'
				dst = append(dst, s[i+1])
			}
			i += 2
		case c < utf8.RuneSelf:
			dst = append(dst, c)
			i++
		default:
			rr, size := utf8.DecodeRune(s[i:])
			dst = utf8.AppendRune(dst, rr)
			i += size
		}
	}
	return dst
}

// getU4 decodes the \uXXXX at the start of s, or -1.
func getU4(s []byte) rune {
	if len(s) < 6 || s[0] != '\\' || s[1] != 'u' {
		return -1
	}
	var r rune
	for _, c := range s[2:6] {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c = c - 'a' + 10
		case 'A' <= c && c <= 'F':
			c = c - 'A' + 10
		default:
			return -1
		}
		r = r*16 + rune(c)
	}
	return r
}

// compact appends the array or object at i, at depth, to the arena as
// compact JSON (encoding/json's escaping for strings, numbers as written)
// and returns the index after it.
func (r *jsonRecords) compact(i int, depth int) (int, error) {
	b := r.buf[:r.end]
	if depth > jsonMaxDepth {
		return i, r.tooDeep(i)
	}
	open := b[i]
	closing, after := byte(']'), "after array element"
	if open == '{' {
		closing, after = '}', "after object key:value pair"
	}
	r.arena = append(r.arena, open)
	if i = skipJSONSpace(b, i+1); i == len(b) {
		return i, r.short()
	}
	if b[i] == closing {
		r.arena = append(r.arena, closing)
		return i + 1, nil
	}
	for {
		var err error
		if open == '{' {
			if b[i] != '"' {
				return i, r.bad(i, b[i], "looking for beginning of object key string")
			}
			if i, err = r.compactString(i); err != nil {
				return i, err
			}
			if i = skipJSONSpace(b, i); i == len(b) {
				return i, r.short()
			}
			if b[i] != ':' {
				return i, r.bad(i, b[i], "after object key")
			}
			r.arena = append(r.arena, ':')
			if i = skipJSONSpace(b, i+1); i == len(b) {
				return i, r.short()
			}
		}
		if i, err = r.compactValue(i, depth); err != nil {
			return i, err
		}
		if len(r.arena)-r.nested > r.max {
			return i, limitError("a JSON record is longer than %s (the limit)", sizeString(int64(r.max)))
		}
		if i = skipJSONSpace(b, i); i == len(b) {
			return i, r.short()
		}
		switch b[i] {
		case ',':
			r.arena = append(r.arena, ',')
			if i = skipJSONSpace(b, i+1); i == len(b) {
				return i, r.short()
			}
		case closing:
			r.arena = append(r.arena, closing)
			return i + 1, nil
		default:
			return i, r.bad(i, b[i], after)
		}
	}
}

// compactValue appends the value at i inside an array or object at depth.
func (r *jsonRecords) compactValue(i int, depth int) (int, error) {
	b := r.buf[:r.end]
	switch c := b[i]; {
	case c == '{' || c == '[':
		return r.compact(i, depth+1)
	case c == '"':
		return r.compactString(i)
	case c == 't' || c == 'f' || c == 'n':
		lit, j, err := r.literal(i)
		r.arena = append(r.arena, lit...)
		return j, err
	case c == '-' || isJSONDigit(c):
		j, err := r.number(i)
		r.arena = append(r.arena, b[i:j]...)
		return j, err
	}
	return i, r.bad(i, b[i], "looking for beginning of value")
}

// compactString appends the string at i as encoding/json marshals its
// value.
func (r *jsonRecords) compactString(i int) (int, error) {
	raw, esc, j, err := r.scanString(i)
	if err != nil {
		return j, err
	}
	plain := !esc
	for _, c := range raw {
		if c < ' ' || c >= 0x7f || c == '<' || c == '>' || c == '&' || c == '"' || c == '\\' {
			plain = false
			break
		}
	}
	if plain { // printable ASCII that encoding/json does not escape: marshals to itself
		r.arena = append(append(append(r.arena, '"'), raw...), '"')
		return j, nil
	}
	r.quoted = appendUnescaped(r.quoted[:0], raw)
	m, _ := json.Marshal(string(r.quoted))
	r.arena = append(r.arena, m...)
	return j, nil
}

// strStops flags (high bit of the byte) the bytes of the little-endian
// word w that end a string's fast path: '"' and the jsonStrSpecial bytes
// ('\\', controls, non-ASCII). Flags above the lowest may be false (a
// borrow), the lowest is exact: it marks the first such byte.
func strStops(w uint64) uint64 {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	quote := w ^ (ones * '"')
	slash := w ^ (ones * '\\')
	zeroQ := (quote - ones) &^ quote
	zeroS := (slash - ones) &^ slash
	ctrl := (w - ones*0x20) &^ w
	return (zeroQ | zeroS | ctrl | w) & highs
}

// jsonStrSpecial marks the bytes that take a string off the fast path:
// escapes, control characters (errors) and non-ASCII (checked as UTF-8).
var jsonStrSpecial = func() (t [256]bool) {
	for c := range 256 {
		t[c] = c == '\\' || c < ' ' || c >= utf8.RuneSelf
	}
	return t
}()

func skipJSONSpace(b []byte, i int) int {
	for i < len(b) {
		if c := b[i]; c != ' ' && c != '\n' && c != '\r' && c != '\t' {
			break
		}
		i++
	}
	return i
}

func skipJSONDigits(b []byte, i int) int {
	for i < len(b) && isJSONDigit(b[i]) {
		i++
	}
	return i
}

func isJSONDigit(c byte) bool { return '0' <= c && c <= '9' }

func isJSONHex(c byte) bool {
	return isJSONDigit(c) || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}
