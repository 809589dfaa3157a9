package funcs

import "github.com/apache/arrow-go/v18/arrow"

// Type classes shared by the planner and the engine. Every function
// declaration states the argument types it accepts with these predicates.

// IsInteger reports the signed and unsigned integer types.
func IsInteger(t arrow.DataType) bool {
	if t == nil {
		return false
	}
	switch t.ID() {
	case arrow.INT8, arrow.INT16, arrow.INT32, arrow.INT64, arrow.UINT8, arrow.UINT16, arrow.UINT32, arrow.UINT64:
		return true
	}
	return false
}

// IsFloat reports the floating-point types Quarry computes on: float32 and
// float64. FLOAT16 is not one of them (no kernel reads it).
func IsFloat(t arrow.DataType) bool {
	return t != nil && (t.ID() == arrow.FLOAT32 || t.ID() == arrow.FLOAT64)
}

// IsNumeric reports integer and float (IsFloat) types: the inputs of
// arithmetic, sum, avg, median, quantile and stddev.
func IsNumeric(t arrow.DataType) bool { return IsInteger(t) || IsFloat(t) }

// IsString reports string columns, including dictionary-encoded strings.
func IsString(t arrow.DataType) bool {
	if t == nil {
		return false
	}
	switch t.ID() {
	case arrow.STRING, arrow.LARGE_STRING, arrow.STRING_VIEW:
		return true
	case arrow.DICTIONARY:
		return IsDictString(t)
	}
	return false
}

// IsDictString reports a dictionary-encoded string type (integer indices,
// string or large_string values): such columns are accepted anywhere a
// string column is.
func IsDictString(t arrow.DataType) bool {
	d, ok := t.(*arrow.DictionaryType)
	if !ok || !IsInteger(d.IndexType) {
		return false
	}
	id := d.ValueType.ID()
	return id == arrow.STRING || id == arrow.LARGE_STRING
}

// Comparable reports the types the engine compares, hashes and sorts:
// integers, float32/float64, booleans, strings (dictionary-encoded
// included, string_view not), date32 and timestamps. count_distinct, min,
// max, first and last accept exactly these.
func Comparable(t arrow.DataType) bool {
	if t == nil {
		return false
	}
	switch t.ID() {
	case arrow.BOOL, arrow.STRING, arrow.LARGE_STRING, arrow.DATE32, arrow.TIMESTAMP:
		return true
	case arrow.DICTIONARY:
		return IsDictString(t)
	}
	return IsNumeric(t)
}

// Decoded returns the value type of a dictionary-encoded string type and t
// itself otherwise. Operators that build new values (aggregate keys and
// results) output decoded types.
func Decoded(t arrow.DataType) arrow.DataType {
	if IsDictString(t) {
		return t.(*arrow.DictionaryType).ValueType
	}
	return t
}
