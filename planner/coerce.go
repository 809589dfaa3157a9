package planner

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/quarrydb/quarry/internal/funcs"
)

// coerce converts a JSON operand to a Literal of the column type typ,
// following the conventions documented on Literal. Numbers may be given as
// JSON numbers or numeric strings; dates and timestamps as ISO-8601 strings.
func coerce(raw json.RawMessage, typ arrow.DataType) (Literal, error) {
	lit := Literal{Type: typ}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return lit, fmt.Errorf("value is not valid JSON")
	}
	switch v.(type) {
	case nil:
		return lit, errors.New("value is null")
	case []any, map[string]any:
		return lit, fmt.Errorf("expected %s, got a JSON %s", valueHint(typ), jsonKind(v))
	}
	switch {
	case isInteger(typ):
		n, err := toInt(v)
		if err != nil {
			return lit, err
		}
		lit.Value = n
	case isFloat(typ):
		f, err := toFloat(v)
		if err != nil {
			return lit, err
		}
		lit.Value = f
	case isString(typ):
		switch x := v.(type) {
		case string:
			lit.Value = x
		case json.Number:
			lit.Value = x.String()
		case bool:
			lit.Value = strconv.FormatBool(x)
		}
	case typ.ID() == arrow.BOOL:
		switch x := v.(type) {
		case bool:
			lit.Value = x
		case string:
			b, err := strconv.ParseBool(strings.ToLower(strings.TrimSpace(x)))
			if err != nil {
				return lit, fmt.Errorf("%q is not a boolean", x)
			}
			lit.Value = b
		default:
			return lit, fmt.Errorf("expected true or false, got %v", v)
		}
	case typ.ID() == arrow.DATE32:
		s, ok := v.(string)
		if !ok {
			return lit, fmt.Errorf("expected a date string YYYY-MM-DD, got %v", v)
		}
		t, err := parseTime(s)
		if err != nil {
			return lit, err
		}
		lit.Value = int32(arrow.Date32FromTime(t))
	case typ.ID() == arrow.TIMESTAMP:
		s, ok := v.(string)
		if !ok {
			return lit, fmt.Errorf("expected an ISO-8601 timestamp string, got %v", v)
		}
		t, err := parseTime(s)
		if err != nil {
			return lit, err
		}
		ts, err := arrow.TimestampFromTime(t, typ.(*arrow.TimestampType).Unit)
		if err != nil {
			return lit, fmt.Errorf("timestamp %q is out of range", s)
		}
		lit.Value = int64(ts)
	default:
		return lit, fmt.Errorf("filters on %s columns are not supported", typeName(typ))
	}
	return lit, nil
}

// toInt reads an integer-column operand exactly (see Number): an int64
// when it is an integer in the int64 range, a Number otherwise.
func toInt(v any) (any, error) {
	var s string
	switch x := v.(type) {
	case json.Number:
		s = x.String()
	case string:
		s = x
	default:
		return nil, fmt.Errorf("expected an integer, got %v", v)
	}
	return ParseIntOperand(s)
}

func toFloat(v any) (float64, error) {
	var s string
	switch x := v.(type) {
	case json.Number:
		s = x.String()
	case string:
		s = strings.TrimSpace(x)
	default:
		return 0, fmt.Errorf("expected a number, got %v", v)
	}
	f, err := strconv.ParseFloat(s, 64)
	if errors.Is(err, strconv.ErrRange) && math.IsInf(f, 0) {
		return 0, fmt.Errorf("%s is beyond the float64 range (about ±1.8e308)", s)
	}
	if err != nil {
		return 0, fmt.Errorf("%q is not a number", s)
	}
	return f, nil
}

var timeLayouts = []string{
	time.RFC3339Nano,
	"2006-01-02T15:04:05.999999999",
	"2006-01-02 15:04:05.999999999Z07:00",
	"2006-01-02 15:04:05.999999999",
	"2006-01-02T15:04",
	"2006-01-02",
}

