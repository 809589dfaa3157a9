package materialize

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// Shapes of inline rows (Result.Data, Result.Preview): how the same values
// are laid out in a response. Records is the default; the others carry the
// column names once instead of once per row (docs/DELIVERY.md, "Shapes").
const (
	// ShapeRecords is a JSON array of objects keyed by column name.
	ShapeRecords = "records"
	// ShapeColumns is one JSON object {column: [values...]}, in column order.
	ShapeColumns = "columns"
	// ShapeCSV is one JSON string holding RFC 4180 CSV: a header line, then
	// one line per row. A number, true or false is written as in JSON; null
	// is an empty field; a string is written as is, and double-quoted (its
	// quotes doubled) when it is empty, holds a comma, quote, CR or LF, has
	// leading or trailing white space, or reads as a JSON number, true,
	// false or null. Read back with the rule "a quoted field is a string;
	// an unquoted field is null when empty, a number or boolean when JSON
	// reads it as one, else a string", it gives exactly the records. Rows
	// holding a list or object value cannot be written that way: such data
	// stays records.
	ShapeCSV = "csv"
)

// Shapes lists the valid shapes, default first.
var Shapes = []string{ShapeRecords, ShapeColumns, ShapeCSV}

// ErrShapeNested is the reason a CSV shape falls back to records: some
// value is a JSON list or object, which a CSV field cannot hold typed.
var ErrShapeNested = errors.New("a list or object value cannot be a CSV field")

// Reshape rewrites records (a JSON array of objects, all with the same
// keys in the same order, as EncodeRecords writes them) into shape. For
// records, or a value that is not such an array (HDF5 nested lists), it
// returns records unchanged. For csv data that cannot round-trip it returns
// records unchanged with ErrShapeNested.
func Reshape(records json.RawMessage, shape string) (json.RawMessage, error) {
	if shape == "" || shape == ShapeRecords || len(records) == 0 {
		return records, nil
	}
	cols, vals, ok := splitRecords(records)
	if !ok {
		return records, nil
	}
	switch shape {
	case ShapeColumns:
		return columnsJSON(cols, vals), nil
	case ShapeCSV:
		s, err := csvText(cols, vals)
		if err != nil {
			return records, err
		}
		return json.Marshal(s)
	}
	return nil, fmt.Errorf("unknown shape %q", shape)
}

// splitRecords returns the column names (keys of the first record) and,
// per column, its raw values. ok is false when records is not an array of
// flat-keyed objects with the same keys in the same order.
func splitRecords(records json.RawMessage) (cols []string, vals [][]json.RawMessage, ok bool) {
	dec := json.NewDecoder(bytes.NewReader(records))
	if t, err := dec.Token(); err != nil || t != json.Delim('[') {
		return nil, nil, false
	}
	for row := 0; dec.More(); row++ {
		if t, err := dec.Token(); err != nil || t != json.Delim('{') {
			return nil, nil, false
		}
		for j := 0; dec.More(); j++ {
			t, err := dec.Token()
			key, isKey := t.(string)
			if err != nil || !isKey {
				return nil, nil, false
			}
			var v json.RawMessage
			if dec.Decode(&v) != nil {
				return nil, nil, false
			}
			if row == 0 {
				cols = append(cols, key)
				vals = append(vals, nil)
			} else if j >= len(cols) || cols[j] != key {
				return nil, nil, false
			}
			vals[j] = append(vals[j], v)
		}
		if _, err := dec.Token(); err != nil {
			return nil, nil, false
		}
		for j := range vals {
			if len(vals[j]) != row+1 {
				return nil, nil, false
			}
		}
	}
	return cols, vals, true
}

// columnsJSON writes {"col": [v, ...], ...} in column order.
func columnsJSON(cols []string, vals [][]json.RawMessage) json.RawMessage {
	out := []byte{'{'}
	for j, c := range cols {
		if j > 0 {
			out = append(out, ',')
		}
		out = appendQuoted(out, c)
		out = append(out, ':', '[')
		for i, v := range vals[j] {
			if i > 0 {
				out = append(out, ',')
			}
			out = append(out, v...)
		}
		out = append(out, ']')
	}
	return append(out, '}')
}

// csvText writes the CSV of ShapeCSV.
func csvText(cols []string, vals [][]json.RawMessage) (string, error) {
	var b strings.Builder
	for j, c := range cols {
		if j > 0 {
			b.WriteByte(',')
		}
		writeCSVField(&b, c)
	}
	b.WriteByte('\n')
	rows := 0
	if len(vals) > 0 {
		rows = len(vals[0])
	}
	for i := range rows {
		for j := range cols {
			if j > 0 {
				b.WriteByte(',')
			}
			v := vals[j][i]
			switch v[0] {
			case '"':
				var s string
				if err := json.Unmarshal(v, &s); err != nil {
					return "", err
				}
				writeCSVField(&b, s)
			case 'n': // null
			case '[', '{':
				return "", ErrShapeNested
			default: // number, true, false
				b.Write(v)
			}
		}
		b.WriteByte('\n')
	}
	return b.String(), nil
}

// writeCSVField writes the string s as a ShapeCSV field: as is, or
// double-quoted with its quotes doubled when it would not read back as the
// same string.
func writeCSVField(b *strings.Builder, s string) {
	if !csvNeedsQuotes(s) {
		b.WriteString(s)
		return
	}
	b.WriteByte('"')
	b.WriteString(strings.ReplaceAll(s, `"`, `""`))
	b.WriteByte('"')
}

// csvNeedsQuotes reports whether the string s, unquoted, would read back
// as something else: null (empty), a number or boolean, or other fields.
func csvNeedsQuotes(s string) bool {
	if s == "" || strings.ContainsAny(s, ",\"\r\n") || s != strings.TrimSpace(s) {
		return true
	}
	if strings.IndexByte("-0123456789tfn", s[0]) >= 0 {
		var v any
		return json.Unmarshal([]byte(s), &v) == nil
	}
	return false
}