// parseTime parses ISO-8601 dates and timestamps; values without a zone are UTC.
func parseTime(s string) (time.Time, error) {
	s = strings.TrimSpace(s)
	for _, l := range timeLayouts {
		if t, err := time.Parse(l, s); err == nil {
			return t.UTC(), nil
		}
	}
	return time.Time{}, fmt.Errorf("%q is not an ISO-8601 date or timestamp (e.g. 2024-03-01 or 2024-03-01T12:00:00Z)", s)
}

func splitArray(raw json.RawMessage) ([]json.RawMessage, error) {
	var xs []json.RawMessage
	if err := json.Unmarshal(raw, &xs); err != nil {
		return nil, err
	}
	return xs, nil
}

func splitRange(raw json.RawMessage) (lo, hi json.RawMessage, err error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		var xs []json.RawMessage
		if json.Unmarshal(raw, &xs) == nil && len(xs) == 2 {
			return nonNull(xs[0]), nonNull(xs[1]), rangeCheck(nonNull(xs[0]), nonNull(xs[1]))
		}
		return nil, nil, errors.New(`range needs an object {"min": ..., "max": ...}`)
	}
	for k := range m {
		if k != "min" && k != "max" {
			return nil, nil, fmt.Errorf("range accepts only min and max, got %q", k)
		}
	}
	lo, hi = nonNull(m["min"]), nonNull(m["max"])
	return lo, hi, rangeCheck(lo, hi)
}

func rangeCheck(lo, hi json.RawMessage) error {
	if lo == nil && hi == nil {
		return errors.New("range needs min, max or both")
	}
	return nil
}

func nonNull(r json.RawMessage) json.RawMessage {
	if len(r) == 0 || string(r) == "null" {
		return nil
	}
	return r
}

func jsonKind(v any) string {
	switch v.(type) {
	case []any:
		return "list"
	case map[string]any:
		return "object"
	}
	return "value"
}

// The type classes of the function registry (one definition for the
// planner and the engine).
var (
	isInteger = funcs.IsInteger
	isFloat   = funcs.IsFloat
	isString  = funcs.IsString
)

// IsDictString reports a dictionary-encoded string type (funcs.IsDictString):
// such columns are accepted anywhere a string column is.
func IsDictString(t arrow.DataType) bool { return funcs.IsDictString(t) }

// Decoded returns the value type of a dictionary-encoded string type and t
// itself otherwise (funcs.Decoded). Operators that build new values
// (aggregate keys and results) output decoded types.
func Decoded(t arrow.DataType) arrow.DataType { return funcs.Decoded(t) }

// TypeName is the user-facing name of an Arrow type, as shown by get_schema:
// int64, float64, string, bool, date, timestamp, ...
func TypeName(t arrow.DataType) string { return typeName(t) }

func typeName(t arrow.DataType) string {
	if t == nil {
		return "unknown"
	}
	switch t.ID() {
	case arrow.STRING, arrow.LARGE_STRING, arrow.STRING_VIEW:
		return "string"
	case arrow.DICTIONARY:
		if IsDictString(t) {
			return "string"
		}
	case arrow.DATE32, arrow.DATE64:
		return "date"
	case arrow.TIMESTAMP:
		ts := t.(*arrow.TimestampType)
		if ts.TimeZone != "" {
			return "timestamp[" + ts.Unit.String() + ", " + ts.TimeZone + "]"
		}
		return "timestamp[" + ts.Unit.String() + "]"
	case arrow.NULL:
		return "unsupported"
	}
	return t.String()
}

func valueHint(t arrow.DataType) string {
	switch {
	case isInteger(t):
		return "an integer"
	case isFloat(t):
		return "a number"
	case isString(t):
		return "a string"
	case t.ID() == arrow.BOOL:
		return "a boolean (true/false)"
	case t.ID() == arrow.DATE32:
		return "a date string like 2024-03-01"
	case t.ID() == arrow.TIMESTAMP:
		return "a timestamp string like 2024-03-01T12:00:00Z"
	}
	return "a " + typeName(t) + " value"
}
